// Validation of $batch sub-requests (Learn: performing-entity-group-transactions): turns the parsed
// multipart operations into engine WriteOps before anything is written, so an
// entity group transaction is validated whole, then applied once.
//
// Each sub-request goes through the same steps as a top-level request: its
// URL is resolved (absolute or relative, with or without the account
// segment), its verb mapped (POST / PUT / MERGE / PATCH / DELETE and
// POST + X-HTTP-Method), and the entity checked by BuildWriteOp
// (entity_ops.h). On top of that come the batch rules: one table, one
// PartitionKey, each entity at most once, and, for SAS-authorised batches,
// the per-operation authorisation callback.
//
// Pure apart from the callback; thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/batch/multipart.h"
#include "protocol/flavor.h"
#include "protocol/operation.h"
#include "protocol/request_options.h"
#include "protocol/route.h"
#include "storage/model/scan_spec.h"
#include "storage/model/write_op.h"

namespace tablestone::api {

// A sub-request's URL and verb resolved the way the dispatcher resolves a
// top-level request.
struct ResolvedSubRequest {
  protocol::Resource resource;
  protocol::QueryParams query;
  protocol::Operation operation = protocol::Operation::kInsertEntity;
};

// root_path: the service root of the outer request with trailing '/'
// ("/devstoreaccount1/" path-style, "/" host-style). The sub-request URL may
// be absolute ("http://host/devstoreaccount1/t(...)"), relative to the host
// ("/devstoreaccount1/t(...)", or "/t(...)"), or relative to the batch URL
// ("t(...)"). Errors: those of ParseResource / ResolveOperation (InvalidUri,
// InvalidInput, OutOfRangeInput, XMethod*, MethodNotAllowed), InvalidInput
// for a malformed query string.
protocol::ApiResult<ResolvedSubRequest> ResolveSubRequest(const protocol::batch::SubRequest& sub,
                                                          std::string_view root_path);

// One validated changeset operation.
struct PlannedOperation {
  protocol::Operation operation = protocol::Operation::kInsertEntity;
  model::WriteOp op;
  // Inserts only: how the 201 body is written and whether Prefer was honoured.
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  protocol::PreferReturn prefer = protocol::PreferReturn::kNone;
  std::optional<std::string> content_id;
};

struct BatchPlan {
  std::string table;  // as addressed by the first operation
  std::vector<PlannedOperation> operations;
};

// Why a batch is refused: the zero-based index of the operation to blame
// and the error without the "<index>:" prefix (the renderer adds it).
struct BatchFailure {
  size_t index = 0;
  protocol::ApiError error;
  // The rendered error with the index prefix every SDK parses (Learn: performing-entity-group-transactions).
  protocol::ApiError Indexed() const { return error.WithBatchIndex(index); }
};

struct PlanResult {
  std::optional<BatchFailure> failure;  // set when the batch must not run
  BatchPlan plan;                       // complete when !failure
};

// Decides whether the outer grant covers one operation (SAS permission and key
// range); see Authenticator::AuthorizeBatchOperation.
using BatchAuthorizer = std::function<protocol::ApiResult<bool>(protocol::Operation op, std::string_view table,
                                                                const model::EntityKey& key)>;

// Validates every operation in order and stops at the first failure:
//   * URL/verb resolution errors (above); a non-entity resource or a
//     non-write operation -> 400 InvalidInput;
//   * a table other than the first operation's -> 400 InvalidInput;
//   * everything BuildWriteOp reports (entity_ops.h), and metadata
//     negotiation errors for inserts;
//   * a PartitionKey other than the first operation's -> 400
//     CommandsInBatchActOnDifferentPartitions;
//   * the second occurrence of a (PartitionKey, RowKey) -> 400
//     InvalidDuplicateRow;
//   * `authorize` errors (403), when `authorize` is set.
// The table's existence and ETag/existence conditions are the engine's
// business (checked when the plan is applied). `version` is the outer
// request's x-ms-version (sub-requests do not repeat it): before 2015-12-11
// the operations may carry Atom entries and inserts may negotiate Atom.
// `flavor`: the listener's rules each entity is checked by (BuildWriteOp).
PlanResult PlanChangeset(const std::vector<protocol::batch::SubRequest>& operations, std::string_view root_path,
                         const BatchAuthorizer& authorize, std::string_view version = {},
                         const protocol::FlavorPolicy& flavor = protocol::StoragePolicy());

}  // namespace tablestone::api
