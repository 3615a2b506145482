#include "server/faults/delay_queue.h"

#include <utility>
#include <vector>

namespace tablestone::faults {

DelayQueue::~DelayQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DelayQueue::After(std::chrono::milliseconds delay, std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      fn();  // too late to wait: answer now
      return;
    }
    due_.emplace(std::chrono::steady_clock::now() + delay, std::move(fn));
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  }
  cv_.notify_all();
}

void DelayQueue::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    if (stopping_) break;
    if (due_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto when = due_.begin()->first;
    if (std::chrono::steady_clock::now() < when) {
      cv_.wait_until(lock, when);
      continue;
    }
    std::function<void()> fn = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    lock.unlock();
    fn();
    lock.lock();
  }
  // Stopping: everything still waiting runs now.
  std::vector<std::function<void()>> rest;
  for (auto& [when, fn] : due_) rest.push_back(std::move(fn));
  due_.clear();
  lock.unlock();
  for (auto& fn : rest) fn();
}

}  // namespace tablestone::faults
