// RocksEngine::Scan: one page of a query from a consistent snapshot
// (Learn: query-entities ordering, Learn: query-timeout-and-pagination paging), reading cached partitions from the
// PartitionCache (partition_cache.h) and everything else from RocksDB.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "storage/block_evaluator.h"
#include "storage/column_families.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_status.h"

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

// How often (in rows) the deadline is checked; reading the clock per row
// would cost more than decoding the row.
constexpr size_t kClockCheckInterval = 256;
// Rows of a cached partition filtered per EvaluateBlock call: big enough for
// tight loops, small enough that a page ending early wastes little.
constexpr size_t kBlockChunkRows = 512;

class SnapshotHolder {
 public:
  explicit SnapshotHolder(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~SnapshotHolder() { db_->ReleaseSnapshot(snapshot_); }
  SnapshotHolder(const SnapshotHolder&) = delete;
  SnapshotHolder& operator=(const SnapshotHolder&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// The page rules, shared by rows read from RocksDB and rows served from the
// cache so that both paths page identically.
class Page {
 public:
  Page(const model::ScanSpec& spec, model::ScanResult* result)
      : spec_(spec), result_(result), full_(spec.max_results == 0) {}

  // Called for each row in key order before it is examined. False = the page
  // is full (a limit, or the deadline just passed): this row is the
  // continuation and the scan ends.
  bool Admit() {
    if (!full_ && spec_.deadline && ++since_clock_check_ >= kClockCheckInterval) {
      since_clock_check_ = 0;
      if (std::chrono::steady_clock::now() >= *spec_.deadline) full_ = deadline_passed_ = result_->deadline_passed = true;
    }
    if (full_) return false;
    ++result_->rows_examined;
    return true;
  }
  // Admit() for the next `n` rows, none of which is kept: returns how many
  // were admitted (n, or fewer when the deadline passed at a row). Checks the
  // clock at exactly the rows Admit() would, so both paths page identically;
  // a cached partition skips most rows this way at a few instructions per run.
  size_t AdmitMany(size_t n) {
    if (full_) return 0;
    size_t done = 0;
    if (spec_.deadline) {
      for (;;) {
        const size_t before_check = kClockCheckInterval - 1 - since_clock_check_;  // rows admitted unchecked
        if (n - done <= before_check) break;
        since_clock_check_ += before_check;
        result_->rows_examined += before_check;
        done += before_check;
        if (!Admit()) return done;
        ++done;
      }
      since_clock_check_ += n - done;
    }
    result_->rows_examined += n - done;
    return n;
  }
  // A row to keep, whose encoded value has `value_bytes` bytes. False: it
  // would take the page past max_bytes, so the page ends before it (it is
  // the continuation); the first row of a page is always kept.
  //
  // With a row_sizer the rows are first counted by its cheap Bound(): while
  // the exact bytes so far plus the bounds so far plus this row's bound stay
  // below max_bytes, the exact sum (never larger) does too, so Bytes() alone
  // would keep the row and not fill the page either. Once that could fail,
  // the rows counted by bound get their exact Bytes() and every later row is
  // sized exactly, so the page ends at the very row Bytes() alone ends it at.
  bool Keep(model::Entity entity, size_t value_bytes) {
    const model::RowSizer* sizer = spec_.row_sizer.get();
    if (sizer == nullptr) return KeepSized(entity, value_bytes);
    if (!exact_) {
      const size_t bound = sizer->Bound(entity, value_bytes);
      // kept_bytes_ + bound_bytes_ < max_bytes while !exact_: no underflow.
      if (bound < spec_.max_bytes - (kept_bytes_ + bound_bytes_)) {
        result_->entities.push_back(std::move(entity));
        bound_value_bytes_.push_back(value_bytes);
        bound_bytes_ += bound;
        if (result_->entities.size() >= spec_.max_results) full_ = true;
        return true;
      }
      // The rows counted by bound are the page's first ones (exact_ never
      // goes back to false).
      exact_ = true;
      for (size_t i = 0; i < bound_value_bytes_.size(); ++i) {
        kept_bytes_ += sizer->Bytes(result_->entities[i], bound_value_bytes_[i]);
      }
      bound_bytes_ = 0;
    }
    return KeepSized(entity, sizer->Bytes(entity, value_bytes));
  }
  bool deadline_passed() const { return deadline_passed_; }

 private:
  // Keep() for a row of exactly `bytes` bytes; moves from `entity` if kept.
  // Inlined, by reference: the row is moved once, as before the bounds.
  [[gnu::always_inline]] bool KeepSized(model::Entity& entity, size_t bytes) {
    if (!result_->entities.empty() && bytes > spec_.max_bytes - std::min(kept_bytes_, spec_.max_bytes)) {
      full_ = true;
      return false;
    }
    result_->entities.push_back(std::move(entity));
    kept_bytes_ += bytes;
    if (result_->entities.size() >= spec_.max_results || kept_bytes_ >= spec_.max_bytes) full_ = true;
    return true;
  }

  const model::ScanSpec& spec_;
  model::ScanResult* result_;
  // Exact bytes of the rows sized by Bytes() (all of them without a row_sizer).
  size_t kept_bytes_ = 0;
  // With a row_sizer, until exact_: the page's rows were counted by Bound(),
  // bound_bytes_ their sum, bound_value_bytes_ their value sizes (to size
  // them exactly later).
  bool exact_ = false;
  size_t bound_bytes_ = 0;
  std::vector<size_t> bound_value_bytes_;
  size_t since_clock_check_ = 0;
  // Once a limit is hit, the next row found (in any later range) becomes the
  // continuation; if there is none, the scan is complete.
  bool full_;
  bool deadline_passed_ = false;
};

// Serves the rows of a cached partition inside [lower, upper). Sets *ended
// when the page ended inside it (result->next is then set).
Status ServeCached(const CachedPartition& entry, std::string_view lower, std::string_view upper,
                   const model::ScanSpec& spec, Page* page, model::ScanResult* result, bool* ended) {
  const RowBlock& block = entry.block;
  const size_t begin = entry.LowerBound(lower);
  const size_t end = entry.LowerBound(upper);
  // The predicate's $filter runs over the columns; its rest (if any) on the
  // rows that filter keeps (model::RowPredicate's contract). A predicate
  // without an expression is tested row by row.
  const model::RowPredicate* predicate = spec.predicate.get();
  const model::FilterExpr* expr = predicate != nullptr ? predicate->columnar() : nullptr;
  uint8_t keep[kBlockChunkRows];
  for (size_t chunk = begin; chunk < end; chunk += kBlockChunkRows) {
    const size_t chunk_end = std::min(end, chunk + kBlockChunkRows);
    if (expr != nullptr) {
      EvaluateBlock(*expr, block, chunk, chunk_end, keep);
    } else if (predicate != nullptr) {
      for (size_t i = chunk; i < chunk_end; ++i) keep[i - chunk] = predicate->Matches(block.RowEntity(i)) ? 1 : 0;
    } else {
      std::fill(keep, keep + (chunk_end - chunk), uint8_t{1});
    }
    for (size_t i = chunk; i < chunk_end; ++i) {
      // The run of rows not kept up to the next kept one, admitted at once.
      const void* kept = std::memchr(keep + (i - chunk), 1, chunk_end - i);
      const size_t next_kept = kept == nullptr ? chunk_end : chunk + (static_cast<const uint8_t*>(kept) - keep);
      const size_t admitted = page->AdmitMany(next_kept - i);
      i += admitted;
      if (i < next_kept || (i < chunk_end && !page->Admit())) {
        result->next = model::EntityKey{std::string(block.partition_key), std::string(block.row_keys[i])};
        *ended = true;
        return Status::Ok();
      }
      if (i == chunk_end) break;
      model::Entity row;
      TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(entry.values[i], &row));
      row.partition_key.assign(block.partition_key);
      row.row_key.assign(block.row_keys[i]);
      if (expr != nullptr && !predicate->MatchesRest(row)) continue;  // examined, not kept
      if (!page->Keep(std::move(row), entry.values[i].size())) {
        result->next = model::EntityKey{std::string(block.partition_key), std::string(block.row_keys[i])};
        *ended = true;
        return Status::Ok();
      }
    }
  }
  return Status::Ok();
}

// The partition the iterator is in, and the cache entry being built for it
// while the scan reads it from its first row.
struct ScanPartition {
  std::string partition_key;
  std::string prefix;  // PartitionStart(table, partition_key)
  std::string end;     // PartitionEnd(table, partition_key)
  size_t stripe = 0;
  std::optional<PartitionBuilder> builder;
  // Entered at its first row, admission not asked yet: ShouldBuild takes the
  // cache's lock, so it waits for the partition's second row (a one-row
  // partition is never cached, kMinCachedRows). first_key/first_value keep
  // that first row for the builder (buffers reused across partitions).
  bool undecided = false;
  std::string first_key;
  std::string first_value;
};

void EnterPartition(uint64_t table_id, std::string_view partition_key, size_t stripe, ScanPartition* part) {
  part->partition_key.assign(partition_key);
  PartitionStart(table_id, partition_key, &part->prefix);
  PartitionEnd(table_id, partition_key, &part->end);
  part->stripe = stripe;
  part->builder.reset();
  part->undecided = false;
}

// Asks the cache's admission (ShouldBuild) for an undecided partition and, if
// admitted, starts its builder, with the saved first row when
// `add_first_row` (false when the iterator is still at that row).
Status DecideBuild(PartitionCache* cache, uint64_t table_id, uint64_t use_clock, bool add_first_row,
                   ScanPartition* part) {
  part->undecided = false;
  if (!cache->ShouldBuild(table_id, part->partition_key, part->stripe, use_clock)) return Status::Ok();
  part->builder.emplace(part->prefix, part->partition_key);
  if (!add_first_row) return Status::Ok();
  model::Entity first;
  uint64_t row_table = 0;
  if (!DecodeEntityKey(part->first_key, &row_table, &first.partition_key, &first.row_key)) {
    return Status::Corruption("entity key is malformed");
  }
  TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(part->first_value, &first));
  part->builder->Add(std::string_view(part->first_key).substr(part->prefix.size()), first, part->first_value);
  return Status::Ok();
}

void AddToBuilder(const PartitionCache& cache, std::string_view key, const model::Entity& row,
                  std::string_view value, ScanPartition* part) {
  part->builder->Add(key.substr(part->prefix.size()), row, value);
  // Larger than the whole cache: it could never be inserted.
  if (part->builder->approx_bytes() > cache.capacity_bytes()) part->builder.reset();
}

// The G0 and use clock of one scan (partition_cache.h).
struct ScanClocks {
  uint64_t g0 = 0;
  uint64_t use = 0;
};

// The partition was read whole: offer it to the cache. `next_key` is the key
// the iterator found after it (CachedPartition::next_key).
void CacheBuilt(PartitionCache* cache, uint64_t table_id, const ScanClocks& clocks, std::string_view next_key,
                ScanPartition* part) {
  if (part->builder && part->builder->row_count() >= kMinCachedRows) {
    cache->Insert(table_id, part->partition_key, part->stripe, clocks.g0, clocks.use,
                  part->builder->Finish(std::string(next_key), clocks.g0));
  }
  part->builder.reset();
}

// CachedPartition::next_key when the iterator ran out at the range's upper
// bound: only the end of the table says that no row follows.
std::string NextKeyAtRangeEnd(uint64_t table_id, std::string_view upper) {
  std::string table_end = TableEnd(table_id);
  return upper >= std::string_view(table_end) ? table_end : std::string();
}

// After the page filled up inside a partition being built: reads the rest of
// it (not examined, not returned) so that the next page finds it cached.
// Gives up (drops the builder, sets result->deadline_passed) once
// spec.deadline passes: the page is complete, and a caller with a short
// deadline (a query tried on an I/O thread first) must not be held up by the
// cache fill; it can run the query again where time is not short.
Status DrainIntoBuilder(PartitionCache* cache, uint64_t table_id, const ScanClocks& clocks, rocksdb::Iterator* it,
                        std::string_view upper, const model::ScanSpec& spec, model::ScanResult* result,
                        model::Entity* row, ScanPartition* part) {
  uint64_t row_table = 0;
  size_t since_clock_check = 0;
  for (; it->Valid() && part->builder; it->Next()) {
    const std::string_view k = View(it->key());
    if (!k.starts_with(part->prefix)) break;  // the next partition: this one is complete
    if (spec.deadline && ++since_clock_check >= kClockCheckInterval) {
      since_clock_check = 0;
      if (std::chrono::steady_clock::now() >= *spec.deadline) {
        part->builder.reset();
        result->deadline_passed = true;
        return Status::Ok();
      }
    }
    if (!DecodeEntityKey(k, &row_table, &row->partition_key, &row->row_key)) {
      return Status::Corruption("entity key is malformed");
    }
    const std::string_view v = View(it->value());
    TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(v, row));
    AddToBuilder(*cache, k, *row, v, part);
  }
  TABLESTONE_RETURN_IF_ERROR(FromRocks(it->status(), "scanning entities"));
  // Stopped by the range's upper bound: complete only if that is past the partition.
  if (it->Valid()) {
    CacheBuilt(cache, table_id, clocks, View(it->key()), part);
  } else if (upper >= std::string_view(part->end)) {
    CacheBuilt(cache, table_id, clocks, NextKeyAtRangeEnd(table_id, upper), part);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<model::ScanResult> RocksEngine::Scan(const TableInfo& table, const model::ScanSpec& spec) {
  GatePass pass(gate_);
  if (!pass.ok()) return Status::ShuttingDown("storage engine is closed");
  const std::shared_ptr<TableState> state = FindLiveTable(table.id);
  if (!state) return Status::TableNotFound("the table specified does not exist");
  model::ScanResult result;
  if (spec.match_nothing) return result;

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

  // G0 before the snapshot: the order partition_cache.h's argument rests on.
  ScanClocks clocks;
  if (scan_cache_) clocks = {scan_cache_->Sequence(), scan_cache_->UseClock()};
  SnapshotHolder snapshot(db_);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();

  model::Entity row;
  uint64_t row_table = 0;
  Page page(spec, &result);
  ScanPartition part;
  for (auto& [lower, upper] : ranges) {
    if (!resume.empty()) {
      if (resume >= upper) continue;  // range entirely before the resume point
      if (resume > lower) lower = resume;
    }
    if (lower >= upper) continue;
    rocksdb::Slice upper_bound(upper);
    ro.iterate_upper_bound = &upper_bound;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kEntitiesCf)));
    bool in_partition = false;  // part describes the iterator's partition
    it->Seek(lower);
    while (it->Valid()) {
      const std::string_view k = View(it->key());
      if (!DecodeEntityKey(k, &row_table, &row.partition_key, &row.row_key)) {
        return Status::Corruption("entity key is malformed");
      }
      if (scan_cache_ && (!in_partition || row.partition_key != part.partition_key)) {
        // The previous partition was read to its end: cache it if it was read whole.
        if (in_partition) CacheBuilt(scan_cache_.get(), table.id, clocks, k, &part);
        EnterPartition(table.id, row.partition_key, StripeIndex(table.id, row.partition_key), &part);
        in_partition = true;
        if (auto entry = scan_cache_->Lookup(table.id, part.partition_key, part.stripe, clocks.g0)) {
          // Serve cached partitions one after another. An entry's next_key
          // names the next partition while the table has had no write since
          // the entry's snapshot (CachedPartition): then a cached next
          // partition is served without seeking RocksDB (a seek costs more
          // than filtering a thousand cached rows).
          std::string resume_at;  // a copy: part and entry change below
          while (entry) {
            bool ended = false;
            TABLESTONE_RETURN_IF_ERROR(ServeCached(*entry, lower, upper, spec, &page, &result, &ended));
            if (ended) return result;
            resume_at = part.end;
            if (entry->next_key.empty() || state->last_write_stamp.load() > entry->built_g0) break;
            resume_at = entry->next_key;
            if (resume_at >= upper) break;
            if (!DecodeEntityKey(resume_at, &row_table, &row.partition_key, &row.row_key)) {
              return Status::Corruption("entity key is malformed");
            }
            const size_t next_stripe = StripeIndex(table.id, row.partition_key);
            auto next = scan_cache_->Lookup(table.id, row.partition_key, next_stripe, clocks.g0);
            if (!next) break;
            EnterPartition(table.id, row.partition_key, next_stripe, &part);
            entry = std::move(next);
          }
          if (resume_at >= upper) break;  // the range is done
          it->Seek(resume_at);
          continue;
        }
        // Only a partition entered at its first row can be cached whole.
        if (std::string_view(lower) <= std::string_view(part.prefix)) {
          part.undecided = true;
          part.first_key.assign(k);
          part.first_value.assign(View(it->value()));
        }
      } else if (part.undecided) {  // the partition's second row
        TABLESTONE_RETURN_IF_ERROR(DecideBuild(scan_cache_.get(), table.id, clocks.use, true, &part));
      }
      if (!page.Admit()) {
        result.next = model::EntityKey{row.partition_key, row.row_key};
        // Finish reading the partition for the cache, unless time is up.
        if (part.undecided && !page.deadline_passed()) {
          TABLESTONE_RETURN_IF_ERROR(DecideBuild(scan_cache_.get(), table.id, clocks.use, k != part.first_key, &part));
        }
        if (part.builder && !page.deadline_passed()) {
          TABLESTONE_RETURN_IF_ERROR(DrainIntoBuilder(scan_cache_.get(), table.id, clocks, it.get(), upper, spec, &result, &row, &part));
        }
        return result;
      }
      const std::string_view v = View(it->value());
      TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(v, &row));
      if (part.builder) AddToBuilder(*scan_cache_, k, row, v, &part);
      if ((!spec.predicate || spec.predicate->Matches(row)) && !page.Keep(row, v.size())) {
        result.next = model::EntityKey{row.partition_key, row.row_key};
        return result;
      }
      it->Next();
    }
    TABLESTONE_RETURN_IF_ERROR(FromRocks(it->status(), "scanning entities"));
    // The range ended: the partition was read whole iff the range covers its end.
    if (in_partition && std::string_view(upper) >= std::string_view(part.end)) {
      CacheBuilt(scan_cache_.get(), table.id, clocks, NextKeyAtRangeEnd(table.id, upper), &part);
    }
    part.builder.reset();
  }
  return result;
}

}  // namespace tablestone::storage
