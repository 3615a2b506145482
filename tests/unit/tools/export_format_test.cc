#include "tools/export_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "storage/model/datetime.h"

namespace tablestone::tools {
namespace {

using model::EdmValue;
using model::Entity;

Entity Decode(std::string_view line) {
  DecodedLine d;
  std::string error;
  EXPECT_TRUE(DecodeLine(line, &d, &error)) << error << " in " << line;
  EXPECT_EQ(d.kind, DecodedLine::Kind::kEntity);
  return d.entity;
}

std::string Encode(const Entity& e) {
  std::string s;
  AppendEntityLine(e, &s);
  return s;
}

std::string DecodeError(std::string_view line) {
  DecodedLine d;
  std::string error;
  EXPECT_FALSE(DecodeLine(line, &d, &error)) << line;
  return error;
}

Entity EveryType() {
  Entity e;
  // Quotes, a backslash is not allowed in keys, but non-BMP characters
  // (surrogate pairs in UTF-16) and characters that need URL escaping are.
  e.partition_key = "p'q\"\xF0\x9F\x98\x80 \xC3\xA9";
  e.row_key = "a%b+c&d=e \xF0\x9D\x84\x9E";
  e.properties = {
      {"S", EdmValue::String(std::string("nul\0ctl\x01\n\"\\", 11))},
      {"I32min", EdmValue::Int32(std::numeric_limits<int32_t>::min())},
      {"I32max", EdmValue::Int32(std::numeric_limits<int32_t>::max())},
      {"I64min", EdmValue::Int64(std::numeric_limits<int64_t>::min())},
      {"I64max", EdmValue::Int64(std::numeric_limits<int64_t>::max())},
      {"Whole", EdmValue::Double(6.0)},
      {"NegZero", EdmValue::Double(-0.0)},
      {"Tiny", EdmValue::Double(std::numeric_limits<double>::denorm_min())},
      {"Huge", EdmValue::Double(std::numeric_limits<double>::max())},
      {"Nan", EdmValue::Double(std::numeric_limits<double>::quiet_NaN())},
      {"Inf", EdmValue::Double(std::numeric_limits<double>::infinity())},
      {"NegInf", EdmValue::Double(-std::numeric_limits<double>::infinity())},
      {"T", EdmValue::Boolean(true)},
      {"F", EdmValue::Boolean(false)},
      {"Max", EdmValue::DateTime(model::kMaxDateTimeTicks)},
      {"Min", EdmValue::DateTime(model::kMinDateTimeTicks + 1)},
      {"G", EdmValue::Guid("0f8fad5b-d9cb-469f-a165-70867728950e")},
      {"Bin", EdmValue::Binary(std::string("\0\xff\x80 ", 4))},
      {"EmptyBin", EdmValue::Binary("")},
      {"EmptyStr", EdmValue::String("")},
  };
  return e;
}

TEST(ExportFormatTest, EveryEdmTypeRoundTripsExactly) {
  Entity e = EveryType();
  std::string line = Encode(e);
  Entity back = Decode(line);
  EXPECT_EQ(back, e);  // EdmValue equality: bitwise doubles, NaN == NaN
  EXPECT_TRUE(std::signbit(back.Find("NegZero")->value.double_value));
  EXPECT_EQ(Encode(back), line);
}

TEST(ExportFormatTest, WritesTheDocumentedText) {
  Entity e;
  e.partition_key = "p";
  e.row_key = "r";
  e.properties = {{"L", EdmValue::Int64(-9223372036854775807 - 1)},
                  {"D", EdmValue::Double(6)},
                  {"N", EdmValue::Double(std::numeric_limits<double>::quiet_NaN())},
                  {"T", EdmValue::DateTime(model::kUnixEpochTicks + 1)},
                  {"B", EdmValue::Binary("hi")},
                  {"S", EdmValue::String("x\ty")},
                  {"I", EdmValue::Int32(-5)},
                  {"Y", EdmValue::Boolean(true)}};
  EXPECT_EQ(Encode(e),
            "{\"PartitionKey\":\"p\",\"RowKey\":\"r\","
            "\"L@odata.type\":\"Edm.Int64\",\"L\":\"-9223372036854775808\","
            "\"D@odata.type\":\"Edm.Double\",\"D\":6.0,"
            "\"N@odata.type\":\"Edm.Double\",\"N\":\"NaN\","
            "\"T@odata.type\":\"Edm.DateTime\",\"T\":\"1970-01-01T00:00:00.0000001Z\","
            "\"B@odata.type\":\"Edm.Binary\",\"B\":\"aGk=\","
            "\"S\":\"x\\ty\","
            "\"I@odata.type\":\"Edm.Int32\",\"I\":-5,"
            "\"Y@odata.type\":\"Edm.Boolean\",\"Y\":true}");
}

TEST(ExportFormatTest, ReadsAnnotationsAfterValuesAndEscapedKeys) {
  Entity e = Decode(R"({"RowKey":"\ud834\udd1e","x":"5","x@odata.type":"Edm.Int64","PartitionKey":"\u00e9"})");
  EXPECT_EQ(e.partition_key, "\xC3\xA9");
  EXPECT_EQ(e.row_key, "\xF0\x9D\x84\x9E");
  ASSERT_EQ(e.properties.size(), 1u);
  EXPECT_EQ(e.properties[0].value, EdmValue::Int64(5));
}

TEST(ExportFormatTest, TypesUnannotatedValuesAsTheServiceDoes) {
  // Hand-written files: no annotations on numbers and booleans, as in an Insert Entity body.
  Entity e = Decode(R"({"PartitionKey":"a","RowKey":"b","i":42,"big":2147483648,"d":1.5,"y":false,"s":"7"})");
  ASSERT_EQ(e.properties.size(), 5u);
  EXPECT_EQ(e.Find("i")->value, EdmValue::Int32(42));
  EXPECT_EQ(e.Find("big")->value, EdmValue::Double(2147483648.0));
  EXPECT_EQ(e.Find("d")->value, EdmValue::Double(1.5));
  EXPECT_EQ(e.Find("y")->value, EdmValue::Boolean(false));
  EXPECT_EQ(e.Find("s")->value, EdmValue::String("7"));
}

TEST(ExportFormatTest, IgnoresTimestamp) {
  Entity e = Decode(
      R"({"PartitionKey":"a","RowKey":"b","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2020-01-01T00:00:00Z","x":"1"})");
  ASSERT_EQ(e.properties.size(), 1u);
  EXPECT_EQ(e.properties[0].name, "x");
}

TEST(ExportFormatTest, HeaderAndEndLines) {
  std::string h, end;
  AppendHeaderLine(SectionHeader{"Tbl", "acct", 1}, &h);
  AppendEndLine(SectionEnd{"Tbl", 42}, &end);
  EXPECT_EQ(h, R"({"@format":"tablestone-export","@version":1,"@table":"Tbl","@source":"acct"})");
  EXPECT_EQ(end, R"({"@end":"Tbl","@entities":42})");
  DecodedLine d;
  std::string error;
  ASSERT_TRUE(DecodeLine(h, &d, &error)) << error;
  EXPECT_EQ(d.kind, DecodedLine::Kind::kHeader);
  EXPECT_EQ(d.header.table, "Tbl");
  EXPECT_EQ(d.header.source, "acct");
  ASSERT_TRUE(DecodeLine(end, &d, &error)) << error;
  EXPECT_EQ(d.kind, DecodedLine::Kind::kEnd);
  EXPECT_EQ(d.end.entities, 42u);
}

TEST(ExportFormatTest, RefusesBadLines) {
  EXPECT_NE(DecodeError(R"({"@format":"tablestone-export","@version":2,"@table":"t"})").find("newer"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"@format":"other","@version":1,"@table":"t"})").find("not a tablestone export"),
            std::string::npos);
  EXPECT_NE(DecodeError("{\"PartitionKey\":\"a\",\"RowKey\":\"b\"").find("not a JSON object"), std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Int32","x":2147483648})")
                .find("Edm.Int32"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Int64","x":"12a"})").find("x"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Decimal","x":"1"})")
                .find("unknown Edm type"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Guid","x":"nope"})").find("GUID"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Binary","x":"!!"})").find("base64"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.DateTime","x":"1600-01-01T00:00:00Z"})")
                .find("1601"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Double","x":"nan"})").find("NaN"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","RowKey":"b","y@odata.type":"Edm.Int32"})").find("without its value"),
            std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":"a","x":"1"})").find("RowKey"), std::string::npos);
  EXPECT_NE(DecodeError(R"({"PartitionKey":1,"RowKey":"b"})").find("not a string"), std::string::npos);
}

TEST(SectionCheckerTest, AcceptsWellFormedSectionsAndCountsLines) {
  SectionChecker c;
  DecodedLine d;
  std::string error;
  for (const char* line : {R"({"@format":"tablestone-export","@version":1,"@table":"a","@source":""})",
                           R"({"PartitionKey":"p","RowKey":"1"})", R"({"@end":"a","@entities":1})",
                           R"({"@format":"tablestone-export","@version":1,"@table":"b","@source":""})",
                           R"({"@end":"b","@entities":0})"}) {
    ASSERT_TRUE(c.Feed(line, &d, &error)) << error;
  }
  EXPECT_TRUE(c.Finish(&error)) << error;
  EXPECT_EQ(c.line_number(), 5u);
}

TEST(SectionCheckerTest, FindsTruncationAndMisorder) {
  DecodedLine d;
  std::string error;
  const std::string header = R"({"@format":"tablestone-export","@version":1,"@table":"a","@source":""})";
  {
    SectionChecker c;
    ASSERT_TRUE(c.Feed(header, &d, &error));
    ASSERT_TRUE(c.Feed(R"({"PartitionKey":"p","RowKey":"1"})", &d, &error));
    EXPECT_FALSE(c.Finish(&error));
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  }
  {
    SectionChecker c;
    EXPECT_FALSE(c.Feed(R"({"PartitionKey":"p","RowKey":"1"})", &d, &error));
    EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  }
  {
    SectionChecker c;
    ASSERT_TRUE(c.Feed(header, &d, &error));
    EXPECT_FALSE(c.Feed(R"({"@end":"a","@entities":3})", &d, &error));
    EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  }
  {
    SectionChecker c;
    ASSERT_TRUE(c.Feed(header, &d, &error));
    EXPECT_FALSE(c.Feed(header, &d, &error));
  }
  {
    SectionChecker c;
    EXPECT_FALSE(c.Finish(&error));
    EXPECT_NE(error.find("no table section"), std::string::npos);
  }
}

}  // namespace
}  // namespace tablestone::tools
