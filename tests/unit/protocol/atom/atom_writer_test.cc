#include "protocol/atom/atom_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "protocol/atom/atom_reader.h"
#include "protocol/request_options.h"
#include "storage/model/datetime.h"
#include "storage/model/etag.h"

namespace tablestone::protocol::atom {
namespace {

using model::EdmValue;

constexpr std::string_view kBase = "http://127.0.0.1:10002/devstoreaccount1/";

model::Entity SampleEntity() {
  model::Entity e;
  e.partition_key = "Customer's <3>";
  e.row_key = "Name & co";
  e.timestamp = *model::ParseIsoDateTime("2013-10-01T15:26:04.6812774Z");
  e.properties = {
      {"Address", EdmValue::String("123 Lakeview Blvd\r\nRedmond <WA> & \"co\"")},
      {"Padded", EdmValue::String("  both ends ")},
      {"Empty", EdmValue::String("")},
      {"Rating", EdmValue::Int32(-3)},
      {"Big", EdmValue::Int64(std::numeric_limits<int64_t>::min())},
      {"Discount", EdmValue::Double(10)},
      {"Ratio", EdmValue::Double(0.1)},
      {"Huge", EdmValue::Double(1e300)},
      {"NotANumber", EdmValue::Double(std::numeric_limits<double>::quiet_NaN())},
      {"PlusInf", EdmValue::Double(std::numeric_limits<double>::infinity())},
      {"MinusInf", EdmValue::Double(-std::numeric_limits<double>::infinity())},
      {"Active", EdmValue::Boolean(true)},
      {"Closed", EdmValue::Boolean(false)},
      {"Since", EdmValue::DateTime(*model::ParseIsoDateTime("2008-10-01T15:25:05.2852025Z"))},
      {"Id", EdmValue::Guid("c9da6455-213d-42c9-9a79-3e9149a57833")},
      {"Blob", EdmValue::Binary(std::string("\x00\x01\xff\xfe" "abc", 7))},
  };
  return e;
}

TEST(AtomWriter, EveryEdmTypeRoundTripsThroughTheReader) {
  const model::Entity e = SampleEntity();
  EntityWriteContext ctx{kBase, "devstoreaccount1", "Customers", MetadataLevel::kAtom, nullptr};
  const std::string entry = WriteEntityEntry(e, ctx);
  auto parsed = ParseEntityAtom(entry);
  ASSERT_TRUE(parsed.ok()) << parsed.error().code << "\n" << entry;
  EXPECT_EQ(parsed->entity.partition_key, e.partition_key);
  EXPECT_EQ(parsed->entity.row_key, e.row_key);
  ASSERT_EQ(parsed->entity.properties.size(), e.properties.size());
  for (size_t i = 0; i < e.properties.size(); ++i) {
    EXPECT_EQ(parsed->entity.properties[i], e.properties[i]) << e.properties[i].name;
  }
}

TEST(AtomWriter, EntryCarriesTheEtagIdEditLinkAndCategory) {
  model::Entity e;
  e.partition_key = "Customer03";
  e.row_key = "Name";
  e.timestamp = *model::ParseIsoDateTime("2013-10-01T15:26:04.6812774Z");
  e.properties = {{"Rating", EdmValue::Int32(3)}, {"Discount", EdmValue::Double(10)}};
  EntityWriteContext ctx{kBase, "devstoreaccount1", "Customers", MetadataLevel::kAtom, nullptr};
  const std::string entry = WriteEntityEntry(e, ctx);
  std::string etag = model::FormatETag(e.timestamp);  // W/"datetime'...'"
  std::string escaped_etag;
  for (char c : etag) {
    escaped_etag += c == '"' ? std::string("&quot;") : c == '\'' ? std::string("&apos;") : std::string(1, c);
  }
  EXPECT_NE(entry.find("m:etag=\"" + escaped_etag + "\""), std::string::npos) << entry;
  EXPECT_NE(entry.find("<id>http://127.0.0.1:10002/devstoreaccount1/Customers(PartitionKey=&apos;Customer03&apos;,"
                       "RowKey=&apos;Name&apos;)</id>"),
            std::string::npos)
      << entry;
  EXPECT_NE(entry.find("<link rel=\"edit\" title=\"Customers\" "
                       "href=\"Customers(PartitionKey=&apos;Customer03&apos;,RowKey=&apos;Name&apos;)\"/>"),
            std::string::npos);
  EXPECT_NE(entry.find("<category term=\"devstoreaccount1.Customers\""), std::string::npos);
  EXPECT_NE(entry.find("<d:Timestamp m:type=\"Edm.DateTime\">2013-10-01T15:26:04.6812774Z</d:Timestamp>"),
            std::string::npos);
  EXPECT_NE(entry.find("<d:Rating m:type=\"Edm.Int32\">3</d:Rating>"), std::string::npos);
  EXPECT_NE(entry.find("<d:Discount m:type=\"Edm.Double\">"), std::string::npos);
  EXPECT_EQ(entry.rfind("<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?><entry xml:base=\"", 0), 0u);
}

TEST(AtomWriter, SelectWritesOnlyTheNamedPropertiesAndNullsForMissingOnes) {
  model::Entity e = SampleEntity();
  std::vector<std::string> select = {"Rating", "Nope"};
  EntityWriteContext ctx{kBase, "devstoreaccount1", "Customers", MetadataLevel::kAtom, &select};
  const std::string entry = WriteEntityEntry(e, ctx);
  EXPECT_NE(entry.find("<d:Rating m:type=\"Edm.Int32\">-3</d:Rating>"), std::string::npos);
  EXPECT_NE(entry.find("<d:Nope m:null=\"true\"/>"), std::string::npos);
  EXPECT_EQ(entry.find("Address"), std::string::npos);
  EXPECT_EQ(entry.find("<d:PartitionKey>"), std::string::npos);
}

TEST(AtomWriter, EntityFeedIsWellFormedWithOneEntryPerEntity) {
  std::vector<model::Entity> entities = {SampleEntity(), SampleEntity()};
  entities[1].row_key = "second";
  EntityWriteContext ctx{kBase, "devstoreaccount1", "Customers", MetadataLevel::kAtom, nullptr};
  const std::string feed = WriteEntityFeed(entities, ctx, model::NowTicks());
  EXPECT_NE(feed.find("<title type=\"text\">Customers</title>"), std::string::npos);
  EXPECT_NE(feed.find("<id>http://127.0.0.1:10002/devstoreaccount1/Customers</id>"), std::string::npos);
  size_t entries = 0;
  for (size_t at = feed.find("<entry "); at != std::string::npos; at = feed.find("<entry ", at + 1)) ++entries;
  EXPECT_EQ(entries, 2u);
  // The reader (expat) accepts the whole feed and finds the first entry's properties.
  auto first = ParseEntityAtom(feed);
  ASSERT_TRUE(first.ok()) << first.error().code;
  EXPECT_EQ(first->entity.row_key, "Name & co");
  const std::string empty = WriteEntityFeed({}, ctx, model::NowTicks());
  EXPECT_EQ(empty.find("<entry"), std::string::npos);
  EXPECT_EQ(empty.substr(empty.size() - 7), "</feed>");
}

TEST(AtomWriter, TableEntryAndFeed) {
  const std::string entry = WriteTableEntry("mytable", kBase, "devstoreaccount1", model::NowTicks());
  auto name = ParseTableNameAtom(entry);
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "mytable");
  EXPECT_NE(entry.find("<id>http://127.0.0.1:10002/devstoreaccount1/Tables(&apos;mytable&apos;)</id>"), std::string::npos);
  EXPECT_NE(entry.find("<category term=\"devstoreaccount1.Tables\""), std::string::npos);
  const std::string feed = WriteTableFeed({"alpha", "beta"}, kBase, "devstoreaccount1", model::NowTicks());
  EXPECT_NE(feed.find("<d:TableName>alpha</d:TableName>"), std::string::npos);
  EXPECT_NE(feed.find("<d:TableName>beta</d:TableName>"), std::string::npos);
  EXPECT_NE(feed.find("<title type=\"text\">Tables</title>"), std::string::npos);
  auto first = ParseTableNameAtom(feed);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "alpha");
}

TEST(AtomNegotiation, VersionsBefore20151211DefaultToAtom) {
  const std::string atom = "atom";
  const std::string json = "json";
  EXPECT_EQ(*NegotiateMetadata(nullptr, "", "2013-08-15"), MetadataLevel::kAtom);
  EXPECT_EQ(*NegotiateMetadata(nullptr, "*/*", "2009-09-19"), MetadataLevel::kAtom);
  EXPECT_EQ(*NegotiateMetadata(nullptr, "application/atom+xml,application/xml", "2011-08-18"),
            MetadataLevel::kAtom);
  EXPECT_EQ(*NegotiateMetadata(nullptr, "application/json;odata=nometadata", "2015-04-05"),
            MetadataLevel::kNoMetadata);
  EXPECT_EQ(*NegotiateMetadata(nullptr, "application/xml, application/json", "2015-04-05"), MetadataLevel::kAtom);
  EXPECT_EQ(*NegotiateMetadata(&json, "application/atom+xml", "2014-02-14"), MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(*NegotiateMetadata(&atom, "application/json", "2014-02-14"), MetadataLevel::kAtom);
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/json;odata=verbose", "2014-02-14").error().code,
            "JsonVerboseFormatNotSupported");
  // 2015-12-11 and later (and no version): JSON only, as before.
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/atom+xml", "2015-12-11").error().code,
            "AtomFormatNotSupported");
  EXPECT_EQ(NegotiateMetadata(&atom, "", "").error().code, "AtomFormatNotSupported");
  EXPECT_EQ(*NegotiateMetadata(nullptr, "", "2019-02-02"), MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(*NegotiateMetadata(nullptr, "*/*", ""), MetadataLevel::kMinimalMetadata);
}

TEST(AtomNegotiation, BodyFormatByContentTypeAndVersion) {
  using F = BodyFormat;
  EXPECT_EQ(*CheckBodyContentType("application/atom+xml", "2013-08-15", "<entry/>"), F::kAtom);
  EXPECT_EQ(*CheckBodyContentType("application/atom+xml;type=entry;charset=utf-8", "2009-09-19", ""), F::kAtom);
  EXPECT_EQ(*CheckBodyContentType("application/xml", "2011-08-18", ""), F::kAtom);
  EXPECT_EQ(*CheckBodyContentType("application/json", "2013-08-15", "{}"), F::kJson);
  EXPECT_EQ(*CheckBodyContentType(std::nullopt, "2011-08-18", "  <entry/>"), F::kAtom);
  EXPECT_EQ(*CheckBodyContentType(std::nullopt, "2011-08-18", "{}"), F::kJson);
  EXPECT_EQ(*CheckBodyContentType(std::nullopt, "2019-02-02", "<entry/>"), F::kJson);
  EXPECT_EQ(CheckBodyContentType("application/atom+xml", "2015-12-11", "<entry/>").error().code,
            "AtomFormatNotSupported");
  EXPECT_EQ(CheckBodyContentType("text/plain", "2013-08-15", "x").error().code, "MediaTypeNotSupported");
}

}  // namespace
}  // namespace tablestone::protocol::atom
