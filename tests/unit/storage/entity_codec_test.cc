#include "storage/entity_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/model/datetime.h"

namespace tablestone::storage {
namespace {

using model::EdmValue;
using model::Entity;

Entity AllTypes() {
  Entity e;
  e.timestamp = model::kMinDateTimeTicks + 123;
  e.properties = {
      {"Str", EdmValue::String("hello \xF0\x9F\x98\x80")},
      {"Empty", EdmValue::String("")},
      {"I32min", EdmValue::Int32(std::numeric_limits<int32_t>::min())},
      {"I32max", EdmValue::Int32(std::numeric_limits<int32_t>::max())},
      {"I32neg", EdmValue::Int32(-1)},
      {"I64min", EdmValue::Int64(std::numeric_limits<int64_t>::min())},
      {"I64max", EdmValue::Int64(std::numeric_limits<int64_t>::max())},
      {"Dbl", EdmValue::Double(3.25)},
      {"NaN", EdmValue::Double(std::nan(""))},
      {"Inf", EdmValue::Double(-std::numeric_limits<double>::infinity())},
      {"True", EdmValue::Boolean(true)},
      {"False", EdmValue::Boolean(false)},
      {"Date", EdmValue::DateTime(model::kMaxDateTimeTicks)},
      {"Guid", EdmValue::Guid("0f8fad5b-d9cb-469f-a165-70867728950e")},
      {"OddGuid", EdmValue::Guid("0F8FAD5B-D9CB-469F-A165-70867728950E")},
      {"Bin", EdmValue::Binary(std::string("\0\x01\xFF", 3))},
      {"\xC3\xA9t\xC3\xA9", EdmValue::Int64(5)},
  };
  return e;
}

TEST(EntityCodecTest, RoundTripsEveryType) {
  Entity e = AllTypes();
  std::string bytes = EncodeEntityValue(e);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), kEntityFormatVersion);
  Entity d;
  ASSERT_TRUE(DecodeEntityValue(bytes, &d).ok());
  EXPECT_EQ(d.timestamp, e.timestamp);
  ASSERT_EQ(d.properties.size(), e.properties.size());
  for (size_t i = 0; i < e.properties.size(); ++i) {
    EXPECT_EQ(d.properties[i], e.properties[i]) << e.properties[i].name;
  }
  // -0.0 keeps its sign bit.
  Entity z;
  z.properties = {{"z", EdmValue::Double(-0.0)}};
  ASSERT_TRUE(DecodeEntityValue(EncodeEntityValue(z), &d).ok());
  EXPECT_TRUE(std::signbit(d.properties[0].value.double_value));
}

// model::RowSizer's contract: a query page may bound a row's JSON by its
// stored size, because every property takes at least 3 + its name's bytes +
// its value's bytes (a String's, Binary's or Guid's text bytes, but 15 for a
// 36-character Guid; 0 for other types) of the encoding. Checked per property, so no property can
// lean on another's slack.
TEST(EntityCodecTest, EveryPropertyTakesAtLeastItsBudget) {
  Entity all = AllTypes();
  all.properties.push_back({"", EdmValue::String("")});
  all.properties.push_back({"", EdmValue::Boolean(false)});
  all.properties.push_back({"g", EdmValue::Guid("not-a-guid")});
  all.properties.push_back({std::string(300, 'n'), EdmValue::Binary(std::string(200, 'b'))});
  const size_t header = EncodeEntityValue(Entity{}).size();
  for (const model::Property& p : all.properties) {
    Entity one;
    one.properties = {p};
    const model::EdmValue& v = p.value;
    size_t value_bytes = 0;
    if (v.type == model::EdmType::kString || v.type == model::EdmType::kBinary) value_bytes = v.text.size();
    if (v.type == model::EdmType::kGuid) value_bytes = v.text.size() == 36 ? 15 : v.text.size();
    EXPECT_GE(EncodeEntityValue(one).size() - header, 3 + p.name.size() + value_bytes) << p.name;
  }
}

TEST(EntityCodecTest, EmptyEntityAndKeysUntouched) {
  Entity e;
  e.timestamp = 42;
  Entity d;
  d.partition_key = "pk";
  d.row_key = "rk";
  ASSERT_TRUE(DecodeEntityValue(EncodeEntityValue(e), &d).ok());
  EXPECT_EQ(d.timestamp, 42);
  EXPECT_TRUE(d.properties.empty());
  EXPECT_EQ(d.partition_key, "pk");
  EXPECT_EQ(d.row_key, "rk");
}

TEST(EntityCodecTest, DecodingIntoAReusedEntityGivesExactResult) {
  Entity big = AllTypes();
  Entity small;
  small.timestamp = 9;
  small.properties = {{"Int", EdmValue::Int32(1)}, {"S", EdmValue::String("x")}};
  Entity scratch;
  ASSERT_TRUE(DecodeEntityValue(EncodeEntityValue(big), &scratch).ok());
  ASSERT_TRUE(DecodeEntityValue(EncodeEntityValue(small), &scratch).ok());
  EXPECT_EQ(scratch.properties, small.properties);
  EXPECT_EQ(scratch.timestamp, 9);
  // Type changes in a reused slot leave no stale payload.
  EXPECT_TRUE(scratch.properties[0].value.text.empty());
}

// $select decoding (issue 20): exactly the named properties, in stored order,
// every one of a repeated name, into a reused Entity; the rest is still
// validated.
TEST(EntityCodecTest, SelectedDecodeKeepsOnlyTheNamedProperties) {
  Entity e = AllTypes();
  e.properties.push_back({"Str", EdmValue::Int32(7)});  // a second "Str"
  const std::string bytes = EncodeEntityValue(e);
  const std::vector<std::vector<std::string>> selects = {
      {"Dbl"}, {"Str", "Guid", "Missing"}, {"Guid", "Bin", "\xC3\xA9t\xC3\xA9", "False"}, {"Missing"},
      {"PartitionKey", "Timestamp"}};
  Entity scratch = AllTypes();  // reused, bigger than any answer
  for (const std::vector<std::string>& select : selects) {
    ASSERT_TRUE(DecodeEntityValue(bytes, &scratch, &select).ok());
    std::vector<model::Property> want;
    for (const model::Property& p : e.properties) {
      if (std::find(select.begin(), select.end(), p.name) != select.end()) want.push_back(p);
    }
    EXPECT_EQ(scratch.properties, want) << select[0];
    EXPECT_EQ(scratch.timestamp, e.timestamp);
  }
  // Null or empty: everything.
  const std::vector<std::string> none;
  ASSERT_TRUE(DecodeEntityValue(bytes, &scratch, &none).ok());
  EXPECT_EQ(scratch.properties, e.properties);
  ASSERT_TRUE(DecodeEntityValue(bytes, &scratch, nullptr).ok());
  EXPECT_EQ(scratch.properties, e.properties);
  // A malformed property that is not selected is still an error.
  const std::vector<std::string> only_first = {"Str"};
  for (size_t n = 1; n < bytes.size(); ++n) {
    EXPECT_EQ(DecodeEntityValue(bytes.substr(0, n), &scratch, &only_first).code(), StatusCode::kCorruption) << n;
  }
}

TEST(EntityCodecTest, EncodingIsCompact) {
  Entity e;
  e.properties = {{"n", EdmValue::Int32(5)}};
  // version + timestamp + count + (name len + name + tag + varint)
  EXPECT_EQ(EncodeEntityValue(e).size(), 1u + 8u + 1u + 4u);
  e.properties = {{"g", EdmValue::Guid("0f8fad5b-d9cb-469f-a165-70867728950e")}};
  EXPECT_EQ(EncodeEntityValue(e).size(), 1u + 8u + 1u + 3u + 16u);
}

TEST(EntityCodecTest, TimestampOnlyDecode) {
  Entity e = AllTypes();
  int64_t ts = 0;
  ASSERT_TRUE(DecodeEntityTimestamp(EncodeEntityValue(e), &ts).ok());
  EXPECT_EQ(ts, e.timestamp);
  EXPECT_EQ(DecodeEntityTimestamp("", &ts).code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeEntityTimestamp("\x01\x02", &ts).code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeEntityTimestamp(std::string("\x09") + std::string(8, '\0'), &ts).code(), StatusCode::kCorruption);
}

TEST(EntityCodecTest, EveryTruncationIsCorruption) {
  std::string bytes = EncodeEntityValue(AllTypes());
  Entity d;
  for (size_t n = 0; n < bytes.size(); ++n) {
    Status s = DecodeEntityValue(std::string_view(bytes.data(), n), &d);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << n;
  }
  EXPECT_EQ(DecodeEntityValue(bytes + "x", &d).code(), StatusCode::kCorruption);
}

std::string Header(uint8_t count) {
  std::string s(1, static_cast<char>(kEntityFormatVersion));
  s.append(8, '\0');
  s.push_back(static_cast<char>(count));
  return s;
}

TEST(EntityCodecTest, InvalidPayloadsAreCorruption) {
  Entity d;
  auto decode = [&](const std::string& s) { return DecodeEntityValue(s, &d).code(); };
  EXPECT_EQ(decode(std::string("\x02") + std::string(9, '\0')), StatusCode::kCorruption);  // unknown version
  EXPECT_EQ(decode(Header(1) + "\x01x" + "\x09" + "\x00"), StatusCode::kCorruption);      // unknown tag
  EXPECT_EQ(decode(Header(1) + "\x01x" + "\x05" + "\x02"), StatusCode::kCorruption);      // boolean 2
  EXPECT_EQ(decode(Header(1) + "\x01x" + "\x05" + "\x01"), StatusCode::kOk);
  // Int32 out of range: zigzag(2^31) = 2^32.
  EXPECT_EQ(decode(Header(1) + "\x01x" + "\x02" + "\x80\x80\x80\x80\x10"), StatusCode::kCorruption);
  // Over-long varint.
  EXPECT_EQ(decode(Header(1) + "\x01x" + "\x03" + std::string(11, '\x80') + "\x01"), StatusCode::kCorruption);
  // String length beyond the value.
  EXPECT_EQ(decode(Header(1) + "\x01x" + "\x01" + "\x7Fshort"), StatusCode::kCorruption);
  // Property count far beyond the bytes present: rejected before allocating.
  EXPECT_EQ(decode(Header(0).substr(0, 9) + "\xFF\xFF\xFF\xFF\x0F"), StatusCode::kCorruption);
  // Count says 2, one property present.
  EXPECT_EQ(decode(Header(2) + "\x01x" + "\x05" + "\x01"), StatusCode::kCorruption);
}

TEST(EntityCodecTest, RandomMutationsNeverCrash) {
  std::string good = EncodeEntityValue(AllTypes());
  std::mt19937 rng(11);
  Entity d;
  size_t ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) s[rng() % s.size()] = static_cast<char>(rng() % 256);
    if (rng() % 4 == 0) s.resize(rng() % s.size());
    Status st = DecodeEntityValue(s, &d);
    if (st.ok()) {
      ++ok;
    } else {
      EXPECT_EQ(st.code(), StatusCode::kCorruption);
    }
  }
  // Some mutations only change payload bytes and stay decodable.
  EXPECT_GT(ok, 0u);
}

}  // namespace
}  // namespace tablestone::storage
