#include "server/exec/work_executor.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <utility>

#include "storage/thread_priority.h"

namespace tablestone::exec {
namespace {

// The CPUs this process may run on (affinity mask; a container's cpuset).
int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

WorkExecutor::WorkExecutor(const ExecutorOptions& options)
    : max_queued_(std::max<size_t>(1, options.max_queued)), batch_scheduling_(options.batch_scheduling) {
  const int cpus = UsableCpus();
  const int counts[2] = {options.short_threads > 0 ? options.short_threads : cpus,
                         options.long_threads > 0 ? options.long_threads : cpus};
  const int nices[2] = {0, options.long_nice};
  // Thread names (at most 15 characters), for per-thread views: top -H, perf
  // sched, bench/ab.sh --threads.
  static constexpr const char* kNames[2] = {"lane-short", "lane-long"};
  for (int l = 0; l < 2; ++l) {
    for (int i = 0; i < counts[l]; ++i) {
      lanes_[l].threads.emplace_back([this, l, nice = nices[l]] { Run(&lanes_[l], nice, kNames[l]); });
    }
  }
}

WorkExecutor::~WorkExecutor() { Shutdown(); }

Status WorkExecutor::Submit(WorkLane lane, Task task) {
  Lane& l = lanes_[static_cast<size_t>(lane)];
  {
    std::lock_guard lock(l.mu);
    if (l.stopping) return Status(StatusCode::kShuttingDown, "the storage executor is stopping");
    if (l.queue.size() >= max_queued_) {
      return Status(StatusCode::kBusy, "the storage executor's queue is full");
    }
    l.queue.push_back(std::move(task));
  }
  l.cv.notify_one();
  return Status::Ok();
}

void WorkExecutor::Run(Lane* lane, int nice, const char* name) {
  (void)pthread_setname_np(pthread_self(), name);  // a name that does not take changes nothing else
  // SCHED_BATCH: a woken executor thread does not preempt the thread that
  // woke it. On a machine with fewer free cores than busy threads, an I/O
  // thread handing over a write would otherwise be switched out at once, per
  // request; this way it finishes its event-loop turn (handing over every
  // request that turn read) and the executor then takes them all in one go.
  if (batch_scheduling_) storage::UseBatchScheduling();
  storage::LowerCurrentThreadPriority(nice);
  std::unique_lock lock(lane->mu);
  while (true) {
    lane->cv.wait(lock, [lane] { return lane->stopping || !lane->queue.empty(); });
    if (lane->queue.empty()) return;  // stopping and drained
    Task task = std::move(lane->queue.front());
    lane->queue.pop_front();
    const bool dropped = lane->stopping;
    lock.unlock();
    task(dropped);
    task = nullptr;  // release captures outside the lock
    lock.lock();
  }
}

void WorkExecutor::Shutdown() {
  std::lock_guard guard(shutdown_mu_);
  for (Lane& l : lanes_) {
    {
      std::lock_guard lock(l.mu);
      l.stopping = true;
    }
    l.cv.notify_all();
  }
  for (Lane& l : lanes_) {
    for (std::thread& t : l.threads) {
      if (t.joinable()) t.join();
    }
    l.threads.clear();
  }
}

size_t WorkExecutor::queued(WorkLane lane) const {
  const Lane& l = lanes_[static_cast<size_t>(lane)];
  std::lock_guard lock(l.mu);
  return l.queue.size();
}

int WorkExecutor::threads(WorkLane lane) const {
  return static_cast<int>(lanes_[static_cast<size_t>(lane)].threads.size());
}

}  // namespace tablestone::exec
