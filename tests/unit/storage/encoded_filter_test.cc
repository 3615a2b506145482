// EncodedFilter (storage/encoded_filter.h) against evaluation of the decoded
// row (model::EvaluateEntity): random filters over random rows of every Edm
// type (filter_test_gen.h: mismatched types, absent properties, NaN, Int32
// and Int64 extremes, DateTime, upper-case Guids, Binary, ordinal-sensitive
// strings, PartitionKey/RowKey/Timestamp) must get the same answer for every
// row, from the encoded bytes alone; plus the cases random rows do not make.
#include "storage/encoded_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/filter/parser.h"
#include "storage/entity_codec.h"
#include "storage/model/filter_eval.h"
#include "tests/unit/storage/filter_test_gen.h"

namespace tablestone::storage {
namespace {

using namespace filter_test;  // NOLINT(build/namespaces): the shared generators and constants
using protocol::filter::ParseFilter;

// The verdict for `text` on `row`, evaluated on its encoding.
EncodedFilter::Verdict VerdictOf(const model::FilterExpr& expr, const Entity& row) {
  EncodedFilter filter(expr);
  return filter.Evaluate(row.partition_key, row.row_key, EncodeEntityValue(row));
}

TEST(EncodedFilterTest, EqualsDecodedEvaluationOnRandomFiltersAndRows) {
  RowGenerator rows_gen(11);
  FilterGenerator gen(&rows_gen);
  int kept = 0, dropped = 0;
  for (int block = 0; block < 100; ++block) {
    const std::vector<Entity> rows = rows_gen.Make(static_cast<size_t>(1 + rows_gen.Pick(100)), block % 2 == 1);
    std::vector<std::string> values;
    for (const Entity& row : rows) values.push_back(EncodeEntityValue(row));
    for (int i = 0; i < 50; ++i) {
      const std::string text = gen.Make(3);
      auto expr = ParseFilter(text);
      ASSERT_TRUE(expr.ok()) << text;
      EncodedFilter filter(**expr);  // one per scan: reused across rows, as the scan does
      for (size_t r = 0; r < rows.size(); ++r) {
        const bool want = model::EvaluateEntity(**expr, rows[r]);
        const EncodedFilter::Verdict got = filter.Evaluate(rows[r].partition_key, rows[r].row_key, values[r]);
        ASSERT_EQ(got, want ? EncodedFilter::Verdict::kTrue : EncodedFilter::Verdict::kFalse) << text << " row " << r;
        (want ? kept : dropped)++;
      }
    }
  }
  EXPECT_GT(kept, 20000);  // both answers are common: the test is not vacuous
  EXPECT_GT(dropped, 20000);
}

TEST(EncodedFilterTest, HandPickedCases) {
  Entity row;
  row.partition_key = "p";
  row.row_key = "r1";
  row.timestamp = kT0;
  row.properties = {{"I32", EdmValue::Int32(INT32_MIN)},
                    {"I64", EdmValue::Int64(INT64_MAX)},
                    {"D", EdmValue::Double(std::nan(""))},
                    {"G", EdmValue::Guid(kGuid)},           // stored as 16 bytes
                    {"GU", EdmValue::Guid(kGuidUpper)},     // kept as text
                    {"Bin", EdmValue::Binary(std::string("\x00\xff", 2))},
                    {"S", EdmValue::String(kEmoji)},
                    {"T", EdmValue::DateTime(kT0)},
                    {"Dup", EdmValue::Int32(1)},
                    {"Dup", EdmValue::Int32(2)}};  // not made by the API: the first one counts, as Entity::Find
  const std::string dt = "datetime'" + model::FormatDateTime7(kT0) + "'";
  const std::vector<std::string> cases = {
      "I32 eq -2147483648", "I32 lt -2147483647", "I32 eq -2147483648L", "I64 eq 9223372036854775807L",
      "I64 gt 2147483647", "I64 ge 9223372036854775807L", "D eq 1.0", "D ne 1.0", "D lt 1", "not (D gt 1.0)",
      "G eq guid'" + std::string(kGuid) + "'", "GU eq guid'" + std::string(kGuid) + "'", "G gt guid'" + std::string(kGuid2) + "'",
      "Bin eq X'00ff'", "Bin gt X'00'", "Bin lt X'01'", "S gt '" + std::string(kPrivate) + "'", "S lt 'a'",
      "T eq " + dt, "T gt " + dt, "Timestamp eq " + dt, "Timestamp eq T", "Dup eq 1", "Dup eq 2",
      "Missing eq 1", "not (Missing eq 1)", "Missing ne 1", "PartitionKey eq 'p' and RowKey ge 'r'",
      "RowKey lt 'r1'", "S eq 1", "I32 eq 'x'", "G", "not G", "I64"};
  int true_count = 0;
  for (const std::string& text : cases) {
    auto expr = ParseFilter(text);
    if (!expr.ok()) continue;  // e.g. `Timestamp eq T`: not a filter the service evaluates
    const bool want = model::EvaluateEntity(**expr, row);
    EXPECT_EQ(VerdictOf(**expr, row), want ? EncodedFilter::Verdict::kTrue : EncodedFilter::Verdict::kFalse) << text;
    true_count += want ? 1 : 0;
  }
  EXPECT_GT(true_count, 10);
}

TEST(EncodedFilterTest, MalformedValuesAreLeftToTheDecoder) {
  Entity row;
  row.partition_key = "p";
  row.row_key = "r";
  row.properties = {{"A", EdmValue::Int32(1)}, {"B", EdmValue::String("xyz")}};
  const std::string value = EncodeEntityValue(row);
  auto expr = ParseFilter("B eq 'xyz'");
  ASSERT_TRUE(expr.ok());
  EncodedFilter filter(**expr);
  EXPECT_EQ(filter.Evaluate("p", "r", value), EncodedFilter::Verdict::kTrue);
  for (size_t n = 0; n < value.size(); ++n) {  // every truncation before B's last byte
    EXPECT_EQ(filter.Evaluate("p", "r", value.substr(0, n)), EncodedFilter::Verdict::kUnknown) << n;
  }
  std::string other_version = value;
  other_version[0] = 2;
  EXPECT_EQ(filter.Evaluate("p", "r", other_version), EncodedFilter::Verdict::kUnknown);
}

TEST(EncodedFilterTest, RowKeyIsReadOnlyByFiltersThatNameIt) {
  Entity row;
  row.properties = {{"A", EdmValue::Int32(1)}};
  const std::string value = EncodeEntityValue(row);
  for (const char* text : {"A eq 1", "PartitionKey eq 'p' and A eq 1", "Timestamp gt datetime'2000-01-01T00:00:00Z'"}) {
    auto expr = ParseFilter(text);
    ASSERT_TRUE(expr.ok()) << text;
    EncodedFilter filter(**expr);
    EXPECT_FALSE(filter.reads_row_key()) << text;
    // A scan passes a stale RowKey then: the verdict must not depend on it.
    EXPECT_EQ(filter.Evaluate("p", "stale", value), filter.Evaluate("p", "r", value)) << text;
  }
  for (const char* text : {"RowKey eq 'r'", "A eq 2 or not (RowKey lt 'q')"}) {
    auto expr = ParseFilter(text);
    ASSERT_TRUE(expr.ok()) << text;
    EncodedFilter filter(**expr);
    EXPECT_TRUE(filter.reads_row_key()) << text;
    EXPECT_EQ(filter.Evaluate("p", "r", value), EncodedFilter::Verdict::kTrue) << text;
    EXPECT_EQ(filter.Evaluate("p", "a", value), EncodedFilter::Verdict::kFalse) << text;
  }
}

TEST(EncodedFilterTest, PropertiesSteppedOverAreCheckedForSizeOnly) {
  // An Int32 outside its range before the property the filter reads: the
  // filter is decided on B (the row's structure is intact), and the decode
  // of a row it keeps reports the corruption (entity_codec.h).
  Entity row;
  row.properties = {{"A", EdmValue::Int64(int64_t{1} << 31)}, {"B", EdmValue::String("xyz")}};
  std::string value = EncodeEntityValue(row);
  value[1 + 8 + 1 + 1 + 1] = 0x02;  // A's tag, Int64 -> Int32 (after version, timestamp, count, name length, "A")
  auto expr = ParseFilter("B eq 'xyz'");
  ASSERT_TRUE(expr.ok());
  EncodedFilter filter(**expr);
  EXPECT_EQ(filter.Evaluate("p", "r", value), EncodedFilter::Verdict::kTrue);
  Entity decoded;
  EXPECT_EQ(DecodeEntityValue(value, &decoded).code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace tablestone::storage
