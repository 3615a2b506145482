// The decision points of the cosmos flavour in the dispatcher and handlers
// (protocol/flavor.h), driven in-process like api_test_util.h's ApiTest but
// with a listener of the cosmos flavour: the emulator's account "localhost",
// addressed without an account segment.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api_test_util.h"
#include "protocol/auth/hmac.h"
#include "protocol/auth/sas.h"
#include "protocol/base64.h"
#include "protocol/cosmos_token.h"
#include "protocol/url.h"
#include "server/api/api_handler.h"
#include "storage/engine.h"

namespace tablestone::api::testing {
namespace {

constexpr const char* kCosmosAccount = "localhost";
constexpr const char* kCosmosKey =
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

class CosmosDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(/*shuffle=*/true, /*ru_per_second=*/0); }

  void Start(bool shuffle, uint64_t ru_per_second, uint64_t table_creates_per_minute = 5) {
    handler_.reset();
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-cosmos";
    eo.case_sensitive_accounts = {kCosmosAccount};
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    ApiOptions options;
    options.accounts = {{kCosmosAccount, {kCosmosKey}}};
    options.allow_anonymous = true;
    options.flavor = protocol::CosmosPolicy(shuffle, 0);
    options.default_account = kCosmosAccount;
    options.ru_per_second = ru_per_second;
    options.table_creates_per_minute = table_creates_per_minute;
    handler_ = MakeApiHandler(*engine_, *executor_, options);
  }

  // `target` has no account segment, as the emulator's endpoint.
  http::Response Send(std::string_view method, std::string target, std::string body = {},
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::Request req;
    req.method_string(boost::beast::string_view(method.data(), method.size()));
    req.target(target);
    req.version(11);
    req.set("Host", "localhost:8902");
    req.set("x-ms-version", "2019-02-02");
    req.set("Accept", "application/json;odata=nometadata");
    if (!body.empty()) req.set("Content-Type", "application/json");
    for (auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    req.prepare_payload();
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    return http::HandleAndWait(*handler_, req, ctx);
  }
  static std::string H(const http::Response& r, std::string_view name) {
    auto it = r.find(boost::beast::string_view(name.data(), name.size()));
    return it == r.end() ? std::string() : std::string(it->value());
  }
  static bool Has(const http::Response& r, std::string_view name) {
    return r.find(boost::beast::string_view(name.data(), name.size())) != r.end();
  }
  static std::string BodyCode(const http::Response& r) {
    return nlohmann::json::parse(r.body())["odata.error"]["code"].get<std::string>();
  }
  static std::string BodyMessage(const http::Response& r) {
    return nlohmann::json::parse(r.body())["odata.error"]["message"]["value"].get<std::string>();
  }
  // SAS query strings (no '?') for the emulator's account, valid until 2099.
  static std::string AccountSas(const std::string& srt, const std::string& sp) {
    protocol::auth::AccountSas sas;
    sas.sv = "2019-02-02";
    sas.ss = "t";
    sas.srt = srt;
    sas.sp = sp;
    sas.se = "2099-01-01T00:00:00Z";
    const std::string sig = protocol::auth::SignBase64(*protocol::Base64Decode(kCosmosKey),
                                                       protocol::auth::AccountSasStringToSign(sas, kCosmosAccount));
    return "sv=" + sas.sv + "&ss=t&srt=" + srt + "&sp=" + sp + "&se=" + protocol::PercentEncode(sas.se) +
           "&sig=" + protocol::PercentEncode(sig);
  }
  static std::string ServiceSas(const std::string& table, const std::string& sp, const std::string& si = {}) {
    protocol::auth::ServiceSas sas;
    sas.sv = "2019-02-02";
    sas.tn = table;
    sas.sp = sp;
    if (si.empty()) sas.se = "2099-01-01T00:00:00Z";
    sas.si = si;
    const std::string sig = protocol::auth::SignBase64(*protocol::Base64Decode(kCosmosKey),
                                                       protocol::auth::ServiceSasStringToSign(sas, kCosmosAccount));
    std::string q = "sv=" + sas.sv + "&tn=" + protocol::PercentEncode(table);
    if (!sp.empty()) q += "&sp=" + sp;
    if (!sas.se.empty()) q += "&se=" + protocol::PercentEncode(sas.se);
    if (!si.empty()) q += "&si=" + si;
    return q + "&sig=" + protocol::PercentEncode(sig);
  }
  void CreateTable(const std::string& name) {
    auto r = Send("POST", "/Tables", "{\"TableName\":\"" + name + "\"}");
    ASSERT_EQ(r.result_int(), 201) << r.body();
  }
  http::Response Insert(const std::string& table, const std::string& body) { return Send("POST", "/" + table, body); }

  // A change set of `n` inserts into `table`, partition "p".
  static std::string ChangeSet(const std::string& table, int n, const std::string& extra = {}) {
    std::string body = "--batch_b\r\nContent-Type: multipart/mixed; boundary=cs_c\r\n\r\n";
    for (int i = 0; i < n; ++i) {
      body += "--cs_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n";
      body += "POST http://localhost:8902/" + table + " HTTP/1.1\r\nContent-Type: application/json\r\n";
      body += "Accept: application/json;odata=nometadata\r\nPrefer: return-no-content\r\n\r\n";
      body += R"({"PartitionKey":"p","RowKey":")" + std::to_string(i) + "\"" + extra + "}\r\n";
    }
    body += "--cs_c--\r\n--batch_b--\r\n";
    return body;
  }
  http::Response Batch(const std::string& body) {
    return Send("POST", "/$batch", body, {{"Content-Type", "multipart/mixed; boundary=batch_b"}});
  }

  // Every RowKey of a table, following continuation tokens with pages of `top`.
  std::vector<std::string> AllRowKeys(const std::string& table, int top) {
    std::vector<std::string> keys;
    std::string next;
    for (int pages = 0; pages < 1000; ++pages) {
      std::string target = "/" + table + "()?$top=" + std::to_string(top);
      if (!next.empty()) target += "&NextPartitionKey=" + protocol::PercentEncode(next) + "&NextRowKey=NA";
      auto r = Send("GET", target);
      EXPECT_EQ(r.result_int(), 200) << r.body();
      const nlohmann::json page = nlohmann::json::parse(r.body());
      for (const auto& e : page["value"]) keys.push_back(e["RowKey"].get<std::string>());
      next = H(r, "x-ms-continuation-NextPartitionKey");
      if (next.empty()) break;
      EXPECT_EQ(H(r, "x-ms-continuation-NextRowKey"), "NA");
    }
    return keys;
  }

  std::unique_ptr<storage::Engine> engine_;
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<exec::WorkExecutor> executor_ = TestLanes();
};

TEST_F(CosmosDispatchTest, ThePathNeedsNoAccountSegmentButMayHaveOne) {
  EXPECT_EQ(Send("GET", "/Tables").result_int(), 200);
  EXPECT_EQ(Send("GET", "/localhost/Tables").result_int(), 200);
}

TEST_F(CosmosDispatchTest, UnsupportedOperationsAre501InJsonWithoutTheHeader) {
  CreateTable("tab1");
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/?restype=service&comp=properties"},
           {"PUT", "/?restype=service&comp=properties"},
           {"GET", "/?restype=service&comp=stats"},
           {"GET", "/tab1?comp=acl"},
           {"PUT", "/tab1?comp=acl"},
       }) {
    auto r = Send(method, target, {}, {{"Accept", "application/xml"}});
    EXPECT_EQ(r.result_int(), 501) << method << " " << target;
    EXPECT_EQ(BodyCode(r), "NotImplemented") << target;
    EXPECT_FALSE(Has(r, "x-ms-error-code")) << target;
  }
  // The CORS preflight, unsigned by nature, too.
  auto pre = Send("OPTIONS", "/Tables", {}, {{"Origin", "http://a.example"}, {"Access-Control-Request-Method", "GET"}});
  EXPECT_EQ(pre.result_int(), 501);
  auto get = Send("GET", "/Tables", {}, {{"Origin", "http://a.example"}});
  EXPECT_FALSE(Has(get, "Access-Control-Allow-Origin"));
}

TEST_F(CosmosDispatchTest, ErrorsNameTheirCodeInTheBodyOnly) {
  auto r = Send("GET", "/nosuchtable()");
  EXPECT_EQ(r.result_int(), 404);
  EXPECT_FALSE(Has(r, "x-ms-error-code"));
  EXPECT_EQ(BodyCode(r), "TableNotFound");
}

TEST_F(CosmosDispatchTest, EntityRulesAndLimits) {
  CreateTable("tab1");
  EXPECT_EQ(Insert("tab1", R"({"PartitionKey":"p","RowKey":")" + std::string(255, 'r') + "\"}").result_int(), 201);
  auto long_key = Insert("tab1", R"({"PartitionKey":"p","RowKey":")" + std::string(256, 'r') + "\"}");
  EXPECT_EQ(long_key.result_int(), 400);
  EXPECT_EQ(BodyCode(long_key), "KeyValueTooLarge");
  auto reserved = Insert("tab1", R"({"PartitionKey":"p","RowKey":"x","Id":1})");
  EXPECT_EQ(reserved.result_int(), 400);
  EXPECT_EQ(BodyCode(reserved), "PropertyNameInvalid");
  // A change set of 150 operations is accepted; a reserved name inside one is blamed on its operation.
  EXPECT_EQ(Batch(ChangeSet("tab1", 150)).result_int(), 202);
  auto blamed = Batch(ChangeSet("tab1", 2, R"(,"etag":"v")"));
  EXPECT_NE(blamed.body().find("PropertyNameInvalid"), std::string::npos) << blamed.body();
  // A body over 2 MiB: 413 before parsing.
  auto big = Batch(ChangeSet("tab1", 1, ",\"a\":\"" + std::string(2u << 20, 'x') + "\""));
  EXPECT_EQ(big.result_int(), 413);
  // $top beyond 1,000.
  auto top = Send("GET", "/tab1()?$top=5000");
  EXPECT_EQ(top.result_int(), 200);
  EXPECT_EQ(nlohmann::json::parse(top.body())["value"].size(), 151u);
  EXPECT_EQ(Send("GET", "/tab1()?$top=2147483648").result_int(), 400);
}

TEST_F(CosmosDispatchTest, TableNamesAreCaseSensitive) {
  CreateTable("Orders");
  CreateTable("orders");
  EXPECT_EQ(Insert("Orders", R"({"PartitionKey":"p","RowKey":"r"})").result_int(), 201);
  EXPECT_EQ(Send("GET", "/orders(PartitionKey='p',RowKey='r')").result_int(), 404);
  EXPECT_EQ(Send("GET", "/Orders(PartitionKey='p',RowKey='r')").result_int(), 200);
  EXPECT_EQ(Send("DELETE", "/Tables('ORDERS')").result_int(), 404);
}

TEST_F(CosmosDispatchTest, ShuffledPagesCoverEveryEntityOnceInAStableNonKeyOrder) {
  CreateTable("tab1");
  ASSERT_EQ(Batch(ChangeSet("tab1", 60)).result_int(), 202);
  const std::vector<std::string> whole = AllRowKeys("tab1", 1000);
  ASSERT_EQ(whole.size(), 60u);
  std::vector<std::string> sorted = whole;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(whole, sorted);
  EXPECT_EQ(std::set<std::string>(whole.begin(), whole.end()).size(), 60u);
  EXPECT_EQ(AllRowKeys("tab1", 7), whole);  // paged, the same order
  // $top=0 answers an empty page.
  auto none = Send("GET", "/tab1()?$top=0");
  EXPECT_EQ(nlohmann::json::parse(none.body())["value"].size(), 0u);
}

TEST_F(CosmosDispatchTest, ForeignAndMalformedTokensAre400) {
  CreateTable("tab1");
  for (const std::string& token : {std::string("1!4!cA--"), std::string("%7B%7D"), std::string("%7B%22token%22%3A%22%22%7D"),
                                   protocol::PercentEncode(protocol::EncodeCosmosToken(
                                       protocol::CosmosTokenKind::kKeyOrderEntities, {0, "p", "r"}))}) {
    auto r = Send("GET", "/tab1()?NextPartitionKey=" + token + "&NextRowKey=NA");
    EXPECT_EQ(r.result_int(), 400) << token;
    EXPECT_EQ(BodyCode(r), "InvalidInput") << token;
  }
  // NextRowKey other than "NA", or without NextPartitionKey.
  const std::string good = protocol::PercentEncode(
      protocol::EncodeCosmosToken(protocol::CosmosTokenKind::kShuffledEntities, {1, "p", "r"}));
  EXPECT_EQ(Send("GET", "/tab1()?NextPartitionKey=" + good + "&NextRowKey=NA").result_int(), 200);
  EXPECT_EQ(Send("GET", "/tab1()?NextPartitionKey=" + good + "&NextRowKey=1!4!cA--").result_int(), 400);
  EXPECT_EQ(Send("GET", "/tab1()?NextRowKey=NA").result_int(), 400);
}

TEST_F(CosmosDispatchTest, WithTheShuffleOffPagesAreInKeyOrderWithCosmosTokens) {
  Start(/*shuffle=*/false, 0);
  CreateTable("tab1");
  ASSERT_EQ(Batch(ChangeSet("tab1", 30)).result_int(), 202);
  const std::vector<std::string> keys = AllRowKeys("tab1", 4);
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(keys, sorted);
  EXPECT_EQ(keys.size(), 30u);
}

TEST_F(CosmosDispatchTest, QueryTablesIsShuffledAndPagesCompletely) {
  std::vector<std::string> names;
  for (int i = 0; i < 15; ++i) names.push_back("tab" + std::to_string(100 + i));
  for (const auto& n : names) CreateTable(n);
  std::vector<std::string> listed;
  std::string next;
  for (int pages = 0; pages < 100; ++pages) {
    std::string target = "/Tables?$top=4";
    if (!next.empty()) target += "&NextTableName=" + protocol::PercentEncode(next);
    auto r = Send("GET", target);
    ASSERT_EQ(r.result_int(), 200) << r.body();
    const nlohmann::json page = nlohmann::json::parse(r.body());
    for (const auto& t : page["value"]) listed.push_back(t["TableName"]);
    next = H(r, "x-ms-continuation-NextTableName");
    if (next.empty()) break;
  }
  EXPECT_NE(listed, names);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, names);
  EXPECT_EQ(Send("GET", "/Tables?NextTableName=1!4!cA--").result_int(), 400);
}

TEST_F(CosmosDispatchTest, TheRequestUnitBudgetAnswers429WithTheWait) {
  Start(true, /*ru_per_second=*/10);
  CreateTable("tab1");
  int admitted = 0;
  http::Response last;
  for (int i = 0; i < 10; ++i) {
    last = Insert("tab1", R"({"PartitionKey":"p","RowKey":")" + std::to_string(i) + "\"}");
    if (last.result_int() != 201) break;
    ++admitted;
  }
  EXPECT_EQ(admitted, 3);  // 5 RU each: 10, 5, 0, then below zero
  EXPECT_EQ(last.result_int(), 429);
  EXPECT_EQ(BodyCode(last), "TooManyRequests");
  const int wait = std::stoi(H(last, "x-ms-retry-after-ms"));
  EXPECT_GE(wait, 1);
  EXPECT_LE(wait, 500);
  // Another table draws on a budget of its own; a table that was never answered costs nothing.
  CreateTable("tab2");
  EXPECT_EQ(Insert("tab2", R"({"PartitionKey":"p","RowKey":"r"})").result_int(), 201);
  EXPECT_EQ(Send("GET", "/nosuch()").result_int(), 404);
}

// Cosmos DB's table-name rule (protocol::CheckTableName) at every place a
// name arrives: Create Table's body, the URL of entity routes and Delete
// Table, a change set's operations.
TEST_F(CosmosDispatchTest, TableNamesFollowTheCosmosRule) {
  for (const std::string& name : {"ab", "a", "my-table", "x.y", "9lives"}) CreateTable(name);
  EXPECT_EQ(Insert("my-table", R"({"PartitionKey":"p","RowKey":"r"})").result_int(), 201);
  EXPECT_EQ(Send("GET", "/my-table(PartitionKey='p',RowKey='r')").result_int(), 200);
  EXPECT_EQ(Send("GET", "/x.y()").result_int(), 200);
  EXPECT_EQ(Batch(ChangeSet("ab", 3)).result_int(), 202);
  EXPECT_EQ(Send("DELETE", "/Tables('x.y')").result_int(), 204);

  auto bad_char = Send("POST", "/Tables", R"({"TableName":"a#b"})");
  EXPECT_EQ(bad_char.result_int(), 400);
  EXPECT_EQ(BodyCode(bad_char), "InvalidInput");
  EXPECT_EQ(BodyMessage(bad_char).rfind("The table name contains an invalid character.", 0), 0u);
  auto space = Send("POST", "/Tables", R"({"TableName":"orders "})");
  EXPECT_EQ(space.result_int(), 400);
  EXPECT_EQ(BodyMessage(space).rfind("Table name cannot end with a space.", 0), 0u);
  auto long_name = Send("POST", "/Tables", "{\"TableName\":\"" + std::string(255, 't') + "\"}");
  EXPECT_EQ(long_name.result_int(), 400);
  EXPECT_EQ(BodyCode(long_name), "BadRequest");
  EXPECT_EQ(Send("POST", "/Tables", "{\"TableName\":\"" + std::string(254, 't') + "\"}").result_int(), 201);
  // Addressed names: a bad character is 400, an overlong name a plain 404.
  for (const std::string& target : {std::string("/a%23b()"), std::string("/a%3Fb(PartitionKey='p',RowKey='r')"),
                                    std::string("/a%5Cb()")}) {
    auto r = Send("GET", target);
    EXPECT_EQ(r.result_int(), 400) << target;
    EXPECT_EQ(BodyCode(r), "InvalidInput") << target;
  }
  EXPECT_EQ(Send("DELETE", "/Tables('a%23b')").result_int(), 400);
  EXPECT_EQ(Send("GET", "/" + std::string(300, 't') + "()").result_int(), 404);
  auto in_batch = Batch(ChangeSet("a%23b", 1));
  EXPECT_EQ(in_batch.result_int(), 202);
  EXPECT_NE(in_batch.body().find("The table name contains an invalid character."), std::string::npos)
      << in_batch.body();
}

// Error messages end as Cosmos DB's do: "\nRequestID:<id>\n", no Time line;
// a change set's part keeps its index prefix.
TEST_F(CosmosDispatchTest, ErrorMessagesEndWithTheRequestIdLine) {
  CreateTable("tab1");
  auto r = Send("GET", "/tab1(PartitionKey='p',RowKey='none')");
  ASSERT_EQ(r.result_int(), 404);
  EXPECT_EQ(BodyMessage(r), "The specified resource does not exist.\nRequestID:" + H(r, "x-ms-request-id") + "\n");
  EXPECT_EQ(nlohmann::json::parse(r.body())["odata.error"]["message"]["lang"], "en-us");
  ASSERT_EQ(Insert("tab1", R"({"PartitionKey":"p","RowKey":"1"})").result_int(), 201);
  auto conflict = Batch(ChangeSet("tab1", 2));
  ASSERT_EQ(conflict.result_int(), 202);
  const std::string expected = "1:The specified entity already exists.\\n\\nRequestID:" + H(conflict, "x-ms-request-id");
  EXPECT_NE(conflict.body().find(expected), std::string::npos) << conflict.body();
  EXPECT_EQ(conflict.body().find("Time:"), std::string::npos);
  // Refusals before any handler too.
  auto unsupported = Send("GET", "/?restype=service&comp=properties");
  EXPECT_EQ(BodyMessage(unsupported), "The requested operation is not supported.\nRequestID:" +
                                          H(unsupported, "x-ms-request-id") + "\n");
}

// JSON only: Atom asked for or sent at an Atom-era version is 415.
TEST_F(CosmosDispatchTest, AtomIsRefused) {
  CreateTable("tab1");
  for (const auto& headers : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"x-ms-version", "2013-08-15"}, {"Accept", "application/atom+xml"}},
           {{"x-ms-version", "2013-08-15"}, {"Accept", ""}},
           {{"x-ms-version", "2011-08-18"}, {"Accept", "application/xml"}},
       }) {
    auto r = Send("GET", "/tab1()", {}, headers);
    EXPECT_EQ(r.result_int(), 415) << headers[1].second;
    EXPECT_EQ(BodyCode(r), "AtomFormatNotSupported");
    EXPECT_EQ(r.find(boost::beast::http::field::content_type)->value().substr(0, 16), "application/json");
  }
  auto sent = Send("POST", "/tab1", "<entry/>",
                   {{"x-ms-version", "2013-08-15"}, {"Accept", "application/json;odata=nometadata"},
                    {"Content-Type", "application/atom+xml"}});
  EXPECT_EQ(sent.result_int(), 415);
  // JSON at an Atom-era version is served.
  EXPECT_EQ(Send("GET", "/tab1()", {}, {{"x-ms-version", "2013-08-15"}}).result_int(), 200);
}

// A SAS may not create or delete tables, and a stored access policy (si=) never resolves.
TEST_F(CosmosDispatchTest, SasCannotManageTablesNorNamePolicies) {
  CreateTable("tab1");
  const std::string account_sas = AccountSas("sco", "rwdlacu");
  auto create = Send("POST", "/Tables?" + account_sas, R"({"TableName":"tab2"})");
  EXPECT_EQ(create.result_int(), 403);
  EXPECT_EQ(BodyCode(create), "AuthorizationPermissionMismatch");
  EXPECT_EQ(Send("DELETE", "/Tables('tab1')?" + account_sas).result_int(), 403);
  // The same token reads and writes entities.
  EXPECT_EQ(Send("POST", "/tab1?" + account_sas, R"({"PartitionKey":"p","RowKey":"r"})").result_int(), 201);
  EXPECT_EQ(Send("GET", "/Tables?" + account_sas).result_int(), 200);
  // A service SAS: its table compared exactly; no stored access policy.
  EXPECT_EQ(Send("GET", "/tab1()?" + ServiceSas("tab1", "r")).result_int(), 200);
  EXPECT_EQ(Send("GET", "/tab1()?" + ServiceSas("TAB1", "r")).result_int(), 403);
  auto policy = Send("GET", "/tab1()?" + ServiceSas("tab1", "", "policy1"));
  EXPECT_EQ(policy.result_int(), 403);
  EXPECT_EQ(BodyCode(policy), "AuthenticationFailed");
}

// With a request-unit budget, Create Table beyond N a minute per account is 429.
TEST_F(CosmosDispatchTest, TableCreationIsThrottledWithABudget) {
  Start(/*shuffle=*/true, /*ru_per_second=*/1000000, /*table_creates_per_minute=*/3);
  for (int i = 0; i < 3; ++i) CreateTable("tab" + std::to_string(i));
  auto r = Send("POST", "/Tables", R"({"TableName":"tab9"})");
  EXPECT_EQ(r.result_int(), 429);
  EXPECT_EQ(BodyCode(r), "TooManyRequests");
  const long wait = std::stol(H(r, "x-ms-retry-after-ms"));
  EXPECT_GT(wait, 50'000);
  EXPECT_LE(wait, 60'000);
  // Only creation is limited.
  EXPECT_EQ(Insert("tab0", R"({"PartitionKey":"p","RowKey":"r"})").result_int(), 201);
  EXPECT_EQ(Send("DELETE", "/Tables('tab1')").result_int(), 204);
  // Without a budget there is no limit.
  Start(/*shuffle=*/true, 0, 3);
  for (int i = 0; i < 6; ++i) CreateTable("tab" + std::to_string(i));
}

}  // namespace
}  // namespace tablestone::api::testing
