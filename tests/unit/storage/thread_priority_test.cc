// storage/thread_priority.h: per-thread nice values, read back from the kernel.
#include "storage/thread_priority.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tablestone::storage
