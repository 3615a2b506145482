// Block evaluation (storage/block_evaluator.h, as the scan runs it on a
// Filter's columnar() expression) against row-by-row evaluation
// (Filter::Matches, storage/model/filter_eval.h): thousands of random filters over random blocks
// of rows with mixed types, absent properties, NaN, ordinal-sensitive strings
// and upper-case Guids must give the same answer for every row. Half the
// blocks have narrow value ranges so that the zone-map skip
// (BlockMayMatch) fires often; its own cases are tested directly below.
// The expressions are written as $filter text and built by protocol's parser
// (a test-only dependency, see CMakeLists.txt); storage/ itself never
// includes protocol/.
#include "storage/block_evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "protocol/filter/filter.h"
#include "protocol/filter/parser.h"
#include "storage/model/datetime.h"
#include "storage/model/filter_eval.h"
#include "storage/row_block.h"
#include "tests/unit/storage/filter_test_gen.h"

namespace tablestone::storage {
namespace {

using namespace filter_test;  // NOLINT(build/namespaces): the shared generators and constants

using model::EvaluateEntity;
using protocol::filter::Filter;
using protocol::filter::ParseFilter;

using model::EdmType;
using model::EdmValue;
using model::Entity;


// A RowBlock over `rows` (which must outlive it), built here independently of
// storage's PartitionBuilder: one column per name, tags/payloads per row.
RowBlock BlockOf(const std::vector<Entity>& rows) {
  RowBlock block;
  block.partition_key = rows.empty() ? std::string_view() : std::string_view(rows[0].partition_key);
  const size_t n = rows.size();
  for (size_t r = 0; r < n; ++r) {
    block.row_keys.push_back(rows[r].row_key);
    block.timestamps.push_back(rows[r].timestamp);
    for (const model::Property& p : rows[r].properties) {
      RowColumn* c = nullptr;
      for (RowColumn& existing : block.columns) {
        if (existing.name == p.name) c = &existing;
      }
      if (c == nullptr) {
        c = &block.columns.emplace_back();
        c->name = p.name;
        c->tags.assign(n, kAbsentTag);
      }
      c->tags[r] = static_cast<uint8_t>(p.value.type);
      switch (p.value.type) {
        case EdmType::kDouble:
          c->doubles.resize(n);
          c->doubles[r] = p.value.double_value;
          break;
        case EdmType::kString:
        case EdmType::kGuid:
        case EdmType::kBinary:
          c->texts.resize(n);
          c->texts[r] = p.value.text;
          break;
        default:
          c->ints.resize(n);
          c->ints[r] = p.value.int_value;
      }
    }
  }
  for (RowColumn& c : block.columns) {
    bool uniform = true;
    for (uint8_t t : c.tags) uniform = uniform && t == c.tags[0];
    c.uniform_tag = uniform ? c.tags[0] : kMixedTag;
    c.ComputeZoneMap();
  }
  return block;
}

TEST(BlockEvaluatorTest, EvaluateBlockEqualsMatchesOnRandomFiltersAndRows) {
  RowGenerator rows_gen(7);
  FilterGenerator gen(&rows_gen);
  int checked = 0, kept = 0, dropped = 0, skipped = 0, skipped_narrow = 0;
  for (int block_index = 0; block_index < 200; ++block_index) {
    const bool narrow = block_index % 2 == 1;
    const std::vector<Entity> rows = rows_gen.Make(static_cast<size_t>(1 + rows_gen.Pick(200)), narrow);
    const RowBlock block = BlockOf(rows);
    for (int i = 0; i < 100; ++i) {
      const std::string text = gen.Make(3);
      auto f = Filter::Parse(text);
      ASSERT_TRUE(f.ok()) << text << ": " << f.error().message;  // depth 3: at most 8 comparisons
      ++checked;
      auto ast = ParseFilter(text);
      ASSERT_TRUE(ast.ok());
      const bool may_match = BlockMayMatch(**ast, block);
      if (!may_match) ++(narrow ? skipped_narrow : skipped);
      // A random sub-range, as a scan resuming inside a partition asks for.
      const size_t begin = static_cast<size_t>(rows_gen.Pick(static_cast<int>(rows.size())));
      const size_t end = begin + static_cast<size_t>(rows_gen.Pick(static_cast<int>(rows.size() - begin) + 1));
      std::vector<uint8_t> keep(end - begin, 0xAA);
      ASSERT_NE((*f)->columnar(), nullptr);
      EvaluateBlock(*(*f)->columnar(), block, begin, end, keep.data());
      for (size_t r = begin; r < end; ++r) {
        const bool want = (*f)->Matches(rows[r]);
        ASSERT_EQ(keep[r - begin], want ? 1 : 0) << text << " row " << r;
        ASSERT_TRUE(may_match || !want) << text << " row " << r << ": skipped a block with a match";
        (want ? kept : dropped)++;
      }
    }
  }
  EXPECT_EQ(checked, 20000);
  EXPECT_GT(kept, 100000);  // both answers are common: the test is not vacuous
  EXPECT_GT(dropped, 100000);
  // The skip fires often, above all on narrow blocks (the counts show the
  // test exercises it; the assertions above show it never skips a match).
  EXPECT_GT(skipped_narrow, 1500) << "skipped on wide blocks: " << skipped;
  EXPECT_GT(skipped_narrow, skipped);
}

TEST(BlockEvaluatorTest, UniformColumnsUseTheServiceSemantics) {
  // Hand-picked cases of the tight loops: widening, NaN, mismatch, absence.
  std::vector<Entity> rows(4);
  const double nan = std::nan("");
  const double doubles[] = {1.0, nan, 5.0, -0.0};
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].partition_key = "p";
    rows[i].row_key = std::to_string(i);
    rows[i].properties = {{"I", EdmValue::Int32(static_cast<int32_t>(i))}, {"D", EdmValue::Double(doubles[i])}};
  }
  const RowBlock block = BlockOf(rows);
  auto run = [&](const char* text) {
    auto f = Filter::Parse(text);
    EXPECT_TRUE(f.ok()) << text;
    std::string bits;
    uint8_t keep[4];
    EvaluateBlock(*(*f)->columnar(), block, 0, 4, keep);
    for (uint8_t k : keep) bits += k ? '1' : '0';
    return bits;
  };
  EXPECT_EQ(run("I ge 2"), "0011");
  EXPECT_EQ(run("I ge 2L"), "0000");   // Int64 literal vs Int32 property: mismatch, ge is false
  EXPECT_EQ(run("I lt 2L"), "1111");   // mismatch, lt is true
  EXPECT_EQ(run("D ge 1"), "1010");    // Int32 literal widens to double; NaN is unordered
  EXPECT_EQ(run("D ne 1"), "0111");    // NaN ne anything is true
  EXPECT_EQ(run("D eq 0.0"), "0001");  // -0.0 == 0.0
  EXPECT_EQ(run("not (X eq 1)"), "1111");
  EXPECT_EQ(run("X eq 1"), "0000");
  EXPECT_EQ(run("PartitionKey eq 'p' and RowKey gt '1'"), "0011");
}

// A block for the zone-map tests: ten rows, columns with known ranges.
std::vector<Entity> ZoneRows() {
  std::vector<Entity> rows(10);
  const double doubles[] = {1.0, 2.5, -0.0, 0.0, 1.0, 2.5, 2.5, 1.0, -0.0, 2.0};
  for (int i = 0; i < 10; ++i) {
    Entity& e = rows[static_cast<size_t>(i)];
    e.partition_key = "p";
    e.row_key = std::to_string(i);
    e.timestamp = kT0;
    e.properties = {{"N", EdmValue::Int32(10 + i)},       // 10..19
                    {"L", EdmValue::Int64(100)},          // one value
                    {"D", EdmValue::Double(doubles[i])},  // -0.0..2.5
                    {"DN", EdmValue::Double(i == 4 ? std::nan("") : 1.0)},
                    {"T", EdmValue::DateTime(kT0 + i)},
                    {"B", EdmValue::Boolean(false)},
                    {"S", EdmValue::String("s" + std::to_string(i))},
                    {"M", i == 0 ? EdmValue::String("x") : EdmValue::Int32(i)}};
    if (i % 3 != 0) e.properties.push_back({"G", EdmValue::Int32(4 + i % 3)});  // 5..6, with gaps
  }
  return rows;
}

TEST(BlockEvaluatorTest, ZoneMapOfColumns) {
  const std::vector<Entity> rows = ZoneRows();
  const RowBlock block = BlockOf(rows);
  const RowColumn* n = block.FindColumn("N");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->value_tag, static_cast<uint8_t>(EdmType::kInt32));
  EXPECT_TRUE(n->has_range);
  EXPECT_EQ(n->min_int, 10);
  EXPECT_EQ(n->max_int, 19);
  const RowColumn* d = block.FindColumn("D");
  EXPECT_TRUE(d->has_range);
  EXPECT_EQ(d->min_double, 0.0);  // -0.0 or 0.0: equal
  EXPECT_EQ(d->max_double, 2.5);
  EXPECT_FALSE(block.FindColumn("DN")->has_range);  // a NaN
  EXPECT_EQ(block.FindColumn("DN")->value_tag, static_cast<uint8_t>(EdmType::kDouble));
  EXPECT_FALSE(block.FindColumn("S")->has_range);
  EXPECT_EQ(block.FindColumn("M")->value_tag, kMixedTag);
  EXPECT_FALSE(block.FindColumn("M")->has_range);
  const RowColumn* g = block.FindColumn("G");  // gaps: not uniform, still ranged
  EXPECT_EQ(g->uniform_tag, kMixedTag);
  EXPECT_EQ(g->value_tag, static_cast<uint8_t>(EdmType::kInt32));
  EXPECT_TRUE(g->has_range);
  EXPECT_EQ(g->min_int, 5);
  EXPECT_EQ(g->max_int, 6);
  const RowColumn* b = block.FindColumn("B");
  EXPECT_TRUE(b->has_range);
  EXPECT_EQ(b->max_int, 0);
}

TEST(BlockEvaluatorTest, BlockMayMatchProvesNoneOnlyWhenNoRowCanMatch) {
  const std::vector<Entity> rows = ZoneRows();
  const RowBlock block = BlockOf(rows);
  const std::string dt_first = "datetime'" + model::FormatDateTime7(kT0) + "'";
  const std::string dt_last = "datetime'" + model::FormatDateTime7(kT0 + 9) + "'";
  struct Case {
    std::string text;
    bool may_match;
  };
  const std::vector<Case> cases = {
      // Int32 column 10..19: edges are "maybe", one step past them "none".
      {"N ge 20", false}, {"N ge 19", true}, {"N gt 19", false}, {"N gt 18", true},
      {"N lt 10", false}, {"N lt 11", true}, {"N le 9", false}, {"N le 10", true},
      {"N eq 9", false}, {"N eq 10", true}, {"N eq 19", true}, {"N eq 20", false},
      {"N ne 15", true}, {"N ne 10", true},
      // Int64 literal vs Int32 column: a mismatch, fixed answers.
      {"N eq 15L", false}, {"N ge 15L", false}, {"N lt 15L", true}, {"N ne 15L", true},
      // One-valued Int64 column: ne is none only on its value; Int32 widens.
      {"L ne 100L", false}, {"L ne 100", false}, {"L ne 101L", true}, {"L eq 100", true},
      {"L gt 100L", false}, {"L ge 100L", true},
      // Doubles (IEEE: -0.0 == 0.0), Int32 literal widening; a NaN: no range.
      {"D gt 2.5", false}, {"D ge 2.5", true}, {"D lt 0.0", false}, {"D lt 0", false},
      {"D le -0.0", true}, {"D gt 2", true}, {"D gt 3", false}, {"D eq 3.0", false},
      {"DN gt 100.0", true}, {"DN ne 1.0", true}, {"DN eq 100", true},
      // DateTime range.
      {"T lt " + dt_first, false}, {"T le " + dt_first, true}, {"T gt " + dt_last, false},
      {"T ge " + dt_last, true}, {"T eq 5", false},
      // Boolean all false; bare property.
      {"B", false}, {"B eq true", false}, {"B eq false", true}, {"B ne false", false}, {"not B", true},
      {"N", false},  // never Boolean
      // Strings: no range, but mismatch answers are fixed.
      {"S eq 'zzz'", true}, {"S gt 'zzz'", true}, {"S eq 1", false}, {"S ne 1", true}, {"S lt 1", true},
      // Gaps are ignored (absent rows never match); mixed types: maybe.
      {"G gt 6", false}, {"G eq 5", true}, {"G lt 5", false}, {"M eq 100", true}, {"M gt 'zzz'", true},
      // Missing property: false for every operator; not: always maybe.
      {"Missing eq 1", false}, {"Missing ne 1", false}, {"not (Missing eq 1)", true},
      {"not (N gt 100)", true}, {"not (N lt 100)", true},
      // and / or.
      {"N gt 100 or N lt 0", false}, {"N gt 100 or N lt 11", true},
      {"N gt 100 and N lt 11", false}, {"N gt 0 and N lt 11", true}, {"N gt 0 and B", false},
      // System properties: PartitionKey is exact, RowKey/Timestamp maybe.
      {"PartitionKey eq 'q'", false}, {"PartitionKey eq 'p'", true}, {"PartitionKey gt 'p' and N gt 0", false},
      {"RowKey eq 'zzz'", true}, {"Timestamp lt datetime'1900-01-01T00:00:00Z'", true},
      {"false", false}, {"true", true},
  };
  for (const Case& c : cases) {
    auto ast = ParseFilter(c.text);
    ASSERT_TRUE(ast.ok()) << c.text;
    EXPECT_EQ(BlockMayMatch(**ast, block), c.may_match) << c.text;
    // "none" must be true of every row (the random test checks this broadly),
    // and EvaluateBlock then fills keep with zeros.
    std::vector<uint8_t> keep(rows.size(), 0xAA);
    EvaluateBlock(**ast, block, 0, rows.size(), keep.data());
    bool any = false;
    for (size_t r = 0; r < rows.size(); ++r) {
      const bool want = EvaluateEntity(**ast, rows[r]);
      EXPECT_EQ(keep[r], want ? 1 : 0) << c.text << " row " << r;
      any = any || want;
    }
    if (!c.may_match) {
      EXPECT_FALSE(any) << c.text;
    }
  }
}

TEST(BlockEvaluatorTest, ZoneMapNormalisesBooleansAndIgnoresBlocksWithoutIt) {
  std::vector<Entity> rows(2);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].partition_key = "p";
    rows[i].row_key = std::to_string(i);
    rows[i].properties = {{"B", EdmValue::Boolean(true)}, {"N", EdmValue::Int32(1)}};
  }
  RowBlock block = BlockOf(rows);
  RowColumn& b = block.columns[0];
  b.ints = {2, 7};  // a Boolean stored as a non-zero other than 1 is still true
  b.ComputeZoneMap();
  EXPECT_EQ(b.min_int, 1);
  EXPECT_EQ(b.max_int, 1);
  auto eq_true = ParseFilter("B eq true");
  ASSERT_TRUE(eq_true.ok());
  EXPECT_TRUE(BlockMayMatch(**eq_true, block));
  // A column built without ComputeZoneMap claims nothing: always "maybe".
  RowColumn& n = block.columns[1];
  n.value_tag = kMixedTag;
  n.has_range = false;
  auto far = ParseFilter("N gt 100");
  ASSERT_TRUE(far.ok());
  EXPECT_TRUE(BlockMayMatch(**far, block));
  n.ComputeZoneMap();
  EXPECT_FALSE(BlockMayMatch(**far, block));
}

}  // namespace
}  // namespace tablestone::storage
