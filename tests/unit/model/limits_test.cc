#include "storage/model/limits.h"

#include <gtest/gtest.h>

namespace tablestone::model {
namespace {

TEST(LimitsTest, ConstantsMatchTheDocumentedLimits) {
  EXPECT_EQ(kMaxCustomProperties, 252u);
  EXPECT_EQ(kMaxEntityBytes, 1024u * 1024u);
  EXPECT_EQ(kMaxStringUtf16Units, 32'768u);
  EXPECT_EQ(kMaxBinaryBytes, 65'536u);
}

TEST(LimitsTest, Utf16LengthCountsCodeUnits) {
  EXPECT_EQ(Utf16Length(""), 0u);
  EXPECT_EQ(Utf16Length("abc"), 3u);
  EXPECT_EQ(Utf16Length("\xC3\xA9"), 1u);           // é
  EXPECT_EQ(Utf16Length("\xE2\x82\xAC"), 1u);       // €
  EXPECT_EQ(Utf16Length("\xEF\xBF\xBD"), 1u);       // U+FFFD
  EXPECT_EQ(Utf16Length("\xF0\x9F\x98\x80"), 2u);   // 😀: a surrogate pair
  EXPECT_EQ(Utf16Length("a\xF0\x9F\x98\x80z"), 4u);
  EXPECT_EQ(Utf16Length("\xFF"), 1u);               // invalid byte counts as one unit
  EXPECT_EQ(Utf16Length(std::string(32'768, 'x')), 32'768u);
  // ASCII runs are counted 8 bytes at a time: a multi-byte character at every
  // offset of a long run.
  for (size_t at = 0; at <= 20; ++at) {
    EXPECT_EQ(Utf16Length(std::string(at, 'a') + "\xC3\xA9" + std::string(20 - at, 'b')), 21u) << at;
    EXPECT_EQ(Utf16Length(std::string(at, 'a') + "\xF0\x9F\x98\x80" + std::string(20 - at, 'b')), 22u) << at;
    EXPECT_EQ(Utf16Length(std::string(at, 'a') + "\xE2\x82\xAC\xE2\x82\xAC"), at + 2) << at;
  }
}

TEST(LimitsTest, ValueSizesFollowTheServiceFormula) {
  EXPECT_EQ(ValueSizeForLimit(EdmValue::String("abc")), 4u + 6u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::String("\xF0\x9F\x98\x80")), 4u + 4u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::Binary(std::string(10, '\0'))), 14u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::Guid("00000000-0000-0000-0000-000000000000")), 16u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::Int32(1)), 4u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::Int64(1)), 8u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::Double(1)), 8u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::DateTime(1)), 8u);
  EXPECT_EQ(ValueSizeForLimit(EdmValue::Boolean(true)), 1u);
}

TEST(LimitsTest, EntitySizeAddsKeysAndPerPropertyOverhead) {
  Entity e;
  e.partition_key = "ab";
  e.row_key = "c";
  EXPECT_EQ(EntitySizeForLimit(e), 4u + 4u + 2u);
  e.properties.push_back({"s", EdmValue::String("x")});      // 8 + 2 + (4 + 2)
  e.properties.push_back({"i", EdmValue::Int32(7)});         // 8 + 2 + 4
  e.properties.push_back({"bin", EdmValue::Binary("0123456789")});  // 8 + 6 + 14
  EXPECT_EQ(EntitySizeForLimit(e), 10u + 16u + 14u + 28u);
}

TEST(LimitsTest, LargeStringEntityCrossesTheOneMegabyteLimit) {
  Entity e;
  // 17 properties of 32,768 characters: 17 * (8 + 2*2 + 4 + 65,536) > 1 MiB.
  for (int i = 0; i < 17; ++i) e.properties.push_back({"p" + std::to_string(i % 10) + "x", EdmValue::String(std::string(32'768, 'a'))});
  EXPECT_GT(EntitySizeForLimit(e), kMaxEntityBytes);
  e.properties.resize(15);
  EXPECT_LT(EntitySizeForLimit(e), kMaxEntityBytes);
}

}  // namespace
}  // namespace tablestone::model
