// Page: the paging rules of one RocksEngine::Scan (row and byte limits,
// the deadline and CPU budget checked every kClockCheckInterval rows), shared
// by rows read from RocksDB (rocks_engine_scan.cc) and rows served from the
// scan cache (ServeCached), so that both paths end a page at the same row.
// Internal to storage/: RocksEngine's scan is its only user.
//
// Thread safety: one Page per scan, used by one thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <memory>
#include <string_view>
#include <vector>

#include "storage/model/scan_spec.h"
#include "storage/model/status.h"
#include "storage/partition_cache.h"
#include "storage/thread_priority.h"

namespace tablestone::storage {

// How often (in rows) the deadline is checked; reading the clock per row
// would cost more than decoding the row.
inline constexpr size_t kClockCheckInterval = 256;
// Rows of a cached partition filtered per EvaluateBlock call: big enough for
// tight loops, small enough that a page ending early wastes little.
inline constexpr size_t kBlockChunkRows = 512;

// The page rules, shared by rows read from RocksDB and rows served from the
// cache so that both paths page identically.
class Page {
 public:
  Page(const model::ScanSpec& spec, model::ScanResult* result)
      : spec_(spec),
        result_(result),
        timed_(spec.deadline.has_value() || spec.cpu_budget.has_value()),
        cpu_start_(spec.cpu_budget ? ThreadCpuTime() : std::chrono::nanoseconds(0)),
        wall_start_(spec.cpu_budget ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point()),
        full_(spec.max_results == 0) {
    if (spec.cpu_burst) {
      burst_wall_start_ = std::chrono::steady_clock::now();
      burst_cpu_start_ = ThreadCpuTime();
    }
    if (spec.row_sizer != nullptr) bound_value_bytes_.reserve(std::min(spec.max_results, model::kMaxPageEntities));
  }

  // Called for each row in key order before it is examined. False = the page
  // is full (a limit, or the deadline just passed): this row is the
  // continuation and the scan ends.
  bool Admit() {
    if (!full_ && timed_ && ++since_clock_check_ >= kClockCheckInterval) {
      since_clock_check_ = 0;
      if (TimeIsUp()) {
        full_ = deadline_passed_ = result_->deadline_passed = true;
      } else if (spec_.cpu_burst) {
        EndBurstIfLong();
      }
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
    if (timed_) {
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
  // Moves from `entity` if kept; inlined, so a row is moved once (into the
  // page) whichever way it is sized.
  [[gnu::always_inline]] bool Keep(model::Entity& entity, size_t value_bytes) {
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
      SizeBoundRowsExactly();
    }
    return KeepSized(entity, sizer->Bytes(entity, value_bytes));
  }
  // Keep() for a row the renderer rendered as `rendered`, of `page_bytes`
  // (the row_sizer's Bytes() for it, so the page ends where it would
  // unrendered); `entity` holds its keys and Timestamp. Moves from it if kept.
  bool KeepRendered(model::Entity& entity, std::string_view rendered, size_t page_bytes) {
    const size_t at = result_->entities.size();
    bool kept;
    if (spec_.row_sizer != nullptr && !exact_ && page_bytes < spec_.max_bytes - (kept_bytes_ + bound_bytes_)) {
      // As Keep() by bound, the bound being exact here.
      result_->entities.push_back(std::move(entity));
      bound_value_bytes_.push_back(kExactBytes | page_bytes);
      bound_bytes_ += page_bytes;
      if (result_->entities.size() >= spec_.max_results) full_ = true;
      kept = true;
    } else {
      if (spec_.row_sizer != nullptr) SizeBoundRowsExactly();
      kept = KeepSized(entity, page_bytes);
    }
    if (kept) {
      result_->rendered.resize(at);  // rows kept unrendered before it: no rendering
      result_->rendered.push_back(rendered);
    }
    return kept;
  }
  bool KeepCopy(const model::Entity& entity, size_t value_bytes) {
    model::Entity copy = entity;
    return Keep(copy, value_bytes);
  }
  bool deadline_passed() const { return deadline_passed_; }
  // Continues a page that ended at its deadline or CPU budget (a suspended
  // scan, ScanSpec::resume_scan) under the spec's timing as it is now: the
  // clocks start again and the page is open as if it had never stopped (a
  // deadline only ends a page that no limit had filled).
  void Resume() {
    if (!deadline_passed_) return;
    timed_ = spec_.deadline.has_value() || spec_.cpu_budget.has_value();
    if (spec_.cpu_budget) {
      cpu_start_ = ThreadCpuTime();
      wall_start_ = std::chrono::steady_clock::now();
    }
    if (spec_.cpu_burst) {
      burst_wall_start_ = std::chrono::steady_clock::now();
      burst_cpu_start_ = ThreadCpuTime();
    }
    since_clock_check_ = 0;
    full_ = deadline_passed_ = result_->deadline_passed = false;
  }

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

  // In bound_value_bytes_: a rendered row's exact page bytes, not a value size.
  static constexpr size_t kExactBytes = size_t{1} << 63;
  // Ends the counting by bound (with a row_sizer): the rows counted so far,
  // the page's first ones, get their exact bytes (exact_ never goes back).
  void SizeBoundRowsExactly() {
    if (exact_) return;
    exact_ = true;
    for (size_t i = 0; i < bound_value_bytes_.size(); ++i) {
      const size_t b = bound_value_bytes_[i];
      kept_bytes_ += (b & kExactBytes) != 0 ? b & ~kExactBytes : spec_.row_sizer->Bytes(result_->entities[i], b);
    }
    bound_bytes_ = 0;
  }
  static std::chrono::nanoseconds ThreadCpuTime() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
  // cpu_burst: the wall clock first (CPU time is never larger), then the
  // thread's CPU time, which a wait behind other threads does not advance,
  // so a scan preempted mid-burst does not give up the CPU as soon as it
  // gets it back.
  void EndBurstIfLong() {
    const auto now = std::chrono::steady_clock::now();
    if (now - burst_wall_start_ < *spec_.cpu_burst) return;
    const auto cpu = ThreadCpuTime();
    if (cpu - burst_cpu_start_ < *spec_.cpu_burst) return;
    EndScanBurst(cpu - burst_cpu_start_, now - burst_wall_start_, spec_.give_way);
    ++result_->cpu_yields;
    burst_wall_start_ = std::chrono::steady_clock::now();
    burst_cpu_start_ = cpu;
  }

  // The thread's CPU clock is a system call (~0.4 us here, against ~20 ns for
  // the steady clock): it is read only once the wall-clock time since the
  // start reaches the budget (CPU time never exceeds it), so a scan that ends
  // sooner never reads it after its start.
  bool TimeIsUp() const {
    const auto now = std::chrono::steady_clock::now();
    if (spec_.deadline && now >= *spec_.deadline) return true;
    return spec_.cpu_budget && now - wall_start_ >= *spec_.cpu_budget &&
           ThreadCpuTime() - cpu_start_ >= *spec_.cpu_budget;
  }

  const model::ScanSpec& spec_;
  model::ScanResult* result_;
  bool timed_;                    // a deadline or a CPU budget: the clock is read every kClockCheckInterval rows
  std::chrono::nanoseconds cpu_start_;  // the thread's CPU time when the scan began (with a cpu_budget)
  std::chrono::steady_clock::time_point wall_start_;  // and the steady clock then
  // Exact bytes of the rows sized by Bytes() (all of them without a row_sizer).
  size_t kept_bytes_ = 0;
  // With a row_sizer, until exact_: the page's rows were counted by Bound(),
  // bound_bytes_ their sum, bound_value_bytes_ their value sizes (to size
  // them exactly later).
  bool exact_ = false;
  size_t bound_bytes_ = 0;
  std::vector<size_t> bound_value_bytes_;
  size_t since_clock_check_ = 0;
  // With a cpu_burst: when the current burst began (EndBurstIfLong).
  std::chrono::steady_clock::time_point burst_wall_start_;
  std::chrono::nanoseconds burst_cpu_start_{0};
  // Once a limit is hit, the next row found (in any later range) becomes the
  // continuation; if there is none, the scan is complete.
  bool full_;
  bool deadline_passed_ = false;
};

// Serves the rows of a cached partition inside [lower, upper) (encoded keys)
// into `page`. Sets *ended when the page ended inside it (result->next is
// then set). With spec.renderer (and no $select), kept rows may come back
// rendered (ScanResult::rendered), the entry then pinned in result->pins.
Status ServeCached(const std::shared_ptr<const CachedPartition>& entry_ptr, std::string_view lower,
                   std::string_view upper, const model::ScanSpec& spec, Page* page, model::ScanResult* result,
                   bool* ended);

}  // namespace tablestone::storage
