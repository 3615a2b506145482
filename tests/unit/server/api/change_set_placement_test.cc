// Where a change set runs (placement.h, Placement::kByBatchContent): a small
// one is tried on the I/O thread while no point request was placed within
// PlacementPolicy::kPointRequestWindow, as the first of its I/O thread's turn,
// bounded as a point write (a stored version only on disk sends it to the
// short lane); within the window, and
// whatever its size above PlacementPolicy::kInlineChangeSetBytes, it runs on
// the short lane, so a point GET is answered while a long change set runs.
// The window is read from each request's RequestContext::start, which these
// tests set.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include "server/api/api_handler.h"
#include "server/api/placement.h"
#include "storage/engine.h"
#include "tests/unit/server/api/api_test_util.h"
#include "tests/unit/server/api/forwarding_engine.h"
#include "tests/unit/server/api/turn_sink.h"

namespace tablestone::api {
namespace {

using namespace std::chrono_literals;

constexpr const char* kAccount = "devstoreaccount1";

// Records where each multi-operation write (a change set's) ran; while
// `gate_closed`, such a write waits until Open(). With `disk_only`, a write
// bounded to no wait (an I/O thread's try) would wait for the disk.
class ChangeSetEngine final : public testing::ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  using storage::Engine::Write;
  storage::WriteResult Write(const storage::TableInfo& table, std::span<const model::WriteOp> ops,
                             ReadWait wait) override {
    if (ops.size() > 1) {
      if (disk_only && wait == ReadWait::kNoWait) {
        ++would_block;
        storage::WriteResult refused;
        refused.status = Status::WouldBlock("not in memory");
        return refused;
      }
      ran_on = std::this_thread::get_id();
      writing.store(true);
      if (gate_closed) gate_.wait();
    }
    return inner_.Write(table, ops, wait);
  }
  void Open() { opened_.set_value(); }

  bool gate_closed = false;
  bool disk_only = false;
  std::atomic<bool> writing{false};
  std::atomic<int> would_block{0};
  std::thread::id ran_on;

 private:
  std::promise<void> opened_;
  std::shared_future<void> gate_ = opened_.get_future().share();
};

class TestSink final : public http::ResponseSink {
 public:
  void Complete(http::Response&& response) override { promise_.set_value(std::move(response)); }
  std::future<http::Response> Future() { return promise_.get_future(); }

 private:
  std::promise<http::Response> promise_;
};

class ChangeSetPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-change-set-placement";
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    inner_ = std::move(engine).value();
    // Created on the engine: a Create Table request would count as a point request.
    ASSERT_TRUE(inner_->CreateTable(kAccount, "cs").ok());
    ASSERT_TRUE(inner_->SyncWal().ok());  // a read's answer then waits for no log write
    engine_ = std::make_unique<ChangeSetEngine>(*inner_);
    ApiOptions options;
    options.allow_anonymous = true;
    options.accounts = {
        {kAccount, {"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}}};
    handler_ = MakeApiHandler(*engine_, *executor_, options);
  }
  void TearDown() override {
    if (engine_->gate_closed && !opened_) engine_->Open();
    executor_->Shutdown();
    handler_.reset();
    engine_.reset();
    inner_.reset();
  }

  // Handles `request` (which must outlive the answer) as if its headers were
  // read at `start`; the answer.
  std::future<http::Response> Send(const http::Request& request, std::chrono::steady_clock::time_point start) {
    auto sink = std::make_shared<TestSink>();
    auto answer = sink->Future();
    handler_->Handle(request, Connection(start), http::Completion(sink));
    return answer;
  }
  // A connection whose request's headers were read at `start`.
  const http::RequestContext& Connection(std::chrono::steady_clock::time_point start) {
    http::RequestContext& context = connections_.emplace_back();
    context.start = start;
    return context;
  }
  http::Response Answer(std::future<http::Response> answer) {
    EXPECT_EQ(answer.wait_for(30s), std::future_status::ready);
    return answer.get();
  }
  // A change set of `count` inserts into partition "p" of table cs, rows
  // `tag`-0.., each with a string property of `padding` characters.
  static http::Request ChangeSet(const std::string& tag, int count, size_t padding = 10) {
    const std::string e = "\r\n";
    std::string body = "--batch_w" + e + "Content-Type: multipart/mixed; boundary=changeset_w" + e + e;
    for (int i = 0; i < count; ++i) {
      body += "--changeset_w" + e + "Content-Type: application/http" + e + "Content-Transfer-Encoding: binary" + e +
              e + "POST http://127.0.0.1:10002/devstoreaccount1/cs HTTP/1.1" + e +
              "Accept: application/json;odata=nometadata" + e + "Content-Type: application/json" + e + e +
              R"({"PartitionKey":"p","RowKey":")" + tag + "-" + std::to_string(i) + R"(","s":")" +
              std::string(padding, 'x') + "\"}" + e;
    }
    body += "--changeset_w--" + e + "--batch_w--" + e;
    return testing::NoMetadataRequest("POST", "/$batch", std::move(body), "multipart/mixed; boundary=batch_w");
  }
  static void ExpectApplied(const http::Response& answer) {
    EXPECT_EQ(answer.result_int(), 202) << answer.body();
    EXPECT_NE(answer.body().find("HTTP/1.1 201"), std::string::npos) << answer.body();
    EXPECT_EQ(answer.body().find("HTTP/1.1 4"), std::string::npos) << answer.body();
  }

  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::deque<http::RequestContext> connections_;  // outlive the handler's answers
  std::unique_ptr<storage::Engine> inner_;
  std::unique_ptr<ChangeSetEngine> engine_;
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<exec::WorkExecutor> executor_ = testing::TestLanes();
  bool opened_ = false;
};

TEST_F(ChangeSetPlacementTest, ASmallChangeSetRunsOnTheIoThreadWhileNoPointRequestWasPlaced) {
  const http::Request batch = ChangeSet("a", 100);
  ASSERT_LE(batch.body().size(), PlacementPolicy::kInlineChangeSetBytes);
  auto answer = Send(batch, t0_);
  EXPECT_EQ(engine_->ran_on, std::this_thread::get_id());
  ExpectApplied(Answer(std::move(answer)));
}

TEST_F(ChangeSetPlacementTest, AChangeSetRunsOnTheShortLaneWithinTheWindowAfterAPointRequest) {
  const http::Request get = testing::NoMetadataRequest("GET", "/cs(PartitionKey='p',RowKey='none')");
  EXPECT_EQ(Answer(Send(get, t0_)).result_int(), 404);

  ExpectApplied(Answer(Send(ChangeSet("within", 2), t0_ + PlacementPolicy::kPointRequestWindow / 2)));
  EXPECT_NE(engine_->ran_on, std::this_thread::get_id());

  // Past the window with no point request since: on the I/O thread again.
  const auto later = t0_ + PlacementPolicy::kPointRequestWindow + 1ms;
  ExpectApplied(Answer(Send(ChangeSet("after", 2), later)));
  EXPECT_EQ(engine_->ran_on, std::this_thread::get_id());
}

// One change set per turn of an I/O thread (TakeTurnForChangeSet): the
// others read in that turn go to the short lane, so a point request read in
// the same turn waits for one at most; the next turn runs one there again.
TEST_F(ChangeSetPlacementTest, OnlyTheFirstChangeSetOfAnIoThreadTurnRunsThere) {
  const http::Request first = ChangeSet("first", 2);
  const http::Request second = ChangeSet("second", 2);
  const http::Request third = ChangeSet("third", 2);
  testing::Turn turn;
  auto first_sink = std::make_shared<testing::TurnSink>(&turn);
  auto first_answer = first_sink->Future();
  handler_->Handle(first, Connection(t0_), http::Completion(first_sink));
  EXPECT_EQ(engine_->ran_on, std::this_thread::get_id());
  auto second_sink = std::make_shared<testing::TurnSink>(&turn);
  auto second_answer = second_sink->Future();
  handler_->Handle(second, Connection(t0_), http::Completion(second_sink));
  ExpectApplied(Answer(std::move(second_answer)));  // from the lane, the turn still open
  EXPECT_NE(engine_->ran_on, std::this_thread::get_id());
  turn.End();
  ExpectApplied(Answer(std::move(first_answer)));  // with its turn's log write

  testing::Turn next;
  auto third_sink = std::make_shared<testing::TurnSink>(&next);
  auto third_answer = third_sink->Future();
  handler_->Handle(third, Connection(t0_), http::Completion(third_sink));
  EXPECT_EQ(engine_->ran_on, std::this_thread::get_id());
  next.End();
  ExpectApplied(Answer(std::move(third_answer)));
}

TEST_F(ChangeSetPlacementTest, AChangeSetOverTheInlineBoundRunsOnTheShortLane) {
  const http::Request batch = ChangeSet("big", 100, 700);
  ASSERT_GT(batch.body().size(), PlacementPolicy::kInlineChangeSetBytes);
  ExpectApplied(Answer(Send(batch, t0_)));
  EXPECT_NE(engine_->ran_on, std::this_thread::get_id());
}

// What the lane is for: a long change set holds the short lane, not the I/O
// thread, and a point GET sent meanwhile is answered on the I/O thread.
TEST_F(ChangeSetPlacementTest, APointGetIsAnsweredWhileALongChangeSetRuns) {
  engine_->gate_closed = true;
  const http::Request batch = ChangeSet("long", 100, 700);  // outlives its answer
  auto batch_answer = Send(batch, t0_);
  while (!engine_->writing.load()) std::this_thread::sleep_for(1ms);
  const http::Request get = testing::NoMetadataRequest("GET", "/cs(PartitionKey='p',RowKey='none')");
  auto get_answer = Send(get, t0_ + 1ms);
  ASSERT_EQ(get_answer.wait_for(0s), std::future_status::ready);  // answered inline, with the change set still held
  EXPECT_EQ(get_answer.get().result_int(), 404);
  EXPECT_EQ(batch_answer.wait_for(0s), std::future_status::timeout);
  engine_->Open();
  opened_ = true;
  ExpectApplied(Answer(std::move(batch_answer)));
}

// Bounded as a point write: a stored version only on disk makes the try
// give up before writing anything, and the short lane applies it once.
TEST_F(ChangeSetPlacementTest, AChangeSetWhoseReadWouldWaitForTheDiskRunsOnTheShortLane) {
  engine_->disk_only = true;
  ExpectApplied(Answer(Send(ChangeSet("disk", 3), t0_)));
  EXPECT_EQ(engine_->would_block.load(), 1);
  EXPECT_NE(engine_->ran_on, std::this_thread::get_id());
  auto table = inner_->GetTable(kAccount, "cs");
  ASSERT_TRUE(table.ok());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(inner_->GetEntity(*table, "p", "disk-" + std::to_string(i)).ok()) << i;
}

}  // namespace
}  // namespace tablestone::api
