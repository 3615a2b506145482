// Entity group transactions (POST /$batch, Learn: performing-entity-group-transactions). The dispatcher calls
// HandleBatch for Operation::kBatch after routing and authenticating the
// outer request.
//
// Flow (the body within Dispatch's 4 MiB cap): protocol::batch::ParseBatchRequest -> PlanChangeset
// (batch_plan.h: every sub-request validated with entity_ops.h BuildWriteOp,
// plus the batch rules and per-operation SAS authorisation) -> table lookup
// -> ONE Engine::Write (one partition lock, one RocksDB WriteBatch, one
// timestamp/ETag for all entities) -> 202 multipart with one part per
// operation (RenderWriteSuccess), or a single part with the failing
// operation's error prefixed "<index>:". A batch holding one GET runs the
// point query / query handler and answers with one unwrapped part.
//
// Thread safety: as every handler; the engine serialises writes per partition.
#pragma once

#include <optional>
#include <string>

#include "server/api/api_context.h"
#include "server/http/handler.h"

namespace tablestone::api {

// Writes the complete response: 202 multipart (success, or any failure
// attributable to one operation, including a missing table and more than 100
// operations), or a plain JSON error for batch-level failures (413
// RequestBodyTooLarge, malformed multipart -> 400 InvalidInput).
void HandleBatch(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

// The table and PartitionKey a $batch addresses, as its first operation names
// them (every operation of a valid batch names the same ones), for the fault
// rules' match (FaultInjector::Inspect, fault_injector.h); nullopt when the body does not
// parse or name a table. Parses the multipart body: called only while fault
// rules or realistic mode are active.
struct BatchTarget {
  std::string table;
  std::optional<std::string> partition_key;
};
std::optional<BatchTarget> BatchTargetOf(const RequestInfo& info);

}  // namespace tablestone::api
