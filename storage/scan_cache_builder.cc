#include "storage/scan_cache_builder.h"

#include <algorithm>
#include <unordered_map>

#include "storage/thread_priority.h"

namespace tablestone::storage {
namespace {

// building_hash_ of a partition: never 0.
uint64_t BuildHash(uint64_t table_id, std::string_view partition_key) {
  return (std::hash<std::string_view>()(partition_key) ^ (table_id * 0x9E3779B97F4A7C15ull)) | 1;
}

}  // namespace

ScanCacheBuilder::ScanCacheBuilder(PartitionCache& cache, Options options, BuildPartition build,
                                   SyncPoints* sync_points)
    : cache_(cache), options_(options), build_(std::move(build)), sync_points_(sync_points) {
  if (options_.warm_after_write.count() > 0) {
    warm_stripes_ = std::make_unique<WarmStripe[]>(std::max<size_t>(1, options_.stripe_count));
  }
}

ScanCacheBuilder::~ScanCacheBuilder() { Stop(); }

void ScanCacheBuilder::Start(std::vector<Restore> restore) {
  {
    std::lock_guard lock(warm_mu_);
    restore_ = std::move(restore);
  }
  thread_ = std::thread([this] { Run(); });
}

void ScanCacheBuilder::Stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(warm_mu_);
      stop_.store(true);
    }
    warm_cv_.notify_all();
    thread_.join();
  }
  std::lock_guard lock(builds_mu_);
  queue_.clear();
  queued_.clear();
  rows_bytes_ = 0;
}

void ScanCacheBuilder::Schedule(uint64_t table_id, uint64_t use_clock, std::vector<PartitionToBuild> builds) {
  {
    std::lock_guard lock(builds_mu_);
    for (PartitionToBuild& build : builds) {
      if (!queued_.emplace(table_id, build.partition_key).second) continue;  // one build is enough
      if (build.rows) {
        if (rows_bytes_ + build.rows->bytes() > cache_.capacity_bytes()) {
          build.rows.reset();
        } else {
          rows_bytes_ += build.rows->bytes();
        }
      }
      queue_.push_back(QueuedBuild{table_id, std::move(build), use_clock});
    }
    if (queue_.empty()) return;
  }
  {
    std::lock_guard lock(warm_mu_);
    builds_pending_ = true;
  }
  warm_cv_.notify_one();
}

void ScanCacheBuilder::SetBuilding(uint64_t table_id, std::string_view partition_key) {
  building_.emplace(table_id, partition_key);
  building_hash_.store(BuildHash(table_id, partition_key));
}

void ScanCacheBuilder::ClearBuilding() {
  {
    std::lock_guard lock(builds_mu_);
    if (building_) queued_.erase(*building_);
    building_.reset();
    building_hash_.store(0);
  }
  build_done_.notify_all();
  SyncPoint(sync_points_, "ScanCacheBuilder::BuildDone");
}

bool ScanCacheBuilder::RunOneQueuedBuild() {
  QueuedBuild next;
  {
    std::lock_guard lock(builds_mu_);
    if (queue_.empty()) return false;
    next = std::move(queue_.front());
    queue_.pop_front();
    if (next.build.rows) rows_bytes_ -= next.build.rows->bytes();
    SetBuilding(next.table_id, next.build.partition_key);
  }
  SyncPoint(sync_points_, "ScanCacheBuilder::BuildStarted");
  build_(next.table_id, next.build, next.use_clock, nullptr);
  ClearBuilding();
  return true;
}

bool ScanCacheBuilder::AwaitRunning(uint64_t table_id, std::string_view partition_key,
                                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  const uint64_t hash = BuildHash(table_id, partition_key);
  if (building_hash_.load(std::memory_order_relaxed) != hash) return false;
  const auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  const auto until = deadline ? std::min(*deadline, cap) : cap;
  std::unique_lock lock(builds_mu_);
  const auto running = [&] {
    return building_ && building_->first == table_id && building_->second == partition_key;
  };
  if (!running()) return false;
  // Read under builds_mu_: the builder sets its nice before SetBuilding.
  if (build_nice_.load(std::memory_order_relaxed) > ThreadNice(CurrentThreadId())) {
    lock.unlock();
    SyncPoint(sync_points_, "ScanCacheBuilder::ReadAround");
    return false;
  }
  lock.unlock();
  SyncPoint(sync_points_, "ScanCacheBuilder::Awaiting");
  lock.lock();
  build_done_.wait_until(lock, until, [&] { return !running(); });
  return true;
}

void ScanCacheBuilder::NoteWrite(uint64_t table_id, std::string_view partition_key, size_t stripe, size_t rows) {
  WarmStripe& w = warm_stripes_[stripe];
  const uint64_t before = w.rows.fetch_add(rows, std::memory_order_relaxed);
  const uint64_t epoch = w.epoch.load(std::memory_order_relaxed);
  // Still filling the partition noted last in this stripe: counted above.
  if (w.memo_epoch == epoch && w.memo_table == table_id && w.memo_partition_key == partition_key) return;
  w.memo_table = table_id;
  w.memo_partition_key.assign(partition_key);
  w.memo_epoch = epoch;
  bool first = false;
  {
    std::lock_guard lock(warm_mu_);
    first = warm_candidates_.empty();
    warm_candidates_.Note(table_id, partition_key, stripe, before);
  }
  SyncPoint(sync_points_, "ScanCacheBuilder::CandidateNoted");
  // The thread sleeps without a timeout only while there is no candidate.
  if (first) warm_cv_.notify_one();
}

bool ScanCacheBuilder::BuildUnqueued(uint64_t table_id, std::string_view partition_key, size_t stripe,
                                     uint64_t use_clock, bool* refused_for_room, size_t* rows) {
  {
    std::lock_guard lock(builds_mu_);
    if (queued_.contains({table_id, std::string(partition_key)})) return false;  // built from that queue
    SetBuilding(table_id, partition_key);
  }
  SyncPoint(sync_points_, "ScanCacheBuilder::BuildStarted");
  PartitionToBuild build{std::string(partition_key), stripe, std::nullopt, {}, 0};
  const bool kept = build_(table_id, build, use_clock, rows);
  *refused_for_room = !kept && cache_.RefusedForRoom(use_clock);
  {
    // Not erased from queued_: a scan that queued the partition meanwhile
    // owns that entry, and its build finds the cache entry fresh.
    std::lock_guard lock(builds_mu_);
    building_.reset();
    building_hash_.store(0);
  }
  build_done_.notify_all();
  SyncPoint(sync_points_, "ScanCacheBuilder::BuildDone");
  return true;
}

void ScanCacheBuilder::Run() {
  // Every build runs at the admission's nice, the long lane's: the queries
  // that asked for a build, the queries of the last run for a restore and
  // the first queries after a load for a warm build come back for these
  // partitions, so a query that meets one waits for it at its own priority
  // and is served from the cache. Not nice 19 for the warm builds: beside
  // processes at the default priority a nice-19 thread gets ~1.5% of a core,
  // so the partitions a load filled would not be built before the first
  // query (docs/benchmarks.md, "A busy machine"); and an unprivileged thread
  // cannot come back from 19 (thread_priority.h), so one warm build would
  // leave every later build at 19. A refused change leaves the thread as it
  // was, and build_nice_ says so (AwaitRunning compares it).
  const pid_t tid = CurrentThreadId();
  (void)SetThreadNice(tid, std::clamp(options_.admission_nice, 0, 19));
  build_nice_.store(ThreadNice(tid));
  const std::chrono::steady_clock::duration quiet = options_.warm_after_write;
  // The use clock at the start of the current burst of candidates; a burst
  // ends when no candidate is left.
  std::optional<uint64_t> burst_clock;
  // When the warmer looks at its candidates next; kNotSet until a look is due.
  constexpr auto kNotSet = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point next_look = kNotSet;
  bool cache_full = false;  // an entry of this burst was refused for want of room
  const auto rows_of = [this](size_t stripe) { return warm_stripes_[stripe].rows.load(std::memory_order_relaxed); };
  std::vector<size_t> forgotten;
  // The rows of the partitions warmed lately (key: the cache key): a
  // partition is warmed again only after writes of at least a quarter of its
  // rows, so the warmer's work stays within four times the rows written.
  std::unordered_map<std::string, size_t> warmed_rows;
  bool restoring = !restore_.empty();
  std::unique_lock lock(warm_mu_);
  while (!stop_.load()) {
    if (builds_pending_) {  // the admission's builds first: a scan asked for them
      builds_pending_ = false;
      lock.unlock();
      while (!stop_.load(std::memory_order_relaxed) && RunOneQueuedBuild()) {
      }
      lock.lock();
      continue;
    }
    if (!restore_.empty()) {
      const Restore r = std::move(restore_.front());
      restore_.erase(restore_.begin());
      lock.unlock();
      bool refused = false;
      BuildUnqueued(r.table_id, r.partition_key, r.stripe, cache_.UseClock(), &refused);
      lock.lock();
      // Full: the rest (used less recently before the close) would be refused too.
      if (refused) restore_.clear();
      continue;
    }
    if (restoring) {
      restoring = false;
      lock.unlock();
      SyncPoint(sync_points_, "ScanCacheBuilder::RestoresDone");
      lock.lock();
      continue;
    }
    if (warm_candidates_.empty()) {
      burst_clock.reset();
      next_look = kNotSet;
      cache_full = false;
      warm_cv_.wait(lock);
      continue;
    }
    if (!burst_clock) burst_clock = cache_.UseClock();
    // One look per `quiet`: a candidate whose stripe saw no write between two
    // looks is due (warm_candidates.h).
    const auto now = std::chrono::steady_clock::now();
    if (next_look == kNotSet) next_look = now + quiet;
    if (now < next_look) {
      warm_cv_.wait_until(lock, next_look);
      continue;
    }
    next_look = kNotSet;
    forgotten.clear();
    std::vector<WarmCandidates::Ready> ready = warm_candidates_.Take(rows_of, kMinCachedRows, &forgotten);
    for (size_t stripe : forgotten) warm_stripes_[stripe].epoch.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    for (WarmCandidates::Ready& r : ready) {
      if (cache_full || stop_.load(std::memory_order_relaxed)) break;
      // The builds a scan asked for meanwhile go first.
      while (!stop_.load(std::memory_order_relaxed) && RunOneQueuedBuild()) {
      }
      const std::string key = PartitionCache::CacheKey(r.table_id, r.partition_key);
      if (auto known = warmed_rows.find(key); known != warmed_rows.end() && r.rows * 4 < known->second) continue;
      if (cache_.KnownTooLarge(r.table_id, r.partition_key)) {
        SyncPoint(sync_points_, "ScanCacheBuilder::SkippedTooLarge");
        continue;
      }
      size_t rows = 0;
      if (!BuildUnqueued(r.table_id, r.partition_key, r.stripe, *burst_clock, &cache_full, &rows)) continue;
      if (warmed_rows.size() >= 4096) warmed_rows.clear();  // bounded; forgetting only allows a rebuild
      warmed_rows[key] = rows;
    }
    lock.lock();
  }
}

}  // namespace tablestone::storage
