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

  void Start(bool shuffle, uint64_t ru_per_second) {
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

}  // namespace
}  // namespace tablestone::api::testing
