// DelayQueue: runs callbacks after a delay on one thread of its own, so that
// injected latency (fault rules, realistic mode) never holds an I/O thread or
// an executor lane. The thread starts with the first callback: a server that
// never delays anything has none.
//
// Callbacks must be short (hand real work to another executor). Destroying
// the queue runs every pending callback at once, so each still answers its
// request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace tablestone::faults {

class DelayQueue {
 public:
  DelayQueue() = default;
  ~DelayQueue();
  DelayQueue(const DelayQueue&) = delete;
  DelayQueue& operator=(const DelayQueue&) = delete;

  // Runs `fn` on the queue's thread once `delay` has passed (any thread).
  void After(std::chrono::milliseconds delay, std::function<void()> fn);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<std::chrono::steady_clock::time_point, std::function<void()>> due_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tablestone::faults
