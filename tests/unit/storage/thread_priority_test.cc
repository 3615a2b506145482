// storage/thread_priority.h: per-thread nice values, read back from the kernel.
#include "storage/thread_priority.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

namespace tablestone::storage {
namespace {

// A thread's nice is its own: lowering one thread's priority leaves the
// others (here the test's thread) as they were, and ThreadNice reads it back
// from another thread by its id.
TEST(ThreadPriorityTest, NiceIsPerThreadAndReadBackByTid) {
  const int base = ThreadNice(CurrentThreadId());
  if (base >= 18) GTEST_SKIP() << "the test already runs at nice " << base;
  std::promise<pid_t> tid;
  std::promise<void> checked;
  std::thread t([&] {
    ASSERT_TRUE(SetThreadNice(CurrentThreadId(), base + 1));
    tid.set_value(CurrentThreadId());
    checked.get_future().wait();
  });
  const pid_t other = tid.get_future().get();
  EXPECT_NE(other, CurrentThreadId());
  EXPECT_EQ(ThreadNice(other), base + 1);
  EXPECT_EQ(ThreadNice(CurrentThreadId()), base);
  checked.set_value();
  t.join();
}

// Out-of-range values are clamped to the kernel's range, not refused.
TEST(ThreadPriorityTest, NiceIsClampedTo19) {
  std::promise<int> nice;
  std::thread t([&] {
    EXPECT_TRUE(SetThreadNice(CurrentThreadId(), 1000));
    nice.set_value(ThreadNice(CurrentThreadId()));
  });
  EXPECT_EQ(nice.get_future().get(), 19);
  t.join();
}

// LowerCurrentThreadPriority adds to the thread's nice and stops at 19.
TEST(ThreadPriorityTest, LoweringAddsUpTo19) {
  const int base = ThreadNice(CurrentThreadId());
  std::promise<int> after_two, after_many;
  std::thread t([&] {
    LowerCurrentThreadPriority(2);
    after_two.set_value(ThreadNice(CurrentThreadId()));
    LowerCurrentThreadPriority(100);
    after_many.set_value(ThreadNice(CurrentThreadId()));
  });
  EXPECT_EQ(after_two.get_future().get(), std::min(19, base + 2));
  EXPECT_EQ(after_many.get_future().get(), 19);
  t.join();
}

// The give-way after a burst leaves the scan the CPU share a thread at that
// nice would get beside one at nice 0: w(n) / (w(n) + 1024).
TEST(ThreadPriorityTest, ScanGiveWayMatchesTheNicesShare) {
  using std::chrono::microseconds;
  EXPECT_EQ(ScanGiveWay(microseconds(250), 0).count(), 0);
  EXPECT_EQ(ScanGiveWay(microseconds(0), 4).count(), 0);
  // nice 4: weight 423, so 250 us of work and 605 us asleep (29% of the core).
  EXPECT_EQ(std::chrono::duration_cast<microseconds>(ScanGiveWay(microseconds(250), 4)).count(), 605);
  EXPECT_EQ(ScanGiveWay(microseconds(250), 19), ScanGiveWay(microseconds(250), 40));  // clamped
  EXPECT_GT(ScanGiveWay(microseconds(250), 10), ScanGiveWay(microseconds(250), 4));
}

// A scan sleeps at a burst's end only while point requests are being
// answered and its core was contended during the burst; otherwise it only
// offers the CPU, so a scan beside no point request keeps its full share.
TEST(ThreadPriorityTest, AScanGivesWayOnlyWhilePointRequestsWaitForItsCore) {
  using namespace std::chrono_literals;
  const std::chrono::nanoseconds give_way = 50ms;
  const std::chrono::nanoseconds burst = 250us;
  // No point request within the window: no sleep, even when contended.
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(EndScanBurst(burst, 4 * burst, give_way));
  // A point request just now, but the burst ran uncontended: no sleep.
  NoteForegroundWork();
  EXPECT_GE(LastForegroundWork(), std::chrono::steady_clock::now() - 1s);
  EXPECT_FALSE(EndScanBurst(burst, burst, give_way));
  // A point request just now and a contended burst: the scan sleeps.
  std::this_thread::sleep_for(200us);  // past NoteForegroundWork's 100 us step
  NoteForegroundWork();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(EndScanBurst(burst, 4 * burst, give_way));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, give_way);
  // No give-way configured (scanNice 0): never a sleep.
  NoteForegroundWork();
  EXPECT_FALSE(EndScanBurst(burst, 4 * burst, std::chrono::nanoseconds(0)));
}

}  // namespace
}  // namespace tablestone::storage
