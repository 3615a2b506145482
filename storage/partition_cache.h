// PartitionCache: decoded, columnar copies of whole partitions for filtered
// scans (row_block.h), bounded by bytes, invalidated by writes.
//
// Why: a scan that iterates RocksDB costs hundreds of ns per row; filtering
// a cached columnar block costs a few ns. A partition the admission below
// accepts is built (read and decoded whole) by the engine's builder thread
// after the admitting scan (ScanCacheBuilder::Schedule, storage/scan_cache_builder.h), if it has at least
// kMinCachedRows rows: no query pays for a build. Partitions a burst of
// writes filled are built the same way (warm_candidates.h).
//
// Validity (the concurrency argument; RocksEngine follows it):
//   * sequence_ is a global counter; each lock stripe of the engine has a
//     stamp. Write() calls NoteWrite(stripe) after committing its batch,
//     still under the stripe lock and before returning (so before the client
//     is acknowledged): stamp[stripe] = ++sequence_.
//   * A scan reads G0 = Sequence() BEFORE it takes its RocksDB snapshot S.
//   * Insert(entry built from S) reads X = stamp[stripe] and keeps the entry,
//     tagged X, only if X <= G0. Then every write stamped <= X committed
//     before its stamp was set, hence before G0 was read, hence before S was
//     taken: the entry contains it. A write to the stripe that is not in S
//     sets its stamp after S, i.e. after X was read, so the stripe's stamp
//     moves past X before that write is acknowledged.
//   * An entry is valid iff its tag == the stripe's current stamp. A scan
//     serves an entry only if it is valid and its tag <= the scan's own G0
//     (so the entry holds nothing newer than the scan's snapshot; an
//     acknowledged write that completed before the scan started was stamped
//     Y <= tag, so the entry contains it).
//   Partitions sharing a stripe invalidate each other: conservative, rare.
//   DeleteTable drops the table's entries (ids are never reused, so this only
//   frees memory).
//
// Memory: entries count their real allocations (arena + vectors); the least
// recently used entries are evicted once the total passes the capacity.
//
// Admission (ShouldBuild): building an entry costs about as much as decoding
// every row of the partition, more than the uncached scan itself (which
// decodes only the rows its filter keeps), so a partition is built only
//   * on the second read of the partition from its first row with no write
//     to its stripe in between (a "ghost" remembers the first read; bounded
//     FIFO of kMaxGhosts). A query run once costs nothing for the cache;
//   * and only if that cannot evict an entry used since the scan started. A
//     scan over more data than the cache holds would otherwise evict its own
//     entries in LRU order and rebuild every partition on every pass; instead
//     the first partitions stay cached and the rest are read from RocksDB at
//     the uncached cost;
//   * and only if that cannot evict an entry used since the partition's
//     previous read. Pages of one query are scans of their own, so the rule
//     above alone let a query that pages through more partitions than the
//     cache holds evict, on every pass, the entries its next pass needs.
//
// Thread safety: every PartitionCache method may be called concurrently.
// CachedPartition is immutable once built and shared by shared_ptr, so a scan
// can keep using an entry that another thread evicts or invalidates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/model/entity.h"
#include "storage/row_block.h"

namespace tablestone::storage {

// Partitions with fewer rows are not cached: for them one cache lookup and
// the bookkeeping cost about as much as reading the rows from RocksDB.
inline constexpr size_t kMinCachedRows = 64;

// The encoded rows of one partition, copied in key order by the scan that
// admitted it, so that its build decodes them rather than reading RocksDB
// again (a copy costs a few instructions per byte; reading a row through
// RocksDB's iterator thousands).
class CopiedRows {
 public:
  // Appends a row (its full encoded key and value). Out of line under its
  // own name: `key` and `value` may lie in a memtable another thread is
  // inserting into (tests/reliability/tsan.supp).
  void Append(std::string_view key, std::string_view value);
  size_t bytes() const { return bytes_.size(); }
  size_t row_count() const { return row_count_; }
  // Calls f(key, value) for each row in the order appended, until f returns
  // false; returns false iff f did.
  template <class F>
  bool ForEach(F&& f) const {
    for (size_t at = 0; at < bytes_.size();) {
      uint32_t sizes[2];
      std::memcpy(sizes, bytes_.data() + at, sizeof sizes);
      at += sizeof sizes;
      if (!f(std::string_view(bytes_.data() + at, sizes[0]), std::string_view(bytes_.data() + at + sizes[0], sizes[1]))) {
        return false;
      }
      at += size_t{sizes[0]} + sizes[1];
    }
    return true;
  }

 private:
  std::string bytes_;  // per row: key size, value size (4 bytes each, native order), key, value
  size_t row_count_ = 0;
};

// A partition admitted by ShouldBuild, to be built off the query's path
// (ScanCacheBuilder::Schedule, storage/scan_cache_builder.h).
struct PartitionToBuild {
  std::string partition_key;
  size_t stripe = 0;
  // Set when the admitting scan read the whole partition from its snapshot
  // S: every row of it, the first key after it in S (CachedPartition's
  // next_key), and that scan's G0 (read before S). The build then inserts
  // these rows under G0, by the usual validity rule; without them it reads
  // the partition from a snapshot of its own.
  std::optional<CopiedRows> rows;
  std::string next_key;
  uint64_t g0 = 0;
};

// One row as a RowRenderer rendered it (model::RowRenderer::Render).
struct RenderedRow {
  std::string bytes;
  size_t page_bytes = 0;
};

// The renderings of an entry's rows by one RowRenderer: the first with a
// nonzero id to ask claims the entry (another id renders per query, as
// without it). Rows are rendered as queries return them and kept until the
// entry is freed, up to a budget of bytes fixed when the entry is built and
// counted in its memory_bytes, so the cache's capacity bounds them; past the
// budget rows are rendered per query. Safe for concurrent use: two queries
// rendering the same row keep the first rendering and drop the other.
class RowRenderings {
 public:
  RowRenderings() = default;
  ~RowRenderings();
  RowRenderings(const RowRenderings&) = delete;
  RowRenderings& operator=(const RowRenderings&) = delete;
  // For `rows` rows, keeping at most `budget` bytes of renderings.
  void Reset(size_t rows, size_t budget);
  // Whether renderer `id` may keep renderings here (claims the entry for it
  // if none has); false for id 0.
  bool Claim(uint64_t id) const;
  // Row i's kept rendering by the claiming renderer, or null.
  const RenderedRow* Find(size_t i) const { return rows_[i].load(std::memory_order_acquire); }
  // Keeps `row` as row i's rendering if the budget allows (taking it);
  // returns the rendering kept for row i (this one or another thread's), or
  // null (the budget is spent; `row` is left to the caller).
  const RenderedRow* Keep(size_t i, std::unique_ptr<RenderedRow>& row) const;
  size_t kept_bytes() const { return bytes_.load(std::memory_order_relaxed); }
  // Whether the budget may still take a rendering (else rendering a row
  // only to write it once would be wasted).
  bool has_room() const { return !full_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> id_{0};
  mutable std::atomic<size_t> bytes_{0};
  // Set when a rendering did not fit: later rows are not rendered (each
  // would be rendered, refused and written again per query).
  mutable std::atomic<bool> full_{false};
  size_t budget_ = 0;
  size_t count_ = 0;
  std::unique_ptr<std::atomic<RenderedRow*>[]> rows_;
};

// All rows of one partition, as read from one snapshot. Immutable (but for
// `renderings`, which only grow).
struct CachedPartition {
  std::string prefix;  // PartitionStart(table id, pk): row i's key is prefix + row_suffixes[i]
  std::string arena;   // owns the bytes every view below (and in block) points into
  RowBlock block;
  std::vector<std::string_view> row_suffixes;  // encoded keys after `prefix`, ascending
  std::vector<std::string_view> values;        // encoded entity values (entity_codec.h)
  size_t memory_bytes = 0;                     // everything above, allocated capacity
  // The first key after the partition in the snapshot the entry was built
  // from (TableEnd when no row followed; empty = not known), and that scan's
  // G0. While no write to the TABLE is stamped after built_g0, the next
  // partition starts exactly at next_key, and a scan may go there without
  // seeking RocksDB (see RocksEngine::Scan).
  std::string next_key;
  uint64_t built_g0 = 0;
  // Budget: the encoded values' bytes (a JSON row without metadata is about
  // twice its encoded size, so about half the rows of an entry can keep one;
  // a query returns far fewer). Counted in memory_bytes.
  RowRenderings renderings;

  // Index of the first row whose full encoded key is >= `encoded_key` (any
  // key of the keyspace; row_count() if every row is below it).
  size_t LowerBound(std::string_view encoded_key) const;
};

// Collects the rows of one partition in key order while a scan reads them.
class PartitionBuilder {
 public:
  PartitionBuilder(std::string prefix, std::string_view partition_key);

  // Appends the next row: its key's bytes after the prefix, the decoded row
  // (row_key, timestamp, properties) and its encoded value.
  void Add(std::string_view key_suffix, const model::Entity& row, std::string_view value);
  size_t row_count() const { return rows_.size(); }
  // About the finished entry's memory_bytes for the rows so far (arena, row
  // and column vectors, the renderings' budget). Builders give up once it
  // passes PartitionCache::max_entry_bytes(), so an abandoned build held
  // about that much (twice at most, by vector growth).
  size_t approx_bytes() const { return arena_.size() + value_bytes_ + rows_.size() * kRowBytes + column_bytes_; }

  // The finished, immutable entry (next_key, built_g0: see CachedPartition).
  // The builder is left empty.
  std::shared_ptr<const CachedPartition> Finish(std::string next_key, uint64_t built_g0);

 private:
  struct Span {
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  struct Row {
    Span suffix, row_key, value;
    int64_t timestamp = 0;
  };
  struct ColumnBuilder {
    Span name;
    std::vector<uint8_t> tags;
    std::vector<int64_t> ints;
    std::vector<double> doubles;
    std::vector<Span> texts;
  };
  Span Append(std::string_view bytes);

  // Per row of the finished entry: four views or stamps, a rendering slot.
  static constexpr size_t kRowBytes = 3 * sizeof(std::string_view) + sizeof(int64_t) + sizeof(void*);

  std::string prefix_;
  Span partition_key_;
  std::string arena_;
  size_t value_bytes_ = 0;   // encoded values added: the renderings' budget
  size_t column_bytes_ = 0;  // one tag and one value slot per property added
  std::vector<Row> rows_;
  std::vector<ColumnBuilder> columns_;
  std::unordered_map<std::string, size_t> column_index_;
};

class PartitionCache {
 public:
  // `stripe_count` = the engine's number of write lock stripes.
  PartitionCache(size_t capacity_bytes, size_t stripe_count);

  // The key of (table_id, partition_key) in the cache's maps: the table id's
  // 8 bytes (host order), then the PartitionKey. Also the key of the
  // engine's maps of partitions to warm (warm_candidates.h).
  static std::string CacheKey(uint64_t table_id, std::string_view partition_key);

  // G0 of a scan: read before taking the snapshot.
  uint64_t Sequence() const { return sequence_.load(); }
  // The use clock of a scan, read when it starts (see ShouldBuild).
  uint64_t UseClock() const { return use_clock_.load(); }
  // Called when a scan with `scan_clock` enters (table_id, partition_key) at
  // its first row: true = build an entry while reading it (see Admission).
  // Always false for a partition marked too large.
  bool ShouldBuild(uint64_t table_id, std::string_view partition_key, size_t stripe, uint64_t scan_clock);
  // After a write to `stripe` committed (or failed), under the stripe lock.
  // Returns the write's stamp (the engine also keeps it per table).
  uint64_t NoteWrite(size_t stripe) {
    const uint64_t stamp = sequence_.fetch_add(1) + 1;
    stamps_[stripe].store(stamp);
    return stamp;
  }

  // Whether a write stamped `stripe` after `g0`: an entry built from a
  // snapshot taken after g0 would then be refused by Insert(), so a build
  // can stop reading (one atomic load).
  bool WrittenSince(size_t stripe, uint64_t g0) const { return stamps_[stripe].load() > g0; }

  // The valid entry of (table_id, partition_key) usable by a scan with `g0`,
  // or null. Drops the entry if a write invalidated it. Takes no lock and
  // allocates nothing when the stripe holds no entry (the common answer for
  // the many small partitions of a GUID- or user-id-keyed table, which are
  // never cached).
  std::shared_ptr<const CachedPartition> Lookup(uint64_t table_id, std::string_view partition_key, size_t stripe,
                                                uint64_t g0);
  // Adds (or replaces) the entry built from a snapshot taken after `g0` was
  // read; ignored if a write stamped the stripe after g0, if it is larger
  // than max_entry_bytes(), or if fitting it would evict an entry used since
  // `scan_clock` (or, for an entry ShouldBuild admitted, since the clock it
  // admitted by). Evicts least recently used entries to fit; a refused
  // entry's size is remembered for the partition's next admission.
  // Returns whether the entry was kept.
  bool Insert(uint64_t table_id, std::string_view partition_key, size_t stripe, uint64_t g0, uint64_t scan_clock,
              std::shared_ptr<const CachedPartition> entry);
  // A build of (table_id, partition_key) passed max_entry_bytes() and was
  // abandoned: neither admission (ShouldBuild) nor the warmer tries again
  // while the mark is remembered (with the ghosts, kMaxGhosts FIFO). Without
  // it every first page of a partition larger than the cache started a build
  // that read up to max_entry_bytes and was thrown away, and the page waited
  // for it.
  // A partition that later shrinks is cached again once its mark ages out.
  void NoteTooLarge(uint64_t table_id, std::string_view partition_key);
  bool KnownTooLarge(uint64_t table_id, std::string_view partition_key) const;

  // The cache keys of the entries, most recently used first, at most `max`.
  std::vector<std::string> EntryKeys(size_t max) const;
  // The inverse of CacheKey; false if `key` is shorter than a table id.
  static bool ParseCacheKey(std::string_view key, uint64_t* table_id, std::string_view* partition_key);

  // Whether the last entry refused for want of room was offered with `scan_clock`.
  bool RefusedForRoom(uint64_t scan_clock) const {
    std::lock_guard lock(mu_);
    return refused_scan_ == scan_clock;
  }
  void DropTable(uint64_t table_id);

  size_t capacity_bytes() const { return capacity_bytes_; }
  // The largest entry kept: half the capacity, so that one partition never
  // evicts the whole cache, and a build's transient memory (a builder that
  // gives up past this size) stays within the capacity beside the entries.
  size_t max_entry_bytes() const { return capacity_bytes_ / 2; }
  // Current totals (tests, benchmarks).
  size_t memory_bytes() const;
  size_t entry_count() const;
  // NoteTooLarge calls since construction: builds given up for size.
  uint64_t too_large_count() const { return too_large_count_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::string key;
    uint64_t table_id = 0;
    size_t stripe = 0;
    uint64_t stamp = 0;
    uint64_t last_use = 0;  // use_clock_ at the last hit or insert
    std::shared_ptr<const CachedPartition> partition;
  };
  static constexpr size_t kMaxGhosts = 4096;
  // A ghost's stamp for a partition marked too large (never a stripe stamp).
  static constexpr uint64_t kTooLarge = UINT64_MAX;
  struct Ghost {
    uint64_t stamp = 0;  // the stripe's stamp at the last read, or kTooLarge
    uint64_t clock = 0;  // the reading scan's use clock
    size_t bytes = 0;    // the size of its last entry refused for room, if any
    // Set when ShouldBuild admitted it: the clock the entry's Insert evicts
    // by (entries used since are kept), consumed by that Insert.
    uint64_t admit_clock = kNoClock;
  };
  static constexpr uint64_t kNoClock = UINT64_MAX;
  // Remembers `ghost` for `key` among the ghosts (FIFO-bounded). Under mu_.
  void SetGhostLocked(std::string key, Ghost ghost);
  void EraseLocked(std::list<Entry>::iterator it);
  // Whether `bytes` more fit after evicting only entries last used before scan_clock.
  bool CanFitLocked(size_t bytes, uint64_t scan_clock) const;

  const size_t capacity_bytes_;
  std::atomic<uint64_t> sequence_{0};
  std::unique_ptr<std::atomic<uint64_t>[]> stamps_;
  // Entries per stripe, changed under mu_, read without it by Lookup: zero
  // proves a miss. A stale read only turns a hit into a miss or takes the
  // lock for nothing, both harmless (a miss reads RocksDB).
  std::unique_ptr<std::atomic<uint32_t>[]> entries_per_stripe_;

  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently used first; guarded by mu_
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;  // guarded by mu_
  size_t total_bytes_ = 0;  // guarded by mu_
  std::atomic<uint64_t> use_clock_{0};  // advanced under mu_
  std::atomic<uint64_t> too_large_count_{0};
  // The scan clock of the last scan whose entry was refused for want of room:
  // that scan builds nothing more (it would only be refused again).
  uint64_t refused_scan_ = UINT64_MAX;  // guarded by mu_
  // Partitions read once from their first row: cache key -> stripe stamp
  // then and the reading scan's clock, or kTooLarge.
  std::unordered_map<std::string, Ghost> ghosts_;  // guarded by mu_
  std::list<std::string> ghost_order_;                // oldest first; guarded by mu_
};

}  // namespace tablestone::storage
