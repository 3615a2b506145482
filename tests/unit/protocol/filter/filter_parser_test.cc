// Parser: precedence, normalisation, and every error class with its HTTP
// status, Azure code and message.
#include "protocol/filter/parser.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <random>
#include <string>

#include "protocol/filter/filter.h"

namespace tablestone::protocol::filter {
namespace {

using model::CompareOp;
using model::EdmType;
using model::FilterExpr;
using model::FilterNode;
using model::FilterNodeKind;
using model::PropertyRef;
using model::SystemProperty;

std::string OpName(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return "eq";
    case CompareOp::kNe: return "ne";
    case CompareOp::kGt: return "gt";
    case CompareOp::kGe: return "ge";
    case CompareOp::kLt: return "lt";
    case CompareOp::kLe: return "le";
  }
  return "?";
}

std::string LiteralText(const model::EdmValue& v) {
  char buf[64];
  switch (v.type) {
    case EdmType::kString: return "'" + v.text + "'";
    case EdmType::kInt32: return std::to_string(v.int_value);
    case EdmType::kInt64: return std::to_string(v.int_value) + "L";
    case EdmType::kDouble: std::snprintf(buf, sizeof buf, "%gD", v.double_value); return buf;
    case EdmType::kBoolean: return v.int_value ? "true" : "false";
    case EdmType::kDateTime: return "dt:" + std::to_string(v.int_value);
    case EdmType::kGuid: return "guid:" + v.text;
    case EdmType::kBinary: {
      std::string out = "X:";
      for (unsigned char c : v.text) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        out += buf;
      }
      return out;
    }
  }
  return "?";
}

// An s-expression of the AST, e.g. "(or [a eq 1] (and b [c lt 'x']))".
std::string Dump(const FilterExpr& ast, int index) {
  const FilterNode& n = ast.nodes[static_cast<size_t>(index)];
  switch (n.kind) {
    case FilterNodeKind::kAnd:
    case FilterNodeKind::kOr:
    case FilterNodeKind::kNot: {
      std::string out = n.kind == FilterNodeKind::kAnd ? "(and" : (n.kind == FilterNodeKind::kOr ? "(or" : "(not");
      for (int c : n.children) out += " " + Dump(ast, c);
      return out + ")";
    }
    case FilterNodeKind::kCompare: return "[" + n.property.name + " " + OpName(n.op) + " " + LiteralText(n.literal) + "]";
    case FilterNodeKind::kBoolProperty: return n.property.name;
    case FilterNodeKind::kConstant: return n.constant ? "true" : "false";
  }
  return "?";
}

std::string Repeat(const std::string& s, int n, const std::string& sep = "") {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? sep : "") + s;
  return out;
}

struct TreeCase {
  std::string filter;
  std::string tree;
};
void PrintTo(const TreeCase& c, std::ostream* os) { *os << c.filter; }

class ParserTreeTest : public ::testing::TestWithParam<TreeCase> {};

TEST_P(ParserTreeTest, BuildsTree) {
  ApiResult<std::unique_ptr<FilterExpr>> r = ParseFilter(GetParam().filter);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(Dump(**r, (*r)->root), GetParam().tree);
}

INSTANTIATE_TEST_SUITE_P(
    ParserTrees, ParserTreeTest,
    ::testing::Values(
        TreeCase{"a eq 1", "[a eq 1]"}, TreeCase{"  a  eq\t1  ", "[a eq 1]"},
        TreeCase{"a eq 1 or b eq 2 and c eq 3", "(or [a eq 1] (and [b eq 2] [c eq 3]))"},
        TreeCase{"a eq 1 and b eq 2 or c eq 3", "(or (and [a eq 1] [b eq 2]) [c eq 3])"},
        TreeCase{"(a eq 1 or b eq 2) and c eq 3", "(and (or [a eq 1] [b eq 2]) [c eq 3])"},
        TreeCase{"a eq 1 and b eq 2 and c eq 3", "(and [a eq 1] [b eq 2] [c eq 3])"},
        TreeCase{"a eq 1 and (b eq 2 and c eq 3)", "(and [a eq 1] (and [b eq 2] [c eq 3]))"},
        TreeCase{"not a eq 1", "(not [a eq 1])"},
        TreeCase{"not a eq 1 and b eq 2", "(and (not [a eq 1]) [b eq 2])"},
        TreeCase{"not (a eq 1 or b eq 2)", "(not (or [a eq 1] [b eq 2]))"},
        TreeCase{"not(a eq 1)", "(not [a eq 1])"}, TreeCase{"not not IsActive", "(not (not IsActive))"},
        TreeCase{"(((a eq 1)))", "[a eq 1]"},
        // Literal on the left: normalised with the mirrored operator.
        TreeCase{"1 lt a", "[a gt 1]"}, TreeCase{"1 le a", "[a ge 1]"}, TreeCase{"1 gt a", "[a lt 1]"},
        TreeCase{"1 ge a", "[a le 1]"}, TreeCase{"5 eq a", "[a eq 5]"}, TreeCase{"5 ne a", "[a ne 5]"},
        TreeCase{"'x' ge PartitionKey", "[PartitionKey le 'x']"},
        // Bare properties and constants.
        TreeCase{"IsActive", "IsActive"}, TreeCase{"(IsActive)", "IsActive"}, TreeCase{"not IsActive", "(not IsActive)"},
        TreeCase{"true", "true"}, TreeCase{"false", "false"}, TreeCase{"(true)", "true"},
        TreeCase{"true and a eq 1", "(and true [a eq 1])"}, TreeCase{"IsActive or a ne 2L", "(or IsActive [a ne 2L])"},
        // Upper-case keywords are ordinary property names.
        TreeCase{"AND eq 1", "[AND eq 1]"}, TreeCase{"True", "True"},
        // (Parenthesised) property operands.
        TreeCase{"(a) eq 1", "[a eq 1]"},
        // Every literal kind as a comparison operand.
        TreeCase{"a eq 'O''Brien'", "[a eq 'O'Brien']"}, TreeCase{"a eq 2147483648L", "[a eq 2147483648L]"},
        TreeCase{"a gt 2.5", "[a gt 2.5D]"}, TreeCase{"a gt 3D", "[a gt 3D]"}, TreeCase{"a eq true", "[a eq true]"},
        TreeCase{"a eq false", "[a eq false]"}, TreeCase{"a lt -4", "[a lt -4]"},
        TreeCase{"Timestamp lt datetime'0001-01-01T00:00:00Z'", "[Timestamp lt dt:0]"},
        TreeCase{"g eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", "[g eq guid:0f8fad5b-d9cb-469f-a165-70867728950e]"},
        TreeCase{"b eq X'0aFF'", "[b eq X:0aff]"}, TreeCase{"b eq binary'01'", "[b eq X:01]"},
        // Empty filter = no filter.
        TreeCase{"", "true"}, TreeCase{" \t ", "true"}));

TEST(ParserTest, ResolvesSystemProperties) {
  ApiResult<std::unique_ptr<FilterExpr>> r =
      ParseFilter("PartitionKey eq 'a' and RowKey eq 'b' and Timestamp gt datetime'2020-01-01T00:00:00Z' and "
                  "TableName eq 'c' and partitionkey eq 'd'");
  ASSERT_TRUE(r.ok());
  const FilterExpr& ast = **r;
  const FilterNode& root = ast.nodes[static_cast<size_t>(ast.root)];
  ASSERT_EQ(root.children.size(), 5u);
  auto prop = [&](int i) -> const PropertyRef& { return ast.nodes[static_cast<size_t>(root.children[i])].property; };
  EXPECT_EQ(prop(0).system, SystemProperty::kPartitionKey);
  EXPECT_EQ(prop(1).system, SystemProperty::kRowKey);
  EXPECT_EQ(prop(2).system, SystemProperty::kTimestamp);
  EXPECT_EQ(prop(3).system, SystemProperty::kNone);
  EXPECT_TRUE(prop(3).is_table_name);
  EXPECT_EQ(prop(4).system, SystemProperty::kNone);  // property names are case-sensitive
  EXPECT_FALSE(prop(4).is_table_name);
  EXPECT_EQ(ast.comparison_count, 5u);
}

struct ErrorCase {
  std::string filter;
  int status;
  std::string code;
  std::string message;  // exact
};
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.filter; }

std::string Syntax(int pos, const std::string& filter) {
  return "Syntax error at position " + std::to_string(pos) + " in '" + filter + "'.";
}
const char kInvalid[] = "One of the request inputs is not valid.";
const char kNotImpl[] = "The requested operation is not implemented on the specified resource.";
std::string NullOp(const std::string& op) {
  return "The operator '" + op + "' is not supported for the 'null' literal; only equality checks are supported.";
}
ErrorCase SyntaxCase(const std::string& f, int pos) { return {f, 400, "InvalidInput", Syntax(pos, f)}; }
ErrorCase NotImplCase(const std::string& f) { return {f, 501, "NotImplemented", kNotImpl}; }
ErrorCase InvalidCase(const std::string& f) { return {f, 400, "InvalidInput", kInvalid}; }
ErrorCase NullOpCase(const std::string& f, const std::string& op) { return {f, 400, "InvalidInput", NullOp(op)}; }

class ParserErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorTest, RejectsWithServiceError) {
  const ErrorCase& c = GetParam();
  auto r = Filter::Parse(c.filter);
  ASSERT_FALSE(r.ok()) << c.filter;
  EXPECT_EQ(r.error().http_status, c.status);
  EXPECT_EQ(r.error().code, c.code);
  EXPECT_EQ(r.error().message, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    ParserSyntaxErrors, ParserErrorTest,
    ::testing::Values(
        // The service's recorded example (Learn: querying-tables-and-entities).
        SyntaxCase("property1 eq 1'invalid'", 23),
        // Keywords are lower case only.
        SyntaxCase("a eq 1 AND b eq 2", 10), SyntaxCase("a Eq 1", 4), SyntaxCase("a eq 1 Or b eq 2", 9),
        SyntaxCase("NOT a eq 1", 5),
        // Structure.
        SyntaxCase("a eq", 4), SyntaxCase("eq 1", 2), SyntaxCase("(a eq 1", 7), SyntaxCase("a eq 1)", 7),
        SyntaxCase("a eq 1 eq 2", 9), SyntaxCase("a eq 1 and", 10), SyntaxCase("a eq 1 or or b eq 2", 12),
        SyntaxCase("not", 3), SyntaxCase("()", 2), SyntaxCase("a b", 3), SyntaxCase("a eq 1 b eq 2", 8),
        SyntaxCase("a in (1,2)", 4), SyntaxCase("a eq 1,", 7), SyntaxCase("a eq not b", 8),
        SyntaxCase("a eq (b eq 1", 12),
        // Non-boolean where a boolean is due.
        SyntaxCase("5", 1), SyntaxCase("'abc'", 5), SyntaxCase("null", 4), SyntaxCase("a eq 1 and 5", 12),
        SyntaxCase("not 'x'", 7), SyntaxCase("(5)", 3),
        // Lexical errors.
        SyntaxCase("a eq 'x", 7), SyntaxCase("a eq \"x\"", 5), SyntaxCase("a eq 1.", 7),
        SyntaxCase("a eq 99999999999999999999L", 26), SyntaxCase("a eq X'0'", 9),
        SyntaxCase("a eq datetime'2020-01-01T00:00:00.12345678Z'", 44), SyntaxCase("a/b eq 1", 1),
        // Positions count UTF-16 code units: U+1F600 is two, U+00E9 one.
        SyntaxCase("a eq '\xF0\x9F\x98\x80' x", 11), SyntaxCase("a eq '\xC3\xA9' x", 10),
        // A syntax error wins over an earlier unsupported construct or null comparison.
        SyntaxCase("startswith(Name,'a') and a eq 'x", 32), SyntaxCase("a eq null or b eq", 17),
        SyntaxCase("a add 1 eq", 10)));

INSTANTIATE_TEST_SUITE_P(
    ParserNullErrors, ParserErrorTest,
    ::testing::Values(InvalidCase("a eq null"), InvalidCase("a ne null"), InvalidCase("null eq a"),
                      InvalidCase("null ne a"), InvalidCase("b eq 1 and a eq null"), NullOpCase("a lt null", "LessThan"),
                      NullOpCase("a le null", "LessThanOrEqual"), NullOpCase("a gt null", "GreaterThan"),
                      NullOpCase("a ge null", "GreaterThanOrEqual"), NullOpCase("null lt a", "LessThan"),
                      // The first problem in the text wins.
                      InvalidCase("a eq null and b eq c"), NullOpCase("a gt null or b eq null", "GreaterThan")));

INSTANTIATE_TEST_SUITE_P(
    ParserNotImplemented, ParserErrorTest,
    ::testing::Values(NotImplCase("a eq b"), NotImplCase("a eq True"), NotImplCase("1 eq 1"),
                      NotImplCase("'a' eq 'b'"), NotImplCase("true eq false"), NotImplCase("startswith(Name, 'a')"),
                      NotImplCase("startswith(Name,'a') eq true"), NotImplCase("substringof('a', Name)"),
                      NotImplCase("endswith(Name, 'z') and a eq 1"), NotImplCase("tolower(Name) eq 'a'"),
                      NotImplCase("length(Name) gt 2"), NotImplCase("year(Birthday) eq 2000"),
                      NotImplCase("foo() eq 1"), NotImplCase("a add 1 eq 2"), NotImplCase("a sub 1 eq 2"),
                      NotImplCase("a mul 2 eq 2"), NotImplCase("a div 2 eq 2"), NotImplCase("a mod 2 eq 0"),
                      NotImplCase("2 eq a add 1"), NotImplCase("-a eq 1"), NotImplCase("(a eq 1) eq true"),
                      NotImplCase("a eq 1 and b eq c"), NotImplCase("a eq b and c eq null"),
                      NotImplCase("not startswith(a, 'x')")));

INSTANTIATE_TEST_SUITE_P(
    ParserLimits, ParserErrorTest,
    ::testing::Values(InvalidCase(Repeat("a eq 1", 16, " and ")), InvalidCase(Repeat("a", 16, " or ")),
                      InvalidCase(Repeat("a eq 1", 8, " and ") + " or " + Repeat("IsActive", 8, " and ")),
                      InvalidCase(Repeat("(", 65) + "a eq 1" + Repeat(")", 65)),
                      InvalidCase(Repeat("not ", 200) + "a"), InvalidCase(Repeat("-", 100) + "a eq 1"),
                      InvalidCase(Repeat("f(", 100) + Repeat(")", 100)),
                      InvalidCase("a eq '" + std::string(kMaxFilterBytes, 'x') + "'")));

TEST(ParserTest, AcceptsUpToTheLimits) {
  EXPECT_TRUE(Filter::Parse(Repeat("a eq 1", 15, " and ")).ok());
  EXPECT_TRUE(Filter::Parse(Repeat("(", 64) + "a eq 1" + Repeat(")", 64)).ok());
  EXPECT_TRUE(Filter::Parse(Repeat("not ", 64) + "a").ok());
  std::string long_key = "PartitionKey eq '" + std::string(kMaxFilterBytes - 18, 'k') + "'";
  ASSERT_EQ(long_key.size(), kMaxFilterBytes);
  EXPECT_TRUE(Filter::Parse(long_key).ok());
}

TEST(ParserTest, DeepNestingOfEveryKindIsRejectedWithoutCrashing) {
  for (const char* open : {"(", "not ", "- ", "f(", "not (", "a eq f("}) {
    std::string text = Repeat(std::string(open), 100000);
    auto r = Filter::Parse(text.substr(0, kMaxFilterBytes));
    ASSERT_FALSE(r.ok()) << open;
    EXPECT_EQ(r.error().http_status, 400) << open;
  }
}

// Random token soup: Parse must return (never crash or throw), with only the
// documented error classes; successful parses must evaluate.
TEST(ParserTest, RandomInputNeverCrashes) {
  const std::string fragments[] = {"a",     "PartitionKey", "RowKey", " eq ", " ne ", " lt ", " and ", " or ",
                                   "not ",  "(",            ")",      "'x'",  "''",   "'",    "1",     "2L",
                                   "2.5",   "true",         "null",   "-",    ",",    "f(",   "X'0A'", "guid'",
                                   "datetime'2020-01-01T00:00:00Z'", " ", "\xF0\x9F\x98\x80", "add ", "e", "\x01",
                                   "\xFF"};
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, std::size(fragments) - 1);
  std::uniform_int_distribution<int> len(0, 24);
  model::Entity e;
  e.partition_key = "p";
  e.row_key = "r";
  e.properties.push_back({"a", model::EdmValue::Int32(1)});
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (int n = len(rng); n > 0; --n) text += fragments[pick(rng)];
    auto r = Filter::Parse(text);
    if (r.ok()) {
      ++ok;
      (void)(*r)->Matches(e);
      (void)(*r)->MatchesTableName("t");
      model::ScanSpec spec;
      (*r)->PlanScan(&spec);
    } else {
      EXPECT_TRUE(r.error().http_status == 400 || r.error().http_status == 501) << text;
      EXPECT_TRUE(r.error().code == "InvalidInput" || r.error().code == "NotImplemented") << text;
    }
  }
  EXPECT_GT(ok, 0);
}

}  // namespace
}  // namespace tablestone::protocol::filter
