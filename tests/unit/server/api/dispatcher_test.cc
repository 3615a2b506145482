#include <regex>

#include "api_test_util.h"

namespace tablestone::api::testing {
namespace {

TEST_F(ApiTest, HealthRoute) {
  http::Request req;
  req.method(boost::beast::http::verb::get);
  req.target("/_tablestone/health");
  req.version(11);
  http::Response resp;
  resp = http::HandleAndWait(*handler_, req, http::RequestContext{});
  EXPECT_EQ(resp.result_int(), 200);
  EXPECT_EQ(resp.body(), "{\"status\":\"ok\"}");
}

TEST_F(ApiTest, CommonHeadersOnSuccessAndError) {
  auto ok = Send("GET", "/Tables", {}, {{"x-ms-client-request-id", "client-42"}});
  ASSERT_EQ(ok.result_int(), 200) << ok.body();
  EXPECT_TRUE(std::regex_match(H(ok, "x-ms-request-id"),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")));
  EXPECT_EQ(H(ok, "x-ms-version"), "2019-02-02");
  EXPECT_EQ(H(ok, "x-ms-client-request-id"), "client-42");
  EXPECT_TRUE(std::regex_match(H(ok, "Date"), std::regex("[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT")));
  EXPECT_FALSE(H(ok, "Server").empty());
  EXPECT_EQ(H(ok, "Content-Type"), "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
  EXPECT_EQ(H(ok, "X-Content-Type-Options"), "nosniff");

  auto err = Send("GET", "/missingtable()", {}, {{"x-ms-client-request-id", "client-43"}});
  EXPECT_EQ(err.result_int(), 404);
  EXPECT_EQ(ErrorCode(err), "TableNotFound");
  EXPECT_EQ(H(err, "x-ms-client-request-id"), "client-43");
  auto body = J(err);
  EXPECT_EQ(body["odata.error"]["code"], "TableNotFound");
  EXPECT_EQ(body["odata.error"]["message"]["lang"], "en-US");
  std::string value = body["odata.error"]["message"]["value"];
  EXPECT_EQ(value.rfind("The table specified does not exist.\nRequestId:" + H(err, "x-ms-request-id") + "\nTime:", 0),
            0u);
  EXPECT_TRUE(std::regex_search(value, std::regex("Time:\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{7}Z$")));
}

TEST_F(ApiTest, VersionEchoAndValidation) {
  http::Request req;
  req.method(boost::beast::http::verb::get);
  req.target("/devstoreaccount1/Tables");
  req.version(11);
  req.set("Host", "127.0.0.1:10002");
  http::Response resp;
  resp = http::HandleAndWait(*handler_, req, http::RequestContext{});
  EXPECT_EQ(resp.result_int(), 200);
  EXPECT_EQ(H(resp, "x-ms-version"), "2019-02-02");  // default when none was sent

  auto bad = Send("GET", "/Tables", {}, {{"x-ms-version", "1999-01-01"}});
  EXPECT_EQ(bad.result_int(), 400);
  EXPECT_EQ(ErrorCode(bad), "InvalidHeaderValue");
  EXPECT_EQ(H(bad, "x-ms-version"), "1999-01-01");
  auto newer = Send("GET", "/Tables", {}, {{"x-ms-version", "2021-12-02"}});
  EXPECT_EQ(newer.result_int(), 200);
  EXPECT_EQ(H(newer, "x-ms-version"), "2021-12-02");
}

TEST_F(ApiTest, CreateTableBodyAndHeaders) {
  auto r = Send("POST", "/Tables", R"({"TableName":"MyTable"})", {{"Content-Type", "application/json;odata=nometadata"}});
  ASSERT_EQ(r.result_int(), 201) << r.body();
  EXPECT_EQ(r.body(), "{\"odata.metadata\":\"http://127.0.0.1:10002/devstoreaccount1/$metadata#Tables/@Element\","
                      "\"TableName\":\"MyTable\"}");
  EXPECT_EQ(H(r, "Location"), "http://127.0.0.1:10002/devstoreaccount1/Tables('MyTable')");
  // no Prefer sent (Learn: setting-the-prefer-header-to-manage-response-echo-on-insert-operations)
  EXPECT_EQ(H(r, "Preference-Applied"), "");

  auto dup = Send("POST", "/Tables", R"({"TableName":"mytable"})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(dup.result_int(), 409);
  EXPECT_EQ(J(dup)["odata.error"]["code"], "TableAlreadyExists");

  auto nocontent = Send("POST", "/Tables", R"({"TableName":"other"})",
                        {{"Content-Type", "application/json"}, {"Prefer", "return-no-content"}});
  EXPECT_EQ(nocontent.result_int(), 204);
  EXPECT_EQ(nocontent.body(), "");
  EXPECT_EQ(H(nocontent, "Preference-Applied"), "return-no-content");
  EXPECT_EQ(H(nocontent, "Content-Type"), "");

  auto content = Send("POST", "/Tables", R"({"TableName":"third"})",
                      {{"Content-Type", "application/json"}, {"Prefer", "return-content"}});
  EXPECT_EQ(content.result_int(), 201);
  EXPECT_EQ(H(content, "Preference-Applied"), "return-content");
}

TEST_F(ApiTest, CreateTableNameErrors) {
  auto bad = Send("POST", "/Tables", R"({"TableName":"a-b"})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(bad.result_int(), 400);
  EXPECT_EQ(ErrorCode(bad), "InvalidResourceName");
  auto shortname = Send("POST", "/Tables", R"({"TableName":"ab"})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(ErrorCode(shortname), "OutOfRangeInput");
  auto reserved = Send("POST", "/Tables", R"({"TableName":"tables"})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(ErrorCode(reserved), "InvalidResourceName");
  auto missing = Send("POST", "/Tables", R"({})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(ErrorCode(missing), "PropertiesNeedValue");
  auto atom = Send("POST", "/Tables", R"({"TableName":"abc"})", {{"Content-Type", "application/atom+xml"}});
  EXPECT_EQ(atom.result_int(), 415);
}

TEST_F(ApiTest, QueryTablesMetadataFilterAndPaging) {
  for (const char* n : {"alpha", "Beta", "gamma", "delta"}) CreateTable(n);
  auto all = Send("GET", "/Tables");
  ASSERT_EQ(all.result_int(), 200);
  auto names = J(all)["value"];
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0]["TableName"], "alpha");
  EXPECT_EQ(names[1]["TableName"], "Beta");  // ordered by lower-cased name

  auto none = Send("GET", "/Tables", {}, {{"Accept", "application/json;odata=nometadata"}});
  EXPECT_FALSE(J(none).contains("odata.metadata"));
  EXPECT_EQ(H(none, "Content-Type"), "application/json;odata=nometadata;streaming=true;charset=utf-8");

  auto filtered = Send("GET", "/Tables?$filter=TableName%20eq%20%27gamma%27");
  ASSERT_EQ(filtered.result_int(), 200) << filtered.body();
  ASSERT_EQ(J(filtered)["value"].size(), 1u);
  EXPECT_EQ(J(filtered)["value"][0]["TableName"], "gamma");

  std::vector<std::string> seen;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    std::string target = "/Tables?$top=3";
    if (!token.empty()) target += "&NextTableName=" + token;
    auto r = Send("GET", target);
    ASSERT_EQ(r.result_int(), 200) << r.body();
    auto body = J(r);
    for (auto& t : body["value"]) seen.push_back(t["TableName"]);
    token = H(r, "x-ms-continuation-NextTableName");
    if (token.empty()) break;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"alpha", "Beta", "delta", "gamma"}));

  auto forged = Send("GET", "/Tables?NextTableName=bogus");
  EXPECT_EQ(forged.result_int(), 400);
  EXPECT_EQ(ErrorCode(forged), "InvalidInput");
  auto badtop = Send("GET", "/Tables?$top=1001");
  EXPECT_EQ(ErrorCode(badtop), "InvalidInput");
}

TEST_F(ApiTest, GetAndDeleteTable) {
  CreateTable("keeper");
  auto get = Send("GET", "/Tables('KEEPER')");
  ASSERT_EQ(get.result_int(), 200) << get.body();
  EXPECT_EQ(J(get)["TableName"], "keeper");
  EXPECT_EQ(ErrorCode(Send("GET", "/Tables('nothere')")), "ResourceNotFound");

  auto del = Send("DELETE", "/Tables('keeper')");
  EXPECT_EQ(del.result_int(), 204);
  EXPECT_EQ(del.body(), "");
  EXPECT_EQ(H(del, "Cache-Control"), "no-cache");
  auto again = Send("DELETE", "/Tables('keeper')");
  EXPECT_EQ(again.result_int(), 404);
  EXPECT_EQ(ErrorCode(again), "ResourceNotFound");
}

TEST_F(ApiTest, RoutingErrors) {
  auto verb = Send("PUT", "/Tables");
  EXPECT_EQ(verb.result_int(), 405);
  EXPECT_EQ(ErrorCode(verb), "MethodNotAllowed");
  auto xmethod = Send("PUT", "/t(PartitionKey='a',RowKey='b')", "{}", {{"X-HTTP-Method", "MERGE"}});
  EXPECT_EQ(ErrorCode(xmethod), "XMethodNotUsingPost");
  auto del = Send("DELETE", "/t(PartitionKey='a',RowKey='b')");
  EXPECT_EQ(del.result_int(), 400);
  EXPECT_EQ(ErrorCode(del), "InvalidInput");
  auto atom = Send("GET", "/Tables", {}, {{"Accept", "application/atom+xml"}});
  EXPECT_EQ(atom.result_int(), 415);
  EXPECT_EQ(ErrorCode(atom), "AtomFormatNotSupported");
}

TEST_F(ApiTest, SecondaryIsReadOnly) {
  CreateTable("sectable");
  http::Request req;
  req.method(boost::beast::http::verb::get);
  req.target("/devstoreaccount1-secondary/Tables");
  req.version(11);
  req.set("Host", "127.0.0.1:10002");
  http::Response resp;
  resp = http::HandleAndWait(*handler_, req, http::RequestContext{});
  ASSERT_EQ(resp.result_int(), 200) << resp.body();
  EXPECT_EQ(J(resp)["value"].size(), 1u);

  http::Request write;
  write.method(boost::beast::http::verb::post);
  write.target("/devstoreaccount1-secondary/Tables");
  write.version(11);
  write.set("Host", "127.0.0.1:10002");
  write.body() = R"({"TableName":"nope"})";
  write.prepare_payload();
  http::Response wresp;
  wresp = http::HandleAndWait(*handler_, write, http::RequestContext{});
  EXPECT_EQ(wresp.result_int(), 403);
}

TEST_F(ApiTest, TransportErrorsUseServiceShape) {
  http::Request partial;
  partial.version(11);
  partial.set("x-ms-client-request-id", "c1");
  http::Response resp;
  handler_->RenderTransportError(http::TransportError::kBodyTooLarge, partial, resp);
  EXPECT_EQ(resp.result_int(), 413);
  EXPECT_EQ(ErrorCode(resp), "RequestBodyTooLarge");
  EXPECT_EQ(J(resp)["odata.error"]["code"], "RequestBodyTooLarge");
  EXPECT_EQ(H(resp, "x-ms-client-request-id"), "c1");
  EXPECT_FALSE(H(resp, "x-ms-request-id").empty());
}

TEST_F(ApiTest, UnsignedRequestRefusedWithoutAnonymousMode) {
  ApiOptions options;
  options.accounts = {{kAccount, {kKey}}};
  options.allow_anonymous = false;
  auto strict = MakeApiHandler(*engine_, *executor_, options);
  http::Request req;
  req.method(boost::beast::http::verb::get);
  req.target("/devstoreaccount1/Tables");
  req.version(11);
  req.set("Host", "127.0.0.1:10002");
  req.set("x-ms-version", "2019-02-02");
  http::Response resp;
  resp = http::HandleAndWait(*strict, req, http::RequestContext{});
  EXPECT_EQ(resp.result_int(), 403);
  EXPECT_EQ(J(resp)["odata.error"]["code"], ErrorCode(resp));
  EXPECT_FALSE(H(resp, "x-ms-request-id").empty());
}

}  // namespace
}  // namespace tablestone::api::testing
