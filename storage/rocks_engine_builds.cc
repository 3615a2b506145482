// The scan cache's builder thread (RocksEngine::RunBuilder) and the builds it
// runs: the partitions queries admitted (ScheduleBuilds), the partitions a
// burst of writes filled (warm_after_write, storage/warm_candidates.h), and
// after an open the partitions cached at the last clean close (meta 'G',
// docs/storage-format.md). One build at a time; storage/partition_cache.h
// says when an entry may be built and kept.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/column_families.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_read.h"
#include "storage/rocks_status.h"

namespace tablestone::storage {
namespace {

// RocksEngine::building_hash_ of a partition: never 0.
uint64_t BuildHash(uint64_t table_id, std::string_view partition_key) {
  return (std::hash<std::string_view>()(partition_key) ^ (table_id * 0x9E3779B97F4A7C15ull)) | 1;
}

}  // namespace

void RocksEngine::ScheduleBuilds(uint64_t table_id, uint64_t use_clock, std::vector<PartitionToBuild> builds) {
  {
    std::lock_guard lock(builds_mu_);
    for (PartitionToBuild& build : builds) {
      // Already queued by another scan: one build is enough.
      if (!builds_queued_.emplace(table_id, build.partition_key).second) continue;
      // The copied rows waiting stay within the scan cache's size; past it a
      // build reads its partition from RocksDB instead.
      if (build.rows) {
        if (build_rows_bytes_ + build.rows->bytes() > scan_cache_->capacity_bytes()) {
          build.rows.reset();
        } else {
          build_rows_bytes_ += build.rows->bytes();
        }
      }
      build_queue_.push_back(QueuedBuild{table_id, std::move(build), use_clock});
    }
    if (build_queue_.empty()) return;
  }
  {
    std::lock_guard lock(warm_mu_);
    builds_pending_ = true;
  }
  warm_cv_.notify_one();
}

void RocksEngine::DropBuildQueue() {
  build_queue_.clear();
  builds_queued_.clear();
  build_rows_bytes_ = 0;
}

bool RocksEngine::RunOneQueuedBuild() {
  QueuedBuild next;
  {
    std::lock_guard lock(builds_mu_);
    if (build_queue_.empty()) return false;
    next = std::move(build_queue_.front());
    build_queue_.pop_front();
    if (next.build.rows) build_rows_bytes_ -= next.build.rows->bytes();
    building_.emplace(next.table_id, next.build.partition_key);
    building_hash_.store(BuildHash(next.table_id, next.build.partition_key));
  }
  BuildCachedPartition(next.table_id, next.build, next.use_clock);
  {
    std::lock_guard lock(builds_mu_);
    building_.reset();
    building_hash_.store(0);
    builds_queued_.erase({next.table_id, next.build.partition_key});
  }
  build_done_.notify_all();
  return true;
}

bool RocksEngine::AwaitRunningBuild(uint64_t table_id, std::string_view partition_key,
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
  build_done_.wait_until(lock, until, [&] { return !running(); });
  return true;
}

bool RocksEngine::BuildCachedPartition(uint64_t table_id, const PartitionToBuild& build, uint64_t use_clock,
                                       size_t* rows) {
  GatePass pass(gate_);
  if (!pass.ok() || !scan_cache_ || !FindLiveTable(table_id)) return false;
  // Built meanwhile (admitted again by a scan that started before the entry
  // was inserted): nothing to do.
  if (scan_cache_->Lookup(table_id, build.partition_key, build.stripe, scan_cache_->Sequence())) return true;
  if (build.rows) {
    // The admitting scan's rows, from its snapshot, inserted under its G0.
    std::string prefix = PartitionStart(table_id, build.partition_key);
    const size_t prefix_size = prefix.size();
    PartitionBuilder builder(std::move(prefix), build.partition_key);
    model::Entity row;
    uint64_t row_table = 0;
    const bool decoded = build.rows->ForEach([&](std::string_view k, std::string_view v) {
      if (!DecodeEntityKey(k, &row_table, &row.partition_key, &row.row_key) || !DecodeEntityValue(v, &row).ok()) {
        return false;  // corrupt: the scans that read it report it
      }
      builder.Add(k.substr(prefix_size), row, v);
      return true;
    });
    return decoded && scan_cache_->Insert(table_id, build.partition_key, build.stripe, build.g0, use_clock,
                                          builder.Finish(build.next_key, build.g0));
  }
  // G0 before the snapshot, as for a scan (partition_cache.h): the entry is
  // kept only if no write to its stripe was stamped after G0.
  const uint64_t g0 = scan_cache_->Sequence();
  SnapshotHolder snapshot(db_);
  const std::string prefix = PartitionStart(table_id, build.partition_key);
  const std::string table_end = TableEnd(table_id);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();
  const rocksdb::Slice upper(table_end);
  ro.iterate_upper_bound = &upper;  // the table's end: the key after the partition is its next_key
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kEntitiesCf)));
  PartitionBuilder builder(prefix, build.partition_key);
  model::Entity row;
  std::string value;  // the row's value copied out of RocksDB (CopyIteratorBytes)
  uint64_t row_table = 0;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    const std::string_view k = View(it->key());
    if (!k.starts_with(prefix)) break;
    CopyIteratorBytes(it->value(), &value);
    const std::string_view v = value;
    if (!DecodeEntityKey(k, &row_table, &row.partition_key, &row.row_key) || !DecodeEntityValue(v, &row).ok()) {
      return false;  // corrupt: the scans that read it report it
    }
    builder.Add(k.substr(prefix.size()), row, v);
    if (builder.approx_bytes() > scan_cache_->max_entry_bytes()) {  // could never be inserted
      scan_cache_->NoteTooLarge(table_id, build.partition_key);
      return false;
    }
    // Written meanwhile (writes resumed after the warmer saw a pause, or
    // stalled for one): Insert() would refuse the entry, so stop reading now
    // rather than build a partition that grows under the build. The warmer
    // notes the partition again at its next write.
    if ((builder.row_count() & 255) == 0 && scan_cache_->WrittenSince(build.stripe, g0)) return false;
  }
  if (rows != nullptr) *rows = builder.row_count();
  if (!it->status().ok() || builder.row_count() < kMinCachedRows) return false;
  std::string next_key = it->Valid() ? std::string(View(it->key())) : table_end;
  return scan_cache_->Insert(table_id, build.partition_key, build.stripe, g0, use_clock,
                             builder.Finish(std::move(next_key), g0));
}

void RocksEngine::NoteWarmCandidate(uint64_t table_id, std::string_view partition_key, size_t stripe, size_t rows) {
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
  // The warmer sleeps without a timeout only while there is no candidate.
  if (first) warm_cv_.notify_one();
}

bool RocksEngine::BuildUnqueued(uint64_t table_id, std::string_view partition_key, size_t stripe,
                                uint64_t use_clock, bool* refused_for_room, size_t* rows) {
  {
    std::lock_guard builds_lock(builds_mu_);
    if (builds_queued_.contains({table_id, std::string(partition_key)})) return false;  // built from that queue
    building_.emplace(table_id, partition_key);
    building_hash_.store(BuildHash(table_id, partition_key));
  }
  PartitionToBuild build{std::string(partition_key), stripe, std::nullopt, {}, 0};
  const bool kept = BuildCachedPartition(table_id, build, use_clock, rows);
  *refused_for_room = !kept && scan_cache_->RefusedForRoom(use_clock);
  {
    std::lock_guard builds_lock(builds_mu_);
    building_.reset();
    building_hash_.store(0);
  }
  build_done_.notify_all();
  return true;
}

bool RocksEngine::RestoreCachedPartition(std::string_view cache_key, uint64_t use_clock) {
  uint64_t table_id = 0;
  std::string_view partition_key;
  if (!PartitionCache::ParseCacheKey(cache_key, &table_id, &partition_key) || !FindLiveTable(table_id)) return true;
  bool refused = false;
  BuildUnqueued(table_id, partition_key, StripeIndex(table_id, partition_key), use_clock, &refused);
  return !refused;
}

void RocksEngine::RunBuilder() {
  // The admission's builds run at the long lane's nice, as when they were
  // long-lane tasks: the queries that asked for them come back at once, and
  // at nice 19 a build on a one-core server starved behind them (the third
  // to fifth drains after a restart still missed the cache). The warmer's
  // builds run at nice 19, below every request: nothing waits for them.
  // Nice rather than SCHED_IDLE: on a machine kept busy by other processes
  // an idle thread may not run for seconds, and a query that finds the
  // partition being built waits for it (AwaitRunningBuild). Failure leaves
  // the thread as it was.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  int nice = 0;
  const auto set_nice = [&](int n) {
    if (n != nice && setpriority(PRIO_PROCESS, tid, n) == 0) nice = n;
  };
  const int admission_nice = std::clamp(options_.executor.long_nice, 0, 19);
  const std::chrono::steady_clock::duration quiet = options_.warm_after_write;
  // The use clock at the start of the current burst of candidates (see the
  // header); a burst ends when no candidate is left.
  std::optional<uint64_t> burst_clock;
  std::optional<std::chrono::steady_clock::time_point> next_look;
  bool cache_full = false;  // an entry of this burst was refused for want of room
  const auto rows_of = [this](size_t stripe) { return warm_stripes_[stripe].rows.load(std::memory_order_relaxed); };
  std::vector<size_t> forgotten;
  // The rows of the partitions warmed lately (key: table id and partition
  // key): a partition is warmed again only after writes of at least a
  // quarter of its rows, so the warmer's work stays within four times the
  // rows written (a partition of 10,000 rows updated 100 rows at a time
  // with pauses would otherwise be rebuilt after every pause).
  std::unordered_map<std::string, size_t> warmed_rows;
  std::unique_lock lock(warm_mu_);
  while (!stop_builder_.load()) {
    if (builds_pending_) {  // the admission's builds first: a scan asked for them
      builds_pending_ = false;
      lock.unlock();
      set_nice(admission_nice);
      while (!stop_builder_.load(std::memory_order_relaxed) && RunOneQueuedBuild()) {
      }
      lock.lock();
      continue;
    }
    if (!restore_keys_.empty()) {
      // After open: the partitions cached at the last clean close, one per
      // turn, so that a scan's admission builds (above) go first.
      const std::string key = std::move(restore_keys_.front());
      restore_keys_.erase(restore_keys_.begin());
      lock.unlock();
      set_nice(19);
      const bool room = RestoreCachedPartition(key, scan_cache_->UseClock());
      lock.lock();
      // Full: the rest (used less recently before the close) would be
      // refused too.
      if (!room) restore_keys_.clear();
      continue;
    }
    if (warm_candidates_.empty()) {
      burst_clock.reset();
      next_look.reset();
      cache_full = false;
      warm_cv_.wait(lock);
      continue;
    }
    if (!burst_clock) burst_clock = scan_cache_->UseClock();
    // One look per `quiet`: a candidate whose stripe saw no write between two
    // looks is due (warm_candidates.h).
    const auto now = std::chrono::steady_clock::now();
    if (!next_look) next_look = now + quiet;
    if (now < *next_look) {
      warm_cv_.wait_until(lock, *next_look);
      continue;
    }
    next_look.reset();
    forgotten.clear();
    std::vector<WarmCandidates::Ready> ready = warm_candidates_.Take(rows_of, kMinCachedRows, &forgotten);
    for (size_t stripe : forgotten) warm_stripes_[stripe].epoch.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    if (!ready.empty()) set_nice(19);
    for (WarmCandidates::Ready& r : ready) {
      if (cache_full || stop_builder_.load(std::memory_order_relaxed)) break;
      const std::string key = PartitionCache::CacheKey(r.table_id, r.partition_key);
      if (auto known = warmed_rows.find(key); known != warmed_rows.end() && r.rows * 4 < known->second) continue;
      if (scan_cache_->KnownTooLarge(r.table_id, r.partition_key)) continue;
      size_t rows = 0;
      if (!BuildUnqueued(r.table_id, r.partition_key, r.stripe, *burst_clock, &cache_full, &rows)) continue;
      if (warmed_rows.size() >= 4096) warmed_rows.clear();  // bounded; forgetting only allows a rebuild
      warmed_rows[key] = rows;
    }
    lock.lock();
  }
  lock.unlock();
  std::lock_guard builds_lock(builds_mu_);
  DropBuildQueue();
}

}  // namespace tablestone::storage
