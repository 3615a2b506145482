// Fault rules and realistic mode as the dispatcher applies them
// (server/api/dispatcher.h, "Fault injection"; docs/testing-with-faults.md).
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <vector>

#include "server/faults/fault_rules.h"
#include "api_test_util.h"
#include "turn_sink.h"

namespace tablestone::api::testing {
namespace {

class FaultDispatchTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    faults_ = std::make_shared<faults::FaultSet>(11);
    ApiOptions options;
    options.accounts = {{kAccount, {kKey}}};
    options.allow_anonymous = true;
    options.faults = faults_;
    handler_ = MakeApiHandler(*engine_, *executor_, options);
  }
  void AddRule(const nlohmann::json& rule) {
    std::string error;
    ASSERT_TRUE(faults_->AddJson(rule, &error).has_value()) << error;
  }
  uint64_t Injected() { return faults_->Counts().at(0).second; }

  std::shared_ptr<faults::FaultSet> faults_;
};

TEST_F(FaultDispatchTest, ErrorBeforeTheOperationWritesNothing) {
  CreateTable("tab");
  AddRule({{"action", "serverBusy"}, {"maxCount", 1}, {"match", {{"operation", "InsertEntity"}, {"table", "TAB"}}}});
  auto busy = Insert("tab", R"({"PartitionKey":"p","RowKey":"r"})");
  EXPECT_EQ(busy.result_int(), 503);
  EXPECT_EQ(ErrorCode(busy), "ServerBusy");
  EXPECT_FALSE(H(busy, "x-ms-request-id").empty());
  EXPECT_EQ(Send("GET", "/tab(PartitionKey='p',RowKey='r')").result_int(), 404);
  EXPECT_EQ(Insert("tab", R"({"PartitionKey":"p","RowKey":"r"})").result_int(), 201);  // maxCount reached
  EXPECT_EQ(Injected(), 1u);
}

TEST_F(FaultDispatchTest, TimeoutAfterCommitKeepsTheWrite) {
  CreateTable("tab");
  AddRule({{"action", "timeoutAfter"}, {"match", {{"partitionKeyPrefix", "slow"}, {"method", "POST"}}}});
  auto timed_out = Insert("tab", R"({"PartitionKey":"slow1","RowKey":"r"})");
  EXPECT_EQ(timed_out.result_int(), 500);
  EXPECT_EQ(ErrorCode(timed_out), "OperationTimedOut");
  EXPECT_EQ(Send("GET", "/tab(PartitionKey='slow1',RowKey='r')").result_int(), 200);
  EXPECT_EQ(Insert("tab", R"({"PartitionKey":"fast","RowKey":"r"})").result_int(), 201);  // prefix does not match
}

// A write answered on its I/O thread waits for the end of the turn before
// its log write (Dispatcher::AwaitTurn); the after-actions of fault rules
// still apply to its answer then: the Completion they wrap is the one that
// waits.
TEST_F(FaultDispatchTest, AfterActionsApplyToWritesAnsweredAtTheEndOfTheirTurn) {
  CreateTable("tab");
  AddRule({{"action", "resetMidResponse"}, {"match", {{"partitionKeyPrefix", "reset"}}}});
  AddRule({{"action", "closeAfter"}, {"match", {{"partitionKeyPrefix", "close"}}}});
  AddRule({{"action", "latencyAfter"}, {"latencyMs", 30}, {"match", {{"partitionKeyPrefix", "late"}}}});
  Turn turn;
  std::vector<std::unique_ptr<http::Request>> requests;  // each outlives its answer
  std::vector<std::shared_ptr<TurnSink>> sinks;
  std::vector<std::future<http::Response>> answers;
  for (const char* pk : {"reset", "close", "late", "plain"}) {
    requests.push_back(std::make_unique<http::Request>(
        NoMetadataRequest("POST", "/tab", std::string(R"({"PartitionKey":")") + pk + R"(","RowKey":"r"})")));
    sinks.push_back(std::make_shared<TurnSink>(&turn));
    answers.push_back(sinks.back()->Future());
    handler_->Handle(*requests.back(), Connection(), http::Completion(sinks.back()));
  }
  ASSERT_EQ(turn.after.size(), 1u);  // the four wait for the turn's end together
  for (auto& answer : answers) EXPECT_EQ(answer.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  const auto ended = std::chrono::steady_clock::now();
  turn.End();
  EXPECT_EQ(answers[0].get().result_int(), 201);
  EXPECT_EQ(sinks[0]->delivery, http::Delivery::kResetMidBody);
  EXPECT_EQ(answers[1].get().result_int(), 201);
  EXPECT_EQ(sinks[1]->delivery, http::Delivery::kCloseWithoutResponse);
  EXPECT_EQ(answers[2].get().result_int(), 201);
  EXPECT_GE(std::chrono::steady_clock::now() - ended, std::chrono::milliseconds(30));
  EXPECT_EQ(sinks[2]->delivery, http::Delivery::kSend);
  EXPECT_EQ(answers[3].get().result_int(), 201);
  EXPECT_EQ(sinks[3]->delivery, http::Delivery::kSend);
  EXPECT_EQ(faults_->Counts().at(0).second + faults_->Counts().at(1).second + faults_->Counts().at(2).second, 3u);
}

TEST_F(FaultDispatchTest, LatencyBeforeDelaysWithoutChangingTheAnswer) {
  CreateTable("tab");
  AddRule({{"action", "latencyBefore"}, {"latencyMs", 30}, {"match", {{"header", {{"name", "x-test"}, {"value", "1"}}}}}});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Send("GET", "/Tables('tab')", {}, {{"x-test", "1"}}).result_int(), 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
  EXPECT_EQ(Injected(), 1u);
}

TEST_F(FaultDispatchTest, RealisticPagesReturnEveryRowOnce) {
  CreateTable("tab");
  std::set<std::string> expected;
  for (int p = 0; p < 4; ++p) {
    for (int r = 0; r < 15; ++r) {
      const std::string pk = "p" + std::to_string(p), rk = "r" + std::to_string(10 + r);
      ASSERT_EQ(Insert("tab", R"({"PartitionKey":")" + pk + R"(","RowKey":")" + rk + R"("})").result_int(), 201);
      expected.insert(pk + "/" + rk);
    }
  }
  std::string error;
  ASSERT_TRUE(faults_->SetRealisticJson({{"enabled", true}}, &error)) << error;
  // Several full listings (each must return every row once) until both an
  // empty page and a PartitionKey-only token have shown up.
  int pages = 0, empty = 0, pk_only = 0;
  for (int listing = 0; listing < 20 && (empty == 0 || pk_only == 0); ++listing) {
    std::multiset<std::string> got;
    std::string token;
    do {
      auto r = Send("GET", "/tab()" + token);
      ASSERT_EQ(r.result_int(), 200) << r.body();
      ++pages;
      const auto rows = J(r)["value"];
      for (const auto& e : rows) {
        got.insert(e["PartitionKey"].get<std::string>() + "/" + e["RowKey"].get<std::string>());
      }
      const std::string npk = H(r, "x-ms-continuation-NextPartitionKey");
      const std::string nrk = H(r, "x-ms-continuation-NextRowKey");
      if (!npk.empty() && rows.empty()) ++empty;
      if (!npk.empty() && nrk.empty()) ++pk_only;
      token = npk.empty() ? "" : "?NextPartitionKey=" + npk + (nrk.empty() ? "" : "&NextRowKey=" + nrk);
    } while (!token.empty() && pages < 5000);
    ASSERT_EQ(got, std::multiset<std::string>(expected.begin(), expected.end()));
  }
  EXPECT_GT(empty, 0);
  EXPECT_GT(pk_only, 0);
}

TEST_F(FaultDispatchTest, RealisticHoldsADeletedTableName) {
  std::string error;
  ASSERT_TRUE(faults_->SetRealisticJson({{"enabled", true}, {"tableBeingDeletedMs", 60000}}, &error)) << error;
  CreateTable("gone");
  EXPECT_EQ(Send("DELETE", "/Tables('gone')").result_int(), 204);
  auto again = Send("POST", "/Tables", R"({"TableName":"Gone"})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(again.result_int(), 409);
  EXPECT_EQ(ErrorCode(again), "TableBeingDeleted");
  CreateTable("other");  // other names are free
}

}  // namespace
}  // namespace tablestone::api::testing
