// Block evaluation (block_evaluator.h, Filter::MatchBlock) against row-by-row
// evaluation (Filter::Matches): thousands of random filters over random blocks
// of rows with mixed types, absent properties, NaN, ordinal-sensitive strings
// and upper-case Guids must give the same answer for every row.
#include "protocol/filter/block_evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "protocol/filter/filter.h"
#include "storage/model/datetime.h"
#include "storage/model/row_block.h"

namespace tablestone::protocol::filter {
namespace {

using model::EdmType;
using model::EdmValue;
using model::Entity;

const char* const kEmoji = "\xF0\x9F\x98\x80";   // U+1F600: sorts below U+E000 in UTF-16
const char* const kPrivate = "\xEE\x80\x80";     // U+E000
const int64_t kT0 = 637500000001234567LL;
const char* const kGuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
const char* const kGuidUpper = "0F8FAD5B-D9CB-469F-A165-70867728950E";
const char* const kGuid2 = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

// A RowBlock over `rows` (which must outlive it), built here independently of
// storage's PartitionBuilder: one column per name, tags/payloads per row.
model::RowBlock BlockOf(const std::vector<Entity>& rows) {
  model::RowBlock block;
  block.partition_key = rows.empty() ? std::string_view() : std::string_view(rows[0].partition_key);
  const size_t n = rows.size();
  for (size_t r = 0; r < n; ++r) {
    block.row_keys.push_back(rows[r].row_key);
    block.timestamps.push_back(rows[r].timestamp);
    for (const model::Property& p : rows[r].properties) {
      model::RowColumn* c = nullptr;
      for (model::RowColumn& existing : block.columns) {
        if (existing.name == p.name) c = &existing;
      }
      if (c == nullptr) {
        c = &block.columns.emplace_back();
        c->name = p.name;
        c->tags.assign(n, model::kAbsentTag);
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
  for (model::RowColumn& c : block.columns) {
    bool uniform = true;
    for (uint8_t t : c.tags) uniform = uniform && t == c.tags[0];
    c.uniform_tag = uniform ? c.tags[0] : model::kMixedTag;
  }
  return block;
}

class RowGenerator {
 public:
  explicit RowGenerator(uint32_t seed) : rng_(seed) {}

  // Rows of one partition. Each property name gets a per-block mode: one type
  // in every row (the tight loops), one type with gaps, or any type per row.
  std::vector<Entity> Make(size_t n) {
    static const char* kNames[] = {"A", "B", "C", "D"};
    std::vector<int> mode(4), type(4);
    for (int i = 0; i < 4; ++i) {
      mode[i] = Pick(3);
      type[i] = 1 + Pick(8);
    }
    std::vector<Entity> rows(n);
    const std::string pk = Pick(2) ? "p" : "b";
    for (size_t r = 0; r < n; ++r) {
      Entity& e = rows[r];
      e.partition_key = pk;
      e.row_key = RowKeyFor(r);
      e.timestamp = kT0 + Pick(3) - 1;
      for (int i = 0; i < 4; ++i) {
        if (mode[i] == 1 && Pick(4) == 0) continue;                 // gaps
        if (mode[i] == 2 && Pick(3) == 0) continue;
        const int t = mode[i] == 2 ? 1 + Pick(8) : type[i];
        e.properties.push_back({kNames[i], Value(static_cast<EdmType>(t))});
      }
    }
    return rows;
  }

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  std::string RowKeyFor(size_t r) {
    static const char* kPrefixes[] = {"", "a", "b", "B"};
    std::string rk = kPrefixes[r % 4];
    rk += std::to_string(r);
    if (r % 7 == 3) rk += kEmoji;
    if (r % 7 == 5) rk += kPrivate;
    return rk;
  }

  EdmValue Value(EdmType t) {
    switch (t) {
      case EdmType::kString: {
        static const std::vector<std::string> kValues = {"", "a", "ab", "b", "B", "1", "10", kEmoji, kPrivate};
        return EdmValue::String(kValues[static_cast<size_t>(Pick(static_cast<int>(kValues.size())))]);
      }
      case EdmType::kInt32: return EdmValue::Int32(Pick(7) - 2);
      case EdmType::kInt64: return EdmValue::Int64(Pick(4) == 0 ? (int64_t{1} << 40) : Pick(7) - 2);
      case EdmType::kDouble: {
        static const double kValues[] = {-0.0, 0.0, 1.0, 2.5, 3.0, std::nan(""),
                                         std::numeric_limits<double>::infinity(), -1.0};
        return EdmValue::Double(kValues[Pick(8)]);
      }
      case EdmType::kBoolean: return EdmValue::Boolean(Pick(2) == 1);
      case EdmType::kDateTime: return EdmValue::DateTime(kT0 + Pick(3) - 1);
      case EdmType::kGuid: {
        const int k = Pick(3);
        return EdmValue::Guid(k == 0 ? kGuid : k == 1 ? kGuidUpper : kGuid2);
      }
      case EdmType::kBinary: {
        static const char* kValues[] = {"", "\x01", "\x01\x02", "\xff"};
        return EdmValue::Binary(kValues[Pick(4)]);
      }
    }
    return EdmValue::String("");
  }

  std::mt19937 rng_;
};

class FilterGenerator {
 public:
  explicit FilterGenerator(RowGenerator* rng) : rng_(rng) {}

  std::string Make(int depth) {
    const int choice = Pick(depth <= 0 ? 4 : 8);
    switch (choice) {
      case 0:
      case 1: return Property() + " " + Op() + " " + Literal();
      case 2: return Pick(3) == 0 ? SystemComparison() : Property() + " " + Op() + " " + Literal();
      case 3: return Pick(4) == 0 ? (Pick(2) ? "true" : "false") : Property();  // bare property
      case 4:
      case 5: return "(" + Make(depth - 1) + " and " + Make(depth - 1) + ")";
      case 6: return "(" + Make(depth - 1) + " or " + Make(depth - 1) + ")";
      default: return "not (" + Make(depth - 1) + ")";
    }
  }

 private:
  int Pick(int n) { return rng_->Pick(n); }
  std::string Property() {
    static const char* kNames[] = {"A", "B", "C", "D", "Missing"};
    return kNames[Pick(5)];
  }
  std::string Op() {
    static const char* kOps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    return kOps[Pick(6)];
  }
  std::string SystemComparison() {
    switch (Pick(3)) {
      case 0: return "PartitionKey " + Op() + " " + (Pick(4) ? (Pick(2) ? "'p'" : "'b'") : Literal());
      case 1: {
        static const char* kKeys[] = {"'a1'", "'b'", "'B4'", "'5'", "''"};
        return "RowKey " + Op() + " " + (Pick(4) ? std::string(kKeys[Pick(5)]) : Literal());
      }
      default: return "Timestamp " + Op() + " " + (Pick(4) ? DateTimeLiteral() : Literal());
    }
  }
  std::string DateTimeLiteral() {
    return "datetime'" + model::FormatDateTime7(kT0 + Pick(3) - 1) + "'";
  }
  std::string Literal() {
    switch (Pick(10)) {
      case 0: {
        static const char* kValues[] = {"''", "'a'", "'ab'", "'B'", "'10'"};
        return Pick(5) == 0 ? std::string("'") + kEmoji + "'" : kValues[Pick(5)];
      }
      case 1: return std::to_string(Pick(7) - 2);               // Int32
      case 2: return std::to_string(Pick(7) - 2) + "L";         // Int64
      case 3: return Pick(3) == 0 ? "1099511627776L" : "2.5";  // 2^40 as Int64, a Double
      case 4: return Pick(2) ? "3.0" : "-0.0";
      case 5: return Pick(2) ? "true" : "false";
      case 6: return DateTimeLiteral();
      case 7: return std::string("guid'") + (Pick(2) ? kGuid : kGuid2) + "'";
      case 8: return Pick(2) ? "X'0102'" : "X'01'";
      default: return std::to_string(Pick(3)) + ".0";
    }
  }
  RowGenerator* rng_;
};

TEST(FilterBlockTest, MatchBlockEqualsMatchesOnRandomFiltersAndRows) {
  RowGenerator rows_gen(7);
  FilterGenerator gen(&rows_gen);
  int checked = 0, kept = 0, dropped = 0;
  for (int block_index = 0; block_index < 100; ++block_index) {
    const std::vector<Entity> rows = rows_gen.Make(static_cast<size_t>(1 + rows_gen.Pick(200)));
    const model::RowBlock block = BlockOf(rows);
    for (int i = 0; i < 100; ++i) {
      const std::string text = gen.Make(3);
      auto f = Filter::Parse(text);
      ASSERT_TRUE(f.ok()) << text << ": " << f.error().message;  // depth 3: at most 8 comparisons
      ++checked;
      // A random sub-range, as a scan resuming inside a partition asks for.
      const size_t begin = static_cast<size_t>(rows_gen.Pick(static_cast<int>(rows.size())));
      const size_t end = begin + static_cast<size_t>(rows_gen.Pick(static_cast<int>(rows.size() - begin) + 1));
      std::vector<uint8_t> keep(end - begin, 0xAA);
      (*f)->MatchBlock(block, begin, end, keep.data());
      for (size_t r = begin; r < end; ++r) {
        const bool want = (*f)->Matches(rows[r]);
        ASSERT_EQ(keep[r - begin], want ? 1 : 0) << text << " row " << r;
        (want ? kept : dropped)++;
      }
    }
  }
  EXPECT_EQ(checked, 10000);
  EXPECT_GT(kept, 50000);  // both answers are common: the test is not vacuous
  EXPECT_GT(dropped, 50000);
}

TEST(FilterBlockTest, UniformColumnsUseTheServiceSemantics) {
  // Hand-picked cases of the tight loops: widening, NaN, mismatch, absence.
  std::vector<Entity> rows(4);
  const double nan = std::nan("");
  const double doubles[] = {1.0, nan, 5.0, -0.0};
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].partition_key = "p";
    rows[i].row_key = std::to_string(i);
    rows[i].properties = {{"I", EdmValue::Int32(static_cast<int32_t>(i))}, {"D", EdmValue::Double(doubles[i])}};
  }
  const model::RowBlock block = BlockOf(rows);
  auto run = [&](const char* text) {
    auto f = Filter::Parse(text);
    EXPECT_TRUE(f.ok()) << text;
    std::string bits;
    uint8_t keep[4];
    (*f)->MatchBlock(block, 0, 4, keep);
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

}  // namespace
}  // namespace tablestone::protocol::filter
