// WorkExecutor: threads for request work that may take long or block (scans,
// writes during a RocksDB stall, table deletes, `$batch`), so the caller's
// threads (the HTTP I/O threads) never wait on storage. server/app creates
// it (Server::Start) and hands it to the API handler; which request runs in
// which lane is server/api's decision (server/api/placement.h). The engine
// has threads of its own for its background work (the log writer,
// storage/group_commit.h; the scan cache's builder) and none of its code
// depends on these lanes.
//
// Two lanes, each a FIFO queue with its own threads:
//   kShort  work that is short and latency-sensitive.
//   kLong   work that may run for seconds. Its threads may run at a lower
//           CPU priority (ExecutorOptions::long_nice); the server keeps them
//           at the default and has its scans give way to point requests
//           instead (storage/thread_priority.h).
// A lane's queue is bounded (ExecutorOptions::max_queued): Submit() refuses
// with kBusy when it is full, and the caller answers 503 ServerBusy, as the
// service does when a partition or account is over its targets, rather than
// letting memory grow.
//
// Shutdown(): refuses new work; tasks already queued still run, once, with
// dropped = true (they must then skip their work and only finish their
// caller's bookkeeping, e.g. answer 503); running tasks finish; then the
// threads are joined. Idempotent.
//
// The lanes' threads are named "lane-short" and "lane-long" (per-thread views:
// top -H, perf sched, bench/ab.sh --threads).
//
// Knows nothing of HTTP: completion is the task's own business (the api layer
// posts its result back to the connection's executor).
//
// Thread safety: every method may be called from any thread, including from
// inside a task (a task may submit more work; it must not call Shutdown()).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/model/status.h"

namespace tablestone::exec {

enum class WorkLane : uint8_t { kShort = 0, kLong = 1 };

struct ExecutorOptions {
  // Threads per lane; 0 = the CPUs this process may run on (at least 1).
  int short_threads = 0;
  int long_threads = 0;
  // Tasks waiting (not yet running) per lane before Submit() says kBusy.
  size_t max_queued = 4096;
  // nice value added to the long lane's threads (0 = same priority). The
  // server leaves it at 0 (thread_priority.h: an absolute nice loses to every
  // other process of a busy machine).
  int long_nice = 0;
  // Run the lanes' threads under SCHED_BATCH (see work_executor.cc).
  bool batch_scheduling = true;
};

class WorkExecutor {
 public:
  // `dropped`: the executor is shutting down and this task was still queued.
  using Task = std::function<void(bool dropped)>;

  explicit WorkExecutor(const ExecutorOptions& options);
  ~WorkExecutor();  // Shutdown()
  WorkExecutor(const WorkExecutor&) = delete;
  WorkExecutor& operator=(const WorkExecutor&) = delete;

  // Queues `task`. kBusy when the lane's queue holds max_queued tasks,
  // kShuttingDown after Shutdown() began (the task is then not run at all).
  Status Submit(WorkLane lane, Task task);

  void Shutdown();

  // Tasks queued (not running) in a lane right now.
  size_t queued(WorkLane lane) const;
  int threads(WorkLane lane) const;

 private:
  struct Lane {
    mutable std::mutex mu;
    std::condition_variable cv;
    std::deque<Task> queue;  // guarded by mu
    bool stopping = false;   // guarded by mu
    std::vector<std::thread> threads;
  };

  void Run(Lane* lane, int nice, const char* name);

  const size_t max_queued_;
  const bool batch_scheduling_;
  Lane lanes_[2];
  std::mutex shutdown_mu_;  // serializes Shutdown()
};

}  // namespace tablestone::exec
