// The contract between the query planner (protocol/filter) and the engine's
// scanner (storage): which key ranges to read, which rows to keep, how big a
// page may get, and where to resume.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/model/entity.h"
#include "storage/model/limits.h"
#include "storage/model/row_predicate.h"

namespace tablestone::model {

struct EntityKey {
  std::string partition_key;
  std::string row_key;
  friend bool operator==(const EntityKey&, const EntityKey&) = default;
};

// One end of a key range, in (PartitionKey, RowKey) order (ordinal UTF-16).
//   row_key set:    the point (partition_key, *row_key); `inclusive` says
//                   whether that point itself is inside the range.
//   row_key unset:  the whole partition `partition_key` as a block. As a lower
//                   bound, inclusive = start at the partition's first row,
//                   exclusive = start after its last row. As an upper bound,
//                   inclusive = end after its last row, exclusive = end before
//                   its first row.
struct KeyBound {
  std::string partition_key;
  std::optional<std::string> row_key;
  bool inclusive = true;
};

// A contiguous key range; an absent bound means unbounded on that side.
struct KeyRange {
  std::optional<KeyBound> lower;
  std::optional<KeyBound> upper;
};

// How many bytes a kept row adds to a page, for ScanSpec::max_bytes.
// `stored_bytes` is the size of its encoded value. Called from a scan thread;
// must be thread-safe.
//
// Bytes() is the exact figure the page limit is defined by. It may be costly
// (the JSON sizer scans every string for escapes), so the scanner first sums
// Bound() and asks Bytes() only for the rows of a page that could come near
// max_bytes; the page still ends at exactly the row Bytes() alone would end
// it at (the Page class in storage/rocks_engine_scan.cc;
// tests/unit/storage/engine_scan_test.cc RowSizerBound*).
// `stored_bytes` is the row's encoded value size (storage/entity_codec.h),
// in which every property takes at least 3 + its name's bytes + its value's
// bytes (a String's, Binary's or Guid's text bytes, but 15 for a Guid of 36
// characters, stored as 16 raw bytes without a length; 0 for other types):
// a sizer may bound a row by it without reading the properties
// (tests/unit/storage/entity_codec_test.cc pins the guarantee).
class RowSizer {
 public:
  virtual ~RowSizer() = default;
  virtual size_t Bytes(const Entity& entity, size_t stored_bytes) const = 0;
  // A cheap upper bound: must be >= Bytes(entity, stored_bytes) for every
  // row, or a page may hold more than max_bytes. A sizer without a cheaper
  // figure returns Bytes() (then rows near the limit are sized twice).
  virtual size_t Bound(const Entity& entity, size_t stored_bytes) const = 0;
};

// Renders a kept row for the response (the server: its JSON object in a
// query page). Why: on a warm query most of the time goes to decoding the
// kept rows and writing their JSON; the scan cache keeps the rendering of each cached row it
// returns (CachedPartition::Renderings) and hands it back in
// ScanResult::rendered, so a repeated query copies bytes instead.
// Thread-safe; called from scan threads.
class RowRenderer {
 public:
  virtual ~RowRenderer() = default;
  // Renderers with the same nonzero id render every row to the same bytes
  // (and page bytes); 0 = the rendering depends on the request: never kept.
  virtual uint64_t id() const = 0;
  // Appends the rendering of `entity`, a whole stored row (keys, Timestamp,
  // every property), whose encoded value has `stored_bytes` bytes; returns
  // the row's page bytes, i.e. what ScanSpec::row_sizer's Bytes() (or the
  // stored size, without a sizer) gives for it, so that rendered and
  // unrendered rows end pages at the same row.
  virtual size_t Render(const Entity& entity, size_t stored_bytes, std::string* out) const = 0;
};

// A scan stopped at its CPU budget with its whole state kept (ScanSpec::
// resumable): the rows kept so far, its position, its snapshot and iterator,
// its cache admission. Opaque outside the engine that made it; used by one
// thread at a time (it may move between threads). Why: a query tried on an
// I/O thread that outgrows its slice continues on another thread without
// reading its first rows twice. Only the engine that made it continues it
// (another handle is refused with kInvalidArgument).
class SuspendedScan {
 public:
  virtual ~SuspendedScan() = default;
};

struct ScanSpec {
  // Ranges to read, sorted and disjoint. Empty = the whole table. A range that
  // is provably empty may be omitted by the planner; `match_nothing` says the
  // filter can never match (no read at all).
  std::vector<KeyRange> ranges;
  bool match_nothing = false;
  // When set, every range above (and the resume point) is cut down to this
  // range: no key outside it is read, returned or named as `next`. A resume
  // point past its end makes an empty, complete page.
  std::optional<KeyRange> bound;
  // Continue at this key (inclusive): the first entity of the next page.
  std::optional<EntityKey> resume_from;
  // Rows it rejects are skipped (tested per Entity, or through its columnar()
  // expression over the columns of a cached partition; see row_predicate.h).
  // Null = keep every row.
  std::shared_ptr<const RowPredicate> predicate;
  // The properties a kept row needs (a query's $select); empty = all. When
  // set, the scan may return rows holding only these properties (with their
  // keys and Timestamp) and decode no other: `predicate` is then asked about
  // a full row (Matches) or, when it has a columnar() part, its MatchesRest()
  // may be given such a trimmed row and must not look past the keys.
  std::vector<std::string> select;
  // Page limits: stop after this many kept entities, or before a kept row
  // that would take the page's bytes past max_bytes (a page always holds at
  // least one row), or at the deadline (a page may then be short or even
  // empty, with a continuation). A row's bytes are `row_sizer`'s answer, or
  // its encoded size when that is null.
  size_t max_results = kMaxPageEntities;
  size_t max_bytes = kMaxPageBytes;
  std::shared_ptr<const RowSizer> row_sizer;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Like `deadline`, but counting only the CPU time the scanning thread
  // spends from the start of the scan (CLOCK_THREAD_CPUTIME_ID): a scan tried
  // on an I/O thread stops after this much work, however long other threads
  // of a busy machine kept it waiting. Reaching it ends the page as the
  // deadline does (ScanResult::deadline_passed).
  std::optional<std::chrono::nanoseconds> cpu_budget;
  // For a scan off the I/O threads: once it has run this long (its thread's
  // CPU time) since it last did, it offers the CPU to other runnable threads
  // (sched_yield). Linux switches between busy threads only at its timer tick
  // (4 ms at HZ=250); a scan sharing a core with point requests would
  // otherwise hold it for whole ticks and the requests queued behind it would
  // wait that long. Its share of the CPU follows from how often the scheduler
  // picks it again.
  std::optional<std::chrono::nanoseconds> cpu_burst;
  // With cpu_burst: at a burst's end, while point requests are being
  // answered and the scan's core is contended, the scan sleeps this long
  // instead of only offering the CPU (storage/thread_priority.h,
  // EndScanBurst), so point requests go first among tablestone's threads
  // while the scan keeps the default priority against other processes.
  std::chrono::nanoseconds give_way{0};
  // When set (and `select` is empty), rows served from the scan cache may
  // come back rendered (ScanResult::rendered).
  std::shared_ptr<const RowRenderer> renderer;
  // When the page ends at `cpu_budget` or `deadline`, keep the scan's state
  // in ScanResult::suspended instead of ending the page there, so that it can
  // be continued (resume_scan). Ignored by a scan that continues one: a scan
  // is suspended at most once.
  bool resumable = false;
  // Continue this suspended scan (a ScanResult::suspended of an earlier Scan
  // of the same table with the same ranges, bound, resume_from, predicate,
  // select and page limits) instead of starting: the page comes out exactly
  // as if the first Scan had never stopped (same rows, same `next`, one
  // snapshot), under this spec's deadline, cpu_budget and cpu_burst. This
  // spec's predicate, row_sizer and renderer replace the first one's, which
  // need not outlive the first call. Owned by the caller; must outlive the
  // call and not be continued twice.
  SuspendedScan* resume_scan = nullptr;
};

struct ScanResult {
  std::vector<Entity> entities;
  // First key not yet returned; unset when the scan is complete.
  std::optional<EntityKey> next;
  // Rows read (kept or not), for benchmarks and logs.
  size_t rows_examined = 0;
  // The page ended at spec.deadline (or spec.cpu_budget) before it was
  // complete: `next` is the first row not examined.
  bool deadline_passed = false;
  // Times the scan offered the CPU (ScanSpec::cpu_burst), for tests and logs.
  size_t cpu_yields = 0;
  // Empty, or as long as `entities`: a non-empty rendered[i] is entity i's
  // rendering by ScanSpec::renderer, and entity i then holds only its keys
  // and Timestamp (no properties). The views stay valid while `pins` lives.
  std::vector<std::string_view> rendered;
  std::vector<std::shared_ptr<const void>> pins;
  // Set when a resumable scan stopped at its deadline or CPU budget
  // (ScanSpec::resumable): the page is not done, `entities` is empty (the
  // rows kept so far stay in the suspended scan) and `next`, `rows_examined`
  // and `deadline_passed` say where it stopped. Holding it holds a RocksDB
  // snapshot: drop it soon. Engine::Close does not wait for it: a closed
  // engine releases the snapshot, and continuing the scan then answers
  // kShuttingDown; the handle may outlive the engine (dropping it is safe).
  std::shared_ptr<SuspendedScan> suspended;
};

}  // namespace tablestone::model
