// WorkExecutor (server/exec/work_executor.h): lanes run their tasks, a full queue
// says kBusy, Shutdown() runs queued tasks once with dropped = true and
// refuses new ones, the long lane runs at a lower CPU priority, and each
// lane's threads carry its name.
#include "server/exec/work_executor.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace tablestone::exec {
namespace {

using namespace std::chrono_literals;

ExecutorOptions SmallOptions(size_t max_queued) {
  ExecutorOptions o;
  o.short_threads = 1;
  o.long_threads = 1;
  o.max_queued = max_queued;
  return o;
}

TEST(WorkExecutorTest, RunsTasksOfBothLanes) {
  WorkExecutor executor(SmallOptions(16));
  std::atomic<int> ran{0};
  std::latch done(20);
  for (int i = 0; i < 20; ++i) {
    const WorkLane lane = i % 2 == 0 ? WorkLane::kShort : WorkLane::kLong;
    ASSERT_TRUE(executor.Submit(lane, [&](bool dropped) {
                          EXPECT_FALSE(dropped);
                          ++ran;
                          done.count_down();
                        }).ok());
  }
  done.wait();
  EXPECT_EQ(ran.load(), 20);
}

TEST(WorkExecutorTest, FullQueueIsRefusedWithBusyAndInternalWorkIsNot) {
  WorkExecutor executor(SmallOptions(2));
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  // Occupies the only short thread, so later tasks stay queued.
  ASSERT_TRUE(executor.Submit(WorkLane::kShort, [&, gate](bool) {
                        started.set_value();
                        gate.wait();
                      }).ok());
  started.get_future().wait();
  std::atomic<int> ran{0};
  ASSERT_TRUE(executor.Submit(WorkLane::kShort, [&](bool) { ++ran; }).ok());
  ASSERT_TRUE(executor.Submit(WorkLane::kShort, [&](bool) { ++ran; }).ok());
  EXPECT_EQ(executor.queued(WorkLane::kShort), 2u);
  Status refused = executor.Submit(WorkLane::kShort, [&](bool) { ++ran; });
  EXPECT_EQ(refused.code(), StatusCode::kBusy);
  // The other lane has its own queue.
  std::promise<void> long_ran;
  EXPECT_TRUE(executor.Submit(WorkLane::kLong, [&](bool) { long_ran.set_value(); }).ok());
  long_ran.get_future().wait();
  release.set_value();
  executor.Shutdown();
  EXPECT_EQ(ran.load(), 2);
}

TEST(WorkExecutorTest, ShutdownRunsQueuedTasksOnceAsDroppedAndRefusesNewOnes) {
  WorkExecutor executor(SmallOptions(16));
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::atomic<bool> blocker_dropped{true};
  ASSERT_TRUE(executor.Submit(WorkLane::kShort, [&, gate](bool dropped) {
                        blocker_dropped = dropped;
                        started.set_value();
                        gate.wait();
                      }).ok());
  started.get_future().wait();
  std::atomic<int> dropped_count{0}, run_count{0};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(executor.Submit(WorkLane::kShort, [&](bool dropped) { ++(dropped ? dropped_count : run_count); }).ok());
  }
  std::thread stopper([&] { executor.Shutdown(); });
  // Shutdown has begun once new work is refused.
  while (executor.Submit(WorkLane::kLong, [](bool) {}).code() != StatusCode::kShuttingDown) {
    std::this_thread::sleep_for(1ms);
  }
  release.set_value();
  stopper.join();
  EXPECT_FALSE(blocker_dropped.load());  // it was running, not queued
  EXPECT_EQ(dropped_count.load(), 5);
  EXPECT_EQ(run_count.load(), 0);
  EXPECT_EQ(executor.Submit(WorkLane::kShort, [](bool) {}).code(), StatusCode::kShuttingDown);
  executor.Shutdown();  // idempotent
}

TEST(WorkExecutorTest, LongLaneRunsAtLowerPriority) {
  ExecutorOptions o = SmallOptions(4);
  o.long_nice = 10;
  WorkExecutor executor(o);
  const int base = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  std::promise<int> short_nice, long_nice;
  ASSERT_TRUE(executor.Submit(WorkLane::kShort, [&](bool) {
                        short_nice.set_value(getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))));
                      }).ok());
  ASSERT_TRUE(executor.Submit(WorkLane::kLong, [&](bool) {
                        long_nice.set_value(getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))));
                      }).ok());
  EXPECT_EQ(short_nice.get_future().get(), base);
  EXPECT_EQ(long_nice.get_future().get(), std::min(19, base + 10));
}

// Each lane's threads carry its name, so per-thread views (top -H, perf sched,
// bench/ab.sh --threads) tell the lanes apart.
TEST(WorkExecutorTest, LaneThreadsCarryTheLanesName) {
  WorkExecutor executor(SmallOptions(4));
  auto name_of = [&](WorkLane lane) {
    std::promise<std::string> name;
    EXPECT_TRUE(executor.Submit(lane, [&](bool) {
                          char buf[16] = {};
                          pthread_getname_np(pthread_self(), buf, sizeof(buf));
                          name.set_value(buf);
                        }).ok());
    return name.get_future().get();
  };
  EXPECT_EQ(name_of(WorkLane::kShort), "lane-short");
  EXPECT_EQ(name_of(WorkLane::kLong), "lane-long");
}

TEST(WorkExecutorTest, TasksMaySubmitMoreWork) {
  WorkExecutor executor(SmallOptions(16));
  std::promise<void> inner;
  ASSERT_TRUE(executor.Submit(WorkLane::kLong, [&](bool) {
                        EXPECT_TRUE(executor.Submit(WorkLane::kShort, [&](bool) { inner.set_value(); }).ok());
                      }).ok());
  EXPECT_EQ(inner.get_future().wait_for(10s), std::future_status::ready);
}

}  // namespace
}  // namespace tablestone::exec
