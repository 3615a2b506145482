#include "protocol/odata_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "protocol/url.h"
#include "storage/model/datetime.h"

namespace tablestone::protocol {
namespace {

constexpr std::string_view kBase = "http://127.0.0.1:10002/devstoreaccount1/";

model::Entity Sample() {
  model::Entity e;
  e.partition_key = "p";
  e.row_key = "r";
  e.timestamp = *model::ParseIsoDateTime("2021-06-09T01:17:08.3795894Z");
  e.properties = {{"s", model::EdmValue::String("x\"y")},
                  {"i", model::EdmValue::Int32(-3)},
                  {"l", model::EdmValue::Int64(123456789012)},
                  {"d", model::EdmValue::Double(6)},
                  {"nan", model::EdmValue::Double(std::numeric_limits<double>::quiet_NaN())},
                  {"b", model::EdmValue::Boolean(true)},
                  {"dt", model::EdmValue::DateTime(*model::ParseIsoDateTime("2021-07-08T09:10:09Z"))},
                  {"g", model::EdmValue::Guid("c9da6455-213d-42c9-9a79-3e9149a57833")},
                  {"bin", model::EdmValue::Binary("Bar")}};
  return e;
}

TEST(ODataWriterTest, FormatDouble) {
  EXPECT_EQ(FormatDouble(6), "6.0");
  EXPECT_EQ(FormatDouble(-2), "-2.0");
  EXPECT_EQ(FormatDouble(1.5), "1.5");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(std::stod(FormatDouble(1e24)), 1e24);
  EXPECT_NE(FormatDouble(1e24).find_first_of(".e"), std::string::npos);
  EXPECT_EQ(FormatDouble(0), "0.0");
}

TEST(ODataWriterTest, MinimalMetadataSingleEntity) {
  model::Entity e = Sample();
  EntityWriteContext ctx{kBase, "devstoreaccount1", "mytable", MetadataLevel::kMinimalMetadata, nullptr};
  std::string out = WriteEntity(e, ctx);
  EXPECT_EQ(out.substr(0, 120),
            std::string("{\"odata.metadata\":\"http://127.0.0.1:10002/devstoreaccount1/$metadata#mytable/@Element\","
                        "\"odata.etag\":\"W/\\\"datetime'2021-06-09T01%3A17%3A08.3795894Z'\\\"\",")
                .substr(0, 120));
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["PartitionKey"], "p");
  EXPECT_EQ(j["RowKey"], "r");
  EXPECT_EQ(j["Timestamp"], "2021-06-09T01:17:08.3795894Z");
  EXPECT_FALSE(j.contains("Timestamp@odata.type"));
  EXPECT_EQ(j["s"], "x\"y");
  EXPECT_FALSE(j.contains("s@odata.type"));
  EXPECT_EQ(j["i"], -3);
  EXPECT_EQ(j["l"], "123456789012");
  EXPECT_EQ(j["l@odata.type"], "Edm.Int64");
  EXPECT_TRUE(j["d"].is_number_float());
  EXPECT_FALSE(j.contains("d@odata.type"));
  EXPECT_NE(out.find("\"d\":6.0"), std::string::npos);
  EXPECT_EQ(j["nan"], "NaN");
  EXPECT_EQ(j["nan@odata.type"], "Edm.Double");
  EXPECT_EQ(j["b"], true);
  EXPECT_EQ(j["dt"], "2021-07-08T09:10:09Z");
  EXPECT_EQ(j["dt@odata.type"], "Edm.DateTime");
  EXPECT_EQ(j["g@odata.type"], "Edm.Guid");
  EXPECT_EQ(j["bin"], "QmFy");
  EXPECT_EQ(j["bin@odata.type"], "Edm.Binary");
}

TEST(ODataWriterTest, NoAndFullMetadata) {
  model::Entity e = Sample();
  EntityWriteContext none{kBase, "devstoreaccount1", "mytable", MetadataLevel::kNoMetadata, nullptr};
  auto j = nlohmann::json::parse(WriteEntityFeed({e}, none));
  ASSERT_EQ(j.size(), 1u);
  auto item = j["value"][0];
  EXPECT_FALSE(item.contains("odata.etag"));
  EXPECT_FALSE(item.contains("l@odata.type"));
  EXPECT_EQ(item["l"], "123456789012");

  EntityWriteContext full{kBase, "devstoreaccount1", "mytable", MetadataLevel::kFullMetadata, nullptr};
  auto f = nlohmann::json::parse(WriteEntityFeed({e}, full));
  EXPECT_EQ(f["odata.metadata"], std::string(kBase) + "$metadata#mytable");
  auto fi = f["value"][0];
  EXPECT_EQ(fi["odata.type"], "devstoreaccount1.mytable");
  EXPECT_EQ(fi["odata.id"], std::string(kBase) + "mytable(PartitionKey='p',RowKey='r')");
  EXPECT_EQ(fi["odata.editLink"], "mytable(PartitionKey='p',RowKey='r')");
  EXPECT_EQ(fi["Timestamp@odata.type"], "Edm.DateTime");
  EXPECT_TRUE(fi.contains("odata.etag"));
}

TEST(ODataWriterTest, SelectProjection) {
  model::Entity e = Sample();
  std::vector<std::string> select = {"i", "missing", "RowKey"};
  EntityWriteContext ctx{kBase, "acct", "t", MetadataLevel::kMinimalMetadata, &select};
  auto j = nlohmann::json::parse(WriteEntityFeed({e}, ctx));
  EXPECT_EQ(j["odata.metadata"], std::string(kBase) + "$metadata#t&$select=i,missing,RowKey");
  auto item = j["value"][0];
  EXPECT_TRUE(item.contains("odata.etag"));
  EXPECT_EQ(item["i"], -3);
  EXPECT_TRUE(item["missing"].is_null());
  EXPECT_EQ(item["RowKey"], "r");
  EXPECT_FALSE(item.contains("PartitionKey"));
  EXPECT_FALSE(item.contains("Timestamp"));
  EXPECT_FALSE(item.contains("s"));
  auto single = nlohmann::json::parse(WriteEntity(e, ctx));
  EXPECT_EQ(single["odata.metadata"], std::string(kBase) + "$metadata#t/@Element&$select=i,missing,RowKey");
}

TEST(ODataWriterTest, EmptyFeedAndTables) {
  EntityWriteContext ctx{kBase, "acct", "t", MetadataLevel::kMinimalMetadata, nullptr};
  EXPECT_EQ(WriteEntityFeed({}, ctx), "{\"odata.metadata\":\"" + std::string(kBase) + "$metadata#t\",\"value\":[]}");
  EXPECT_EQ(WriteTableEntry("mytable", kBase, "acct", MetadataLevel::kMinimalMetadata),
            "{\"odata.metadata\":\"" + std::string(kBase) + "$metadata#Tables/@Element\",\"TableName\":\"mytable\"}");
  EXPECT_EQ(WriteTableEntry("mytable", kBase, "acct", MetadataLevel::kNoMetadata), "{\"TableName\":\"mytable\"}");
  auto full = nlohmann::json::parse(WriteTableEntry("mytable", kBase, "acct", MetadataLevel::kFullMetadata));
  EXPECT_EQ(full["odata.type"], "acct.Tables");
  EXPECT_EQ(full["odata.id"], std::string(kBase) + "Tables('mytable')");
  EXPECT_EQ(full["odata.editLink"], "Tables('mytable')");
  EXPECT_EQ(WriteTableFeed({"a", "b"}, kBase, "acct", MetadataLevel::kNoMetadata),
            "{\"value\":[{\"TableName\":\"a\"},{\"TableName\":\"b\"}]}");
  EXPECT_EQ(WriteTableFeed({}, kBase, "acct", MetadataLevel::kMinimalMetadata),
            "{\"odata.metadata\":\"" + std::string(kBase) + "$metadata#Tables\",\"value\":[]}");
}

// The path against its definition (quotes of a key doubled, then PercentEncode
// keeping the quotes; the table name PercentEncode'd) for every byte, alone
// and in runs.
TEST(ODataWriterTest, EntityKeyPathIsTheKeysPercentEncodedWithQuotesDoubled) {
  auto reference = [](std::string_view table, std::string_view pk, std::string_view rk) {
    auto key = [](std::string_view k) {
      std::string doubled;
      for (char c : k) {
        doubled += c;
        if (c == '\'') doubled += '\'';
      }
      return PercentEncode(doubled, "'");
    };
    return PercentEncode(table) + "(PartitionKey='" + key(pk) + "',RowKey='" + key(rk) + "')";
  };
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    const std::string run = "ab" + one + one + "cd-" + one;
    EXPECT_EQ(EntityKeyPath(one, one, run), reference(one, one, run)) << b;
    EXPECT_EQ(EntityKeyPath("t", run, one), reference("t", run, one)) << b;
  }
  std::string prefix = "https://h/acct/";
  AppendEntityKeyPath(&prefix, "t", "a'b", "c d");
  EXPECT_EQ(prefix, "https://h/acct/t(PartitionKey='a''b',RowKey='c%20d')");
}

TEST(ODataWriterTest, EntityKeyPathEncodesAndDoublesQuotes) {
  EXPECT_EQ(EntityKeyPath("t", "a'b", "c:d e"), "t(PartitionKey='a''b',RowKey='c%3Ad%20e')");
  EXPECT_EQ(EntityKeyPath("t", "", ""), "t(PartitionKey='',RowKey='')");
}

}  // namespace
}  // namespace tablestone::protocol

namespace tablestone::protocol {
namespace {

// Issue 22, finding 6: query pages are limited by EntityJsonSizeBound, so it
// must never undercount what WriteEntityFeed writes, and must count escaped
// control characters at their written size.
TEST(ODataWriterTest, EntityJsonSizeBoundCoversTheWrittenEntity) {
  model::Entity control = Sample();
  control.partition_key = std::string("p'\"\x01", 4);
  control.row_key = "r\\";
  control.properties.push_back({"ctl", model::EdmValue::String(std::string(1000, '\x01'))});
  control.properties.push_back({"q", model::EdmValue::String(std::string(100, '"'))});
  const std::vector<std::string> select = {"ctl", "missing", "RowKey"};
  for (MetadataLevel level :
       {MetadataLevel::kNoMetadata, MetadataLevel::kMinimalMetadata, MetadataLevel::kFullMetadata}) {
    for (const std::vector<std::string>* sel : {static_cast<const std::vector<std::string>*>(nullptr), &select}) {
      EntityWriteContext ctx{kBase, "devstoreaccount1", "Tbl", level, sel};
      const size_t empty = WriteEntityFeed({}, ctx).size();
      for (const model::Entity& e : {Sample(), control}) {
        const size_t one = WriteEntityFeed({e}, ctx).size() - empty;
        const size_t bound = EntityJsonSizeBound(e, ctx);
        EXPECT_GE(bound, one) << static_cast<int>(level);
        // Close: within a fixed allowance (plus the full-metadata key paths).
        EXPECT_LE(bound, one + 1024 + (level == MetadataLevel::kFullMetadata ? 2048 : 0));
      }
      // A page of 50 control-character entities: the sum of the bounds covers it.
      std::vector<model::Entity> page(50, control);
      size_t sum = empty;
      for (const model::Entity& e : page) sum += EntityJsonSizeBound(e, ctx);
      EXPECT_GE(sum, WriteEntityFeed(page, ctx).size());
    }
  }
  // Each control character is written as \u00XX: six bytes.
  EntityWriteContext ctx{kBase, "devstoreaccount1", "Tbl", MetadataLevel::kMinimalMetadata, nullptr};
  model::Entity e;
  e.partition_key = "p";
  e.row_key = "r";
  e.properties = {{"v", model::EdmValue::String(std::string(10000, '\x02'))}};
  EXPECT_GE(EntityJsonSizeBound(e, ctx), 60000u);
}

// Query pages count rows by EntityJsonSizeQuickBound until they come near
// their byte limit (model::RowSizer::Bound), so it must never be below
// EntityJsonSizeBound; it equals it when every string byte is a six-byte
// escape, and is above it for plain text.
TEST(ODataWriterTest, EntityJsonSizeQuickBoundIsNeverBelowTheBound) {
  model::Entity control = Sample();
  control.partition_key = std::string("p'\"\x01", 4);
  control.row_key = "r\\";
  control.properties.push_back({"ctl", model::EdmValue::String(std::string(1000, '\x01'))});
  control.properties.push_back({"q", model::EdmValue::String(std::string(100, '"'))});
  control.properties.push_back({"b", model::EdmValue::Binary(std::string(100, '\xff'))});
  model::Entity escapes;  // every string byte, names included, written as \u00XX
  escapes.partition_key = std::string(3, '\x01');
  escapes.row_key = std::string(5, '\x02');
  escapes.properties = {{std::string(2, '\x03'), model::EdmValue::String(std::string(300, '\x04'))},
                        {std::string(4, '\x05'), model::EdmValue::Int64(7)}};
  const std::vector<std::string> select = {"ctl", "missing", "RowKey", "b", std::string(2, '\x03')};
  for (MetadataLevel level :
       {MetadataLevel::kNoMetadata, MetadataLevel::kMinimalMetadata, MetadataLevel::kFullMetadata}) {
    for (const std::vector<std::string>* sel : {static_cast<const std::vector<std::string>*>(nullptr), &select}) {
      EntityWriteContext ctx{kBase, "devstoreaccount1", "Tbl", level, sel};
      for (const model::Entity& e : {Sample(), control, escapes, model::Entity{}}) {
        EXPECT_GE(EntityJsonSizeQuickBound(e, ctx), EntityJsonSizeBound(e, ctx)) << static_cast<int>(level);
      }
      EXPECT_GT(EntityJsonSizeQuickBound(Sample(), ctx), EntityJsonSizeBound(Sample(), ctx));
      if (sel == nullptr) {
        EXPECT_EQ(EntityJsonSizeQuickBound(escapes, ctx), EntityJsonSizeBound(escapes, ctx));
      }
    }
  }
}

// From the stored size alone (model::RowSizer's budget: 3 + name bytes +
// value bytes per property, 15 for a 36-character Guid, 0 for other types), the bound
// must still be at least the quick one, for every level and $select.
TEST(ODataWriterTest, EntityJsonSizeBudgetBoundIsNeverBelowTheQuickBound) {
  auto budget_of = [](const model::Entity& e) {
    size_t budget = 0;
    for (const model::Property& p : e.properties) {
      const model::EdmValue& v = p.value;
      size_t value_bytes = 0;
      if (v.type == model::EdmType::kString || v.type == model::EdmType::kBinary) value_bytes = v.text.size();
      if (v.type == model::EdmType::kGuid) value_bytes = v.text.size() == 36 ? 15 : v.text.size();
      budget += 3 + p.name.size() + value_bytes;
    }
    return budget;
  };
  model::Entity numbers;  // the tightest case: one-byte names of fixed-size values
  numbers.partition_key = "p";
  numbers.row_key = "r";
  for (int i = 0; i < 50; ++i) numbers.properties.push_back({std::string(1, 'a' + i % 26), model::EdmValue::Int64(-i)});
  model::Entity guids;
  guids.properties = {{"g", model::EdmValue::Guid("c9da6455-213d-42c9-9a79-3e9149a57833")}, {"", model::EdmValue::Guid("x")}};
  model::Entity strings;
  strings.properties = {{std::string(100, '\x01'), model::EdmValue::String(std::string(100, '\x02'))},
                        {"b", model::EdmValue::Binary(std::string(7, 'x'))}};
  const std::vector<std::string> select = {"g", "missing", "RowKey", "a", std::string(100, '\x01')};
  for (MetadataLevel level :
       {MetadataLevel::kNoMetadata, MetadataLevel::kMinimalMetadata, MetadataLevel::kFullMetadata}) {
    for (const std::vector<std::string>* sel : {static_cast<const std::vector<std::string>*>(nullptr), &select}) {
      EntityWriteContext ctx{kBase, "devstoreaccount1", "Tbl", level, sel};
      for (const model::Entity& e : {Sample(), numbers, guids, strings, model::Entity{}}) {
        EXPECT_GE(EntityJsonSizeBudgetBound(e.partition_key, e.row_key, budget_of(e), ctx),
                  EntityJsonSizeQuickBound(e, ctx))
            << static_cast<int>(level) << " " << e.properties.size();
      }
    }
  }
}

// A feed with some entities given as AppendFeedEntity's rendering (the scan
// cache's kept rows) is byte for byte the feed written from the entities.
TEST(ODataWriterTest, FeedWithRenderedEntitiesIsTheSameFeed) {
  for (MetadataLevel level : {MetadataLevel::kNoMetadata, MetadataLevel::kMinimalMetadata,
                              MetadataLevel::kFullMetadata}) {
    EntityWriteContext ctx{kBase, "devstoreaccount1", "mytable", level, nullptr};
    std::vector<model::Entity> entities;
    for (int i = 0; i < 4; ++i) {
      model::Entity e = Sample();
      e.row_key = "r" + std::to_string(i);
      entities.push_back(e);
    }
    const std::string want = WriteEntityFeed(entities, ctx);
    std::vector<std::string> renderings(entities.size());
    for (size_t i = 0; i < entities.size(); ++i) AppendFeedEntity(entities[i], ctx, &renderings[i]);
    EXPECT_EQ(renderings[0].front(), '{');
    EXPECT_EQ(renderings[0].back(), '}');
    std::vector<model::Entity> keys_only = entities;
    std::vector<std::string_view> rendered(entities.size());
    for (size_t i : {0, 2, 3}) {  // row 1 is written from its entity
      keys_only[i].properties.clear();
      rendered[i] = renderings[i];
    }
    EXPECT_EQ(WriteEntityFeed(keys_only, rendered, ctx), want);
    EXPECT_EQ(WriteEntityFeed(entities, {}, ctx), want);
    EXPECT_TRUE(nlohmann::json::accept(want));
  }
}

}  // namespace
}  // namespace tablestone::protocol
