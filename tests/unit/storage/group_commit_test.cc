// Group commit inside the engine (storage/engine.h, "Durability"):
// AwaitDurable answers at once when nothing is pending, otherwise after one
// log write that covers every waiter queued before it ran; writers on several
// threads all get answered with their writes durable.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "storage/group_commit.h"
#include "storage/sync_point.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using namespace std::chrono_literals;
using test_util::EngineTest;
using test_util::MakeEntity;
using test_util::Op;
using test_util::WriteOne;

constexpr const char* kAccount = "devstoreaccount1";

using GroupCommitTest = EngineTest;

TEST_P(GroupCommitTest, NothingPendingIsAnsweredAtOnceOnTheCallingThread) {
  TableInfo t = Create("gc");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  ASSERT_TRUE(engine_->SyncWal().ok());
  const uint64_t syncs = engine_->GetStats().wal_syncs;
  bool called = false;
  const auto caller = std::this_thread::get_id();
  engine_->AwaitDurable([&](Status s) {
    EXPECT_TRUE(s.ok());
    EXPECT_EQ(std::this_thread::get_id(), caller);
    called = true;
  });
  EXPECT_TRUE(called);
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs);
}

TEST_P(GroupCommitTest, AWriteIsAnsweredOnlyOnceDurable) {
  TableInfo t = Create("gc");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  const uint64_t mark = rocks().VisibleMark();
  ASSERT_GT(mark, rocks().DurableMark());
  std::promise<uint64_t> durable_at_callback;
  engine_->AwaitDurable([&](Status s) {
    EXPECT_TRUE(s.ok());
    durable_at_callback.set_value(rocks().DurableMark());
  });
  auto f = durable_at_callback.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_GE(f.get(), mark);
}

// TableReadIsDurable: a table's entity writes count for reads of that table
// only (name in any case); catalog, ACL and account-metadata writes count for
// every table; each until the log write that covers it.
TEST_P(GroupCommitTest, ATableReadWaitsOnlyForWritesItCanReflect) {
  TableInfo a = Create("gca");
  TableInfo b = Create("gcb");
  ASSERT_TRUE(engine_->SyncWal().ok());
  EXPECT_TRUE(engine_->TableReadIsDurable(kAccount, "gca"));
  EXPECT_TRUE(engine_->TableReadIsDurable(kAccount, "gcb"));

  ASSERT_TRUE(WriteOne(*engine_, a, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  EXPECT_FALSE(engine_->TableReadIsDurable(kAccount, "gca"));
  EXPECT_FALSE(engine_->TableReadIsDurable(kAccount, "GCA"));
  EXPECT_TRUE(engine_->TableReadIsDurable(kAccount, "gcb"));
  ASSERT_TRUE(engine_->SyncWal().ok());
  EXPECT_TRUE(engine_->TableReadIsDurable(kAccount, "gca"));

  // A failed write (the row exists) changes nothing and holds nothing.
  ASSERT_FALSE(WriteOne(*engine_, a, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  EXPECT_TRUE(engine_->TableReadIsDurable(kAccount, "gca"));

  for (int step = 0; step < 3; ++step) {
    switch (step) {
      case 0: ASSERT_TRUE(engine_->CreateTable(kAccount, "gcc").ok()); break;
      case 1: ASSERT_TRUE(engine_->PutTableAcl(a, "<acl/>").ok()); break;
      default: ASSERT_TRUE(engine_->PutAccountMeta(kAccount, "props", "x").ok()); break;
    }
    EXPECT_FALSE(engine_->TableReadIsDurable(kAccount, "gca")) << step;
    EXPECT_FALSE(engine_->TableReadIsDurable(kAccount, "gcb")) << step;
    ASSERT_TRUE(engine_->SyncWal().ok());
    EXPECT_TRUE(engine_->TableReadIsDurable(kAccount, "gcb")) << step;
  }
}

// Deterministic batching: the log writer is held where it wakes for a group
// while writes on several threads queue their waiters; once released, one log
// write answers them all.
TEST_P(GroupCommitTest, OneLogWriteCoversEveryWaiterQueuedBeforeIt) {
  TableInfo t = Create("gc");
  ASSERT_TRUE(engine_->SyncWal().ok());
  const uint64_t woken_before = sync_points_->Count("GroupCommit::Woken");
  sync_points_->Hold("GroupCommit::Woken");
  const uint64_t syncs_before = engine_->GetStats().wal_syncs;

  constexpr int kThreads = 4, kPerThread = 25;
  std::atomic<int> answered{0};
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> marks;  // (visible after write, durable at callback)
  std::vector<std::thread> writers;
  for (int w = 0; w < kThreads; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = WriteOne(*engine_, t,
                          Op(model::WriteKind::kInsert, MakeEntity("p" + std::to_string(w), std::to_string(i))));
        ASSERT_TRUE(r.status.ok());
        const uint64_t visible = rocks().VisibleMark();
        engine_->AwaitDurable([&, visible](Status s) {
          EXPECT_TRUE(s.ok());
          std::lock_guard lock(mu);
          marks.emplace_back(visible, rocks().DurableMark());
          ++answered;
        });
      }
    });
  }
  for (auto& w : writers) w.join();
  ASSERT_TRUE(sync_points_->WaitFor("GroupCommit::Woken", woken_before + 1));
  EXPECT_EQ(answered.load(), 0);  // nothing answered while the writer is held
  const uint64_t done_before = sync_points_->Count("GroupCommit::GroupDone");
  sync_points_->Release("GroupCommit::Woken");
  ASSERT_TRUE(sync_points_->WaitFor("GroupCommit::GroupDone", done_before + 1));
  ASSERT_EQ(answered.load(), kThreads * kPerThread);
  EXPECT_EQ(engine_->GetStats().wal_syncs - syncs_before, 1u);
  for (auto [visible, durable] : marks) EXPECT_GE(durable, visible);
}

// Many writers on threads of their own, as the API's lanes and I/O threads
// run them: every write is answered, durable, and the log writes are fewer
// than the writes.
TEST_P(GroupCommitTest, WritersOnSeveralThreadsShareLogWrites) {
  TableInfo t = Create("gc");
  const uint64_t syncs_before = engine_->GetStats().wal_syncs;
  constexpr int kThreads = 4, kPerThread = 100, kWrites = kThreads * kPerThread;
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kThreads; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = WriteOne(*engine_, t,
                          Op(model::WriteKind::kInsert, MakeEntity("p" + std::to_string(w), std::to_string(i))));
        if (!r.status.ok()) ++failed;
        const uint64_t visible = rocks().VisibleMark();
        engine_->AwaitDurable([&, visible](Status st) {
          if (!st.ok() || rocks().DurableMark() < visible) ++failed;
          ++answered;
        });
      }
    });
  }
  for (auto& w : writers) w.join();
  for (int i = 0; i < 1000 && answered.load() < kWrites; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(answered.load(), kWrites);
  EXPECT_EQ(failed.load(), 0);
  const uint64_t syncs = engine_->GetStats().wal_syncs - syncs_before;
  EXPECT_GE(syncs, 1u);
  EXPECT_LE(syncs, static_cast<uint64_t>(kWrites));
  RecordProperty("wal_syncs_for_400_writes", static_cast<int>(syncs));
}

// Close answers the waiters still queued (its last log write covers them),
// and the write they waited for survives it.
TEST_P(GroupCommitTest, CloseAnswersTheWaitersStillQueued) {
  TableInfo t = Create("gc");
  ASSERT_TRUE(engine_->SyncWal().ok());
  sync_points_->Hold("GroupCommit::Woken");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "late"))).status.ok());
  std::promise<Status> answered;
  engine_->AwaitDurable([&](Status s) { answered.set_value(s); });
  auto f = answered.get_future();
  EXPECT_EQ(f.wait_for(20ms), std::future_status::timeout);  // the log writer is held
  std::thread closer([&] { EXPECT_TRUE(engine_->Close().ok()); });
  sync_points_->ReleaseAll();
  closer.join();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(f.get().ok());
  if (!GetParam()) {  // on disk: the write survived the close
    Reopen();
    auto e = engine_->GetEntity(*engine_->GetTable("devstoreaccount1", "gc"), "p", "late");
    EXPECT_TRUE(e.ok()) << e.status().ToString();
  }
}

// The alternative measured in docs/benchmarks.md: RocksDB groups the log
// writes itself, so a write is durable as soon as it is visible.
TEST_P(GroupCommitTest, RocksDbGroupCommitMakesEveryVisibleWriteDurable) {
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  EngineOptions o = Options();
  o.group_commit = EngineOptions::GroupCommit::kRocksDb;
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  engine_ = std::move(opened).value();
  TableInfo t = Create("gc");
  const uint64_t syncs = engine_->GetStats().wal_syncs;
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  EXPECT_EQ(rocks().DurableMark(), rocks().VisibleMark());
  bool inline_answer = false;
  engine_->AwaitDurable([&](Status s) { inline_answer = s.ok(); });
  EXPECT_TRUE(inline_answer);
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs);
  // Every write may wait for the disk in this mode: none runs on an I/O thread.
  EXPECT_FALSE(engine_->CanWriteWithoutWaiting());
}

TEST_P(GroupCommitTest, EngineGroupCommitWritesWithoutWaitingWhenNotStalled) {
  EXPECT_TRUE(engine_->CanWriteWithoutWaiting());
}

// TrySyncWal: the log write on the caller's thread when it is a write(2)
// into the page cache and the log writer is idle; otherwise nullopt (the
// caller then uses AwaitDurable).
TEST_P(GroupCommitTest, TrySyncWalWritesTheLogOnTheCallerWhenTheLogWriterIsIdle) {
  TableInfo t = Create("gc");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  const uint64_t mark = rocks().VisibleMark();
  ASSERT_GT(mark, rocks().DurableMark());
  const uint64_t syncs = engine_->GetStats().wal_syncs;
  const uint64_t woken = sync_points_->Count("GroupCommit::Woken");
  const std::optional<Status> s = engine_->TrySyncWal();
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->ok()) << s->ToString();
  EXPECT_GE(rocks().DurableMark(), mark);
  EXPECT_EQ(engine_->GetStats().wal_syncs, syncs + 1);
  EXPECT_EQ(sync_points_->Count("GroupCommit::Woken"), woken);  // the log writer was not asked
}

TEST_P(GroupCommitTest, TrySyncWalLeavesTheLogWriteToTheLogWriterWhileItHasAGroup) {
  TableInfo t = Create("gc");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r1"))).status.ok());
  const uint64_t woken = sync_points_->Count("GroupCommit::Woken");
  sync_points_->Hold("GroupCommit::Woken");
  std::promise<Status> first;
  engine_->AwaitDurable([&](Status s) { first.set_value(s); });
  ASSERT_TRUE(sync_points_->WaitFor("GroupCommit::Woken", woken + 1));
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r2"))).status.ok());
  EXPECT_FALSE(engine_->TrySyncWal().has_value());  // the queued group is the writer's
  EXPECT_LT(rocks().DurableMark(), rocks().VisibleMark());
  sync_points_->Release("GroupCommit::Woken");
  auto f = first.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(f.get().ok());
}

// With fsync the log write waits for the disk: never on the caller's thread.
TEST_P(GroupCommitTest, TrySyncWalDeclinesWhenTheLogIsFsynced) {
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  EngineOptions o = Options();
  o.sync_writes = true;
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  engine_ = std::move(opened).value();
  TableInfo t = Create("gc");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(model::WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  EXPECT_FALSE(engine_->TrySyncWal().has_value());
}

INSTANTIATE_TEST_SUITE_P(Modes, GroupCommitTest, ::testing::Bool(), test_util::ModeName);


// ---- The GroupCommit class alone (storage/group_commit.h), with a fake log write ----

// A log write that blocks until the test lets it finish, and counts its calls.
class FakeLog {
 public:
  Status Sync() {
    std::unique_lock lock(mu_);
    ++calls_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_ || released_ >= calls_; });
    return result_;
  }
  void LetOneFinish() {
    std::lock_guard lock(mu_);
    ++released_;
    changed_.notify_all();
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }
  bool WaitForCalls(int n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, 30s, [&] { return calls_ >= n; });
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void Fail(Status s) {
    std::lock_guard lock(mu_);
    result_ = std::move(s);
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int calls_ = 0;
  int released_ = 0;
  bool open_ = false;
  Status result_ = Status::Ok();
};

// Queues one callback (counting OK answers into `answered`) on a fresh
// `commit` and holds its writer where it wakes for that group.
void QueueHeldGroup(GroupCommit& commit, SyncPoints& points, std::atomic<int>& answered) {
  points.Hold("GroupCommit::Woken");
  commit.Await([&answered](Status s) { answered += s.ok() ? 1 : 0; });
  ASSERT_TRUE(points.WaitFor("GroupCommit::Woken", 1));
}

TEST(GroupCommitClassTest, StatesFollowTheGroups) {
  FakeLog log;
  SyncPoints points;
  GroupCommit commit([&] { return log.Sync(); }, &points);
  EXPECT_EQ(commit.state(), GroupCommit::State::kIdle);

  points.Hold("GroupCommit::Woken");
  std::atomic<int> first{0}, second{0};
  commit.Await([&](Status s) { first += s.ok() ? 1 : 100; });
  ASSERT_TRUE(points.WaitFor("GroupCommit::Woken", 1));
  EXPECT_EQ(commit.state(), GroupCommit::State::kQueued);
  commit.Await([&](Status s) { first += s.ok() ? 1 : 100; });
  points.Release("GroupCommit::Woken");
  ASSERT_TRUE(log.WaitForCalls(1));
  EXPECT_EQ(commit.state(), GroupCommit::State::kWriting);

  // Queued while a log write runs: the next group, not this one.
  commit.Await([&](Status s) { second += s.ok() ? 1 : 100; });
  EXPECT_EQ(commit.state(), GroupCommit::State::kWriting);
  log.LetOneFinish();
  ASSERT_TRUE(log.WaitForCalls(2));
  EXPECT_EQ(first.load(), 2);
  EXPECT_EQ(second.load(), 0);
  log.LetOneFinish();
  ASSERT_TRUE(points.WaitFor("GroupCommit::GroupDone", 2));
  EXPECT_EQ(second.load(), 1);
  EXPECT_EQ(log.calls(), 2);
  EXPECT_EQ(commit.groups(), 2u);
  EXPECT_EQ(commit.state(), GroupCommit::State::kIdle);
  commit.Stop();
  EXPECT_EQ(commit.state(), GroupCommit::State::kStopped);
}

TEST(GroupCommitClassTest, AFailedLogWriteReachesEveryCallbackOfItsGroup) {
  FakeLog log;
  log.Open();
  log.Fail(Status::NoSpace("full"));
  SyncPoints points;
  GroupCommit commit([&] { return log.Sync(); }, &points);
  points.Hold("GroupCommit::Woken");
  std::atomic<int> no_space{0};
  for (int i = 0; i < 5; ++i) {
    commit.Await([&](Status s) { no_space += s.code() == StatusCode::kNoSpace ? 1 : 0; });
  }
  ASSERT_TRUE(points.WaitFor("GroupCommit::Woken", 1));
  points.Release("GroupCommit::Woken");
  ASSERT_TRUE(points.WaitFor("GroupCommit::GroupDone", 1));
  EXPECT_EQ(no_space.load(), 5);
  EXPECT_EQ(log.calls(), 1);
}

// Stop() answers what is queued with one last log write; an Await after it
// writes the log on the caller's thread (nobody else will).
TEST(GroupCommitClassTest, StopAnswersTheQueuedAndLaterAwaitsWriteOnTheCaller) {
  FakeLog log;
  log.Open();
  SyncPoints points;
  GroupCommit commit([&] { return log.Sync(); }, &points);
  std::atomic<int> answered{0};
  QueueHeldGroup(commit, points, answered);
  std::thread stopper([&] { commit.Stop(); });
  points.Release("GroupCommit::Woken");
  stopper.join();
  EXPECT_EQ(answered.load(), 1);
  EXPECT_EQ(commit.state(), GroupCommit::State::kStopped);
  const auto caller = std::this_thread::get_id();
  bool on_caller = false;
  commit.Await([&](Status s) { on_caller = s.ok() && std::this_thread::get_id() == caller; });
  EXPECT_TRUE(on_caller);
  EXPECT_EQ(log.calls(), 2);
  commit.Stop();  // idempotent
}

// SyncHere: one log write on the caller's thread while the writer is idle.
TEST(GroupCommitClassTest, SyncHereWritesOnTheCallerWithoutWakingTheWriter) {
  FakeLog log;
  log.Open();
  SyncPoints points;
  GroupCommit commit([&] { return log.Sync(); }, &points);
  const auto caller = std::this_thread::get_id();
  std::thread::id wrote_on;
  const std::optional<Status> s = commit.SyncHere([&]() -> std::optional<Status> {
    wrote_on = std::this_thread::get_id();
    EXPECT_EQ(commit.state(), GroupCommit::State::kWriting);
    return log.Sync();
  });
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->ok());
  EXPECT_EQ(wrote_on, caller);
  EXPECT_EQ(commit.groups(), 1u);
  EXPECT_EQ(commit.state(), GroupCommit::State::kIdle);
  EXPECT_EQ(points.Count("GroupCommit::Woken"), 0u);
  // A declined write is no group.
  EXPECT_FALSE(commit.SyncHere([] { return std::optional<Status>(); }).has_value());
  EXPECT_EQ(commit.groups(), 1u);
  EXPECT_EQ(commit.state(), GroupCommit::State::kIdle);
}

TEST(GroupCommitClassTest, SyncHereDeclinesWhileTheWriterHasAGroup) {
  FakeLog log;
  SyncPoints points;
  GroupCommit commit([&] { return log.Sync(); }, &points);
  std::atomic<int> answered{0};
  QueueHeldGroup(commit, points, answered);
  bool ran = false;
  auto try_sync = [&]() -> std::optional<Status> {
    ran = true;
    return Status::Ok();
  };
  EXPECT_FALSE(commit.SyncHere(try_sync).has_value());  // queued
  points.Release("GroupCommit::Woken");
  ASSERT_TRUE(log.WaitForCalls(1));
  EXPECT_FALSE(commit.SyncHere(try_sync).has_value());  // writing
  EXPECT_FALSE(ran);
  log.LetOneFinish();
  ASSERT_TRUE(points.WaitFor("GroupCommit::GroupDone", 1));
  EXPECT_EQ(answered.load(), 1);
}

// What is queued while a caller writes is the writer's next group, taken
// once the caller's write ends; and Stop() waits for that write.
TEST(GroupCommitClassTest, CallbacksQueuedDuringSyncHereGoToTheWriterAfterIt) {
  FakeLog log;
  SyncPoints points;
  GroupCommit commit([&] { return log.Sync(); }, &points);
  std::thread caller([&] { EXPECT_TRUE(commit.SyncHere([&] { return std::optional<Status>(log.Sync()); }).has_value()); });
  ASSERT_TRUE(log.WaitForCalls(1));
  EXPECT_EQ(commit.state(), GroupCommit::State::kWriting);
  std::atomic<int> answered{0};
  commit.Await([&](Status s) { answered += s.ok() ? 1 : 0; });
  EXPECT_EQ(commit.state(), GroupCommit::State::kWriting);
  EXPECT_EQ(points.Count("GroupCommit::Woken"), 0u);  // not while the caller writes
  std::thread stopper([&] { commit.Stop(); });
  log.LetOneFinish();
  caller.join();
  ASSERT_TRUE(log.WaitForCalls(2));  // the writer's group, after the caller's
  EXPECT_EQ(answered.load(), 0);
  log.LetOneFinish();
  stopper.join();
  EXPECT_EQ(answered.load(), 1);
  EXPECT_EQ(commit.groups(), 2u);
  EXPECT_EQ(commit.state(), GroupCommit::State::kStopped);
}

}  // namespace
}  // namespace tablestone::storage
