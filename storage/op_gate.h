// OpGate: counts operations in flight and lets one party close the gate and
// wait until they have all left; operations arriving after the close are
// refused. Used for the engine's lifetime (Close) and for each table's
// lifetime (DeleteTable).
//
// Why not std::shared_mutex: glibc's rwlock prefers readers, so a steady
// stream of writes kept DeleteTable/Close waiting forever (seen in
// engine_concurrency_test). Here closing is immediate for newcomers, so the
// closer waits only for operations already inside.
//
// Thread safety: all methods may be called concurrently. Correctness relies
// on sequentially consistent atomics: Enter() increments then reads `closed`;
// CloseAndDrain() writes `closed` then reads the count, so one of the two
// always sees the other.
#pragma once

#include <atomic>
#include <cstdint>

namespace tablestone::storage {

class OpGate {
 public:
  // Returns false (and counts nothing) once the gate is closed.
  bool Enter() {
    inflight_.fetch_add(1);
    if (closed_.load()) {
      Exit();
      return false;
    }
    return true;
  }
  void Exit() {
    if (inflight_.fetch_sub(1) == 1 && closed_.load()) inflight_.notify_all();
  }
  // Refuses new operations and blocks until every admitted one has exited.
  void CloseAndDrain() {
    closed_.store(true);
    for (int64_t n = inflight_.load(); n != 0; n = inflight_.load()) inflight_.wait(n);
  }
  // Admits operations again (after a failed close).
  void Reopen() { closed_.store(false); }
  bool closed() const { return closed_.load(); }

 private:
  std::atomic<int64_t> inflight_{0};
  std::atomic<bool> closed_{false};
};

// RAII admission: `ok()` says whether the operation may proceed.
class GatePass {
 public:
  explicit GatePass(OpGate& gate) : gate_(gate), ok_(gate.Enter()) {}
  ~GatePass() {
    if (ok_) gate_.Exit();
  }
  GatePass(const GatePass&) = delete;
  GatePass& operator=(const GatePass&) = delete;
  bool ok() const { return ok_; }

 private:
  OpGate& gate_;
  bool ok_;
};

}  // namespace tablestone::storage
