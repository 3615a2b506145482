// The admin routes (server/api/admin_routes.h, docs/admin-api.md) on a real
// on-disk engine: authentication (the admin string-to-sign), authorization
// (who may do what), file confinement (admin_files.h), snapshot, reset.
#include "server/api/admin_routes.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "protocol/auth/admin_signature.h"
#include "protocol/auth/hmac.h"
#include "protocol/auth/shared_key.h"
#include "protocol/base64.h"
#include "server/api/admin_files.h"
#include "server/faults/fault_rules.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

namespace bhttp = boost::beast::http;
namespace fs = std::filesystem;

constexpr char kKey1[] = "a2V5LW9uZS1mb3ItdGVzdHMtb25seS0wMDAwMDAwMDAwMDA=";
constexpr char kKey2[] = "a2V5LXR3by1mb3ItdGVzdHMtb25seS0xMTExMTExMTExMTE=";
constexpr char kAdminKey[] = "YWRtaW4ta2V5LWZvci10ZXN0cy1vbmx5LTIyMjIyMjIyMjI=";

// What to sign and what to send, when a test tampers with one of them.
struct Signed {
  std::string target;            // signed and sent
  std::string body;              // signed and sent
  std::optional<std::string> sent_target;  // sent instead of `target`
  std::optional<std::string> sent_body;    // sent instead of `body`
  std::string content_type;
  int64_t skew_seconds = 0;
  std::string host = "127.0.0.1:10002";
};

// An admin request signed as the docs say (docs/admin-api.md, "Authentication").
http::Request SignAdmin(bhttp::verb verb, const Signed& s, const std::string& signer, const char* key) {
  http::Request req{verb, s.sent_target.value_or(s.target), 11};
  req.body() = s.sent_body.value_or(s.body);
  if (!s.host.empty()) req.set(bhttp::field::host, s.host);
  const std::string date = model::FormatRfc1123(model::NowTicks() + s.skew_seconds * model::kTicksPerSecond);
  req.set("x-ms-date", date);
  if (!s.content_type.empty()) req.set(bhttp::field::content_type, s.content_type);
  const std::string hash = protocol::auth::ContentSha256Base64(s.body);
  req.set(protocol::auth::kContentSha256Header, hash);
  const std::string_view target = s.target;
  const auto query =
      protocol::ParseQueryString(target.find('?') == std::string_view::npos ? "" : target.substr(target.find('?') + 1));
  const std::string to_sign = protocol::auth::AdminStringToSign(
      std::string(bhttp::to_string(verb)), s.content_type, date, hash,
      protocol::auth::AdminCanonicalizedResource(signer, target.substr(0, target.find('?')), *query));
  req.set(bhttp::field::authorization,
          "SharedKey " + signer + ":" + protocol::auth::SignBase64(*protocol::Base64Decode(key), to_sign));
  req.prepare_payload();
  return req;
}

class AdminRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tablestone-admin-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "data");
    ::chmod((root_ / "data").c_str(), 0700);
    storage::EngineOptions eo;
    eo.path = (root_ / "data").string();
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    options_.accounts = {{"acct1", {kKey1}}, {"acct2", {kKey2}}};
    options_.facts.data_dir = eo.path;
    options_.snapshot_dir = (root_ / "snapshots").string();
    options_.trace_dir = (root_ / "traces").string();
  }
  void TearDown() override {
    (void)engine_->Close();
    engine_.reset();
    fs::remove_all(root_);
  }

  // The Authenticator the dispatcher would build from options_.
  Authenticator MakeAuthenticator() const {
    Authenticator a(options_.accounts, false, nullptr);
    a.SetAdminCredentials(options_.admin_key, options_.admin_account);
    return a;
  }

  http::Response Send(const http::Request& req, TraceWriter* trace = nullptr) {
    return HandleAdmin(req, *engine_, options_, MakeAuthenticator(), trace);
  }

  http::Response Call(std::string target, const std::string& account, const char* key,
                      bhttp::verb verb = bhttp::verb::post, int64_t skew_seconds = 0, std::string body = {}) {
    Signed s;
    s.target = std::move(target);
    s.body = std::move(body);
    s.skew_seconds = skew_seconds;
    return Send(SignAdmin(verb, s, account, key));
  }

  void AddEntities(const std::string& account, const std::string& table, int n) {
    auto info = engine_->CreateTable(account, table);
    ASSERT_TRUE(info.ok());
    for (int i = 0; i < n; ++i) {
      model::WriteOp op;
      op.kind = model::WriteKind::kInsert;
      op.entity.partition_key = "p";
      op.entity.row_key = std::to_string(i);
      ASSERT_TRUE(engine_->Write(*info, std::span(&op, 1)).status.ok());
    }
  }

  size_t TableCount(const std::string& account) {
    auto page = engine_->ListTables(account, storage::TableListSpec{});
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->tables.size() : 0;
  }

  fs::path root_;
  std::unique_ptr<storage::Engine> engine_;
  ApiOptions options_;
};

TEST_F(AdminRoutesTest, FaultRoutesListAddRemoveAndClear) {
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::get).result_int(), 404u);  // no FaultSet
  options_.faults = std::make_shared<faults::FaultSet>(5);
  options_.admin_account = "acct1";
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey2, bhttp::verb::get).result_int(), 403u);
  http::Response added = Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::post, 0,
                              R"([{"id":"a","action":"serverBusy"},{"action":"timeoutAfter","everyNth":3}])");
  ASSERT_EQ(added.result_int(), 201u) << added.body();
  EXPECT_EQ(nlohmann::json::parse(added.body())["ids"], nlohmann::json({"a", "r1"}));
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::post, 0, R"({"action":"nope"})").result_int(),
            400u);
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::post, 0, "not json").result_int(), 400u);
  auto listed = nlohmann::json::parse(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::get).body());
  EXPECT_EQ(listed["seed"], 5);
  ASSERT_EQ(listed["rules"].size(), 2u);
  EXPECT_EQ(listed["rules"][1]["everyNth"], 3);
  EXPECT_EQ(Call("/_tablestone/faults?id=a", "acct1", kKey1, bhttp::verb::delete_).result_int(), 200u);
  EXPECT_EQ(Call("/_tablestone/faults?id=a", "acct1", kKey1, bhttp::verb::delete_).result_int(), 404u);
  http::Response realistic = Call("/_tablestone/faults/realistic", "acct1", kKey1, bhttp::verb::post, 0,
                                  R"({"enabled":true,"account":"acct1","tableBeingDeletedMs":5})");
  ASSERT_EQ(realistic.result_int(), 200u) << realistic.body();
  EXPECT_TRUE(options_.faults->Realistic("acct1", "t"));
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::delete_).result_int(), 200u);
  EXPECT_TRUE(options_.faults->ToJson()["rules"].empty());
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::put).result_int(), 405u);
}

TEST_F(AdminRoutesTest, RecognisesOnlyItsTargets) {
  EXPECT_TRUE(IsAdminTarget("/_tablestone/faults"));
  EXPECT_TRUE(IsAdminTarget("/_tablestone/snapshot?to=x"));
  EXPECT_TRUE(IsAdminTarget("/_tablestone/reset"));
  EXPECT_FALSE(IsAdminTarget("/_tablestone/health"));
  EXPECT_FALSE(IsAdminTarget("/devstoreaccount1/Tables"));
}

TEST_F(AdminRoutesTest, RefusesBadSignaturesStaleDatesAndOtherMethods) {
  AddEntities("acct1", "keep", 1);
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey2).result_int(), 403u);       // wrong key
  EXPECT_EQ(Call("/_tablestone/reset", "nobody", kKey1).result_int(), 403u);      // unknown account
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey1, bhttp::verb::post, 3600).result_int(), 403u);  // stale
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey1, bhttp::verb::get).result_int(), 405u);
  http::Request unsigned_req{bhttp::verb::post, "/_tablestone/reset", 11};
  unsigned_req.set(bhttp::field::host, "127.0.0.1");
  EXPECT_EQ(Send(unsigned_req).result_int(), 403u);
  EXPECT_EQ(TableCount("acct1"), 1u);
}

TEST_F(AdminRoutesTest, ResetOneAccountNeedsItsKeyAndKeepsTheOthers) {
  AddEntities("acct1", "one", 50);
  AddEntities("acct1", "two", 5);
  AddEntities("acct2", "other", 5);
  EXPECT_EQ(Call("/_tablestone/reset?account=acct2", "acct1", kKey1).result_int(), 403u);
  // Another name, configured or not, is refused alike (no probing for names); the admin gets 404.
  EXPECT_EQ(Call("/_tablestone/reset?account=zzz", "acct1", kKey1).result_int(), 403u);
  options_.admin_key = kAdminKey;
  EXPECT_EQ(Call("/_tablestone/reset?account=zzz", "tablestone-admin", kAdminKey).result_int(), 404u);
  options_.admin_key.clear();
  http::Response r = Call("/_tablestone/reset?account=acct1", "acct1", kKey1);
  ASSERT_EQ(r.result_int(), 200u) << r.body();
  auto body = nlohmann::json::parse(r.body());
  EXPECT_EQ(body["tablesDeleted"], 2);
  EXPECT_EQ(TableCount("acct1"), 0u);
  EXPECT_EQ(TableCount("acct2"), 1u);
  // Without ?account: every configured account, by the admin only.
  EXPECT_EQ(Call("/_tablestone/reset", "acct2", kKey2).result_int(), 403u);
  EXPECT_EQ(TableCount("acct2"), 1u);
  options_.admin_account = "acct2";
  r = Call("/_tablestone/reset", "acct2", kKey2);
  ASSERT_EQ(r.result_int(), 200u) << r.body();
  EXPECT_EQ(nlohmann::json::parse(r.body())["tablesDeleted"], 1);
  EXPECT_EQ(TableCount("acct2"), 0u);
}

TEST_F(AdminRoutesTest, SnapshotHoldsEveryAcknowledgedWriteAndNothingLater) {
  options_.admin_key = kAdminKey;
  AddEntities("acct1", "snap", 20);
  const std::string dir = (root_ / "snapshots" / "snap1").string();
  http::Response r = Call("/_tablestone/snapshot?to=snap1", "tablestone-admin", kAdminKey);
  ASSERT_EQ(r.result_int(), 201u) << r.body();
  EXPECT_EQ(nlohmann::json::parse(r.body())["snapshot"], dir);
  // The snapshot, and the directory made for it, have the data directory's mode (0700).
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((root_ / "snapshots").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (const auto& e : fs::directory_iterator(dir)) {
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
    if (st.st_nlink == 1) EXPECT_EQ(st.st_mode & 0077, 0u) << e.path();
  }
  AddEntities("acct1", "later", 1);
  EXPECT_EQ(Call("/_tablestone/snapshot?to=snap1", "tablestone-admin", kAdminKey).result_int(), 409u);  // exists
  EXPECT_EQ(Call("/_tablestone/snapshot?to=" + dir, "tablestone-admin", kAdminKey).result_int(), 409u);  // same, by path
  EXPECT_EQ(Call("/_tablestone/snapshot", "tablestone-admin", kAdminKey).result_int(), 400u);             // no ?to

  storage::EngineOptions eo;
  eo.path = dir;
  auto snap = storage::Engine::Open(eo);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto tables = snap.value()->ListTables("acct1", storage::TableListSpec{});
  ASSERT_TRUE(tables.ok());
  ASSERT_EQ(tables->tables.size(), 1u);
  auto page = snap.value()->Scan(tables->tables[0], model::ScanSpec{});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->entities.size(), 20u);
  EXPECT_TRUE(snap.value()->Close().ok());
}


// Issue 30 item 2: one account's key never touches another account, nor
// anything server-wide, when several accounts are configured.
TEST_F(AdminRoutesTest, AnAccountKeyActsOnlyOnItsOwnAccount) {
  options_.faults = std::make_shared<faults::FaultSet>(1);
  TraceWriter trace;
  AddEntities("acct2", "theirs", 1);
  const auto post = bhttp::verb::post;
  // Rules: only with "account" = the signer, one rule or an array.
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, post, 0, R"({"match":{"account":"acct2"},"action":"serverBusy"})")
                .result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, post, 0, R"({"action":"serverBusy"})").result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, post, 0,
                 R"([{"match":{"account":"acct1"},"action":"serverBusy"},{"match":{"account":"acct2"},"action":"serverBusy"}])")
                .result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, post, 0, R"({"rules":[{"match":{"account":"acct1"}}],"seed":3})")
                .result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, post, 0,
                 R"({"id":"latency","match":{"account":"acct2"},"action":"latencyBefore","latencyMs":100})")
                .result_int(), 403u);
  EXPECT_TRUE(options_.faults->ToJson()["rules"].empty());
  ASSERT_EQ(Call("/_tablestone/faults", "acct2", kKey2, post, 0, R"({"id":"two","match":{"account":"acct2"},"action":"serverBusy"})").result_int(),
            201u);
  ASSERT_EQ(Call("/_tablestone/faults", "acct1", kKey1, post, 0, R"([{"id":"one","match":{"account":"acct1"},"action":"serverBusy"}])").result_int(),
            201u);
  // acct1 sees only its rule, and cannot remove acct2's (404, as a missing one).
  auto listed = nlohmann::json::parse(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::get).body());
  ASSERT_EQ(listed["rules"].size(), 1u);
  EXPECT_EQ(listed["rules"][0]["id"], "one");
  EXPECT_EQ(Call("/_tablestone/faults?id=two", "acct1", kKey1, bhttp::verb::delete_).result_int(), 404u);
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::delete_).result_int(), 200u);
  listed = options_.faults->ToJson();
  ASSERT_EQ(listed["rules"].size(), 1u);
  EXPECT_EQ(listed["rules"][0]["id"], "two");
  // Realistic mode: for itself only, and not the global settings.
  EXPECT_EQ(Call("/_tablestone/faults/realistic", "acct1", kKey1, post, 0, R"({"enabled":true,"account":"acct2"})")
                .result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/faults/realistic", "acct1", kKey1, post, 0, R"({"enabled":true})").result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/faults/realistic", "acct1", kKey1, post, 0,
                 R"({"enabled":true,"account":"acct1","latencyMedianMs":500})")
                .result_int(), 403u);
  EXPECT_FALSE(options_.faults->Realistic("acct2", "t"));
  EXPECT_EQ(options_.faults->ToJson()["realistic"]["latencyMedianMs"], 0);
  EXPECT_EQ(Call("/_tablestone/faults/realistic", "acct1", kKey1, post, 0,
                 R"({"enabled":true,"account":"acct1","table":"t"})")
                .result_int(), 200u);
  EXPECT_TRUE(options_.faults->Realistic("acct1", "t"));
  EXPECT_FALSE(options_.faults->Realistic("acct2", "t"));
  // Server-wide operations.
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey1).result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/reset?account=acct2", "acct1", kKey1).result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/snapshot?to=mine", "acct1", kKey1).result_int(), 403u);
  Signed on;
  on.target = "/_tablestone/trace";
  on.body = R"({"enabled":true,"file":"t.jsonl","bodies":true})";
  EXPECT_EQ(Send(SignAdmin(post, on, "acct1", kKey1), &trace).result_int(), 403u);
  EXPECT_FALSE(trace.enabled());
  EXPECT_EQ(TableCount("acct2"), 1u);
  EXPECT_FALSE(fs::exists(root_ / "snapshots" / "mine"));
}

TEST_F(AdminRoutesTest, TheAdminIsTheKeyTheDesignatedAccountOrTheOnlyAccount) {
  AddEntities("acct1", "a", 1);
  AddEntities("acct2", "b", 1);
  // --adminKey signs as tablestone-admin; unknown without it.
  EXPECT_EQ(Call("/_tablestone/reset", "tablestone-admin", kAdminKey).result_int(), 403u);
  options_.admin_key = kAdminKey;
  EXPECT_EQ(Call("/_tablestone/reset?account=acct1", "tablestone-admin", kAdminKey).result_int(), 200u);
  EXPECT_EQ(TableCount("acct1"), 0u);
  EXPECT_EQ(Call("/_tablestone/reset", "acct2", kKey2).result_int(), 403u);
  // --adminAccount: that account's keys.
  options_.admin_key.clear();
  options_.admin_account = "acct2";
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey1).result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/reset", "acct2", kKey2).result_int(), 200u);
  EXPECT_EQ(TableCount("acct2"), 0u);
  // A single configured account is the admin (the developer's setup).
  options_.admin_account.clear();
  options_.accounts = {{"acct1", {kKey1}}};
  AddEntities("acct1", "c", 1);
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey1).result_int(), 200u);
  EXPECT_EQ(TableCount("acct1"), 0u);
  // ... unless an admin credential is named.
  options_.admin_key = kAdminKey;
  EXPECT_EQ(Call("/_tablestone/reset", "acct1", kKey1).result_int(), 403u);
}

// Issue 30 item 3: the signature covers the query and the body.
TEST_F(AdminRoutesTest, AReplayWithAnotherQueryOrBodyIsRefused) {
  options_.admin_account = "acct1";
  options_.faults = std::make_shared<faults::FaultSet>(1);
  AddEntities("acct1", "a", 1);
  AddEntities("acct2", "b", 1);
  Signed one;
  one.target = "/_tablestone/reset?account=acct1";
  one.sent_target = "/_tablestone/reset";
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, one, "acct1", kKey1)).result_int(), 403u);
  one.sent_target = "/_tablestone/reset?account=acct2";
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, one, "acct1", kKey1)).result_int(), 403u);
  one.sent_target = "/_tablestone/reset?account=acct1&account=acct2";
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, one, "acct1", kKey1)).result_int(), 403u);
  EXPECT_EQ(TableCount("acct1"), 1u);
  EXPECT_EQ(TableCount("acct2"), 1u);
  Signed rule;
  rule.target = "/_tablestone/faults";
  rule.body = R"({"match":{"account":"acct1"},"action":"serverBusy"})";
  rule.sent_body = R"({"action":"serverBusy"})";
  const http::Response swapped = Send(SignAdmin(bhttp::verb::post, rule, "acct1", kKey1));
  EXPECT_EQ(swapped.result_int(), 400u) << swapped.body();
  EXPECT_TRUE(options_.faults->ToJson()["rules"].empty());
  rule.sent_body.reset();
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, rule, "acct1", kKey1)).result_int(), 201u);
  // Query parameters are canonicalised: order and case of names do not matter.
  Signed reordered;
  reordered.target = "/_tablestone/reset?account=acct1&x=1";
  reordered.sent_target = "/_tablestone/reset?X=1&account=acct1";
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, reordered, "acct1", kKey1)).result_int(), 200u);
}

TEST_F(AdminRoutesTest, TheTableServiceSignatureAndAMissingHashAreRefused) {
  options_.admin_account = "acct1";
  AddEntities("acct1", "a", 1);
  // The pre-issue-30 signature: Table-style, no query, no hash.
  http::Request old{bhttp::verb::post, "/_tablestone/reset?account=acct1", 11};
  old.set(bhttp::field::host, "127.0.0.1");
  const std::string date = model::FormatRfc1123(model::NowTicks());
  old.set("x-ms-date", date);
  const std::string to_sign = protocol::auth::SharedKeyStringToSign(
      "POST", "", "", date, protocol::auth::CanonicalizedResource("acct1", "/_tablestone/reset", std::nullopt));
  old.set(bhttp::field::authorization,
          "SharedKey acct1:" + protocol::auth::SignBase64(*protocol::Base64Decode(kKey1), to_sign));
  EXPECT_EQ(Send(old).result_int(), 403u);
  old.set(protocol::auth::kContentSha256Header, protocol::auth::ContentSha256Base64(""));
  EXPECT_EQ(Send(old).result_int(), 403u);
  EXPECT_EQ(TableCount("acct1"), 1u);
}

TEST_F(AdminRoutesTest, TheDateIsCheckedWithTheAuthenticatorsClock) {
  options_.admin_account = "acct1";
  Signed s;
  s.target = "/_tablestone/reset?account=acct1";
  const http::Request req = SignAdmin(bhttp::verb::post, s, "acct1", kKey1);
  Authenticator later = MakeAuthenticator();
  later.SetClockForTesting([] { return model::NowTicks() + 16 * 60 * model::kTicksPerSecond; });
  EXPECT_EQ(HandleAdmin(req, *engine_, options_, later).result_int(), 403u);
  EXPECT_EQ(Send(req).result_int(), 200u);
}

// Issue 30 item 8: DNS rebinding.
TEST_F(AdminRoutesTest, OnlyLoopbackNamesIpLiteralsAndAllowedHostsAreAnswered) {
  options_.allowed_hosts = {"tablestone.internal"};
  for (const char* host : {"localhost", "localhost:10002", "LOCALHOST.", "app.localhost:1", "127.0.0.1:10002",
                           "10.1.2.3", "[::1]:10002", "[fe80::1]", "tablestone.internal:10002"}) {
    EXPECT_TRUE(IsAllowedHost(host, options_)) << host;
  }
  for (const char* host : {"", "evil.example", "evil.example:10002", "localhost.evil.example", "127.0.0.1.nip.io",
                           "[::1", "::1", "[not-ip]:1", "1.2.3.4:5:6"}) {
    EXPECT_FALSE(IsAllowedHost(host, options_)) << host;
  }
  options_.admin_account = "acct1";
  AddEntities("acct1", "a", 1);
  Signed s;
  s.target = "/_tablestone/reset?account=acct1";
  s.host = "rebound.example:10002";
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, s, "acct1", kKey1)).result_int(), 403u);
  s.host.clear();
  EXPECT_EQ(Send(SignAdmin(bhttp::verb::post, s, "acct1", kKey1)).result_int(), 403u);
  EXPECT_TRUE(AdmitAdmin(SignAdmin(bhttp::verb::post, s, "acct1", kKey1), options_, MakeAuthenticator()).has_value());
  s.host = "localhost:10002";
  // Admitted on the headers alone (the body is checked once it arrives).
  http::Request header = SignAdmin(bhttp::verb::post, s, "acct1", kKey1);
  header.body().clear();
  EXPECT_FALSE(AdmitAdmin(header, options_, MakeAuthenticator()).has_value());
  EXPECT_EQ(TableCount("acct1"), 1u);
}

// Issue 30 item 2: snapshot targets are plain names in --snapshotDir.
TEST_F(AdminRoutesTest, SnapshotTargetsAreConfinedToTheSnapshotDirectory) {
  options_.admin_key = kAdminKey;
  const auto snap = [&](const std::string& to) {
    return Call("/_tablestone/snapshot?to=" + to, "tablestone-admin", kAdminKey).result_int();
  };
  const std::string outside = (root_ / "elsewhere").string();
  for (const std::string& to : {outside, std::string("..%2Felsewhere"), std::string("a%2Fb"), std::string(".hidden"),
                                std::string(".."), (root_ / "snapshots" / ".." / "elsewhere").string(),
                                (root_ / "data" / "inside").string(), std::string("%2Ftmp%2Fx")}) {
    EXPECT_EQ(snap(to), 400u) << to;
  }
  EXPECT_FALSE(fs::exists(outside));
  fs::create_directories(root_ / "snapshots");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "snapshots" / "link");
  EXPECT_EQ(snap("link"), 409u);  // a (dangling) link is an existing name
  std::ofstream(root_ / "snapshots" / "staged.tmp") << "x";
  EXPECT_EQ(snap("staged"), 409u);  // RocksDB's staging name is taken
  EXPECT_FALSE(fs::exists(root_ / "elsewhere"));
  EXPECT_EQ(snap("fine"), 201u);
  options_.facts.in_memory = true;
  EXPECT_EQ(snap("again"), 409u);
}

// Issue 30 item 1: the trace opens only plain names in --traceDir, never
// through a link, a new file with mode 0600.
TEST_F(AdminRoutesTest, TraceFilesAreConfinedToTheTraceDirectory) {
  options_.admin_key = kAdminKey;
  TraceWriter trace;
  const auto start = [&](const std::string& file) {
    Signed s;
    s.target = "/_tablestone/trace";
    s.body = nlohmann::json({{"enabled", true}, {"file", file}}).dump();
    s.content_type = "application/json";
    return Send(SignAdmin(bhttp::verb::post, s, "tablestone-admin", kAdminKey), &trace);
  };
  const fs::path victim = root_ / "victim";
  std::ofstream(victim) << "keep\n";
  for (const std::string& file : {victim.string(), std::string("../victim"), std::string("/etc/profile"),
                                  (root_ / "data" / "CURRENT").string(), std::string("a/b"), std::string(".bashrc"),
                                  (root_ / "traces" / ".." / "victim").string()}) {
    EXPECT_EQ(start(file).result_int(), 400u) << file;
    EXPECT_FALSE(trace.enabled());
  }
  fs::create_directories(root_ / "traces");
  fs::create_symlink(victim, root_ / "traces" / "link.jsonl");
  fs::create_hard_link(victim, root_ / "traces" / "hard.jsonl");
  EXPECT_EQ(start("link.jsonl").result_int(), 400u);
  EXPECT_EQ(start("hard.jsonl").result_int(), 400u);
  EXPECT_FALSE(trace.enabled());
  const http::Response ok = start("t.jsonl");
  ASSERT_EQ(ok.result_int(), 200u) << ok.body();
  EXPECT_EQ(nlohmann::json::parse(ok.body())["file"], (root_ / "traces" / "t.jsonl").string());
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "traces" / "t.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The same name again appends to the file the server made; an absolute path inside the directory works too.
  EXPECT_EQ(start((root_ / "traces" / "t.jsonl").string()).result_int(), 200u);
  trace.Stop();
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep\n");
}

TEST(AdminFilesTest, PlainNamesOnly) {
  for (const char* ok : {"a", "snap-1", "trace_2026.jsonl", "A.b.c"}) EXPECT_TRUE(IsPlainFileName(ok)) << ok;
  for (const char* bad : {"", ".", "..", ".x", "a/b", "a\\b", "a b", "a\n", "%2e%2e"}) {
    EXPECT_FALSE(IsPlainFileName(bad)) << bad;
  }
  EXPECT_FALSE(IsPlainFileName(std::string(129, 'a')));
  EXPECT_EQ(*NameInDirectory("/srv/snaps/x", "/srv/snaps"), "x");
  EXPECT_FALSE(NameInDirectory("/srv/snaps/x", "").ok());
  EXPECT_FALSE(NameInDirectory("/srv/snapsx/x", "/srv/snaps").ok());
  EXPECT_FALSE(NameInDirectory("/srv/snaps/sub/x", "/srv/snaps").ok());
  EXPECT_FALSE(NameInDirectory("/srv/snaps/./x", "/srv/snaps").ok());
  EXPECT_FALSE(NameInDirectory("snaps/x", "/srv/snaps").ok());
}

}  // namespace
}  // namespace tablestone::api
