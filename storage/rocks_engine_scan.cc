// RocksEngine::Scan: one page of a query from a consistent snapshot
// (Learn: query-entities ordering, Learn: query-timeout-and-pagination paging): the rows of each
// key range come from a PartitionSource (cached partitions from the PartitionCache,
// partition_cache.h, everything else from RocksDB), are filtered and go into the Page.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/column_families.h"
#include "storage/encoded_filter.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_read.h"
#include "storage/rocks_status.h"
#include "storage/scan_page.h"

namespace tablestone::storage {
namespace {

using model::KeyBound;

// Encoded [lower, upper) for one KeyRange; see the KeyBound contract in
// storage/model/scan_spec.h.
std::string LowerKey(uint64_t id, const std::optional<KeyBound>& b) {
  if (!b) return TableStart(id);
  if (b->row_key) {
    std::string point = EncodeEntityKey(id, b->partition_key, *b->row_key);
    return b->inclusive ? point : KeySuccessor(point);
  }
  return b->inclusive ? PartitionStart(id, b->partition_key) : PartitionEnd(id, b->partition_key);
}

std::string UpperKey(uint64_t id, const std::optional<KeyBound>& b) {
  if (!b) return TableEnd(id);
  if (b->row_key) {
    std::string point = EncodeEntityKey(id, b->partition_key, *b->row_key);
    return b->inclusive ? KeySuccessor(point) : point;
  }
  return b->inclusive ? PartitionEnd(id, b->partition_key) : PartitionStart(id, b->partition_key);
}

// The partition the iterator is in.
struct ScanPartition {
  std::string partition_key;
  std::string prefix;  // PartitionStart(table, partition_key)
  std::string end;     // PartitionEnd(table, partition_key)
  size_t stripe = 0;
  // Entered at its first row, admission not asked yet: ShouldBuild takes the
  // cache's lock, so it waits for the partition's second row (a one-row
  // partition is never cached, kMinCachedRows). first_key/first_value keep
  // that first row for the copy below (buffers reused across partitions).
  bool undecided = false;
  std::string first_key;
  std::string first_value;
  // Admitted: its rows so far, for its build (PartitionToBuild::rows).
  std::optional<CopiedRows> copied;
};

void EnterPartition(uint64_t table_id, std::string_view partition_key, size_t stripe, ScanPartition* part) {
  part->partition_key.assign(partition_key);
  PartitionStart(table_id, partition_key, &part->prefix);
  PartitionEnd(table_id, partition_key, &part->end);
  part->stripe = stripe;
  part->undecided = false;
  part->copied.reset();
}

// The G0 and use clock of one scan (partition_cache.h).
struct ScanClocks {
  uint64_t g0 = 0;
  uint64_t use = 0;
};

// CachedPartition::next_key when the iterator ran out at the range's upper
// bound: only the end of the table says that no row follows.
std::string NextKeyAtRangeEnd(uint64_t table_id, std::string_view upper) {
  std::string table_end = TableEnd(table_id);
  return upper >= std::string_view(table_end) ? table_end : std::string();
}

// Asks the cache's admission (ShouldBuild) for an undecided partition: true
// if admitted.
bool DecideBuild(PartitionCache* cache, uint64_t table_id, uint64_t use_clock, ScanPartition* part) {
  part->undecided = false;
  return cache->ShouldBuild(table_id, part->partition_key, part->stripe, use_clock);
}

// Scan-cache lookups of one scan, added to the engine's counters once when
// the scan returns (whichever way), so a scan over many partitions costs one
// atomic add per counter, not one per partition.
class CacheLookupTally {
 public:
  CacheLookupTally(std::atomic<uint64_t>* hits, std::atomic<uint64_t>* misses) : hits_(hits), misses_(misses) {}
  ~CacheLookupTally() { Flush(); }
  // Adds the counts to the engine's counters now (ScanState::Invalidate).
  void Flush() {
    if (hit_count_ > 0) hits_->fetch_add(hit_count_, std::memory_order_relaxed);
    if (miss_count_ > 0) misses_->fetch_add(miss_count_, std::memory_order_relaxed);
    hit_count_ = miss_count_ = 0;
  }
  CacheLookupTally(const CacheLookupTally&) = delete;
  CacheLookupTally& operator=(const CacheLookupTally&) = delete;
  // Counts one lookup; returns `hit`.
  bool Count(bool hit) {
    ++(hit ? hit_count_ : miss_count_);
    return hit;
  }

 private:
  std::atomic<uint64_t>* hits_;
  std::atomic<uint64_t>* misses_;
  uint64_t hit_count_ = 0;
  uint64_t miss_count_ = 0;
};

// What PartitionSource::Next found.
enum class SourceStep {
  kRow,     // a row read from RocksDB: row() has its keys, ReadValue() the rest
  kCached,  // a cached partition, whole: cached(), to be served over the range
  kEnd,     // the range is done (status() says whether it ended in error)
};

// The rows of a scan's key ranges, partition by partition, from the scan cache
// or from RocksDB: "from the cache or from RocksDB" stops here, so that
// RocksEngine::Scan is the iterate-filter-page loop. A partition in the cache
// comes as a whole; any other row comes one at a time from a RocksDB iterator
// over the scan's snapshot. Behind it: the cache lookup at each partition
// entered, the hop from a cached partition to the next without a seek while
// the table is unwritten (CachedPartition::next_key), and, for partitions read
// from RocksDB, admission (asked at a partition's second row, so a one-row
// partition takes no cache lock; the admitted ones are listed in *admitted for
// the engine to build after the scan, so that no query pays for a build).
// `stripe_count` is the engine's lock stripes (LockStripe); `builder` (null
// without a cache) is asked to wait for a partition it is building.
class PartitionSource {
 public:
  using Deadline = std::optional<std::chrono::steady_clock::time_point>;
  PartitionSource(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const rocksdb::Snapshot* snapshot,
                  PartitionCache* cache, const std::atomic<uint64_t>& last_write_stamp, uint64_t table_id,
                  const ScanClocks& clocks, size_t stripe_count, ScanCacheBuilder* builder,
                  Deadline deadline, CacheLookupTally* tally, std::vector<PartitionToBuild>* admitted,
                  size_t fill_cache_bytes)
      : db_(db), cf_(cf), cache_(cache), last_write_stamp_(last_write_stamp), table_id_(table_id), clocks_(clocks),
        stripe_count_(stripe_count), builder_(builder), deadline_(deadline), tally_(tally),
        admitted_(admitted), fill_cache_bytes_(fill_cache_bytes) {
    ro_.snapshot = snapshot;
    // The only range tombstones are those of deleted tables (DeleteTable),
    // and a table id is never reused: none can cover a live table's rows, so
    // the iterator need not check every key against them.
    ro_.ignore_range_deletions = true;
  }

  // Starts reading [lower, upper) (encoded keys, lower < upper; both outlive
  // the range's reading).
  void StartRange(std::string_view lower, std::string_view upper) {
    lower_ = lower;
    upper_ = upper;
    upper_bound_ = rocksdb::Slice(upper.data(), upper.size());
    ro_.iterate_upper_bound = &upper_bound_;
    it_.reset(db_->NewIterator(ro_, cf_));
    in_partition_ = false;
    cached_.reset();
    it_->Seek(rocksdb::Slice(lower.data(), lower.size()));
    advance_ = false;
  }

  // The next row or cached partition of the range, in key order.
  SourceStep Next() {
    if (cached_) {
      if (HopToCached()) return SourceStep::kCached;
      if (cached_ended_range_) return SourceStep::kEnd;
    } else if (advance_) {
      if (ro_.fill_cache && read_bytes_ > fill_cache_bytes_) StopFillingCache();
      if (it_->Valid()) it_->Next();
    }
    advance_ = true;
    if (!it_->Valid()) return EndOfRange();
    key_ = View(it_->key());
    read_bytes_ += key_.size() + it_->value().size();
    if (in_partition_ && key_.size() > part_.prefix.size() && key_.starts_with(part_.prefix)) {
      // The previous row's partition (the prefix ends with the PartitionKey's
      // terminator, which no encoded key component contains): the RowKey is
      // decoded only if the row is looked at (ReadRowKey), so a row the
      // filter drops on its value costs no key decode.
      row_key_pending_ = true;
      if (part_.undecided && DecideBuild(cache_, table_id_, clocks_.use, &part_)) {  // the second row
        part_.copied.emplace();
        part_.copied->Append(part_.first_key, part_.first_value);
      }
    } else {
      uint64_t row_table = 0;
      if (!DecodeEntityKey(key_, &row_table, &row_.partition_key, &row_.row_key)) {
        return Fail(Status::Corruption("entity key is malformed"));
      }
      row_key_pending_ = false;
      // The previous partition was read to its end.
      if (in_partition_ && cache_ != nullptr) HandOver(key_);
      EnterPartition(table_id_, row_.partition_key,
                     cache_ != nullptr ? LockStripe(table_id_, row_.partition_key, stripe_count_) : 0, &part_);
      in_partition_ = true;
      if (cache_ != nullptr) {
        cached_ = cache_->Lookup(table_id_, part_.partition_key, part_.stripe, clocks_.g0);
        if (cached_ == nullptr && builder_ != nullptr && may_wait_ &&
            builder_->AwaitRunning(table_id_, part_.partition_key, deadline_)) {
          cached_ = cache_->Lookup(table_id_, part_.partition_key, part_.stripe, clocks_.g0);
        }
        if (tally_->Count(cached_ != nullptr)) return SourceStep::kCached;
        // Only a partition entered at its first row can be cached whole.
        if (lower_ <= std::string_view(part_.prefix)) {
          part_.undecided = true;
          part_.first_key.assign(key_);
          CopyIteratorBytes(it_->value(), &part_.first_value);
        }
      }
    }
    if (part_.copied) {
      part_.copied->Append(key_, View(it_->value()));
      // Larger than the largest entry: it could never be inserted.
      if (part_.copied->bytes() > cache_->max_entry_bytes()) part_.copied.reset();
    }
    return SourceStep::kRow;
  }

  // After kRow: the row (its PartitionKey; its RowKey after ReadRowKey(); the
  // rest after ReadValue()). A scratch buffer the next call overwrites.
  model::Entity& row() { return row_; }
  // After kRow: decodes the row's RowKey into row() if not done yet.
  Status ReadRowKey() {
    if (!row_key_pending_) return Status::Ok();
    row_key_pending_ = false;
    if (!DecodeEntityRowKey(key_, part_.prefix.size(), &row_.row_key)) {
      return Status::Corruption("entity key is malformed");
    }
    return Status::Ok();
  }
  // After kRow: decodes the row's RowKey and value into row(): only the
  // properties in `select` unless that is null or empty (DecodeEntityValue).
  Status ReadValue(const std::vector<std::string>* select) {
    TABLESTONE_RETURN_IF_ERROR(ReadRowKey());
    const std::string_view v = View(it_->value());
    value_bytes_ = v.size();
    return DecodeEntityValue(v, &row_, select);
  }
  size_t value_bytes() const { return value_bytes_; }
  // After kRow: the row's encoded value (valid until the next call).
  std::string_view value() const { return View(it_->value()); }
  // After kCached: the partition to serve.
  const std::shared_ptr<const CachedPartition>& cached() const { return cached_; }
  Status status() const { return status_; }
  // A continued scan's deadline (ScanSpec::resume_scan).
  void set_deadline(Deadline deadline) { deadline_ = deadline; }
  // Whether the scan may wait for the builder's build of a partition it
  // reaches (AwaitRunning). A scan with a CPU budget is tried on an I/O
  // thread (model::ScanRun::cpu_budget), which must not block on storage
  // work: it reads the partition around the build instead, and the rest of
  // the page, continued off the I/O thread, may wait. Pinned by
  // WarmedScanTest.AScanTriedOnAnIoThreadReadsAroundTheBuild.
  void set_may_wait(bool may_wait) { may_wait_ = may_wait; }

  // The page ended at the current (kRow) row, inside its partition:
  // admission is asked for the partition if not yet, and if admitted it is
  // built from a snapshot of its own, so that the next page may find it
  // cached.
  void PageEnded() {
    if (part_.undecided ? DecideBuild(cache_, table_id_, clocks_.use, &part_) : part_.copied.has_value()) {
      admitted_->push_back(PartitionToBuild{part_.partition_key, part_.stripe, std::nullopt, {}, 0});
    }
    part_.copied.reset();
  }

 private:
  // After a cached partition: serves the next partition from the cache if
  // the entry names it, the table had no write since, and it is cached
  // (true); else seeks RocksDB past the cached partition (false; sets
  // cached_ended_range_ when that is past the range).
  bool HopToCached() {
    cached_ended_range_ = false;
    std::string resume_at = part_.end;  // a copy: part_ changes below
    if (!cached_->next_key.empty() && last_write_stamp_.load() <= cached_->built_g0) {
      resume_at = cached_->next_key;
      if (std::string_view(resume_at) < upper_) {
        uint64_t row_table = 0;
        row_key_pending_ = false;
        if (!DecodeEntityKey(resume_at, &row_table, &row_.partition_key, &row_.row_key)) {
          cached_.reset();
          Fail(Status::Corruption("entity key is malformed"));
          cached_ended_range_ = true;
          return false;
        }
        const size_t next_stripe = LockStripe(table_id_, row_.partition_key, stripe_count_);
        if (auto next = cache_->Lookup(table_id_, row_.partition_key, next_stripe, clocks_.g0);
            tally_->Count(next != nullptr)) {
          EnterPartition(table_id_, row_.partition_key, next_stripe, &part_);
          cached_ = std::move(next);
          return true;
        }
      }
    }
    cached_.reset();
    if (std::string_view(resume_at) >= upper_) {
      cached_ended_range_ = true;  // the range is done
      return false;
    }
    it_->Seek(resume_at);
    advance_ = false;
    return false;
  }

  // The scan has read more than fill_cache_bytes_: from the current row on,
  // its blocks are read without adding them to the block cache (EngineOptions::
  // scan_fill_cache_bytes). ReadOptions are fixed per iterator, so a new one
  // on the same snapshot is positioned at the current row.
  void StopFillingCache() {
    ro_.fill_cache = false;
    const std::string at(key_);
    it_.reset(db_->NewIterator(ro_, cf_));
    it_->Seek(rocksdb::Slice(at.data(), at.size()));
  }

  // The iterator ran out at the range's end: the partition was read whole
  // iff the range covers its end; if not, an admitted one is built from a
  // snapshot of its own.
  SourceStep EndOfRange() {
    status_ = FromRocks(it_->status(), "scanning entities");
    if (status_.ok() && in_partition_ && upper_ >= std::string_view(part_.end)) {
      HandOver(NextKeyAtRangeEnd(table_id_, upper_));
    } else if (status_.ok() && part_.copied) {
      admitted_->push_back(PartitionToBuild{part_.partition_key, part_.stripe, std::nullopt, {}, 0});
    }
    part_.copied.reset();
    return SourceStep::kEnd;
  }

  // The partition was read whole, `next_key` found after it: its copied rows
  // (if admitted, and enough to be cached) go to its build.
  void HandOver(std::string_view next_key) {
    if (part_.copied && part_.copied->row_count() >= kMinCachedRows) {
      admitted_->push_back(PartitionToBuild{part_.partition_key, part_.stripe, std::move(part_.copied),
                                            std::string(next_key), clocks_.g0});
    }
    part_.copied.reset();
  }

  SourceStep Fail(Status s) {
    status_ = std::move(s);
    return SourceStep::kEnd;
  }

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  PartitionCache* cache_;  // null: no scan cache, every row from RocksDB
  const std::atomic<uint64_t>& last_write_stamp_;
  const uint64_t table_id_;
  const ScanClocks clocks_;
  size_t stripe_count_;
  ScanCacheBuilder* builder_;
  Deadline deadline_;
  bool may_wait_ = true;
  CacheLookupTally* tally_;
  std::vector<PartitionToBuild>* admitted_;
  const size_t fill_cache_bytes_;
  size_t read_bytes_ = 0;  // bytes of the rows read from RocksDB (keys and values)
  rocksdb::ReadOptions ro_;
  rocksdb::Slice upper_bound_;
  std::unique_ptr<rocksdb::Iterator> it_;

 public:
  // Releases the iterator (the engine is closing); nothing may be read after.
  void Release() { it_.reset(); }

 private:
  std::string_view lower_, upper_;
  std::string_view key_;  // the current row's key (valid until the iterator moves)
  model::Entity row_;
  size_t value_bytes_ = 0;
  bool advance_ = false;  // Next() first steps the iterator past the current row
  bool in_partition_ = false;  // part_ describes the iterator's partition
  bool row_key_pending_ = false;  // row_.row_key is not the current row's yet (ReadRowKey)
  ScanPartition part_;
  std::shared_ptr<const CachedPartition> cached_;  // set after kCached
  bool cached_ended_range_ = false;
  Status status_;
};

}  // namespace

// One scan's whole state, kept across a suspension (model::SuspendedScan):
// the ranges and where the scan is in them, its snapshot and PartitionSource
// (the RocksDB iterator, the partition being read and its copied rows for
// admission), the Page with the rows kept so far, and the partitions
// admitted. A scan suspended at a row examines that row again when
// continued; one suspended inside a cached partition serves it again from
// the row it stopped at (ScanResult::next), so the page ends at the row and
// with the `next` of an uninterrupted scan. It is registered with the
// engine's ScanRegistry from construction to destruction; Close() releases
// its iterator and snapshot (Invalidate) instead of waiting for it.
class ScanState final : public model::SuspendedScan {
 public:
  // `db`, `cache` and `builder` (may be null) and the counters outlive the scan;
  // `table_state` keeps `last_write_stamp` alive.
  ScanState(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, PartitionCache* cache,
            std::shared_ptr<const void> table_state, const std::atomic<uint64_t>& last_write_stamp,
            uint64_t table_id, const ScanClocks& clocks, size_t stripe_count,
            ScanCacheBuilder* builder, const model::ScanSpec& spec, const model::ScanRun& run,
            std::vector<std::pair<std::string, std::string>> ranges, std::string resume,
            std::atomic<uint64_t>* hits, std::atomic<uint64_t>* misses, size_t fill_cache_bytes,
            std::shared_ptr<ScanRegistry> registry)
      : registry_(std::move(registry)),
        table_state_(std::move(table_state)),
        table_id_(table_id),
        spec_(spec),
        run_(run),
        ranges_(std::move(ranges)),
        resume_(std::move(resume)),
        clocks_(clocks),
        snapshot_(db),
        cache_tally_(hits, misses),
        source_(db, cf, snapshot_.get(), cache, last_write_stamp, table_id, clocks, stripe_count, builder,
                spec.deadline, &cache_tally_, &admitted_, fill_cache_bytes),
        page_(spec_, run_, &result_) {
    spec_.resume_scan = nullptr;
    source_.set_may_wait(!run_.cpu_budget);
    Filter();
    // Made inside a gate pass, so Close has not begun: registration succeeds.
    registry_->Add(this);
  }
  ~ScanState() override {
    registry_->Remove(this);
  }
  ScanState(const ScanState&) = delete;
  ScanState& operator=(const ScanState&) = delete;

  // Releases what reads the database (the iterator, then the snapshot); the
  // state may then only be destroyed. Called by Close (ScanRegistry) or the
  // destructor, each under the registry's lock while the database is open.
  void Invalidate() {
    source_.Release();
    snapshot_.Release();
    cache_tally_.Flush();  // the counters are the engine's
  }

  uint64_t table_id() const { return table_id_; }
  uint64_t use_clock() const { return clocks_.use; }
  bool suspended() const { return suspended_; }
  model::ScanResult& result() { return result_; }
  std::vector<PartitionToBuild>& admitted() { return admitted_; }

  // Continues a suspended scan under `spec` and `run` (ScanSpec::resume_scan).
  void Resume(const model::ScanSpec& spec, const model::ScanRun& run) {
    spec_ = spec;
    run_ = run;
    spec_.resume_scan = nullptr;
    spec_.resumable = false;  // suspended at most once
    Filter();
    source_.set_deadline(spec_.deadline);
    source_.set_may_wait(!run_.cpu_budget);
    page_.Resume();
    suspended_ = false;
  }

  // Reads until the page ends, or is suspended (suspended() true).
  Status Run() {
    for (; range_ < ranges_.size(); ++range_, in_range_ = false) {
      auto& [lower, upper] = ranges_[range_];
      if (!in_range_) {
        if (!resume_.empty()) {
          if (resume_ >= upper) continue;  // range entirely before the resume point
          if (resume_ > lower) lower = resume_;
        }
        if (lower >= upper) continue;
        source_.StartRange(lower, upper);
        in_range_ = true;
      }
      for (;;) {
        const Paused paused = std::exchange(paused_, Paused::kNo);
        if (paused != Paused::kNo) result_.next.reset();
        SourceStep step = SourceStep::kRow;  // kAtRow: the row the scan stopped at, examined again
        if (paused == Paused::kInCached) {
          // The cached partition again, from the row the scan stopped at.
          EncodeEntityKey(table_id_, paused_at_.partition_key, paused_at_.row_key, &cached_from_);
          bool ended = false;
          TABLESTONE_RETURN_IF_ERROR(
              ServeCached(source_.cached(), cached_from_, upper, spec_, run_, &page_, &result_, &ended));
          if (ended) return Ended(Paused::kInCached);
          continue;
        }
        if (paused == Paused::kNo) step = source_.Next();
        if (step == SourceStep::kEnd) break;
        if (step == SourceStep::kCached) {
          bool ended = false;
          TABLESTONE_RETURN_IF_ERROR(ServeCached(source_.cached(), lower, upper, spec_, run_, &page_, &result_, &ended));
          if (ended) return Ended(Paused::kInCached);
          continue;
        }
        model::Entity& row = source_.row();
        if (!page_.Admit()) {
          TABLESTONE_RETURN_IF_ERROR(source_.ReadRowKey());
          result_.next = model::EntityKey{row.partition_key, row.row_key};
          if (!page_.deadline_passed()) source_.PageEnded();
          return Ended(Paused::kAtRow);
        }
        bool matches = true;
        if (encoded_) {
          if (encoded_->reads_row_key()) TABLESTONE_RETURN_IF_ERROR(source_.ReadRowKey());
          const EncodedFilter::Verdict verdict = encoded_->Evaluate(row.partition_key, row.row_key, source_.value());
          if (verdict == EncodedFilter::Verdict::kFalse) continue;  // examined, not kept, not decoded
          TABLESTONE_RETURN_IF_ERROR(source_.ReadValue(&spec_.select));
          // kTrue: only the predicate's rest is left; kUnknown: malformed, the
          // decode above has already failed.
          matches = spec_.predicate->MatchesRest(row);
        } else {
          // A predicate without an expression may read any property.
          TABLESTONE_RETURN_IF_ERROR(source_.ReadValue(spec_.predicate ? nullptr : &spec_.select));
          matches = !spec_.predicate || spec_.predicate->Matches(row);
        }
        // A copy: the source decodes the next row into `row`, reusing its buffers.
        if (matches && !page_.KeepCopy(row, source_.value_bytes())) {
          result_.next = model::EntityKey{row.partition_key, row.row_key};
          source_.PageEnded();
          return Status::Ok();
        }
      }
      TABLESTONE_RETURN_IF_ERROR(source_.status());
    }
    return Status::Ok();
  }

 private:
  enum class Paused { kNo, kAtRow, kInCached };

  // The $filter part of the predicate, decided from the encoded bytes of rows
  // read from RocksDB: a row the filter drops is never decoded.
  void Filter() {
    const model::FilterExpr* expr = spec_.predicate ? spec_.predicate->columnar() : nullptr;
    encoded_.reset();
    if (expr != nullptr) encoded_.emplace(*expr);
  }

  // The page ended (result_.next set) `where`: suspended instead if it was
  // the deadline and the scan may be suspended.
  Status Ended(Paused where) {
    if (!page_.deadline_passed() || !spec_.resumable || was_suspended_) return Status::Ok();
    was_suspended_ = true;
    paused_ = where;
    paused_at_ = *result_.next;
    suspended_ = true;
    return Status::Ok();
  }

  std::shared_ptr<ScanRegistry> registry_;
  std::shared_ptr<const void> table_state_;
  const uint64_t table_id_;
  model::ScanSpec spec_;  // page_ and encoded_ look into it
  model::ScanRun run_;    // page_ looks into it
  std::vector<std::pair<std::string, std::string>> ranges_;  // source_ views them
  std::string resume_;
  const ScanClocks clocks_;
  SnapshotHolder snapshot_;
  CacheLookupTally cache_tally_;
  std::vector<PartitionToBuild> admitted_;
  model::ScanResult result_;
  PartitionSource source_;  // after the snapshot: its iterator goes first
  std::optional<EncodedFilter> encoded_;
  Page page_;
  size_t range_ = 0;
  bool in_range_ = false;  // source_ is reading ranges_[range_]
  bool suspended_ = false;
  bool was_suspended_ = false;  // a scan is suspended at most once
  Paused paused_ = Paused::kNo;
  model::EntityKey paused_at_;  // result_.next when suspended
  std::string cached_from_;
};

StatusOr<model::ScanResult> RocksEngine::Scan(const TableInfo& table, const model::ScanSpec& spec,
                                              const model::ScanRun& run) {
  std::shared_ptr<ScanState> started;
  ScanState* state = nullptr;
  Status status = ScanPage(table, spec, run, &started, &state);
  // A failed scan (closed engine, no table, a read error) schedules nothing.
  StatusOr<model::ScanResult> result = model::ScanResult();
  if (!status.ok()) {
    result = std::move(status);
  } else if (state == nullptr) {
    // spec.match_nothing: no row read.
  } else if (state->suspended()) {
    model::ScanResult paused;
    paused.next = state->result().next;
    paused.rows_examined = state->result().rows_examined;
    paused.deadline_passed = true;
    paused.suspended = started;
    result = std::move(paused);
  } else {
    result = std::move(state->result());
    // Rows kept unrendered after the last rendered one (ScanResult::rendered).
    if (!result->rendered.empty()) result->rendered.resize(result->entities.size());
    if (!state->admitted().empty() && builder_ != nullptr) {
      builder_->Schedule(table.id, state->use_clock(), std::move(state->admitted()));
    }
  }
  const std::shared_ptr<spdlog::logger>& log = StorageLog();
  if (log->should_log(spdlog::level::debug)) {
    if (result.ok()) {
      log->debug("scan {}/{}: {} key range(s), read {} row(s), returned {}{}{}{}", table.account, table.name,
                 spec.ranges.empty() ? size_t{1} : spec.ranges.size(), result->rows_examined, result->entities.size(),
                 result->next ? ", more to come" : "", result->deadline_passed ? ", stopped at its deadline" : "",
                 result->suspended ? ", suspended" : "");
    } else {
      log->debug("scan {}/{} failed: {}", table.account, table.name, result.status().ToString());
    }
  }
  return result;
}

Status RocksEngine::ScanPage(const TableInfo& table, const model::ScanSpec& spec, const model::ScanRun& run,
                             std::shared_ptr<ScanState>* started,
                             ScanState** state) {
  GatePass pass(gate_);
  if (!pass.ok()) return Status::ShuttingDown("storage engine is closed");
  if (spec.resume_scan != nullptr) {
    if (!scans_->Contains(spec.resume_scan)) return Status::InvalidArgument("not a suspended scan of this engine");
    auto* suspended = static_cast<ScanState*>(spec.resume_scan);
    if (!suspended->suspended() || suspended->table_id() != table.id) {
      return Status::InvalidArgument("not a suspended scan of this table");
    }
    suspended->Resume(spec, run);
    *state = suspended;
    return suspended->Run();
  }
  std::shared_ptr<TableState> table_state = FindLiveTable(table.id);
  if (!table_state) return Status::TableNotFound("the table specified does not exist");
  if (spec.match_nothing) return Status::Ok();

  std::vector<std::pair<std::string, std::string>> ranges;
  if (spec.ranges.empty()) {
    ranges.emplace_back(TableStart(table.id), TableEnd(table.id));
  } else {
    ranges.reserve(spec.ranges.size());
    for (const model::KeyRange& r : spec.ranges) {
      ranges.emplace_back(LowerKey(table.id, r.lower), UpperKey(table.id, r.upper));
    }
  }
  if (spec.bound) {
    // Cut every range down to the bound (a SAS key range, for the server).
    const std::string bound_lower = LowerKey(table.id, spec.bound->lower);
    const std::string bound_upper = UpperKey(table.id, spec.bound->upper);
    for (auto& [lower, upper] : ranges) {
      if (lower < bound_lower) lower = bound_lower;
      if (upper > bound_upper) upper = bound_upper;
    }
  }
  std::string resume;
  if (spec.resume_from) {
    EncodeEntityKey(table.id, spec.resume_from->partition_key, spec.resume_from->row_key, &resume);
  }

  // G0 before the snapshot (the state takes it): the order partition_cache.h's argument rests on.
  ScanClocks clocks;
  if (scan_cache_) clocks = {scan_cache_->Sequence(), scan_cache_->UseClock()};
  const std::atomic<uint64_t>& last_write_stamp = table_state->last_write_stamp;
  *started = std::make_shared<ScanState>(db_, cf(kEntitiesCf), scan_cache_.get(), std::move(table_state),
                                         last_write_stamp, table.id, clocks, stripe_count_, builder_.get(), spec, run, std::move(ranges), std::move(resume),
                                         &scan_cache_hits_, &scan_cache_misses_, options_.scan_fill_cache_bytes, scans_);
  *state = started->get();
  return (*state)->Run();
}

bool ScanRegistry::Add(ScanState* state) {
  std::lock_guard lock(mu_);
  if (closed_) return false;
  live_.insert(state);
  return true;
}

void ScanRegistry::Remove(ScanState* state) {
  std::lock_guard lock(mu_);
  if (live_.erase(state) > 0) state->Invalidate();
}

bool ScanRegistry::Contains(const model::SuspendedScan* scan) {
  std::lock_guard lock(mu_);
  for (ScanState* state : live_) {
    if (static_cast<const model::SuspendedScan*>(state) == scan) return true;
  }
  return false;
}

void ScanRegistry::CloseAll() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (ScanState* state : live_) state->Invalidate();
  live_.clear();
}

}  // namespace tablestone::storage
