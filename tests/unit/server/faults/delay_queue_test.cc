#include "server/faults/delay_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

namespace tablestone::faults {
namespace {

using namespace std::chrono_literals;

TEST(DelayQueueTest, RunsInDueOrderAfterTheDelay) {
  DelayQueue queue;
  std::mutex mu;
  std::vector<int> order;
  std::promise<void> both;
  const auto start = std::chrono::steady_clock::now();
  queue.After(40ms, [&] {
    std::lock_guard lock(mu);
    order.push_back(2);
    both.set_value();
  });
  queue.After(10ms, [&] {
    std::lock_guard lock(mu);
    order.push_back(1);
  });
  ASSERT_EQ(both.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 40ms);
  std::lock_guard lock(mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(DelayQueueTest, DestructionRunsWhatIsPending) {
  std::atomic<int> ran{0};
  {
    DelayQueue queue;
    queue.After(1h, [&] { ++ran; });
    queue.After(1h, [&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 2);
}

}  // namespace
}  // namespace tablestone::faults
