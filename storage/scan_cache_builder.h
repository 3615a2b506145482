// ScanCacheBuilder: the scan cache's builder thread and its three sources of
// work, one build at a time (storage/partition_cache.h says when an entry may
// be built and kept):
//   1. Schedule(): partitions a scan's admission chose. A query never builds;
//      until the build is done, scans read RocksDB. These go first, at the
//      `admission_nice` (the long lane's): a query asked for them.
//   2. Start(restore): after an open, the partitions cached at the last clean
//      close (meta 'G', docs/storage-format.md), one per turn, at the
//      `admission_nice` too: the last run's queries asked for them, and the
//      first queries after the open wait for them rather than read around.
//   3. NoteWrite(): with warming on (EngineOptions::warm_after_write), the
//      partitions a burst of writes filled, built once no write reached them
//      for `warm_after_write` (warm_candidates.h), at the `admission_nice`
//      too, after the builds scans asked for: the first queries after a load
//      want them, and wait for them rather than read around. The entries of
//      one burst never evict each other: they are inserted with the use clock
//      of the burst's start, so a load larger than the cache fills it once and
//      the rest is left to the ordinary admission.
// A scan that reaches the partition being built waits for it (AwaitRunning)
// rather than read it again, but only if the build runs at the scan's own
// priority or a higher one: no request waits on work that runs below it
// (docs/architecture.md, "Threads and priorities"). Below it (a builder whose
// nice could not be set, or a scan on a thread of higher priority than the
// long lane's) the scan reads the partition from RocksDB, and the build goes
// on beside it. Raising the build's priority instead would need CAP_SYS_NICE
// (thread_priority.h); and on a machine kept busy by other processes a
// nice-19 build gets ~1.5% of a core, so waiting for one cost the first query
// after a restart seconds (docs/benchmarks.md, "A busy machine").
//
// Reading the database is the owner's: `build` reads one partition (from
// build.rows, else from a snapshot of its own) and offers it to the cache.
//
// Sync points (sync_point.h), for tests:
//   "ScanCacheBuilder::CandidateNoted"   NoteWrite() noted a new warm candidate
//   "ScanCacheBuilder::RestoresDone"     the restore list is worked through
//   "ScanCacheBuilder::SkippedTooLarge"  a warm candidate the cache marked too
//                                        large was skipped, not built
//   "ScanCacheBuilder::BuildStarted"     a build of any source is about to
//                                        read its partition (AwaitRunning sees it)
//   "ScanCacheBuilder::BuildDone"        a build of any source ended
//   "ScanCacheBuilder::ReadAround"       AwaitRunning met a build running below
//                                        the caller's priority and did not wait
//   "ScanCacheBuilder::Awaiting"         AwaitRunning is about to wait for the
//                                        build of the caller's partition
//
// Thread safety: every method may be called from any thread; NoteWrite()
// under the lock of `stripe` (it keeps a per-stripe memo).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "storage/partition_cache.h"
#include "storage/sync_point.h"
#include "storage/warm_candidates.h"

namespace tablestone::storage {

class ScanCacheBuilder {
 public:
  struct Options {
    int admission_nice = 0;  // clamped to 0..19
    std::chrono::milliseconds warm_after_write{0};  // 0: NoteWrite() is not called
    size_t stripe_count = 1;
  };
  // Builds one partition into the cache; returns whether the cache kept it.
  // *rows (if not null) receives the rows read.
  using BuildPartition =
      std::function<bool(uint64_t table_id, const PartitionToBuild& build, uint64_t use_clock, size_t* rows)>;
  struct Restore {
    uint64_t table_id = 0;
    std::string partition_key;
    size_t stripe = 0;
  };

  ScanCacheBuilder(PartitionCache& cache, Options options, BuildPartition build, SyncPoints* sync_points);
  ~ScanCacheBuilder();  // Stop()
  ScanCacheBuilder(const ScanCacheBuilder&) = delete;
  ScanCacheBuilder& operator=(const ScanCacheBuilder&) = delete;

  // Starts the thread; `restore` is rebuilt first unless scans ask for builds.
  void Start(std::vector<Restore> restore);
  // Queues the admitted partitions of one scan (each once, however many scans
  // admit it meanwhile). The copied rows waiting stay within the cache's size;
  // past it a build reads its partition from a snapshot instead.
  void Schedule(uint64_t table_id, uint64_t use_clock, std::vector<PartitionToBuild> builds);
  // If the partition's build is running now at the calling thread's priority
  // or a higher one, waits until it is done (or `deadline`, or a second) and
  // returns true: a scan that misses the cache there spends less waiting than
  // reading the partition again. False at once otherwise (one atomic load
  // when no build of it runs; a getpriority when one runs).
  bool AwaitRunning(uint64_t table_id, std::string_view partition_key,
                    std::optional<std::chrono::steady_clock::time_point> deadline);
  // Whether the owner should call NoteWrite (warm_after_write > 0).
  bool warming() const { return warm_stripes_ != nullptr; }
  // `rows` rows were written to the partition (in lock stripe `stripe`): an
  // atomic add and a compare, but for a partition's first write of a burst.
  void NoteWrite(uint64_t table_id, std::string_view partition_key, size_t stripe, size_t rows);
  // Drops the queued builds and joins the thread (a running build finishes).
  // Idempotent.
  void Stop();

 private:
  struct QueuedBuild {
    uint64_t table_id = 0;
    PartitionToBuild build;
    uint64_t use_clock = 0;
  };
  // Per lock stripe, for the warmer (warm_candidates.h): rows written to the
  // stripe, the epoch the warmer bumps when it forgets a candidate of the
  // stripe, and the writers' memo of the partition they noted last there
  // (guarded by the stripe's lock, held by NoteWrite's callers).
  struct WarmStripe {
    std::atomic<uint64_t> rows{0};
    std::atomic<uint64_t> epoch{0};
    uint64_t memo_table = 0;
    uint64_t memo_epoch = UINT64_MAX;
    std::string memo_partition_key;
  };

  void Run();
  bool RunOneQueuedBuild();
  // A build no query asked for (the warmer's, a restore): runs it in the
  // building_ slot (so AwaitRunning sees it), unless a scan's admission has
  // queued the partition (then returns false and builds nothing).
  // *refused_for_room: the cache refused the entry for want of room.
  bool BuildUnqueued(uint64_t table_id, std::string_view partition_key, size_t stripe, uint64_t use_clock,
                     bool* refused_for_room, size_t* rows = nullptr);
  void SetBuilding(uint64_t table_id, std::string_view partition_key);  // holds builds_mu_
  void ClearBuilding();

  PartitionCache& cache_;
  const Options options_;
  const BuildPartition build_;
  SyncPoints* const sync_points_;

  // The builds waiting (Schedule), guarded by builds_mu_: queued_ names every
  // partition queued or being built; rows_bytes_ counts the copied rows in
  // queue_.
  std::mutex builds_mu_;
  std::set<std::pair<uint64_t, std::string>> queued_;
  std::deque<QueuedBuild> queue_;
  size_t rows_bytes_ = 0;
  // The partition being built (at most one), its hash for a lock-free check
  // (0 = none), and the signal that a build ended.
  std::optional<std::pair<uint64_t, std::string>> building_;  // guarded by builds_mu_
  std::atomic<uint64_t> building_hash_{0};
  // The nice value the thread runs its builds at now, as read back from the
  // kernel after each change (a refused change leaves the old value).
  std::atomic<int> build_nice_{0};
  std::condition_variable build_done_;

  std::mutex warm_mu_;
  std::condition_variable warm_cv_;
  WarmCandidates warm_candidates_{4096};  // guarded by warm_mu_
  bool builds_pending_ = false;           // queue_ grew; guarded by warm_mu_
  std::vector<Restore> restore_;          // most recently used first; guarded by warm_mu_
  std::unique_ptr<WarmStripe[]> warm_stripes_;  // null unless warming
  // Set under warm_mu_ (the thread's waits test it), read without it between builds.
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tablestone::storage
