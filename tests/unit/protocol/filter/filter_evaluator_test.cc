// Row evaluation (storage/model/filter_eval.h, through Filter): the service's comparison semantics (Learn: querying-tables-and-entities): widening,
// the type-mismatch truth table, missing properties, ordinal strings,
// DateTime, Guid, Binary, Boolean, bare properties, Query Tables.
#include "storage/model/filter_eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "protocol/filter/filter.h"
#include "storage/model/ordinal.h"

namespace tablestone::protocol::filter {
namespace {

using model::CompareOp;
using model::CompareUtf16Ordinal;
using model::CompareValue;
using model::EdmValue;
using model::ValueView;

constexpr int64_t kDt = 637500000001234567LL;  // 2021-02-27T05:20:00.1234567Z
constexpr int64_t kTimestamp = 637600000000000000LL;

model::Entity SampleEntity() {
  model::Entity e;
  e.partition_key = "pk1";
  e.row_key = "rk1";
  e.timestamp = kTimestamp;
  auto add = [&](const char* name, EdmValue v) { e.properties.push_back({name, std::move(v)}); };
  add("Str", EdmValue::String("abc"));
  add("Upper", EdmValue::String("B"));
  add("Empty", EdmValue::String(""));
  add("Emoji", EdmValue::String("\xF0\x9F\x98\x80"));         // U+1F600
  add("Private", EdmValue::String("\xEE\x80\x80"));           // U+E000
  add("I32", EdmValue::Int32(5));
  add("Neg", EdmValue::Int32(-3));
  add("I64", EdmValue::Int64(5));
  add("Big", EdmValue::Int64(5000000000LL));
  add("Dbl", EdmValue::Double(5.0));
  add("Frac", EdmValue::Double(2.5));
  add("Nan", EdmValue::Double(std::numeric_limits<double>::quiet_NaN()));
  add("Bool", EdmValue::Boolean(true));
  add("BoolF", EdmValue::Boolean(false));
  add("Dt", EdmValue::DateTime(kDt));
  add("Gd", EdmValue::Guid("0f8fad5b-d9cb-469f-a165-70867728950e"));
  add("Bin", EdmValue::Binary(std::string("\x0a\xff", 2)));
  add("EmptyBin", EdmValue::Binary(""));
  return e;
}

bool Eval(const std::string& filter) {
  auto f = Filter::Parse(filter);
  EXPECT_TRUE(f.ok()) << filter << ": " << (f.ok() ? "" : f.error().message);
  if (!f.ok()) return false;
  return (*f)->Matches(SampleEntity());
}

struct EvalCase {
  std::string filter;
  bool expected;
};
void PrintTo(const EvalCase& c, std::ostream* os) { *os << c.filter << " -> " << c.expected; }

class EvaluatorTest : public ::testing::TestWithParam<EvalCase> {};

TEST_P(EvaluatorTest, Matches) { EXPECT_EQ(Eval(GetParam().filter), GetParam().expected) << GetParam().filter; }

INSTANTIATE_TEST_SUITE_P(
    EvaluatorWidening, EvaluatorTest,
    ::testing::Values(EvalCase{"I32 eq 5", true}, EvalCase{"I32 ne 5", false}, EvalCase{"I32 gt 4", true},
                      EvalCase{"I32 ge 5", true}, EvalCase{"I32 lt 5", false}, EvalCase{"I32 le 5", true},
                      EvalCase{"Neg lt 0", true}, EvalCase{"Neg eq -3", true},
                      // Int32 literal widens to an Int64 property.
                      EvalCase{"I64 eq 5", true}, EvalCase{"I64 gt 4", true}, EvalCase{"I64 lt 4", false},
                      EvalCase{"I64 eq 5L", true}, EvalCase{"Big gt 2147483647", true},
                      EvalCase{"Big eq 5000000000L", true}, EvalCase{"Big lt 5000000001L", true},
                      // Int32 and Int64 literals widen to a Double property.
                      EvalCase{"Dbl eq 5", true}, EvalCase{"Dbl eq 5L", true}, EvalCase{"Dbl eq 5.0", true},
                      EvalCase{"Dbl eq 5D", true}, EvalCase{"Dbl eq 5M", true}, EvalCase{"Dbl eq 5F", true},
                      EvalCase{"Dbl lt 5.5", true}, EvalCase{"Frac gt 2", true}, EvalCase{"Frac lt 3L", true},
                      EvalCase{"Frac eq 2.5", true}, EvalCase{"Frac eq 25e-1", true},
                      // The property never widens: these are mismatches (table below).
                      EvalCase{"I32 eq 5L", false}, EvalCase{"I32 ne 5L", true}, EvalCase{"I32 eq 5.0", false},
                      EvalCase{"I64 eq 5.0", false}, EvalCase{"I64 gt 4.0", false}, EvalCase{"I64 lt 6.0", true}));

INSTANTIATE_TEST_SUITE_P(
    EvaluatorMissingProperty, EvaluatorTest,
    ::testing::Values(EvalCase{"Missing eq 1", false}, EvalCase{"Missing ne 1", false},
                      EvalCase{"Missing lt 1", false}, EvalCase{"Missing le 1", false},
                      EvalCase{"Missing gt 1", false}, EvalCase{"Missing ge 1", false},
                      EvalCase{"Missing ne 'x'", false}, EvalCase{"not (Missing eq 1)", true},
                      EvalCase{"not (Missing ne 1)", true}, EvalCase{"not Missing lt 1", true},
                      EvalCase{"Missing", false}, EvalCase{"not Missing", true},
                      EvalCase{"str eq 'abc'", false},  // names are case-sensitive
                      EvalCase{"Missing eq 1 or I32 eq 5", true}, EvalCase{"Missing ne 1 and I32 eq 5", false}));

INSTANTIATE_TEST_SUITE_P(
    EvaluatorStrings, EvaluatorTest,
    ::testing::Values(EvalCase{"Str eq 'abc'", true}, EvalCase{"Str eq 'ABC'", false}, EvalCase{"Str ne 'ABC'", true},
                      EvalCase{"Str lt 'abd'", true}, EvalCase{"Str gt 'ab'", true}, EvalCase{"Str lt 'abc '", true},
                      EvalCase{"Str ge 'abc'", true}, EvalCase{"Str le 'abc'", true}, EvalCase{"Str gt 'B'", true},
                      EvalCase{"Upper lt 'a'", true},  // ordinal: 'B' < 'a'
                      EvalCase{"Empty eq ''", true}, EvalCase{"Empty lt 'a'", true},
                      // Prefix query as the SDKs send it.
                      EvalCase{"Str ge 'ab' and Str lt 'ac'", true}, EvalCase{"Str ge 'ac' and Str lt 'ad'", false},
                      // UTF-16 order: U+1F600 (surrogates D83D DE00) sorts below U+E000 and U+FFFD,
                      // though its UTF-8 bytes sort above them; above U+D7FF in both.
                      EvalCase{"Emoji lt '\xEE\x80\x80'", true}, EvalCase{"Emoji lt '\xEF\xBF\xBD'", true},
                      EvalCase{"Private gt '\xF0\x9F\x98\x80'", true}, EvalCase{"Emoji gt '\xED\x9F\xBF'", true},
                      EvalCase{"Emoji lt '\xF0\x9F\x98\x81'", true}, EvalCase{"Emoji eq '\xF0\x9F\x98\x80'", true},
                      EvalCase{"Emoji gt '\xF0\x9F\x97\xBF'", true}, EvalCase{"Str eq 'O''Brien'", false}));

INSTANTIATE_TEST_SUITE_P(
    EvaluatorTypedValues, EvaluatorTest,
    ::testing::Values(
        // Boolean: false < true.
        EvalCase{"Bool eq true", true}, EvalCase{"Bool ne false", true}, EvalCase{"Bool gt false", true},
        EvalCase{"BoolF lt true", true}, EvalCase{"BoolF ge true", false}, EvalCase{"true eq Bool", true},
        // DateTime by ticks.
        EvalCase{"Dt eq datetime'2021-02-27T05:20:00.1234567Z'", true},
        EvalCase{"Dt gt datetime'2021-02-27T05:20:00.1234566Z'", true},
        EvalCase{"Dt lt datetime'2021-02-27T05:20:00.123457Z'", true},
        EvalCase{"Dt ge datetime'2021-02-27T05:20:00Z'", true}, EvalCase{"Dt le datetime'2021-02-27'", false},
        // Timestamp comes from entity.timestamp.
        EvalCase{"Timestamp eq datetime'2021-06-22T23:06:40Z'", true},
        EvalCase{"Timestamp lt datetime'2022-01-01T00:00:00Z'", true},
        EvalCase{"Timestamp gt datetime'2022-01-01T00:00:00Z'", false},
        // Guid: any case in the literal.
        EvalCase{"Gd eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", true},
        EvalCase{"Gd eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'", true},
        EvalCase{"Gd ne guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", false},
        EvalCase{"Gd eq guid'0f8fad5b-d9cb-469f-a165-70867728950f'", false},
        EvalCase{"Gd lt guid'1f8fad5b-d9cb-469f-a165-70867728950e'", true},
        EvalCase{"Gd gt guid'0E8FAD5B-D9CB-469F-A165-70867728950E'", true},
        // Binary bytewise.
        EvalCase{"Bin eq X'0AFF'", true}, EvalCase{"Bin eq binary'0aff'", true}, EvalCase{"Bin gt X'0A'", true},
        EvalCase{"Bin lt X'0B'", true}, EvalCase{"Bin gt X'0AFE'", true}, EvalCase{"Bin lt X'0AFF00'", true},
        EvalCase{"EmptyBin eq X''", true}, EvalCase{"EmptyBin lt X'00'", true},
        // Doubles: NaN is unordered.
        EvalCase{"Nan eq 5.0", false}, EvalCase{"Nan ne 5.0", true}, EvalCase{"Nan lt 5.0", false},
        EvalCase{"Nan gt 5.0", false}, EvalCase{"Nan ge 5", false}));

INSTANTIATE_TEST_SUITE_P(
    EvaluatorBooleanLogic, EvaluatorTest,
    ::testing::Values(EvalCase{"Bool", true}, EvalCase{"BoolF", false}, EvalCase{"not Bool", false},
                      EvalCase{"not BoolF", true}, EvalCase{"Str", false}, EvalCase{"not Str", true},
                      EvalCase{"I32", false}, EvalCase{"PartitionKey", false}, EvalCase{"true", true},
                      EvalCase{"false", false}, EvalCase{"not true", false}, EvalCase{"", true},
                      EvalCase{"I32 eq 5 and Str eq 'abc'", true}, EvalCase{"I32 eq 6 and Str eq 'abc'", false},
                      EvalCase{"I32 eq 6 or Str eq 'abc'", true}, EvalCase{"I32 eq 6 or Str eq 'x'", false},
                      EvalCase{"Bool and not BoolF", true}, EvalCase{"(I32 eq 6 or Bool) and Str gt 'a'", true},
                      EvalCase{"not (I32 eq 5 and Str eq 'abc')", false},
                      EvalCase{"PartitionKey eq 'pk1' and RowKey eq 'rk1'", true},
                      EvalCase{"PartitionKey eq 'pk1' and RowKey gt 'rk1'", false},
                      EvalCase{"PartitionKey ge 'pk' and PartitionKey lt 'pl'", true},
                      EvalCase{"RowKey ne 'rk1'", false}));

// The type-mismatch truth table (Learn: querying-tables-and-entities, pinned by the service's
// comparison matrix): eq false, ne true, lt true, le true, gt false, ge false.
struct MismatchCase {
  std::string property;
  std::string literal;
};
void PrintTo(const MismatchCase& c, std::ostream* os) { *os << c.property << " vs " << c.literal; }

class EvaluatorMismatchTest : public ::testing::TestWithParam<MismatchCase> {};

TEST_P(EvaluatorMismatchTest, FollowsTruthTable) {
  const struct {
    const char* op;
    bool expected;
  } kTable[] = {{"eq", false}, {"ne", true}, {"lt", true}, {"le", true}, {"gt", false}, {"ge", false}};
  for (const auto& row : kTable) {
    std::string filter = GetParam().property + " " + row.op + " " + GetParam().literal;
    EXPECT_EQ(Eval(filter), row.expected) << filter;
    // The same comparison written literal-first (mirrored operator) agrees.
    std::string mirrored_op = row.op;
    if (mirrored_op == "lt") mirrored_op = "gt";
    else if (mirrored_op == "gt") mirrored_op = "lt";
    else if (mirrored_op == "le") mirrored_op = "ge";
    else if (mirrored_op == "ge") mirrored_op = "le";
    std::string flipped = GetParam().literal + " " + mirrored_op + " " + GetParam().property;
    EXPECT_EQ(Eval(flipped), row.expected) << flipped;
  }
}

INSTANTIATE_TEST_SUITE_P(
    EvaluatorMismatches, EvaluatorMismatchTest,
    ::testing::Values(
        MismatchCase{"Str", "5"}, MismatchCase{"Str", "5L"}, MismatchCase{"Str", "5.0"}, MismatchCase{"Str", "true"},
        MismatchCase{"Str", "datetime'2020-01-01T00:00:00Z'"},
        MismatchCase{"Str", "guid'0f8fad5b-d9cb-469f-a165-70867728950e'"}, MismatchCase{"Str", "X'616263'"},
        MismatchCase{"I32", "'5'"}, MismatchCase{"I32", "true"}, MismatchCase{"I32", "5L"}, MismatchCase{"I32", "4L"},
        MismatchCase{"I32", "6L"}, MismatchCase{"I32", "5.0"}, MismatchCase{"I32", "1.0"},
        MismatchCase{"I32", "datetime'2020-01-01T00:00:00Z'"}, MismatchCase{"I64", "5.0"},
        MismatchCase{"I64", "1.0"}, MismatchCase{"I64", "'5'"}, MismatchCase{"Big", "1.0"},
        MismatchCase{"Dbl", "'5'"}, MismatchCase{"Dbl", "true"}, MismatchCase{"Bool", "1"},
        MismatchCase{"Bool", "'true'"}, MismatchCase{"BoolF", "0"}, MismatchCase{"Dt", "'x'"},
        MismatchCase{"Dt", "637500000001234567L"}, MismatchCase{"Gd", "'0f8fad5b-d9cb-469f-a165-70867728950e'"},
        MismatchCase{"Gd", "X'0f8fad5bd9cb469fa16570867728950e'"}, MismatchCase{"Bin", "'x'"},
        MismatchCase{"Bin", "guid'0f8fad5b-d9cb-469f-a165-70867728950e'"}, MismatchCase{"PartitionKey", "5"},
        MismatchCase{"RowKey", "5L"}, MismatchCase{"PartitionKey", "true"},
        MismatchCase{"Timestamp", "'2021-06-22T23:06:40Z'"}, MismatchCase{"Timestamp", "637600000000000000L"}));

TEST(EvaluatorTest, CompareValueDirect) {
  // Int32 literal vs Int64 property near the edges: no truncation.
  EXPECT_TRUE(CompareValue(ValueView::Of(EdmValue::Int64(INT64_MAX)), CompareOp::kGt, EdmValue::Int32(INT32_MAX)));
  EXPECT_TRUE(CompareValue(ValueView::Of(EdmValue::Int64(INT64_MIN)), CompareOp::kLt, EdmValue::Int32(INT32_MIN)));
  // Infinity compares as a number.
  EXPECT_TRUE(CompareValue(ValueView::Of(EdmValue::Double(INFINITY)), CompareOp::kGt, EdmValue::Int64(INT64_MAX)));
  // -0.0 == 0.0 by IEEE.
  EXPECT_TRUE(CompareValue(ValueView::Of(EdmValue::Double(-0.0)), CompareOp::kEq, EdmValue::Int32(0)));
}

TEST(EvaluatorTest, MatchesTableName) {
  struct Case {
    const char* filter;
    const char* table;
    bool expected;
  } cases[] = {
      {"TableName eq 'mytable'", "mytable", true},
      {"TableName eq 'MyTable'", "mytable", false},
      {"TableName ge 'my' and TableName lt 'mz'", "mytable", true},
      {"TableName ge 'my' and TableName lt 'mz'", "other", false},
      {"TableName ne 'x'", "mytable", true},
      {"Name eq 'mytable'", "mytable", false},
      {"not (Name eq 'mytable')", "mytable", true},
      {"PartitionKey eq 'mytable'", "mytable", false},
      {"TableName", "mytable", false},
      {"TableName eq 5", "mytable", false},
      {"TableName lt 5", "mytable", true},
      {"tablename eq 'mytable'", "mytable", false},
      {"true", "t", true},
  };
  for (const Case& c : cases) {
    auto f = Filter::Parse(c.filter);
    ASSERT_TRUE(f.ok()) << c.filter;
    EXPECT_EQ((*f)->MatchesTableName(c.table), c.expected) << c.filter << " on " << c.table;
  }
}

// Reference: UTF-8 -> UTF-16 code units, then std::lexicographical_compare.
std::u16string ToUtf16(const std::string& s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp;
    size_t n;
    if (c < 0x80) { cp = c; n = 1; }
    else if (c < 0xE0) { cp = c & 0x1F; n = 2; }
    else if (c < 0xF0) { cp = c & 0x0F; n = 3; }
    else { cp = c & 0x07; n = 4; }
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += n;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  return out;
}

TEST(EvaluatorTest, OrdinalCompareAgreesWithUtf16OnRandomStrings) {
  const std::string alphabet[] = {"a", "b", "B", "\x7F", "\xC3\xA9", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBD",
                                  "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\x01"};
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pick(0, std::size(alphabet) - 1);
  std::uniform_int_distribution<int> len(0, 4);
  for (int i = 0; i < 20000; ++i) {
    std::string a, b;
    for (int n = len(rng); n > 0; --n) a += alphabet[pick(rng)];
    for (int n = len(rng); n > 0; --n) b += alphabet[pick(rng)];
    std::u16string ua = ToUtf16(a), ub = ToUtf16(b);
    int expected = ua < ub ? -1 : (ub < ua ? 1 : 0);
    int got = CompareUtf16Ordinal(a, b);
    ASSERT_EQ((got > 0) - (got < 0), expected) << "a=" << a << " b=" << b;
  }
}

TEST(EvaluatorTest, MatchesDoesNotDependOnPropertyOrder) {
  model::Entity e = SampleEntity();
  std::reverse(e.properties.begin(), e.properties.end());
  auto f = Filter::Parse("I32 eq 5 and Str eq 'abc' and Bool");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Matches(e));
}

}  // namespace
}  // namespace tablestone::protocol::filter
