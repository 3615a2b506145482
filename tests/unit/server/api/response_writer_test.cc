// WriterFor: one writer per negotiated level, each writing its format's
// body and headers (server/api/response_writer.h).
#include "server/api/response_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/atom/atom_writer.h"

namespace tablestone::api {
namespace {

model::Entity SampleEntity() {
  model::Entity e;
  e.partition_key = "pk";
  e.row_key = "rk";
  return e;
}

std::string Header(const http::Response& response, std::string_view name) {
  auto it = response.find(name);
  return it == response.end() ? std::string() : std::string(it->value());
}

TEST(ResponseWriterTest, EachJsonLevelWritesItsContentTypeAndVersion) {
  for (auto level : {protocol::MetadataLevel::kNoMetadata, protocol::MetadataLevel::kMinimalMetadata,
                     protocol::MetadataLevel::kFullMetadata}) {
    protocol::EntityWriteContext ctx{"http://127.0.0.1:10002/devstoreaccount1/", "devstoreaccount1", "t", level,
                                     nullptr};
    http::Response r;
    WriterFor(level).Entity(r, 200, SampleEntity(), ctx);
    EXPECT_EQ(r.result_int(), 200u);
    EXPECT_EQ(Header(r, "Content-Type"), protocol::JsonContentType(level));
    EXPECT_EQ(Header(r, "DataServiceVersion"), "3.0;");
    EXPECT_EQ(r.body(), protocol::WriteEntity(SampleEntity(), ctx));
    EXPECT_EQ(WriterFor(level).EntityContentType(), protocol::JsonContentType(level));
  }
}

TEST(ResponseWriterTest, AtomWritesEntriesAndFeedsAsAtom) {
  const auto level = protocol::MetadataLevel::kAtom;
  const ResponseWriter& writer = WriterFor(level);
  protocol::EntityWriteContext ctx{"http://127.0.0.1:10002/devstoreaccount1/", "devstoreaccount1", "t", level,
                                   nullptr};
  http::Response entry;
  writer.Entity(entry, 200, SampleEntity(), ctx);
  EXPECT_EQ(Header(entry, "Content-Type"), protocol::atom::kEntryContentType);
  EXPECT_EQ(Header(entry, "DataServiceVersion"), "1.0;");
  EXPECT_NE(entry.body().find("<entry"), std::string::npos);

  http::Response feed;
  writer.EntityFeed(feed, {SampleEntity()}, {}, ctx);
  EXPECT_EQ(feed.result_int(), 200u);
  EXPECT_EQ(Header(feed, "Content-Type"), protocol::atom::kFeedContentType);
  EXPECT_NE(feed.body().find("<feed"), std::string::npos);

  http::Response tables;
  writer.TableFeed(tables, {"alpha", "beta"}, ctx.base_url, ctx.account);
  EXPECT_EQ(Header(tables, "Content-Type"), protocol::atom::kFeedContentType);
  EXPECT_NE(tables.body().find("alpha"), std::string::npos);
  EXPECT_NE(tables.body().find("beta"), std::string::npos);

  EXPECT_EQ(writer.EntityContentType(), protocol::atom::kEntryContentType);
}

TEST(ResponseWriterTest, JsonTableEntryNamesTheTable) {
  http::Response r;
  WriterFor(protocol::MetadataLevel::kMinimalMetadata)
      .TableEntry(r, 201, "gamma", "http://127.0.0.1:10002/devstoreaccount1/", "devstoreaccount1");
  EXPECT_EQ(r.result_int(), 201u);
  EXPECT_NE(r.body().find("\"TableName\":\"gamma\""), std::string::npos);
}

}  // namespace
}  // namespace tablestone::api
