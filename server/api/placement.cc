#include "server/api/placement.h"

#include "protocol/batch/multipart.h"
#include "server/api/api_context.h"

namespace tablestone::api {

namespace {

// Whether a change set read now may be the one of its I/O thread's turn (the
// requests that thread read in one poll of its sockets, Completion::InTurn and
// AfterTurn): the first takes the turn, the others of the same turn go to
// their lane, so a point request read with them waits for one small change
// set at most. Without this, the first GET after a quiet window waited for a
// whole turn of them beside a flood of change sets (118 ms as a median,
// docs/benchmarks.md "`$batch` hops"). True when `done` has no turn (tests,
// tools). On the I/O thread.
bool TakeTurnForChangeSet(http::Completion& done) {
  // This I/O thread's: a change set ran in its current turn.
  thread_local bool taken = false;
  if (!done.InTurn()) return true;  // no event loop (tests, tools): no turn to share
  if (taken) return false;
  // Cleared by a handler queued behind the turn's others (the session's
  // AfterTurn): the requests read in the same turn see it set.
  taken = done.AfterTurn([] { taken = false; });
  return true;
}

}  // namespace

RequestPlacement PlacementPolicy::Place(const RequestInfo& info, Placement placement, http::Completion& done) {
  const int64_t now = info.start.time_since_epoch().count();
  if (placement != Placement::kByBatchContent && placement != Placement::kLongLane) {
    constexpr int64_t kStep =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::microseconds(100)).count();
    if (now - last_point_request_.load(std::memory_order_relaxed) > kStep) {
      last_point_request_.store(now, std::memory_order_relaxed);
    }
  }
  switch (placement) {
    case Placement::kIoThread: return {true, InlineBound::kNone, exec::WorkLane::kShort};
    case Placement::kIoThreadNoWait: return {true, InlineBound::kNoWait, exec::WorkLane::kShort};
    case Placement::kIoThreadNoWaitUnlessStalled:
      if (engine_.CanWriteWithoutWaiting()) return {true, InlineBound::kNoWait, exec::WorkLane::kShort};
      return {false, InlineBound::kNone, exec::WorkLane::kShort};
    case Placement::kIoThreadSlice:
      if (slice_hints_.SkipInline(info.account(), info.route.resource.table, std::chrono::steady_clock::now())) {
        if (metrics_ != nullptr) metrics_->RecordQuerySlice(/*overran=*/false);
        return {false, InlineBound::kNone, exec::WorkLane::kLong};
      }
      return {true, InlineBound::kSlice, exec::WorkLane::kLong};
    case Placement::kShortLane: return {false, InlineBound::kNone, exec::WorkLane::kShort};
    case Placement::kLongLane: return {false, InlineBound::kNone, exec::WorkLane::kLong};
    case Placement::kByBatchContent: {
      // A wrapped query may read a full page (seconds), which on the short
      // lane would hold up every write's acknowledgement queued behind it.
      if (protocol::batch::IsQueryBatch(info.Header("Content-Type"), info.request.body())) {
        return {false, InlineBound::kNone, exec::WorkLane::kLong};
      }
      // A small change set while no point request was placed lately, the
      // first of its I/O thread's turn: tried on the I/O thread, bounded as a
      // point write (placement.h).
      constexpr int64_t kWindow =
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(kPointRequestWindow).count();
      if (info.request.body().size() <= kInlineChangeSetBytes &&
          now - last_point_request_.load(std::memory_order_relaxed) > kWindow && engine_.CanWriteWithoutWaiting() &&
          TakeTurnForChangeSet(done)) {
        return {true, InlineBound::kNoWait, exec::WorkLane::kShort};
      }
      return {false, InlineBound::kNone, exec::WorkLane::kShort};
    }
  }
  return {false, InlineBound::kNone, exec::WorkLane::kShort};
}

void PlacementPolicy::GaveUp(const RequestInfo& info, const RequestPlacement& placement) {
  if (placement.bound == InlineBound::kSlice) {
    slice_hints_.OutgrewSlice(info.account(), info.route.resource.table, std::chrono::steady_clock::now());
    if (metrics_ != nullptr) metrics_->RecordQuerySlice(/*overran=*/true);
  } else if (placement.bound == InlineBound::kNoWait) {
    if (metrics_ != nullptr) metrics_->RecordDiskHandOff();
  }
}

}  // namespace tablestone::api
