#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace tablestone::api {

// Tables whose queries outgrew the I/O thread's slice lately (dispatcher.h,
// "Where the operation's handler runs"). A query that gives up its slice
// continues on the long lane where its scan stopped, but on a table whose
// pages take longer than the slice (a 1,000-row page does), trying every page
// on the I/O thread first would hold that thread for a whole slice per page
// and add two thread hand-offs to each. For `hold` after a
// query gave up, the table's queries go straight to the long lane; then one
// tries the slice again.
//
// Tables share 256 slots by hash: a collision only sends another table's
// queries to the long lane for a while (two thread hand-offs, no wrong
// answer). Thread-safe; lock-free.
class SliceHints {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SliceHints(std::chrono::milliseconds hold = std::chrono::milliseconds(1000)) : hold_(hold) {}

  // True while a query of this table gave up its slice less than `hold` ago.
  bool SkipInline(std::string_view account, std::string_view table, Clock::time_point now) const {
    return Ticks(now) < slots_[Slot(account, table)].load(std::memory_order_relaxed);
  }
  // A query of this table gave up its slice at `now`.
  void OutgrewSlice(std::string_view account, std::string_view table, Clock::time_point now) {
    slots_[Slot(account, table)].store(Ticks(now + hold_), std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kSlots = 256;
  static size_t Slot(std::string_view account, std::string_view table) {
    const size_t h = std::hash<std::string_view>{}(table) * 31 + std::hash<std::string_view>{}(account);
    return h % kSlots;
  }
  static int64_t Ticks(Clock::time_point t) { return t.time_since_epoch().count(); }

  std::chrono::milliseconds hold_;
  std::array<std::atomic<int64_t>, kSlots> slots_{};
};

}  // namespace tablestone::api
