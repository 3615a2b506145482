// Planner: the key ranges produced for each filter pattern, and that reading
// only the planned ranges (then applying Matches) returns exactly the rows a
// full scan + Matches returns, on generated entities in key order.
#include "protocol/filter/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "protocol/filter/filter.h"
#include "storage/model/ordinal.h"

namespace tablestone::protocol::filter {
namespace {

using model::CompareUtf16Ordinal;
using model::KeyBound;
using model::KeyRange;
using model::ScanSpec;

std::string BoundText(const KeyBound& b) { return b.partition_key + (b.row_key ? "/" + *b.row_key : ""); }

// "[a/1 .. a]" style: '[' / ']' inclusive, '(' / ')' exclusive; "none" for match_nothing,
// "all" for the whole table.
std::string Render(const ScanSpec& spec) {
  if (spec.match_nothing) return spec.ranges.empty() ? "none" : "none+ranges?";
  if (spec.ranges.empty()) return "all";
  std::string out;
  for (const KeyRange& r : spec.ranges) {
    if (!out.empty()) out += ", ";
    out += r.lower ? (r.lower->inclusive ? "[" : "(") + BoundText(*r.lower) : "(-inf";
    out += " .. ";
    out += r.upper ? BoundText(*r.upper) + (r.upper->inclusive ? "]" : ")") : "+inf)";
  }
  return out;
}

std::string Plan(const std::string& filter) {
  auto f = Filter::Parse(filter);
  EXPECT_TRUE(f.ok()) << filter;
  if (!f.ok()) return "parse error";
  ScanSpec spec;
  (*f)->PlanScan(&spec);
  return Render(spec);
}

struct PlanCase {
  std::string filter;
  std::string ranges;
};
void PrintTo(const PlanCase& c, std::ostream* os) { *os << c.filter; }

class PlannerTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlannerTest, ProducesRanges) { EXPECT_EQ(Plan(GetParam().filter), GetParam().ranges) << GetParam().filter; }

const std::string kEmoji = "\xF0\x9F\x98\x80";  // U+1F600
const std::string kPrivate = "\xEE\x80\x80";    // U+E000

INSTANTIATE_TEST_SUITE_P(
    PlannerPartitionKey, PlannerTest,
    ::testing::Values(PlanCase{"PartitionKey eq 'a'", "[a .. a]"}, PlanCase{"'a' eq PartitionKey", "[a .. a]"},
                      PlanCase{"PartitionKey ge 'a'", "[a .. +inf)"}, PlanCase{"PartitionKey gt 'a'", "(a .. +inf)"},
                      PlanCase{"PartitionKey lt 'b'", "(-inf .. b)"}, PlanCase{"PartitionKey le 'b'", "(-inf .. b]"},
                      PlanCase{"'b' gt PartitionKey", "(-inf .. b)"},
                      PlanCase{"PartitionKey ge 'a' and PartitionKey lt 'b'", "[a .. b)"},
                      PlanCase{"PartitionKey gt 'a' and PartitionKey le 'b'", "(a .. b]"},
                      PlanCase{"PartitionKey ne 'a'", "(-inf .. a), (a .. +inf)"},
                      PlanCase{"PartitionKey eq 'a' or PartitionKey eq 'a'", "[a .. a]"},
                      PlanCase{"PartitionKey eq 'c' or PartitionKey eq 'a' or PartitionKey eq 'b'",
                               "[a .. a], [b .. b], [c .. c]"},
                      PlanCase{"(PartitionKey ge 'a' and PartitionKey le 'c') or (PartitionKey ge 'b' and "
                               "PartitionKey le 'd')",
                               "[a .. d]"},
                      PlanCase{"PartitionKey lt 'b' or PartitionKey ge 'b'", "all"},
                      // Sorted in UTF-16 order: U+1F600 before U+E000.
                      PlanCase{"PartitionKey eq '" + kPrivate + "' or PartitionKey eq '" + kEmoji + "'",
                               "[" + kEmoji + " .. " + kEmoji + "], [" + kPrivate + " .. " + kPrivate + "]"},
                      PlanCase{"PartitionKey eq 'a' and Name eq 'x'", "[a .. a]"},
                      PlanCase{"PartitionKey eq 'a' and not (RowKey eq '1')", "[a .. a/1), (a/1 .. a]"},
                      PlanCase{"PartitionKey eq ''", "[ .. ]"}));

INSTANTIATE_TEST_SUITE_P(
    PlannerRowKey, PlannerTest,
    ::testing::Values(
        PlanCase{"PartitionKey eq 'a' and RowKey eq '1'", "[a/1 .. a/1]"},
        PlanCase{"RowKey eq '1' and PartitionKey eq 'a'", "[a/1 .. a/1]"},
        PlanCase{"PartitionKey eq 'a' and RowKey ge '1' and RowKey lt '5'", "[a/1 .. a/5)"},
        PlanCase{"PartitionKey eq 'a' and RowKey gt '1'", "(a/1 .. a]"},
        PlanCase{"PartitionKey eq 'a' and RowKey le '1'", "[a .. a/1]"},
        PlanCase{"PartitionKey eq 'a' and RowKey lt '1'", "[a .. a/1)"},
        PlanCase{"PartitionKey eq 'a' and RowKey ne '1'", "[a .. a/1), (a/1 .. a]"},
        PlanCase{"(PartitionKey eq 'b' and RowKey eq '2') or (PartitionKey eq 'a' and RowKey eq '1')",
                 "[a/1 .. a/1], [b/2 .. b/2]"},
        PlanCase{"(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'a' and RowKey eq '1')",
                 "[a/1 .. a/1]"},
        PlanCase{"PartitionKey eq 'a' and (RowKey eq '3' or RowKey eq '1')", "[a/1 .. a/1], [a/3 .. a/3]"},
        PlanCase{"PartitionKey eq 'a' and (RowKey lt '3' or RowKey ge '2')", "[a .. a]"},
        PlanCase{"PartitionKey eq 'a' or (PartitionKey eq 'a' and RowKey eq '1')", "[a .. a]"},
        PlanCase{"(PartitionKey eq 'a' and RowKey ge '5') or PartitionKey eq 'b'", "[a/5 .. a], [b .. b]"},
        PlanCase{"PartitionKey eq 'a' and (PartitionKey eq 'b' or RowKey eq '1')", "[a/1 .. a/1]"},
        PlanCase{"PartitionKey eq 'a' and ((RowKey gt '1' and RowKey lt '3') or RowKey eq '9')",
                 "(a/1 .. a/3), [a/9 .. a/9]"},
        // A RowKey condition without a PartitionKey equality does not narrow.
        PlanCase{"RowKey eq '1'", "all"}, PlanCase{"PartitionKey ge 'a' and RowKey eq '1'", "[a .. +inf)"},
        PlanCase{"(PartitionKey eq 'a' and RowKey eq '1') or RowKey eq '2'", "all"}));

// Key patterns of real workloads (issue 20): zero-padded and inverted-tick
// RowKeys read as string ranges, prefixes as [prefix, successor), `or` of
// key ranges, several partitions with one RowKey condition, and negations.
INSTANTIATE_TEST_SUITE_P(
    PlannerKeyPatterns, PlannerTest,
    ::testing::Values(
        // Inverted ticks (max ticks - event ticks, 19 digits): "the newest hour".
        PlanCase{"PartitionKey eq 'dev7' and RowKey ge '2518946335999999999' and RowKey lt '2518946371999999999'",
                 "[dev7/2518946335999999999 .. dev7/2518946371999999999)"},
        // Zero-padded ids, two windows in one partition.
        PlanCase{"PartitionKey eq 'o' and ((RowKey ge '000100' and RowKey lt '000200') or "
                 "(RowKey ge '000900' and RowKey le '000950'))",
                 "[o/000100 .. o/000200), [o/000900 .. o/000950]"},
        // A prefix: 'log-2026-11' <= PartitionKey < 'log-2026-12'.
        PlanCase{"PartitionKey ge 'log-2026-11' and PartitionKey lt 'log-2026-12'", "[log-2026-11 .. log-2026-12)"},
        // An `or` of key ranges over partitions.
        PlanCase{"(PartitionKey eq 'a' and RowKey lt '3') or (PartitionKey eq 'c' and RowKey ge '7')",
                 "[a .. a/3), [c/7 .. c]"},
        // One RowKey condition for several partitions.
        PlanCase{"(PartitionKey eq 'b' or PartitionKey eq 'a') and RowKey ge '5'", "[a/5 .. a], [b/5 .. b]"},
        PlanCase{"(PartitionKey eq 'a' or (PartitionKey eq 'b' and Name eq 'x')) and RowKey lt '2' and RowKey gt '0'",
                 "(a/0 .. a/2), (b/0 .. b/2)"},
        // Not every branch pins a partition: the RowKey does not narrow.
        PlanCase{"(PartitionKey eq 'a' or PartitionKey ge 'b') and RowKey eq '1'", "[a .. a], [b .. +inf)"},
        // Negated key comparisons.
        PlanCase{"not (PartitionKey eq 'a')", "(-inf .. a), (a .. +inf)"},
        PlanCase{"not (PartitionKey lt 'm')", "[m .. +inf)"},
        PlanCase{"PartitionKey eq 'a' and not (RowKey ge '5')", "[a .. a/5)"},
        PlanCase{"not (RowKey eq '1')", "all"}, PlanCase{"not (PartitionKey eq 5)", "all"}));

INSTANTIATE_TEST_SUITE_P(
    PlannerSpecialCases, PlannerTest,
    ::testing::Values(
        // Contradictions.
        PlanCase{"PartitionKey eq 'a' and PartitionKey eq 'b'", "none"},
        PlanCase{"PartitionKey eq 'a' and RowKey eq '1' and RowKey eq '2'", "none"},
        PlanCase{"PartitionKey gt 'b' and PartitionKey lt 'a'", "none"},
        PlanCase{"PartitionKey ge 'b' and PartitionKey lt 'b'", "none"},
        PlanCase{"(PartitionKey eq 'a' and PartitionKey eq 'b') or false", "none"}, PlanCase{"false", "none"},
        // Keys compared with non-strings: fixed answers (eq/gt/ge never, ne/lt/le always).
        PlanCase{"PartitionKey eq 5", "none"}, PlanCase{"PartitionKey gt 5", "none"},
        PlanCase{"PartitionKey ge 5L", "none"}, PlanCase{"PartitionKey lt 5", "all"},
        PlanCase{"PartitionKey ne true", "all"}, PlanCase{"RowKey eq 5L", "none"},
        PlanCase{"PartitionKey eq 'a' and RowKey le 2.5", "[a .. a]"},
        // A bare key is never Boolean true.
        PlanCase{"PartitionKey", "none"}, PlanCase{"RowKey or PartitionKey eq 'a'", "[a .. a]"},
        // No narrowing.
        PlanCase{"true", "all"}, PlanCase{"", "all"}, PlanCase{"Name eq 'x'", "all"},
        PlanCase{"not (Name eq 'x')", "all"}, PlanCase{"not (PartitionKey eq 'a' and Name eq 'x')", "all"}, PlanCase{"PartitionKey eq 'a' or Name eq 'x'", "all"},
        PlanCase{"Timestamp gt datetime'2020-01-01T00:00:00Z'", "all"},
        PlanCase{"PartitionKey eq 'a' and true", "[a .. a]"}));

TEST(PlannerTest, IntersectsWithGivenRanges) {
  auto f = Filter::Parse("PartitionKey lt 'c'");
  ASSERT_TRUE(f.ok());
  ScanSpec spec;
  spec.ranges.push_back(KeyRange{KeyBound{"b", std::nullopt, true}, std::nullopt});
  (*f)->PlanScan(&spec);
  EXPECT_EQ(Render(spec), "[b .. c)");

  ScanSpec disjoint;
  disjoint.ranges.push_back(KeyRange{KeyBound{"d", std::nullopt, true}, std::nullopt});
  (*f)->PlanScan(&disjoint);
  EXPECT_EQ(Render(disjoint), "none");

  ScanSpec nothing;
  nothing.match_nothing = true;
  auto all = Filter::Parse("true");
  ASSERT_TRUE(all.ok());
  (*all)->PlanScan(&nothing);
  EXPECT_TRUE(nothing.match_nothing);
}

TEST(PlannerTest, LeavesPredicateAndPagingAlone) {
  auto f = Filter::Parse("PartitionKey eq 'a'");
  ASSERT_TRUE(f.ok());
  ScanSpec spec;
  spec.max_results = 7;
  spec.resume_from = model::EntityKey{"a", "x"};
  spec.predicate = *f;
  (*f)->PlanScan(&spec);
  EXPECT_EQ(spec.max_results, 7u);
  EXPECT_TRUE(spec.resume_from.has_value());
  EXPECT_EQ(spec.predicate, *f);
}

// ---- planned scan == full scan ----

int CompareKeys(const model::Entity& e, const std::string& pk, const std::string& rk) {
  if (int c = CompareUtf16Ordinal(e.partition_key, pk); c != 0) return c;
  return CompareUtf16Ordinal(e.row_key, rk);
}

// KeyBound semantics from storage/model/scan_spec.h, written independently of the planner.
bool AboveLower(const model::Entity& e, const KeyBound& b) {
  if (!b.row_key) {
    int c = CompareUtf16Ordinal(e.partition_key, b.partition_key);
    return b.inclusive ? c >= 0 : c > 0;
  }
  int c = CompareKeys(e, b.partition_key, *b.row_key);
  return b.inclusive ? c >= 0 : c > 0;
}
bool BelowUpper(const model::Entity& e, const KeyBound& b) {
  if (!b.row_key) {
    int c = CompareUtf16Ordinal(e.partition_key, b.partition_key);
    return b.inclusive ? c <= 0 : c < 0;
  }
  int c = CompareKeys(e, b.partition_key, *b.row_key);
  return b.inclusive ? c <= 0 : c < 0;
}
bool InRange(const model::Entity& e, const KeyRange& r) {
  return (!r.lower || AboveLower(e, *r.lower)) && (!r.upper || BelowUpper(e, *r.upper));
}

std::vector<model::Entity> MakeTable() {
  const std::vector<std::string> pks = {"", "a", "aa", "b", "B", "c", "\xC3\xA9", kEmoji, kPrivate};
  const std::vector<std::string> rks = {"", "0", "1", "10", "2", "a", "b", kEmoji, kPrivate};
  std::vector<model::Entity> rows;
  int n = 0;
  for (const std::string& pk : pks) {
    for (const std::string& rk : rks) {
      model::Entity e;
      e.partition_key = pk;
      e.row_key = rk;
      e.timestamp = 637000000000000000LL + n;
      e.properties.push_back({"N", model::EdmValue::Int32(n % 10)});
      e.properties.push_back({"Flag", model::EdmValue::Boolean(n % 3 == 0)});
      ++n;
      rows.push_back(std::move(e));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const model::Entity& x, const model::Entity& y) {
    return CompareKeys(x, y.partition_key, y.row_key) < 0;
  });
  return rows;
}

class FilterGenerator {
 public:
  explicit FilterGenerator(uint32_t seed) : rng_(seed) {}

  std::string Make(int depth) {
    int choice = Pick(depth <= 0 ? 5 : 9);
    switch (choice) {
      case 0:
      case 1: return "PartitionKey " + Op() + " " + KeyLiteral();
      case 2: return "RowKey " + Op() + " " + KeyLiteral();
      case 3: return Pick(2) ? "N " + Op() + " " + std::to_string(Pick(10)) : "Flag";
      case 4: return Pick(6) == 0 ? (Pick(2) ? "true" : "false") : "PartitionKey eq " + KeyLiteral();
      case 5:
      case 6: return "(" + Make(depth - 1) + " and " + Make(depth - 1) + ")";
      case 7: return "(" + Make(depth - 1) + " or " + Make(depth - 1) + ")";
      default: return "not (" + Make(depth - 1) + ")";
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string Op() {
    static const char* kOps[] = {"eq", "eq", "ne", "lt", "le", "gt", "ge"};
    return kOps[Pick(7)];
  }
  std::string KeyLiteral() {
    static const std::vector<std::string> kValues = {"", "a", "aa", "ab", "b", "B", "0", "1", "10", "15",
                                                     "2", "\xC3\xA9", kEmoji, kPrivate, "zz"};
    if (Pick(12) == 0) return Pick(2) ? "5" : "true";  // type mismatch
    return "'" + kValues[static_cast<size_t>(Pick(static_cast<int>(kValues.size())))] + "'";
  }
  std::mt19937 rng_;
};

TEST(PlannerTest, PlannedScanEqualsFullScan) {
  const std::vector<model::Entity> rows = MakeTable();
  FilterGenerator gen(2024);
  int narrowed = 0, nothing = 0, checked = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text = gen.Make(3);
    auto f = Filter::Parse(text);
    if (!f.ok()) {
      ASSERT_EQ(f.error().code, "InvalidInput") << text;  // only the 15-comparison limit
      continue;
    }
    ++checked;
    ScanSpec spec;
    (*f)->PlanScan(&spec);
    std::vector<size_t> full, planned;
    for (size_t k = 0; k < rows.size(); ++k) {
      if ((*f)->Matches(rows[k])) full.push_back(k);
    }
    if (spec.match_nothing) {
      ++nothing;
      ASSERT_TRUE(spec.ranges.empty()) << text;
    } else if (spec.ranges.empty()) {
      planned = full;
    } else {
      ++narrowed;
      // Ranges are sorted and disjoint: every row is in at most one range, and
      // rows of range i all precede rows of range i+1.
      size_t last_range = 0;
      for (size_t k = 0; k < rows.size(); ++k) {
        int hits = 0;
        for (size_t r = 0; r < spec.ranges.size(); ++r) {
          if (!InRange(rows[k], spec.ranges[r])) continue;
          ++hits;
          ASSERT_GE(r, last_range) << text;
          last_range = r;
          if ((*f)->Matches(rows[k])) planned.push_back(k);
        }
        ASSERT_LE(hits, 1) << text;
      }
    }
    ASSERT_EQ(planned, full) << text << " planned as " << Render(spec);
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(narrowed, 500);
  EXPECT_GT(nothing, 100);
}

}  // namespace
}  // namespace tablestone::protocol::filter
