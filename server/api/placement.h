// Where a request's handler runs: the one placement policy of server/api
// (docs/architecture.md, "Where each operation runs"). Every operation row of
// the dispatcher and every /_tablestone route names a Placement; after a
// request is routed and authenticated, PlacementPolicy::Place turns it into
// that request's RequestPlacement, once. The dispatcher runs the request
// there, the fault rules' delayed requests go to its lane, and the handlers
// read their bound from the InlineTry the dispatcher hands them: nothing else
// decides where a request runs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#include "server/api/metrics.h"
#include "server/api/slice_hints.h"
#include "server/exec/work_executor.h"
#include "server/http/handler.h"
#include "storage/engine.h"
#include "storage/model/scan_spec.h"

namespace tablestone::api {

struct RequestInfo;

// Where an operation (or route) runs, before the request is known.
enum class Placement {
  // Answered on the I/O thread: from memory or one lookup that cannot wait
  // for the disk (Get Table, ACL and service-property reads, a preflight,
  // the health, metrics and UI routes).
  kIoThread,
  // Tried on the I/O thread reading with Engine::ReadWait::kNoWait; one that
  // would wait for the disk gives up and runs again on the short lane (Get
  // Entity).
  kIoThreadNoWait,
  // As kIoThreadNoWait while Engine::CanWriteWithoutWaiting (a write that
  // only appends to memory); the short lane during a RocksDB stall (entity
  // writes).
  kIoThreadNoWaitUnlessStalled,
  // Tried on the I/O thread for a slice of its CPU time
  // (ApiOptions::inline_query_slice); one that outgrows it continues its scan
  // on the long lane, and for a while the table's queries start there
  // (SliceHints) (Query Entities).
  kIoThreadSlice,
  // The short lane: bounded work that may wait for the disk (change sets,
  // Create Table, ACL and service-property writes).
  kShortLane,
  // The long lane: work that may take seconds (Query Tables, Delete Table,
  // the admin routes).
  kLongLane,
  // A $batch, placed by what it holds: one that wraps a query may read a
  // whole page and goes to the long lane (protocol::batch::IsQueryBatch). A
  // change set runs on the short lane, but for a small one
  // (PlacementPolicy::kInlineChangeSetBytes) while no point request has been
  // placed for PlacementPolicy::kPointRequestWindow, and one per turn of
  // each I/O thread (the requests it read in one poll): that one is tried on the I/O
  // thread as a point write is (kNoWait, and only while
  // Engine::CanWriteWithoutWaiting), which spares it the lane's thread hops.
  kByBatchContent,
};

// How far a request tried on the I/O thread may go before it gives up.
enum class InlineBound {
  kNone,    // runs to its end there
  kNoWait,  // reads with ReadWait::kNoWait; gives up where a read would wait
  kSlice,   // scans for InlineTry::cpu_budget of CPU time; gives up past it
};

// One request's placement, decided once by PlacementPolicy::Place.
struct RequestPlacement {
  bool io_thread_first = false;          // tried on the I/O thread before any lane
  InlineBound bound = InlineBound::kNone;  // the try's bound (io_thread_first only)
  // Where it runs: from the start unless io_thread_first, otherwise once its
  // try gave up. Also where it runs when something delays it (a fault
  // rule's latency): a delayed request never runs on an I/O thread.
  exec::WorkLane lane = exec::WorkLane::kShort;
};

// The I/O thread's try of one request (RequestInfo::inline_try, set only
// while it runs there). The handler honours `bound` and, when it reached it,
// writes nothing and sets `gave_up` (a query also hands over its scan in
// `suspended`, ScanSpec::resumable, for the lane to continue; it may stay
// null, and the lane then starts the scan again).
struct InlineTry {
  InlineBound bound = InlineBound::kNone;
  // kSlice: CPU time of the I/O thread (ScanRun::cpu_budget), and ten times
  // that of wall-clock time (a scan waiting on the disk uses no CPU).
  std::chrono::nanoseconds cpu_budget{0};
  bool gave_up = false;
  std::shared_ptr<model::SuspendedScan> suspended;
};

// Engine::ReadWait for a handler's read: kNoWait only inside an I/O-thread
// try bounded so.
inline storage::Engine::ReadWait ReadWaitOf(const InlineTry* inline_try) {
  return inline_try != nullptr && inline_try->bound == InlineBound::kNoWait ? storage::Engine::ReadWait::kNoWait
                                                                             : storage::Engine::ReadWait::kMayWait;
}

// Thread-safe: Place and GaveUp may run on any number of I/O threads.
class PlacementPolicy {
 public:
  // The largest change set body tried on the I/O thread. Its parse, checks
  // and apply cost about 25 ns per byte here (a `$batch` of 100 inserts,
  // 57 KB: 1.3-1.4 ms of server CPU in all, docs/benchmarks.md "`$batch` hops"),
  // so at most about 1.7 ms, below the slice a query may take there
  // (ApiOptions::inline_query_slice, 3 ms). Larger ones (up to 4 MiB: tens
  // of milliseconds) always run on the short lane.
  static constexpr size_t kInlineChangeSetBytes = 64 * 1024;
  // How long after a point request (anything placed but change sets and
  // long-lane work) change sets stay on the short lane: a point request then
  // never waits for a change set on its I/O thread. The first one after a
  // quiet window may wait for one: one per turn of its I/O thread.
  static constexpr std::chrono::seconds kPointRequestWindow{1};

  // `engine` and `metrics` (may be null) must outlive the policy.
  PlacementPolicy(storage::Engine& engine, Metrics* metrics, std::chrono::nanoseconds inline_query_slice)
      : engine_(engine), metrics_(metrics), inline_query_slice_(inline_query_slice) {}

  // The request's placement, given its operation's (routed and authenticated:
  // a $batch is placed by its body). Notes a point request's arrival
  // (RequestInfo::start) for the change sets' placement. `done` is the
  // request's completion, for the change set's turn (Placement::kByBatchContent);
  // call on the I/O thread that read the request.
  RequestPlacement Place(const RequestInfo& info, Placement placement, http::Completion& done);
  // The I/O thread's try for `placement` (io_thread_first only).
  InlineTry TryFor(const RequestPlacement& placement) const {
    InlineTry attempt;
    attempt.bound = placement.bound;
    if (placement.bound == InlineBound::kSlice) attempt.cpu_budget = inline_query_slice_;
    return attempt;
  }
  // The try of `info` gave up: it runs on placement.lane next. A query's
  // table starts on the long lane for a while (SliceHints).
  void GaveUp(const RequestInfo& info, const RequestPlacement& placement);

 private:
  storage::Engine& engine_;
  Metrics* metrics_;
  std::chrono::nanoseconds inline_query_slice_;
  SliceHints slice_hints_;  // tables whose queries skip the I/O thread's slice for now
  // When the last point request was placed (steady-clock ticks; stored at
  // most every 100 us, so that I/O threads do not all write it per request).
  std::atomic<int64_t> last_point_request_{std::numeric_limits<int64_t>::min() / 2};
};

}  // namespace tablestone::api
