// The typed requests of Get Entity and Query Entities (query_ops.h): what
// each parse function accepts and the errors it gives, in the order the
// handlers gave them. No Beast, no engine.
#include "server/api/query_ops.h"

#include <gtest/gtest.h>

#include "protocol/continuation.h"
#include "request_parts_test_util.h"

namespace tablestone::api {
namespace {

using protocol::MetadataLevel;
using testing::EntityParts;
using testing::PartsHolder;
using testing::TableParts;

TEST(ParseGetEntityTest, ViewsTheKeyAndNegotiates) {
  PartsHolder h = EntityParts("orders", "p'1", "r 2");
  h.headers.Add("Accept", "application/json;odata=fullmetadata");
  h.query.emplace("$select", "a, b,a");
  auto req = ParseGetEntity(h.Parts());
  ASSERT_TRUE(req.ok()) << req.error().message;
  EXPECT_EQ(req->account, "devstoreaccount1");
  EXPECT_EQ(req->table, "orders");
  EXPECT_EQ(req->partition_key, "p'1");
  EXPECT_EQ(req->row_key, "r 2");
  // Views into the parts, not copies.
  EXPECT_EQ(req->partition_key.data(), h.resource.key->partition_key.data());
  EXPECT_EQ(req->level, MetadataLevel::kFullMetadata);
  EXPECT_EQ(req->select, (std::vector<std::string>{"a", "b"}));
}

TEST(ParseGetEntityTest, FormatWinsOverAccept) {
  PartsHolder h = EntityParts("orders", "p", "r");
  h.headers.Add("Accept", "application/atom+xml");
  h.query.emplace("$format", "application/json;odata=nometadata");
  auto req = ParseGetEntity(h.Parts());
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->level, MetadataLevel::kNoMetadata);
  EXPECT_TRUE(req->select.empty());
}

TEST(ParseGetEntityTest, Errors) {
  PartsHolder atom = EntityParts("orders", "p", "r");
  atom.headers.Add("Accept", "application/atom+xml");
  atom.query.emplace("$select", ",");  // also bad: metadata is checked first
  auto r = ParseGetEntity(atom.Parts());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 415);
  EXPECT_EQ(r.error().code, "AtomFormatNotSupported");

  PartsHolder verbose = EntityParts("orders", "p", "r");
  verbose.query.emplace("$format", "application/json;odata=verbose");
  EXPECT_EQ(ParseGetEntity(verbose.Parts()).error().code, "JsonVerboseFormatNotSupported");

  PartsHolder bad_format = EntityParts("orders", "p", "r");
  bad_format.query.emplace("$format", "text/plain");
  EXPECT_EQ(ParseGetEntity(bad_format.Parts()).error().code, "InvalidQueryParameterValue");

  PartsHolder select = EntityParts("orders", "p", "r");
  select.query.emplace("$select", "a,,b");
  r = ParseGetEntity(select.Parts());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 400);
  EXPECT_EQ(r.error().code, "InvalidInput");

  // The route only gives Get Entity an entity resource; without a key the
  // caller erred, not the client.
  PartsHolder no_key = TableParts(protocol::ResourceKind::kEntitySet, "orders");
  EXPECT_EQ(ParseGetEntity(no_key.Parts()).error().http_status, 500);
}

TEST(ParseQueryEntitiesTest, Defaults) {
  PartsHolder h = TableParts(protocol::ResourceKind::kEntitySet, "orders");
  auto req = ParseQueryEntities(h.Parts());
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->account, "devstoreaccount1");
  EXPECT_EQ(req->table, "orders");
  EXPECT_EQ(req->level, MetadataLevel::kMinimalMetadata);
  EXPECT_TRUE(req->select.empty());
  EXPECT_FALSE(req->top.has_value());
  EXPECT_EQ(req->filter, nullptr);
  EXPECT_FALSE(req->resume_from.has_value());
}

TEST(ParseQueryEntitiesTest, EveryOption) {
  PartsHolder h = TableParts(protocol::ResourceKind::kEntitySet, "orders");
  h.headers.Add("accept", "application/json;odata=nometadata");  // any case
  h.query.emplace("$select", "v");
  h.query.emplace("$top", "0");
  h.query.emplace("$filter", "PartitionKey eq 'p' and v gt 3");
  h.query.emplace("NextPartitionKey", protocol::EncodeContinuation("p"));
  h.query.emplace("NextRowKey", protocol::EncodeContinuation("r7"));
  auto req = ParseQueryEntities(h.Parts());
  ASSERT_TRUE(req.ok()) << req.error().message;
  EXPECT_EQ(req->level, MetadataLevel::kNoMetadata);
  EXPECT_EQ(req->select, std::vector<std::string>{"v"});
  EXPECT_EQ(req->top, 0);
  ASSERT_NE(req->filter, nullptr);
  model::Entity e;
  e.partition_key = "p";
  e.row_key = "r";
  e.properties.push_back({"v", model::EdmValue::Int32(4)});
  EXPECT_TRUE(req->filter->Matches(e));
  e.partition_key = "q";
  EXPECT_FALSE(req->filter->Matches(e));
  ASSERT_TRUE(req->resume_from.has_value());
  EXPECT_EQ(req->resume_from->partition_key, "p");
  EXPECT_EQ(req->resume_from->row_key, "r7");
}

TEST(ParseQueryEntitiesTest, PartitionKeyTokenAloneResumesAtThePartition) {
  PartsHolder h = TableParts(protocol::ResourceKind::kEntitySet, "orders");
  h.query.emplace("NextPartitionKey", protocol::EncodeContinuation("p"));
  auto req = ParseQueryEntities(h.Parts());
  ASSERT_TRUE(req.ok());
  ASSERT_TRUE(req->resume_from.has_value());
  EXPECT_EQ(req->resume_from->partition_key, "p");
  EXPECT_EQ(req->resume_from->row_key, "");
}

// One bad option at a time, then two at once to pin which is reported.
TEST(ParseQueryEntitiesTest, Errors) {
  auto error_of = [](std::initializer_list<std::pair<std::string, std::string>> query,
                     std::string_view accept = {}) {
    PartsHolder h = TableParts(protocol::ResourceKind::kEntitySet, "orders");
    for (const auto& [k, v] : query) h.query.emplace(k, v);
    if (!accept.empty()) h.headers.Add("Accept", std::string(accept));
    auto r = ParseQueryEntities(h.Parts());
    EXPECT_FALSE(r.ok());
    return r.ok() ? protocol::ApiError::InternalError() : r.error();
  };
  EXPECT_EQ(error_of({}, "application/atom+xml").code, "AtomFormatNotSupported");
  EXPECT_EQ(error_of({{"$select", " , "}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"$top", "1001"}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"$top", "-1"}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"$top", "x"}}).code, "InvalidInput");
  auto syntax = error_of({{"$filter", "PartitionKey eq"}});
  EXPECT_EQ(syntax.http_status, 400);
  EXPECT_EQ(syntax.code, "InvalidInput");
  EXPECT_NE(syntax.message.find("Syntax error"), std::string::npos) << syntax.message;
  EXPECT_EQ(error_of({{"$filter", "a eq b"}}).http_status, 501);  // property vs property
  EXPECT_EQ(error_of({{"NextPartitionKey", "garbage"}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"NextPartitionKey", protocol::EncodeContinuation("p")}, {"NextRowKey", "garbage"}}).code,
            "InvalidInput");
  EXPECT_EQ(error_of({{"NextRowKey", protocol::EncodeContinuation("r")}}).code, "InvalidInput");
  // An empty token parameter is 400 InvalidInput on the service (issue 36;
  // microsoft/AzureStorageExplorer#5434, Azure/azure-sdk-for-js#20913).
  EXPECT_EQ(error_of({{"NextPartitionKey", protocol::EncodeContinuation("p")}, {"NextRowKey", ""}}).code,
            "InvalidInput");
  EXPECT_EQ(error_of({{"NextRowKey", ""}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"NextPartitionKey", ""}}).code, "InvalidInput");
  EXPECT_EQ(error_of({{"NextPartitionKey", ""}, {"NextRowKey", ""}}).code, "InvalidInput");
  // Metadata before $select before $top before $filter.
  EXPECT_EQ(error_of({{"$top", "x"}, {"$filter", "a eq b"}}, "application/json;odata=verbose").code,
            "JsonVerboseFormatNotSupported");
  EXPECT_EQ(error_of({{"$top", "x"}, {"$filter", "a eq b"}}).http_status, 400);
  EXPECT_EQ(error_of({{"$filter", "a eq b"}, {"NextPartitionKey", "garbage"}}).http_status, 501);
}

TEST(ParseFilterOptionTest, AbsentIsNull) {
  auto none = ParseFilterOption(protocol::QueryParams{});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  auto some = ParseFilterOption(protocol::QueryParams{{"$filter", "TableName eq 'x'"}});
  ASSERT_TRUE(some.ok());
  ASSERT_NE(*some, nullptr);
  EXPECT_TRUE((*some)->MatchesTableName("x"));
  EXPECT_FALSE((*some)->MatchesTableName("y"));
}

}  // namespace
}  // namespace tablestone::api
