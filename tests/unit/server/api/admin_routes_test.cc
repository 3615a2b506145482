// The admin routes (server/api/admin_routes.h, docs/admin-api.md) on a real
// on-disk engine: authentication, snapshot, reset.
#include "server/api/admin_routes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "protocol/auth/hmac.h"
#include "protocol/auth/shared_key.h"
#include "protocol/base64.h"
#include "server/faults/fault_rules.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

namespace bhttp = boost::beast::http;

constexpr char kKey1[] = "a2V5LW9uZS1mb3ItdGVzdHMtb25seS0wMDAwMDAwMDAwMDA=";
constexpr char kKey2[] = "a2V5LXR3by1mb3ItdGVzdHMtb25seS0xMTExMTExMTExMTE=";

class AdminRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("tablestone-admin-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    storage::EngineOptions eo;
    eo.path = (root_ / "data").string();
    eo.executor.short_threads = 1;
    eo.executor.long_threads = 1;
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    options_.accounts = {{"acct1", {kKey1}}, {"acct2", {kKey2}}};
  }
  void TearDown() override {
    (void)engine_->Close();
    engine_.reset();
    std::filesystem::remove_all(root_);
  }

  http::Response Call(std::string target, const std::string& account, const char* key,
                      bhttp::verb verb = bhttp::verb::post, int64_t skew_seconds = 0, std::string body = {}) {
    http::Request req{verb, target, 11};
    req.body() = std::move(body);
    std::string date = model::FormatRfc1123(model::NowTicks() + skew_seconds * model::kTicksPerSecond);
    req.set("x-ms-date", date);
    std::string path = target.substr(0, target.find('?'));
    std::string to_sign = protocol::auth::SharedKeyStringToSign(
        std::string(bhttp::to_string(verb)), "", "", date,
        protocol::auth::CanonicalizedResource(account, path, std::nullopt));
    auto raw = protocol::Base64Decode(key);
    req.set(bhttp::field::authorization, "SharedKey " + account + ":" + protocol::auth::SignBase64(*raw, to_sign));
    return HandleAdmin(req, *engine_, options_);
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

  std::filesystem::path root_;
  std::unique_ptr<storage::Engine> engine_;
  ApiOptions options_;
};

TEST_F(AdminRoutesTest, FaultRoutesListAddRemoveAndClear) {
  EXPECT_EQ(Call("/_tablestone/faults", "acct1", kKey1, bhttp::verb::get).result_int(), 404u);  // no FaultSet
  options_.faults = std::make_shared<faults::FaultSet>(5);
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
  EXPECT_EQ(HandleAdmin(unsigned_req, *engine_, options_).result_int(), 403u);
  EXPECT_EQ(TableCount("acct1"), 1u);
}

TEST_F(AdminRoutesTest, ResetOneAccountNeedsItsKeyAndKeepsTheOthers) {
  AddEntities("acct1", "one", 50);
  AddEntities("acct1", "two", 5);
  AddEntities("acct2", "other", 5);
  EXPECT_EQ(Call("/_tablestone/reset?account=acct2", "acct1", kKey1).result_int(), 403u);
  EXPECT_EQ(Call("/_tablestone/reset?account=zzz", "acct1", kKey1).result_int(), 404u);
  http::Response r = Call("/_tablestone/reset?account=acct1", "acct1", kKey1);
  ASSERT_EQ(r.result_int(), 200u) << r.body();
  auto body = nlohmann::json::parse(r.body());
  EXPECT_EQ(body["tablesDeleted"], 2);
  EXPECT_EQ(TableCount("acct1"), 0u);
  EXPECT_EQ(TableCount("acct2"), 1u);
  // Without ?account: every configured account, signed by any of them.
  r = Call("/_tablestone/reset", "acct2", kKey2);
  ASSERT_EQ(r.result_int(), 200u) << r.body();
  EXPECT_EQ(nlohmann::json::parse(r.body())["tablesDeleted"], 1);
  EXPECT_EQ(TableCount("acct2"), 0u);
}

TEST_F(AdminRoutesTest, SnapshotHoldsEveryAcknowledgedWriteAndNothingLater) {
  AddEntities("acct1", "snap", 20);
  const std::string dir = (root_ / "snap1").string();
  http::Response r = Call("/_tablestone/snapshot?to=" + dir, "acct1", kKey1);
  ASSERT_EQ(r.result_int(), 201u) << r.body();
  EXPECT_EQ(nlohmann::json::parse(r.body())["snapshot"], dir);
  AddEntities("acct1", "later", 1);
  EXPECT_EQ(Call("/_tablestone/snapshot?to=" + dir, "acct1", kKey1).result_int(), 409u);  // exists
  EXPECT_EQ(Call("/_tablestone/snapshot", "acct1", kKey1).result_int(), 400u);             // no ?to

  storage::EngineOptions eo;
  eo.path = dir;
  eo.executor.short_threads = 1;
  eo.executor.long_threads = 1;
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

}  // namespace
}  // namespace tablestone::api
