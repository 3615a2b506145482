// RequestInfo, the one per-request context (server/api/api_context.h): the
// body of a Create Table or an entity write is parsed once per request, by its
// first reader (a fault rule's match or the handler), and what the others
// read stays right when the context moves (to a lane, a delay, the wait for
// the log write).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "protocol/operation.h"
#include "server/api/handlers.h"
#include "server/api/request_stage.h"
#include "tests/unit/server/api/api_test_util.h"

namespace tablestone::api {
namespace {

RequestInfo Routed(const http::Request& request, const http::RequestContext& connection, protocol::Operation op) {
  RequestInfo info(request, connection, "req-1");
  info.route.operation = op;
  info.route.account.account = testing::kAccount;
  info.route.resource.table = "t";
  info.api_version = "2019-02-02";
  info.prepared = true;
  return info;
}

TEST(RequestInfoTest, AnEntityWritesBodyIsParsedOnce) {
  http::Request request = testing::NoMetadataRequest("POST", "/t", R"({"PartitionKey":"p","RowKey":"r","n":1})");
  const http::RequestContext connection;
  RequestInfo info = Routed(request, connection, protocol::Operation::kInsertEntity);
  const auto& first = ParsedWriteOp(info);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->entity.partition_key, "p");
  // A second parse would see this body; the second reader gets the first parse.
  request.body() = R"({"PartitionKey":"other","RowKey":"r"})";
  const auto& second = ParsedWriteOp(info);
  EXPECT_EQ(&second, &first);
  EXPECT_EQ(second->entity.partition_key, "p");
}

TEST(RequestInfoTest, AParsedCreateTableFollowsItsContextWhenItMoves) {
  http::Request request = testing::NoMetadataRequest("POST", "/Tables", R"({"TableName":"moved"})");
  const http::RequestContext connection;
  RequestInfo info = Routed(request, connection, protocol::Operation::kCreateTable);
  info.route.account.account = "acct";  // short: kept inside the string, so a move changes its address
  ASSERT_TRUE(ParsedCreateTable(info).ok());
  PendingRequest pending{std::move(info), http::Response(), http::Completion()};
  request.body() = R"({"TableName":"other"})";
  const auto& again = ParsedCreateTable(pending.info);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->name, "moved");
  EXPECT_EQ(again->account.data(), pending.info.account().data());  // views the moved route, not the old one
  EXPECT_EQ(again->account, "acct");
}

}  // namespace
}  // namespace tablestone::api
