// The data browser's routes (server/api/ui_routes.h) through the dispatcher:
// content types and security headers, 404 for anything not embedded (no path
// traversal), config.json's dev-key rule, --noUi, and a browser's GET / sent to
// the page while every SDK request to / keeps the Table API's answer.
#include "server/api/ui_routes.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/api/api_handler.h"
#include "server/ui/ui_assets.h"
#include "storage/engine.h"
#include "tests/unit/server/api/api_test_util.h"

namespace tablestone::api {
namespace {

namespace bhttp = boost::beast::http;

constexpr char kKey[] = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

class UiRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-ui";
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    options_.accounts = {{"devstoreaccount1", {kKey}}, {"second", {kKey}}};
    options_.ui_dev_key = true;
  }

  http::Response Get(const std::string& target, const std::string& remote_ip = "127.0.0.1",
                     bhttp::verb verb = bhttp::verb::get) {
    if (!handler_) handler_ = MakeApiHandler(*engine_, *executor_, options_);
    http::Request req{verb, target, 11};
    req.set(bhttp::field::host, "127.0.0.1:10002");
    http::RequestContext ctx;
    ctx.remote_ip = remote_ip;
    return http::HandleAndWait(*handler_, req, ctx);
  }

  static std::string H(const http::Response& r, std::string_view name) {
    auto it = r.find(boost::beast::string_view(name.data(), name.size()));
    return it == r.end() ? std::string() : std::string(it->value());
  }

  std::unique_ptr<storage::Engine> engine_;
  ApiOptions options_;
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<exec::WorkExecutor> executor_ = testing::TestLanes();
};

TEST_F(UiRoutesTest, IndexHasTypeCacheAndStrictPolicy) {
  auto r = Get("/_tablestone/ui/");
  ASSERT_EQ(r.result_int(), 200);
  EXPECT_EQ(H(r, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(H(r, "Cache-Control"), "no-cache");
  EXPECT_EQ(H(r, "X-Content-Type-Options"), "nosniff");
  const std::string csp = H(r, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
  EXPECT_EQ(r.body(), std::string(ui::FindEmbeddedFile("index.html")->bytes));
  EXPECT_NE(r.body().find("<script type=\"module\" src=\"app.js\"></script>"), std::string::npos);
  // No inline script anywhere in the page: the policy would block it.
  EXPECT_EQ(r.body().find("<script>"), std::string::npos);
}

TEST_F(UiRoutesTest, EveryEmbeddedFileIsServedWithItsType) {
  ASSERT_GE(ui::kEmbeddedFileCount, 3u);
  for (size_t i = 0; i < ui::kEmbeddedFileCount; ++i) {
    const ui::EmbeddedFile& f = ui::kEmbeddedFiles[i];
    auto r = Get("/_tablestone/ui/" + std::string(f.name));
    ASSERT_EQ(r.result_int(), 200) << f.name;
    EXPECT_EQ(r.body(), std::string(f.bytes)) << f.name;
    EXPECT_EQ(H(r, "Content-Type"), std::string(ui::ContentTypeOf(f.name))) << f.name;
    EXPECT_FALSE(H(r, "Content-Security-Policy").empty()) << f.name;
  }
  EXPECT_EQ(H(Get("/_tablestone/ui/app.js"), "Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(H(Get("/_tablestone/ui/app.css"), "Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(H(Get("/_tablestone/ui/app.js?v=2"), "Content-Type"), "text/javascript; charset=utf-8");
}

TEST_F(UiRoutesTest, ContentTypeByExtension) {
  EXPECT_EQ(ui::ContentTypeOf("a.json"), "application/json");
  EXPECT_EQ(ui::ContentTypeOf("a.svg"), "image/svg+xml");
  EXPECT_EQ(ui::ContentTypeOf("noext"), "application/octet-stream");
  EXPECT_EQ(ui::ContentTypeOf("a.js.map"), "application/octet-stream");
}

TEST_F(UiRoutesTest, PrefixAloneRedirectsToTheDirectory) {
  auto r = Get("/_tablestone/ui");
  EXPECT_EQ(r.result_int(), 308);
  EXPECT_EQ(H(r, "Location"), "/_tablestone/ui/");
}

TEST_F(UiRoutesTest, UnknownNamesAndTraversalAre404) {
  for (const char* target :
       {"/_tablestone/ui/missing.js", "/_tablestone/ui/../metrics", "/_tablestone/ui/..%2fhealth",
        "/_tablestone/ui/%2e%2e/%2e%2e/etc/passwd", "/_tablestone/ui/assets/app.js", "/_tablestone/ui//app.js",
        "/_tablestone/ui/app.js/", "/_tablestone/ui/./app.js", "/_tablestone/ui/APP.JS",
        "/_tablestone/ui/ui_assets.h", "/_tablestone/ui/%61pp.js"}) {
    auto r = Get(target);
    EXPECT_EQ(r.result_int(), 404) << target;
    EXPECT_EQ(r.body(), "not found\n") << target;
    EXPECT_EQ(H(r, "Content-Type"), "text/plain; charset=utf-8") << target;
  }
}

TEST_F(UiRoutesTest, OnlyTheExactPrefixIsTheUi) {
  EXPECT_TRUE(IsUiPath("/_tablestone/ui"));
  EXPECT_TRUE(IsUiPath("/_tablestone/ui/x"));
  EXPECT_FALSE(IsUiPath("/_tablestone/uix"));
  EXPECT_FALSE(IsUiPath("/devstoreaccount1/_tablestone/ui/"));
  // A neighbour of the prefix is the Table API's to refuse, not a page.
  auto r = Get("/_tablestone/uiindex.html");
  EXPECT_NE(r.result_int(), 200);
  EXPECT_TRUE(H(r, "Content-Security-Policy").empty());
}

TEST_F(UiRoutesTest, ConfigOffersTheDevKeyOnlyToLoopbackPeers) {
  auto local = Get("/_tablestone/ui/config.json", "127.0.0.1");
  ASSERT_EQ(local.result_int(), 200);
  EXPECT_EQ(H(local, "Content-Type"), "application/json");
  EXPECT_EQ(H(local, "Cache-Control"), "no-store");
  auto j = nlohmann::json::parse(local.body());
  EXPECT_EQ(j["accounts"], nlohmann::json::array({"devstoreaccount1", "second"}));
  EXPECT_EQ(j["devKey"], true);
  EXPECT_EQ(local.body().find(kKey), std::string::npos);  // names only, never a key
  EXPECT_EQ(nlohmann::json::parse(Get("/_tablestone/ui/config.json", "::1").body())["devKey"], true);
  EXPECT_EQ(nlohmann::json::parse(Get("/_tablestone/ui/config.json", "::ffff:127.0.0.1").body())["devKey"], true);
  EXPECT_EQ(nlohmann::json::parse(Get("/_tablestone/ui/config.json", "10.1.2.3").body())["devKey"], false);
  EXPECT_EQ(nlohmann::json::parse(Get("/_tablestone/ui/config.json", "128.0.0.1").body())["devKey"], false);
}

// Operator-chosen strings reach the page whole: control characters were
// dropped by a hand-written escaper ("a\x01b" arrived as "ab").
TEST_F(UiRoutesTest, ConfigKeepsEveryCharacterOfNamesAndVersion) {
  options_.accounts.push_back({"tab\tnew\nline\x01\"q\"\\", {kKey}});
  options_.facts.version = "1.2\x1f-dev\x7f";
  auto j = nlohmann::json::parse(Get("/_tablestone/ui/config.json").body());
  ASSERT_EQ(j["accounts"].size(), 3u);
  EXPECT_EQ(j["accounts"][2], "tab\tnew\nline\x01\"q\"\\");
  EXPECT_EQ(j["version"], "1.2\x1f-dev\x7f");
}

TEST_F(UiRoutesTest, ConfigWithoutDevKeyPermission) {
  options_.ui_dev_key = false;
  EXPECT_EQ(nlohmann::json::parse(Get("/_tablestone/ui/config.json", "127.0.0.1").body())["devKey"], false);
}

TEST_F(UiRoutesTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.9.9.9"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("::ffff:127.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackAddress("::"));
  EXPECT_FALSE(IsLoopbackAddress("192.168.1.2"));
  EXPECT_FALSE(IsLoopbackAddress(""));
}

TEST_F(UiRoutesTest, AdmittedWithoutSignatureButDataStillNeedsOne) {
  handler_ = MakeApiHandler(*engine_, *executor_, options_);
  http::Request page{bhttp::verb::get, "/_tablestone/ui/app.js", 11};
  http::Response refusal;
  EXPECT_TRUE(handler_->AdmitHeaders(page, http::RequestContext{}, refusal));
  // The page's own Table API calls are refused unsigned, as any client's.
  auto tables = Get("/devstoreaccount1/Tables");
  EXPECT_EQ(tables.result_int(), 403);
}

TEST_F(UiRoutesTest, OnlyGetServesThePage) {
  auto r = Get("/_tablestone/ui/", "127.0.0.1", bhttp::verb::post);
  EXPECT_NE(r.result_int(), 200);
  EXPECT_TRUE(H(r, "Content-Security-Policy").empty());
}

TEST_F(UiRoutesTest, NoUiTurnsEveryRouteOff) {
  options_.ui = false;
  for (const char* target : {"/_tablestone/ui/", "/_tablestone/ui/app.js", "/_tablestone/ui/config.json", "/_tablestone/ui"}) {
    auto r = Get(target);
    EXPECT_GE(r.result_int(), 400) << target;
    EXPECT_TRUE(H(r, "Content-Security-Policy").empty()) << target;
    EXPECT_EQ(r.body().find("<html"), std::string::npos) << target;
  }
  http::Request page{bhttp::verb::get, "/_tablestone/ui/app.js", 11};
  http::Response refusal;
  EXPECT_FALSE(handler_->AdmitHeaders(page, http::RequestContext{}, refusal));
  EXPECT_GE(refusal.result_int(), 400);
}

// Issue 30 item 8: the page (which may hand out the development key) answers
// only to a Host a DNS-rebinding page cannot send.
TEST_F(UiRoutesTest, ARebindingHostIsRefused) {
  handler_ = MakeApiHandler(*engine_, *executor_, options_);
  for (const char* host : {"rebind.example:10002", "localhost.rebind.example", ""}) {
    http::Request req{bhttp::verb::get, "/_tablestone/ui/config.json", 11};
    if (*host != 0) req.set(bhttp::field::host, host);
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    const auto r = http::HandleAndWait(*handler_, req, ctx);
    EXPECT_EQ(r.result_int(), 403u) << host;
    EXPECT_EQ(r.body().find("devKey"), std::string::npos) << host;
  }
  for (const char* host : {"localhost:10002", "[::1]:10002", "192.168.1.20:10002"}) {
    http::Request req{bhttp::verb::get, "/_tablestone/ui/config.json", 11};
    req.set(bhttp::field::host, host);
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    EXPECT_EQ(http::HandleAndWait(*handler_, req, ctx).result_int(), 200u) << host;
  }
}

// Issue 35: the server's address typed into a browser answered 400 InvalidUri.
// A browser's page request for / is sent to the UI; nothing else sent to / is.
class UiAtRootTest : public UiRoutesTest {
 protected:
  static constexpr char kBrowserAccept[] = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

  static std::string ErrorCode(const http::Response& r) { return H(r, "x-ms-error-code"); }

  http::Response Root(std::vector<std::pair<std::string, std::string>> headers, bhttp::verb verb = bhttp::verb::get,
                      const std::string& target = "/", const std::string& host = "127.0.0.1:10002") {
    if (!handler_) handler_ = MakeApiHandler(*engine_, *executor_, options_);
    http::Request req{verb, target, 11};
    if (!host.empty()) req.set(bhttp::field::host, host);
    for (const auto& [name, value] : headers) req.set(name, value);
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    return http::HandleAndWait(*handler_, req, ctx);
  }
};

TEST_F(UiAtRootTest, ABrowserIsRedirectedToThePage) {
  for (const char* accept : {kBrowserAccept, "text/html"}) {
    const auto r = Root({{"Accept", accept}});
    EXPECT_EQ(r.result_int(), 302) << accept;
    EXPECT_EQ(H(r, "Location"), "/_tablestone/ui/") << accept;
    EXPECT_EQ(H(r, "Content-Type"), "text/plain; charset=utf-8");
    EXPECT_NE(r.body().find("/_tablestone/ui/"), std::string::npos) << r.body();
    EXPECT_FALSE(H(r, "Content-Security-Policy").empty());
    EXPECT_FALSE(H(r, "x-ms-request-id").empty());  // the common headers, as on every answer
  }
}

// What the Table API answers for / (the service refuses a bare GET / with
// 400 InvalidUri) is kept for every request an SDK or a script sends.
TEST_F(UiAtRootTest, EveryOtherRequestToTheRootKeepsTheTableApisAnswer) {
  const auto table_api = Root({{"Accept", "application/json;odata=minimalmetadata"}, {"x-ms-version", "2019-02-02"}});
  ASSERT_NE(table_api.result_int(), 302);
  EXPECT_EQ(table_api.result_int(), 400);
  EXPECT_EQ(ErrorCode(table_api), "InvalidUri");
  const auto plain = Root({});
  EXPECT_EQ(plain.result_int(), 400);
  EXPECT_EQ(ErrorCode(plain), "InvalidUri");
  struct Case {
    const char* why;
    std::vector<std::pair<std::string, std::string>> headers;
    bhttp::verb verb;
    std::string target;
  };
  const std::vector<Case> cases = {
      {"no text/html in Accept", {{"Accept", "application/json"}}, bhttp::verb::get, "/"},
      {"x-ms-version", {{"Accept", kBrowserAccept}, {"x-ms-version", "2019-02-02"}}, bhttp::verb::get, "/"},
      {"a signature", {{"Accept", kBrowserAccept}, {"Authorization", "SharedKeyLite devstoreaccount1:x"}},
       bhttp::verb::get, "/"},
      {"a query", {{"Accept", kBrowserAccept}}, bhttp::verb::get, "/?restype=service&comp=properties"},
      {"HEAD", {{"Accept", kBrowserAccept}}, bhttp::verb::head, "/"},
      {"POST", {{"Accept", kBrowserAccept}}, bhttp::verb::post, "/"},
  };
  for (const Case& c : cases) {
    const auto r = Root(c.headers, c.verb, c.target);
    EXPECT_NE(r.result_int(), 302) << c.why;
    EXPECT_TRUE(H(r, "Location").empty()) << c.why;
    EXPECT_TRUE(H(r, "Content-Security-Policy").empty()) << c.why;
    EXPECT_FALSE(ErrorCode(r).empty()) << c.why << ": the Table API's error, not the UI's answer";
  }
  // The same request as the Table API's reference above, but asking for HTML: the same answer.
  const auto sdk_html = Root({{"Accept", kBrowserAccept}, {"x-ms-version", "2019-02-02"}});
  EXPECT_EQ(sdk_html.result_int(), table_api.result_int());
  EXPECT_EQ(ErrorCode(sdk_html), ErrorCode(table_api));
}

// A body sent to / is the Table API's to admit (Set Table Service Properties
// is PUT /?restype=service&comp=properties): the UI's rule for its own
// routes, no body at all, must not reach it, whatever Accept says.
TEST_F(UiAtRootTest, BodiesSentToTheRootAreStillTheTableApis) {
  handler_ = MakeApiHandler(*engine_, *executor_, options_);
  http::Request put{bhttp::verb::put, "/?restype=service&comp=properties", 11};
  put.set(bhttp::field::host, "127.0.0.1:10002");
  put.set(bhttp::field::accept, kBrowserAccept);
  put.set(bhttp::field::content_length, "300");
  put.set("x-ms-version", "2019-02-02");
  http::Response refusal;
  http::BodyAdmission body;
  // The Table API refuses it on its headers as before (path-style, / names no
  // account: 400 InvalidUri), never with the UI's 413.
  EXPECT_FALSE(handler_->AdmitHeaders(put, http::RequestContext{}, refusal, body));
  EXPECT_EQ(refusal.result_int(), 400);
  EXPECT_EQ(ErrorCode(refusal), "InvalidUri");
  // A page request carrying a body (no browser sends one) is the UI's, and refused unread.
  http::Request get{bhttp::verb::get, "/", 11};
  get.set(bhttp::field::host, "127.0.0.1:10002");
  get.set(bhttp::field::accept, kBrowserAccept);
  get.set(bhttp::field::content_length, "1000000");
  http::Response refused;
  EXPECT_FALSE(handler_->AdmitHeaders(get, http::RequestContext{}, refused));
  EXPECT_EQ(refused.result_int(), 413);
}

TEST_F(UiAtRootTest, NoUiAndRebindingHostsGetNoRedirect) {
  options_.ui = false;
  const auto off = Root({{"Accept", kBrowserAccept}});
  EXPECT_EQ(off.result_int(), 400);
  EXPECT_EQ(ErrorCode(off), "InvalidUri");
  options_.ui = true;
  handler_.reset();
  // As the page itself: answered only to a Host a DNS-rebinding page cannot send.
  const auto rebound = Root({{"Accept", kBrowserAccept}}, bhttp::verb::get, "/", "rebind.example:10002");
  EXPECT_EQ(rebound.result_int(), 403);
  EXPECT_TRUE(H(rebound, "Location").empty());
  EXPECT_EQ(Root({{"Accept", kBrowserAccept}}, bhttp::verb::get, "/", "localhost:10002").result_int(), 302);
}

}  // namespace
}  // namespace tablestone::api
