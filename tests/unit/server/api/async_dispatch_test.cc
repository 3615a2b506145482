// The dispatcher over the executor's lanes (server/api/dispatcher.h): point
// reads and unstalled entity writes are answered inline, other writes and
// queries on the executor, every write acknowledged after its log write; a full queue
// answers 503 ServerBusy; a queued request whose client has gone is skipped;
// requests still queued when the executor shuts down are answered 503.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "protocol/continuation.h"
#include "server/api/api_handler.h"
#include "server/api/metrics.h"
#include "storage/engine.h"
#include "storage/rocks_engine.h"  // its durability marks
#include "storage/model/write_op.h"
#include "storage/sync_point.h"
#include "storage/thread_priority.h"
#include "tests/unit/server/api/api_test_util.h"
#include "tests/unit/server/api/forwarding_engine.h"
#include "tests/unit/server/api/turn_sink.h"

namespace tablestone::api {
namespace {

using namespace std::chrono_literals;

constexpr const char* kAccount = "devstoreaccount1";

// Records the response; Cancelled() is under the test's control.
class TestSink final : public http::ResponseSink {
 public:
  void Complete(http::Response&& response) override {
    on_thread = std::this_thread::get_id();
    promise_.set_value(std::move(response));
  }
  bool Cancelled() const override { return cancelled.load(); }
  std::future<http::Response> Future() { return promise_.get_future(); }

  std::atomic<bool> cancelled{false};
  std::thread::id on_thread;

 private:
  std::promise<http::Response> promise_;
};

class AsyncDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-async-dispatch";
    eo.sync_points = sync_points_;
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    ApiOptions options;
    options.allow_anonymous = true;
    options.accounts = {
        {kAccount, {"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}}};
    // A query that examines more than 255 rows (one clock check) outgrows
    // its I/O-thread slice, whatever the machine's speed.
    options.inline_query_slice = std::chrono::microseconds(0);
    handler_ = MakeApiHandler(*engine_, *executor_, options);
    http::Response created = Run(Request("POST", "/Tables", R"({"TableName":"asyncq"})"));
    ASSERT_EQ(created.result_int(), 201) << created.body();
  }
  void TearDown() override {
    Release();
    executor_->Shutdown();
    handler_.reset();
    engine_.reset();
  }

  static http::Request Request(std::string_view method, std::string_view target, std::string body = {}) {
    return testing::NoMetadataRequest(method, target, std::move(body));
  }
  http::Response Run(const http::Request& req) { return http::HandleAndWait(*handler_, req, http::RequestContext{}); }

  // Occupies the lane's only thread until Release() (TearDown releases it too).
  void HoldLane(exec::WorkLane lane) {
    std::promise<void> started;
    ASSERT_TRUE(executor_
                    ->Submit(lane,
                             [this, &started](bool) {
                               started.set_value();
                               release_future_.wait();
                             })
                    .ok());
    started.get_future().wait();
  }
  // Holds the engine's log writer where it wakes for a group
  // (storage/group_commit.h), so no write becomes durable until Release().
  void HoldLogWriter() { sync_points_->Hold("GroupCommit::Woken"); }
  void Release() {
    sync_points_->ReleaseAll();
    if (!released_) {
      released_ = true;
      release_.set_value();
    }
  }
  // Holds the log writer with the group of a first insert ("queued", answered
  // on a thread of its own): answers that must wait for the log writer join
  // its next group. Returns the first insert's answer.
  std::future<http::Response> HoldLogWriterWithAGroup() {
    const uint64_t woken = sync_points_->Count("GroupCommit::Woken");
    HoldLogWriter();
    held_first_ = std::make_unique<http::Request>(Request("POST", "/asyncq", Insert("queued")));
    auto answer = std::async(std::launch::async, [this] { return Run(*held_first_); });
    EXPECT_TRUE(sync_points_->WaitFor("GroupCommit::Woken", woken + 1));  // held with the first's group
    return answer;
  }
  // `answer` is not given while the log writer is held, and is a 201 once released.
  void ExpectHeldUntilReleased(std::future<http::Response>& answer) {
    EXPECT_EQ(answer.wait_for(50ms), std::future_status::timeout);  // not durable while the writer is held
    Release();
    ASSERT_EQ(answer.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(answer.get().result_int(), 201);
  }
  // Rows "10000", "10001", ... of partition "p" in table asyncq, each with n = its index.
  void InsertRows(int count) {
    auto table = engine_->GetTable(kAccount, "asyncq");
    ASSERT_TRUE(table.ok());
    std::vector<model::WriteOp> ops;
    for (int r = 0; r < count; ++r) {
      model::Entity e;
      e.partition_key = "p";
      e.row_key = std::to_string(10000 + r);
      e.properties.push_back({"n", model::EdmValue::Int32(r)});
      ops.push_back(model::WriteOp{model::WriteKind::kInsert, std::move(e), {}});
      if (ops.size() == 100 || r + 1 == count) {
        ASSERT_TRUE(engine_->Write(*table, ops).status.ok());
        ops.clear();
      }
    }
  }
  // The page holds rows "10000".."10999" in order (timestamps differ between
  // runs: keys only).
  static void ExpectRows10000To10999(const http::Response& page) {
    size_t at = 0;
    for (int r = 0; r < 1000; ++r) {
      const std::string row = R"("RowKey":")" + std::to_string(10000 + r) + R"(")";
      const size_t found = page.body().find(row, at);
      ASSERT_NE(found, std::string::npos) << r;
      at = found + row.size();
    }
  }
  // Sends `request` while `lane`'s thread is held, shuts the executor down
  // (as Server::Stop does), then lets the lane go: the request's answer,
  // given at the shutdown.
  http::Response AnswerAtClose(exec::WorkLane lane, const http::Request& request) {
    HoldLane(lane);
    auto sink = std::make_shared<TestSink>();
    handler_->Handle(request, Connection(), http::Completion(sink));
    std::thread closer([&] { executor_->Shutdown(); });
    // Probed on the other lane: `request` may fill the held one's queue.
    const exec::WorkLane probe =
        lane == exec::WorkLane::kShort ? exec::WorkLane::kLong : exec::WorkLane::kShort;
    while (executor_->Submit(probe, [](bool) {}).code() != StatusCode::kShuttingDown) {
      std::this_thread::sleep_for(1ms);
    }
    Release();
    closer.join();
    return sink->Future().get();
  }
  static std::string Insert(const std::string& rk) { return R"({"PartitionKey":"p","RowKey":")" + rk + R"(","v":1})"; }

  // A connection for one asynchronous request: RequestInfo's contract
  // (api_context.h) is that it outlives the request's Completion, and the
  // dispatcher writes the access log's note into it when it answers, possibly
  // on the log writer's thread. Declared before handler_, so they outlive it.
  const http::RequestContext& Connection() { return connections_.emplace_back(); }
  std::deque<http::RequestContext> connections_;
  std::unique_ptr<http::Request> held_first_;  // HoldLogWriterWithAGroup's request, outliving its answer
  std::unique_ptr<storage::Engine> engine_;
  std::unique_ptr<http::RequestHandler> handler_;
  // One thread per lane and one queued request per lane.
  std::unique_ptr<exec::WorkExecutor> executor_ = testing::TestLanes(1);
  std::shared_ptr<storage::SyncPoints> sync_points_ = std::make_shared<storage::SyncPoints>();
  std::promise<void> release_;
  std::shared_future<void> release_future_ = release_.get_future().share();
  bool released_ = false;
};

TEST_F(AsyncDispatchTest, PointReadIsAnsweredInline) {
  ASSERT_EQ(Run(Request("POST", "/asyncq", Insert("a"))).result_int(), 201);
  http::Request get = Request("GET", "/asyncq(PartitionKey='p',RowKey='a')");
  auto get_sink = std::make_shared<TestSink>();
  handler_->Handle(get, Connection(), http::Completion(get_sink));
  auto f = get_sink->Future();
  ASSERT_EQ(f.wait_for(0s), std::future_status::ready);  // answered before Handle returned
  EXPECT_EQ(f.get().result_int(), 200);
  EXPECT_EQ(get_sink->on_thread, std::this_thread::get_id());
}

// Point requests are noted as foreground work (the long lane's scans give way
// while such requests are answered, storage/thread_priority.h); a query is
// not, so a client's own scan pages never slow its scan down.
TEST_F(AsyncDispatchTest, PointRequestsAreNotedAsForegroundWorkQueriesAreNot) {
  InsertRows(10);
  // Past NoteForegroundWork's 100 us step since any earlier request.
  std::this_thread::sleep_for(1ms);
  const auto before_query = std::chrono::steady_clock::now();
  ASSERT_EQ(Run(Request("GET", "/asyncq()?$filter=n%20eq%203")).result_int(), 200);
  EXPECT_LT(storage::LastForegroundWork(), before_query);
  const auto before_get = std::chrono::steady_clock::now();
  ASSERT_EQ(Run(Request("GET", "/asyncq(PartitionKey='p',RowKey='10001')")).result_int(), 200);
  EXPECT_GE(storage::LastForegroundWork(), before_get);
  std::this_thread::sleep_for(1ms);
  const auto before_insert = std::chrono::steady_clock::now();
  ASSERT_EQ(Run(Request("POST", "/asyncq", Insert("fg"))).result_int(), 201);
  EXPECT_GE(storage::LastForegroundWork(), before_insert);
}

// An engine whose entities are never in memory: every read that may not
// wait for the disk (ReadWait::kNoWait) would block.
class DiskOnlyEngine final : public testing::ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  using storage::Engine::GetEntity;
  StatusOr<model::Entity> GetEntity(const storage::TableInfo& table, std::string_view partition_key,
                                    std::string_view row_key, ReadWait wait) override {
    if (wait == ReadWait::kNoWait) {
      ++would_block;
      return Status::WouldBlock("not in memory");
    }
    waited_on = std::this_thread::get_id();
    return inner_.GetEntity(table, partition_key, row_key, wait);
  }
  using storage::Engine::Write;
  storage::WriteResult Write(const storage::TableInfo& table, std::span<const model::WriteOp> ops,
                             ReadWait wait) override {
    if (wait == ReadWait::kNoWait) {
      ++would_block;
      storage::WriteResult refused;
      refused.status = Status::WouldBlock("not in memory");
      return refused;
    }
    waited_on = std::this_thread::get_id();
    return inner_.Write(table, ops, wait);
  }
  std::atomic<int> would_block{0};
  std::thread::id waited_on;
};

TEST_F(AsyncDispatchTest, APointReadOrWriteThatWouldWaitForTheDiskIsAnsweredFromTheShortLane) {
  ASSERT_EQ(Run(Request("POST", "/asyncq", Insert("a"))).result_int(), 201);
  DiskOnlyEngine disk(*engine_);
  ApiOptions options;
  options.allow_anonymous = true;
  options.accounts = {
      {kAccount, {"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}}};
  Metrics metrics({kAccount});
  auto handler = MakeApiHandler(disk, *executor_, options, &metrics);
  auto sink = std::make_shared<TestSink>();
  const http::Request get = Request("GET", "/asyncq(PartitionKey='p',RowKey='a')");
  const http::RequestContext connection{};  // both outlive the answer, as a session's do
  handler->Handle(get, connection, http::Completion(sink));
  http::Response got = sink->Future().get();
  EXPECT_EQ(got.result_int(), 200) << got.body();
  EXPECT_NE(got.body().find(R"("RowKey":"a")"), std::string::npos) << got.body();
  EXPECT_EQ(disk.would_block.load(), 1);  // tried once on this (the I/O) thread
  EXPECT_NE(disk.waited_on, std::thread::id());
  EXPECT_NE(disk.waited_on, std::this_thread::get_id());  // then read on the lane
  EXPECT_NE(metrics.Render({}).find("tablestone_disk_hand_offs_total 1\n"), std::string::npos);

  // An entity write whose stored version is not in memory: the same hand-off.
  auto write_sink = std::make_shared<TestSink>();
  const http::Request insert = Request("POST", "/asyncq", Insert("b"));
  disk.waited_on = std::thread::id();
  handler->Handle(insert, connection, http::Completion(write_sink));
  http::Response written = write_sink->Future().get();
  EXPECT_EQ(written.result_int(), 201) << written.body();
  EXPECT_EQ(disk.would_block.load(), 2);
  EXPECT_NE(disk.waited_on, std::thread::id());
  EXPECT_NE(disk.waited_on, std::this_thread::get_id());
  EXPECT_TRUE(engine_->GetEntity(*engine_->GetTable(kAccount, "asyncq"), "p", "b").ok());  // written once, on the lane
  EXPECT_NE(metrics.Render({}).find("tablestone_disk_hand_offs_total 2\n"), std::string::npos);
}

TEST_F(AsyncDispatchTest, EntityWriteRunsInlineButIsAcknowledgedAfterTheLogWrite) {
  // The log writer is held, so the log write waits; the insert itself needs
  // no executor thread while RocksDB is not stalling.
  ASSERT_TRUE(engine_->CanWriteWithoutWaiting());
  HoldLogWriter();
  http::Request insert = Request("POST", "/asyncq", Insert("inline"));
  auto sink = std::make_shared<TestSink>();
  handler_->Handle(insert, Connection(), http::Completion(sink));
  auto table = engine_->GetTable(kAccount, "asyncq");
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(engine_->GetEntity(*table, "p", "inline").ok());  // applied already
  auto f = sink->Future();
  EXPECT_EQ(f.wait_for(50ms), std::future_status::timeout);  // but not acknowledged
  Release();
  EXPECT_EQ(f.get().result_int(), 201);
  EXPECT_NE(sink->on_thread, std::this_thread::get_id());  // the group commit's thread answered
}

// The log write has its own thread (storage/group_commit.h), not a lane: a
// write is acknowledged while every lane thread is busy with request work (a
// long scan, a `$batch`).
TEST_F(AsyncDispatchTest, AWriteIsAcknowledgedWhileEveryLaneIsBusy) {
  ASSERT_TRUE(engine_->CanWriteWithoutWaiting());
  HoldLane(exec::WorkLane::kShort);
  HoldLane(exec::WorkLane::kLong);
  http::Request insert = Request("POST", "/asyncq", Insert("lanes-busy"));
  auto sink = std::make_shared<TestSink>();
  handler_->Handle(insert, Connection(), http::Completion(sink));
  auto f = sink->Future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "the log write waited behind the lanes' work";
  EXPECT_EQ(f.get().result_int(), 201);
}

// Server::Stop drops the handler while answers may still wait for the log
// write; the engine's log writer calls back into the dispatcher for them, so
// dropping it waits until they are answered (server.h, step 3).
TEST_F(AsyncDispatchTest, DroppingTheHandlerWaitsForTheAnswersHeldForTheLogWrite) {
  HoldLogWriter();
  http::Request insert = Request("POST", "/asyncq", Insert("held"));
  auto sink = std::make_shared<TestSink>();
  handler_->Handle(insert, Connection(), http::Completion(sink));
  auto f = sink->Future();
  ASSERT_EQ(f.wait_for(50ms), std::future_status::timeout);  // held for the log write
  executor_->Shutdown();
  auto dropped = std::async(std::launch::async, [this] { handler_.reset(); });
  EXPECT_EQ(dropped.wait_for(100ms), std::future_status::timeout) << "the handler went with an answer pending";
  Release();
  ASSERT_EQ(dropped.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get().result_int(), 201);
}

TEST_F(AsyncDispatchTest, TheWritesOfOneTurnAreAcknowledgedAfterOneLogWrite) {
  // Four inserts handled in one turn of an I/O thread: applied at once, but
  // the log writer is asked once, when the turn ends, for all four. (Woken
  // by the first, it would take the I/O thread's core before the other three
  // ran, on a busy or pinned core, and write the log once per write or two.)
  const uint64_t syncs_before = engine_->GetStats().wal_syncs;
  testing::Turn turn;
  std::vector<std::unique_ptr<http::Request>> requests;  // each outlives its answer
  std::vector<std::future<http::Response>> answers;
  for (int i = 0; i < 4; ++i) {
    requests.push_back(std::make_unique<http::Request>(Request("POST", "/asyncq", Insert("turn" + std::to_string(i)))));
    auto sink = std::make_shared<testing::TurnSink>(&turn);
    answers.push_back(sink->Future());
    handler_->Handle(*requests.back(), Connection(), http::Completion(sink));
  }
  auto table = engine_->GetTable(kAccount, "asyncq");
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(engine_->GetEntity(*table, "p", "turn3").ok());  // applied
  ASSERT_EQ(turn.after.size(), 1u);                            // one hand-off for the turn
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs_before);      // no log write asked for yet
  turn.End();
  for (auto& answer : answers) EXPECT_EQ(answer.get().result_int(), 201);
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs_before + 1);  // one log write for the four
}

// With the log writer idle and no fsync, the I/O thread writes the log
// itself when its turn ends, and the answers go out from it: no wake-up of
// the log writer, no hand-back of the answers (the cost that kept the writes
// below 2f279ee's, docs/benchmarks.md, "Point writes: the I/O thread's own
// log write").
TEST_F(AsyncDispatchTest, TheWritesOfATurnAreWrittenToTheLogByItsThreadWhenTheLogWriterIsIdle) {
  const uint64_t syncs_before = engine_->GetStats().wal_syncs;
  const uint64_t woken_before = sync_points_->Count("GroupCommit::Woken");
  testing::Turn turn;
  std::vector<std::unique_ptr<http::Request>> requests;
  std::vector<std::shared_ptr<testing::TurnSink>> sinks;
  std::vector<std::future<http::Response>> answers;
  for (int i = 0; i < 3; ++i) {
    requests.push_back(std::make_unique<http::Request>(Request("POST", "/asyncq", Insert("own" + std::to_string(i)))));
    sinks.push_back(std::make_shared<testing::TurnSink>(&turn));
    answers.push_back(sinks.back()->Future());
    handler_->Handle(*requests.back(), Connection(), http::Completion(sinks.back()));
  }
  turn.End();
  for (size_t i = 0; i < answers.size(); ++i) {
    ASSERT_EQ(answers[i].wait_for(0s), std::future_status::ready);  // answered within End()
    EXPECT_EQ(answers[i].get().result_int(), 201);
    EXPECT_EQ(sinks[i]->on_thread, turn.thread);
  }
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs_before + 1);
  EXPECT_EQ(sync_points_->Count("GroupCommit::Woken"), woken_before);
}

// While the log writer has a group (queued or writing), a turn's writes join
// its next one instead of writing the log beside it.
TEST_F(AsyncDispatchTest, TheWritesOfATurnWaitForTheLogWriterWhileItHasAGroup) {
  auto first_answer = HoldLogWriterWithAGroup();
  testing::Turn turn;
  http::Request insert = Request("POST", "/asyncq", Insert("behind"));
  auto sink = std::make_shared<testing::TurnSink>(&turn);
  auto answer = sink->Future();
  handler_->Handle(insert, Connection(), http::Completion(sink));
  turn.End();
  ExpectHeldUntilReleased(answer);
  EXPECT_NE(sink->on_thread, turn.thread);
  EXPECT_EQ(first_answer.get().result_int(), 201);
}

// A turn that never ends (the I/O threads stop before the handler is
// dropped, server.h): dropping the handler hands the turn's answers to the
// log writer and waits for them, as for any answer held for the log write.
TEST_F(AsyncDispatchTest, DroppingTheHandlerAnswersTheWritesOfATurnThatNeverEnded) {
  testing::Turn turn;
  http::Request insert = Request("POST", "/asyncq", Insert("unended"));
  auto sink = std::make_shared<testing::TurnSink>(&turn);
  auto answer = sink->Future();
  handler_->Handle(insert, Connection(), http::Completion(sink));
  ASSERT_EQ(turn.after.size(), 1u);
  EXPECT_EQ(answer.wait_for(50ms), std::future_status::timeout);  // waits for the turn's end
  executor_->Shutdown();
  handler_.reset();
  turn.after.clear();  // the left work names the dropped dispatcher: never run now
  ASSERT_EQ(answer.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(answer.get().result_int(), 201);
}

// A handler over `disk`: its point reads and writes run on the short lane.
std::unique_ptr<http::RequestHandler> LaneHandler(DiskOnlyEngine& disk, exec::WorkExecutor& executor) {
  ApiOptions options;
  options.allow_anonymous = true;
  options.accounts = {
      {kAccount, {"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}}};
  return MakeApiHandler(disk, executor, options);
}

TEST_F(AsyncDispatchTest, AnswerProducedOnALaneDoesNotWaitForATurn) {
  // A write that ran on the short lane (its read would wait for the disk) is
  // answered after the log write alone: a lane has no turn to wait for.
  DiskOnlyEngine disk(*engine_);
  auto handler = LaneHandler(disk, *executor_);
  testing::Turn turn;
  http::Request insert = Request("POST", "/asyncq", Insert("lane"));
  auto sink = std::make_shared<testing::TurnSink>(&turn);
  auto answer = sink->Future();
  handler->Handle(insert, Connection(), http::Completion(sink));
  EXPECT_EQ(answer.get().result_int(), 201);  // the turn never ended
  EXPECT_TRUE(turn.after.empty());
  EXPECT_NE(disk.waited_on, std::this_thread::get_id());
}

// With the log writer idle and no fsync, a lane writes the log for its own
// answer and sends it: no wake-up of the log writer, no hand-back of the
// answer through it (a `$batch` runs on the short lane; docs/benchmarks.md,
// "Point writes against 2f279ee, round 3").
TEST_F(AsyncDispatchTest, AnAnswerProducedOnALaneIsWrittenToTheLogByTheLaneWhenTheLogWriterIsIdle) {
  DiskOnlyEngine disk(*engine_);
  auto handler = LaneHandler(disk, *executor_);
  const uint64_t syncs_before = engine_->GetStats().wal_syncs;
  const uint64_t woken_before = sync_points_->Count("GroupCommit::Woken");
  http::Request insert = Request("POST", "/asyncq", Insert("lane-own"));
  auto sink = std::make_shared<TestSink>();
  handler->Handle(insert, Connection(), http::Completion(sink));
  EXPECT_EQ(sink->Future().get().result_int(), 201);
  EXPECT_EQ(sink->on_thread, disk.waited_on);  // the lane that ran the write answered
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs_before + 1);
  EXPECT_EQ(sync_points_->Count("GroupCommit::Woken"), woken_before);
}

// While the log writer has a group, a lane's answer joins its next one.
TEST_F(AsyncDispatchTest, TheAnswerOfALaneWaitsForTheLogWriterWhileItHasAGroup) {
  DiskOnlyEngine disk(*engine_);
  auto handler = LaneHandler(disk, *executor_);
  auto first_answer = HoldLogWriterWithAGroup();
  http::Request insert = Request("POST", "/asyncq", Insert("group-lane"));
  auto sink = std::make_shared<TestSink>();
  auto answer = sink->Future();
  handler->Handle(insert, Connection(), http::Completion(sink));
  ExpectHeldUntilReleased(answer);
  EXPECT_NE(sink->on_thread, disk.waited_on);
  EXPECT_EQ(first_answer.get().result_int(), 201);
}

TEST_F(AsyncDispatchTest, AnEntityReadWaitsOnlyForWritesItCanReflect) {
  ASSERT_EQ(Run(Request("POST", "/Tables", R"({"TableName":"other"})")).result_int(), 201);
  ASSERT_EQ(Run(Request("POST", "/other", Insert("o"))).result_int(), 201);
  ASSERT_EQ(Run(Request("POST", "/asyncq", Insert("a"))).result_int(), 201);
  // An insert into asyncq that cannot become durable while the log writer is held.
  HoldLogWriter();
  // The handler may keep a request until it answers: every one outlives that.
  std::vector<std::unique_ptr<http::Request>> requests;
  auto keep = [&requests](http::Request r) -> const http::Request& {
    requests.push_back(std::make_unique<http::Request>(std::move(r)));
    return *requests.back();
  };
  auto insert = std::make_shared<TestSink>();
  handler_->Handle(keep(Request("POST", "/asyncq", Insert("pending"))), Connection(),
                   http::Completion(insert));
  auto insert_f = insert->Future();
  ASSERT_EQ(insert_f.wait_for(20ms), std::future_status::timeout);

  // Reads of the other table are answered at once, point read and query alike.
  for (const char* target : {"/other(PartitionKey='p',RowKey='o')", "/other()?$filter=v%20eq%201"}) {
    auto sink = std::make_shared<TestSink>();
    handler_->Handle(keep(Request("GET", target)), Connection(), http::Completion(sink));
    auto f = sink->Future();
    ASSERT_EQ(f.wait_for(0s), std::future_status::ready) << target;
    EXPECT_EQ(f.get().result_int(), 200) << target;
  }
  // A read of asyncq (even of another row) and a read of the catalog may
  // reflect the pending insert: they wait for its log write.
  std::vector<std::pair<std::string, std::shared_ptr<TestSink>>> held;
  for (const char* target : {"/asyncq(PartitionKey='p',RowKey='a')", "/asyncq()?$top=1", "/Tables"}) {
    auto sink = std::make_shared<TestSink>();
    handler_->Handle(keep(Request("GET", target)), Connection(), http::Completion(sink));
    held.emplace_back(target, sink);
  }
  std::vector<std::future<http::Response>> futures;
  for (auto& [target, sink] : held) futures.push_back(sink->Future());
  for (size_t i = 0; i < futures.size(); ++i) {
    EXPECT_EQ(futures[i].wait_for(20ms), std::future_status::timeout) << held[i].first;
  }
  Release();
  EXPECT_EQ(insert_f.get().result_int(), 201);
  for (size_t i = 0; i < futures.size(); ++i) EXPECT_EQ(futures[i].get().result_int(), 200) << held[i].first;
}

TEST_F(AsyncDispatchTest, ShortQueryIsAnsweredInlineLongOneOnTheLongLane) {
  // 30,000 rows in 300 partitions: a filter on a property reads them all,
  // past the fixture's slice (inline_query_slice 0: one clock check).
  auto table = engine_->GetTable(kAccount, "asyncq");
  ASSERT_TRUE(table.ok());
  for (int p = 0; p < 300; ++p) {
    std::vector<model::WriteOp> ops;
    for (int r = 0; r < 100; ++r) {
      model::Entity e;
      e.partition_key = "p" + std::to_string(1000 + p);
      e.row_key = std::to_string(1000 + r);
      e.properties.push_back({"n", model::EdmValue::Int32(p * 100 + r)});
      ops.push_back(model::WriteOp{model::WriteKind::kInsert, std::move(e), {}});
    }
    ASSERT_TRUE(engine_->Write(*table, ops).status.ok());
  }
  ASSERT_EQ(Run(Request("GET", "/asyncq()?$top=1")).result_int(), 200);  // makes the rows durable

  HoldLane(exec::WorkLane::kLong);

  auto small_sink = std::make_shared<TestSink>();
  http::Request point_query =
      Request("GET", "/asyncq()?$filter=PartitionKey%20eq%20'p1000'%20and%20RowKey%20eq%20'1001'");
  handler_->Handle(point_query, Connection(), http::Completion(small_sink));
  auto small_future = small_sink->Future();
  ASSERT_EQ(small_future.wait_for(0s), std::future_status::ready);  // answered before Handle returned
  http::Response small_answer = small_future.get();
  EXPECT_EQ(small_answer.result_int(), 200);
  EXPECT_NE(small_answer.body().find("\"n\":1"), std::string::npos) << small_answer.body();

  auto long_sink = std::make_shared<TestSink>();
  http::Request scan = Request("GET", "/asyncq()?$filter=n%20eq%2029999");
  handler_->Handle(scan, Connection(), http::Completion(long_sink));
  auto long_future = long_sink->Future();
  EXPECT_EQ(long_future.wait_for(50ms), std::future_status::timeout);  // gave up its slice, queued
  Release();
  ASSERT_EQ(long_future.wait_for(30s), std::future_status::ready);
  http::Response scanned = long_future.get();
  EXPECT_EQ(scanned.result_int(), 200);
  EXPECT_NE(scanned.body().find("\"n\":29999"), std::string::npos) << scanned.body().substr(0, 300);
  EXPECT_NE(long_sink->on_thread, std::this_thread::get_id());
}

// A query that outgrows the I/O thread's slice is completed on the long lane:
// the answer is the page one uninterrupted scan gives (1,000 rows in order,
// the continuation at the next row), not a short page and not rows twice;
// the table's next query goes to the long lane directly (SliceHints) with the
// same answer.
TEST_F(AsyncDispatchTest, ASlicedQueryPageIsCompletedOnTheLongLane) {
  InsertRows(1500);
  // The fixture's slice is 0: the query outgrows it at its first clock check.
  for (int attempt = 0; attempt < 2; ++attempt) {
    http::Response page = Run(Request("GET", "/asyncq()?$filter=n%20ge%200"));
    ASSERT_EQ(page.result_int(), 200) << page.body().substr(0, 300);
    // Keys and order (timestamps differ between runs): each row once, in order.
    size_t rows = 0;
    for (size_t at = page.body().find(R"("RowKey":")"); at != std::string::npos;
         at = page.body().find(R"("RowKey":")", at + 1)) {
      ++rows;
    }
    EXPECT_EQ(rows, 1000u);
    ExpectRows10000To10999(page);
    EXPECT_EQ(page.body().find(R"("RowKey":"11000")"), std::string::npos);  // the 1,001st row is the next page's
    EXPECT_EQ(std::string(page["x-ms-continuation-NextRowKey"]), protocol::EncodeContinuation("11000"));
  }
}

// A query that outgrows its slice continues its scan on the long lane
// (model::SuspendedScan) instead of starting again: one snapshot for the
// whole page, so a row written while the query waits for the lane is not in
// it (a scan started again would return it and end the page a row earlier),
// and the page is exactly the uninterrupted one; the next query sees the row.
TEST_F(AsyncDispatchTest, ASlicedQueryContinuesItsScanOnTheLongLane) {
  InsertRows(1500);
  auto table = engine_->GetTable(kAccount, "asyncq");
  ASSERT_TRUE(table.ok());
  HoldLane(exec::WorkLane::kLong);
  auto sink = std::make_shared<TestSink>();
  http::Request query = Request("GET", "/asyncq()?$filter=n%20ge%200");
  handler_->Handle(query, Connection(), http::Completion(sink));
  auto future = sink->Future();
  ASSERT_EQ(future.wait_for(50ms), std::future_status::timeout);  // suspended, queued behind the held lane
  // "100001" sorts between "10000" and "10001": before where the slice stopped.
  model::Entity late;
  late.partition_key = "p";
  late.row_key = "100001";
  late.properties.push_back({"n", model::EdmValue::Int32(1)});
  const std::vector<model::WriteOp> late_ops{model::WriteOp{model::WriteKind::kInsert, std::move(late), {}}};
  ASSERT_TRUE(engine_->Write(*table, late_ops).status.ok());
  Release();
  ASSERT_EQ(future.wait_for(30s), std::future_status::ready);
  http::Response page = future.get();
  ASSERT_EQ(page.result_int(), 200) << page.body().substr(0, 300);
  EXPECT_EQ(page.body().find(R"("RowKey":"100001")"), std::string::npos);
  ExpectRows10000To10999(page);
  EXPECT_EQ(std::string(page["x-ms-continuation-NextRowKey"]), protocol::EncodeContinuation("11000"));
  http::Response again = Run(query);
  ASSERT_EQ(again.result_int(), 200);
  EXPECT_NE(again.body().find(R"("RowKey":"100001")"), std::string::npos);
  EXPECT_EQ(std::string(again["x-ms-continuation-NextRowKey"]), protocol::EncodeContinuation("10999"));
}

// A suspended query still queued when the engine closes is answered 503
// ServerBusy, and its scan (which holds the engine open) lets the close finish.
TEST_F(AsyncDispatchTest, ASuspendedQueryQueuedAtShutdownIsAnswered503) {
  InsertRows(600);
  http::Response r = AnswerAtClose(exec::WorkLane::kLong, Request("GET", "/asyncq()"));
  EXPECT_EQ(r.result_int(), 503);
  EXPECT_EQ(std::string(r["x-ms-error-code"]), "ServerBusy");
}

TEST_F(AsyncDispatchTest, TableCreationRunsOnTheExecutor) {
  HoldLane(exec::WorkLane::kShort);
  http::Request create = Request("POST", "/Tables", R"({"TableName":"later"})");
  auto sink = std::make_shared<TestSink>();
  handler_->Handle(create, Connection(), http::Completion(sink));
  EXPECT_EQ(engine_->GetTable(kAccount, "later").status().code(), StatusCode::kTableNotFound);
  Release();
  EXPECT_EQ(sink->Future().get().result_int(), 201);
  EXPECT_TRUE(engine_->GetTable(kAccount, "later").ok());
}

// A $batch that wraps a query may read a whole page: it runs on the long lane,
// so the short lane (change sets, Create Table, the writes' group commit) is
// not held up behind it. With the long lane held, the query batch waits and a
// Create Table is still answered.
TEST_F(AsyncDispatchTest, AQueryBatchRunsOnTheLongLane) {
  HoldLane(exec::WorkLane::kLong);
  http::Request batch = Request(
      "POST", "/$batch",
      "--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
      "GET http://127.0.0.1:10002/devstoreaccount1/asyncq()?$filter=n%20eq%205 HTTP/1.1\r\n"
      "Accept: application/json;odata=nometadata\r\n\r\n--batch_q--\r\n");
  batch.set("Content-Type", "multipart/mixed; boundary=batch_q");
  auto batch_sink = std::make_shared<TestSink>();
  handler_->Handle(batch, Connection(), http::Completion(batch_sink));
  auto batch_future = batch_sink->Future();

  auto create_sink = std::make_shared<TestSink>();
  http::Request create = Request("POST", "/Tables", R"({"TableName":"beside"})");  // outlives its run on the lane
  handler_->Handle(create, Connection(), http::Completion(create_sink));
  auto create_future = create_sink->Future();
  ASSERT_EQ(create_future.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(create_future.get().result_int(), 201);
  EXPECT_EQ(batch_future.wait_for(0s), std::future_status::timeout);  // still queued behind the held long lane

  Release();
  ASSERT_EQ(batch_future.wait_for(30s), std::future_status::ready);
  http::Response answer = batch_future.get();
  EXPECT_EQ(answer.result_int(), 202) << answer.body();
  EXPECT_NE(answer.body().find("HTTP/1.1 200"), std::string::npos) << answer.body();
}

TEST_F(AsyncDispatchTest, FullQueueAnswers503ServerBusy) {
  HoldLane(exec::WorkLane::kShort);
  http::Request first = Request("POST", "/Tables", R"({"TableName":"queued"})");
  auto queued = std::make_shared<TestSink>();
  handler_->Handle(first, Connection(), http::Completion(queued));  // fills the queue (limit 1)
  http::Request second = Request("POST", "/Tables", R"({"TableName":"refused"})");
  http::Response refused = Run(second);
  EXPECT_EQ(refused.result_int(), 503);
  EXPECT_NE(refused.body().find("ServerBusy"), std::string::npos) << refused.body();
  EXPECT_EQ(std::string(refused["x-ms-error-code"]), "ServerBusy");
  EXPECT_FALSE(std::string(refused["x-ms-request-id"]).empty());
  // Reads on the I/O thread are not queued, so they are still served.
  EXPECT_EQ(Run(Request("GET", "/Tables('refused')")).result_int(), 404);
  Release();
  EXPECT_EQ(queued->Future().get().result_int(), 201);
  EXPECT_EQ(Run(Request("GET", "/Tables('queued')")).result_int(), 200);
  EXPECT_EQ(Run(Request("GET", "/Tables('refused')")).result_int(), 404);
}

TEST_F(AsyncDispatchTest, QueuedRequestOfAClientThatLeftIsSkipped) {
  HoldLane(exec::WorkLane::kShort);
  http::Request create = Request("POST", "/Tables", R"({"TableName":"gone"})");
  auto sink = std::make_shared<TestSink>();
  handler_->Handle(create, Connection(), http::Completion(sink));
  sink->cancelled = true;  // the session saw the client close its connection
  Release();
  auto f = sink->Future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);  // still completed (the session drops it)
  EXPECT_EQ(Run(Request("GET", "/Tables('gone')")).result_int(), 404);
}

TEST_F(AsyncDispatchTest, RequestsQueuedAtShutdownAreAnswered503AndNotRun) {
  http::Response r = AnswerAtClose(exec::WorkLane::kShort, Request("POST", "/Tables", R"({"TableName":"late"})"));
  EXPECT_EQ(r.result_int(), 503);
  EXPECT_EQ(std::string(r["x-ms-error-code"]), "ServerBusy");
  // After the shutdown, work placed on a lane is refused the same way.
  EXPECT_EQ(Run(Request("POST", "/Tables", R"({"TableName":"after"})")).result_int(), 503);
  // Once the engine is closed too (Server::Stop's last step), so is a write
  // tried on the I/O thread.
  ASSERT_TRUE(engine_->Close().ok());
  EXPECT_EQ(Run(Request("POST", "/asyncq", Insert("after"))).result_int(), 503);
}

TEST_F(AsyncDispatchTest, WritesAreAcknowledgedOnlyOnceDurable) {
  // Writers on several threads: a write's 201 arrives only after the log
  // write that covers it, so the durable mark then exceeds the sequence
  // number visible before the write was sent.
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        // The fixture's queue holds one request: retry 503s, as the SDKs do.
        unsigned status = 503;
        uint64_t before = 0;
        while (status == 503) {
          before = static_cast<storage::RocksEngine&>(*engine_).VisibleMark();
          status =
              Run(Request("POST", "/asyncq", Insert("w" + std::to_string(t) + "-" + std::to_string(i)))).result_int();
        }
        if (status != 201) ++bad;
        if (static_cast<storage::RocksEngine&>(*engine_).DurableMark() <= before) ++bad;
        while ((status = Run(Request("GET", "/asyncq()?$top=5")).result_int()) == 503) {}
        if (status != 200) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace tablestone::api
