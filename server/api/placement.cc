#include "server/api/placement.h"

#include "protocol/batch/multipart.h"
#include "server/api/api_context.h"

namespace tablestone::api {

RequestPlacement PlacementPolicy::Place(const RequestInfo& info, Placement placement) const {
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
      const bool query = protocol::batch::IsQueryBatch(info.Header("Content-Type"), info.request.body());
      return {false, InlineBound::kNone, query ? exec::WorkLane::kLong : exec::WorkLane::kShort};
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
