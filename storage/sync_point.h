// SyncPoints: named points in the engine's background threads (the group
// commit's log writer, the scan cache's builder) that a test can count, wait
// for, or hold threads at, in the style of RocksDB's TEST_SYNC_POINT. Lets a
// test of background work wait for the event it is about ("the builder has
// looked at its candidates and gone idle") instead of sleeping and hoping the
// machine was fast enough.
//
// Zero cost when unused: the engine holds a null pointer
// (EngineOptions::sync_points) and SyncPoint() is one test of it. Production
// code never creates a SyncPoints; only tests pass one.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace tablestone::storage {

class SyncPoints {
 public:
  // Called by an engine thread on reaching `name`: counts the hit, wakes the
  // waiters, then blocks while a test holds the point.
  void Hit(std::string_view name);

  // Times `name` was reached since construction.
  uint64_t Count(std::string_view name) const;
  // Blocks until `name` has been reached at least `count` times in all, or
  // `timeout` passed; returns whether it was reached.
  bool WaitFor(std::string_view name, uint64_t count,
               std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  // Threads that reach `name` from now on block there (after being counted)
  // until Release(name).
  void Hold(std::string_view name);
  void Release(std::string_view name);
  // Releases every held point: a test that ends while holding one must not
  // leave an engine thread blocked (Close joins it). The destructor calls it.
  void ReleaseAll();
  ~SyncPoints() { ReleaseAll(); }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::map<std::string, uint64_t, std::less<>> counts_;  // guarded by mu_
  std::set<std::string, std::less<>> held_;              // guarded by mu_
};

// What engine code calls at a named point; `points` is usually null.
inline void SyncPoint(SyncPoints* points, std::string_view name) {
  if (points != nullptr) [[unlikely]] points->Hit(name);
}

}  // namespace tablestone::storage
