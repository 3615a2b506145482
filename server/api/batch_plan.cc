#include "server/api/batch_plan.h"

#include <set>
#include <utility>

#include "protocol/url.h"
#include "server/api/entity_ops.h"

namespace tablestone::api {

using protocol::ApiError;
using protocol::Operation;
using protocol::batch::SubRequest;

namespace {

// The resource part of a sub-request path ("/t(...)"), given the outer
// request's service root. Path-style roots are stripped when present; paths
// without the account segment and paths relative to the batch URL are taken
// as resource paths directly (Learn: performing-entity-group-transactions: "Strip scheme, host and account the
// same way as for top-level requests").
std::string ResourcePath(std::string_view path, std::string_view root_path) {
  if (path.empty() || path.front() != '/') return "/" + std::string(path);
  if (root_path.size() > 1 && path.substr(0, root_path.size()) == root_path) {
    return std::string(path.substr(root_path.size() - 1));
  }
  // ".../devstoreaccount1" with nothing after it: the service root itself.
  if (root_path.size() > 1 && path == root_path.substr(0, root_path.size() - 1)) return "/";
  return std::string(path);
}

std::optional<std::string_view> OptionalHeader(const SubRequest& sub, std::string_view lower_name) {
  if (sub.HeaderCount(lower_name) == 0) return std::nullopt;
  return sub.Header(lower_name);
}

}  // namespace

protocol::ApiResult<ResolvedSubRequest> ResolveSubRequest(const SubRequest& sub, std::string_view root_path) {
  protocol::batch::RequestTarget target = protocol::batch::SplitRequestTarget(sub.url);
  ResolvedSubRequest out;
  auto query = protocol::ParseQueryString(target.query);
  if (!query) return ApiError::InvalidInput();
  out.query = std::move(*query);
  auto resource = protocol::ParseResource(ResourcePath(target.path, root_path));
  if (!resource.ok()) return resource.error();
  out.resource = std::move(resource).value();
  std::vector<std::string_view> x_method;
  for (const auto& [name, value] : sub.headers) {
    if (name == "x-http-method") x_method.push_back(value);
  }
  auto op = protocol::ResolveOperation(sub.method, x_method, sub.HeaderCount("if-match") > 0, out.resource,
                                       out.query);
  if (!op.ok()) return op.error();
  out.operation = *op;
  return out;
}

PlanResult PlanChangeset(const std::vector<SubRequest>& operations, std::string_view root_path,
                         const BatchAuthorizer& authorize, std::string_view version,
                         const protocol::FlavorPolicy& flavor) {
  PlanResult result;
  auto fail = [&result](size_t index, ApiError error) {
    result.failure = BatchFailure{index, std::move(error)};
    return std::move(result);
  };
  std::set<std::string> row_keys;
  result.plan.operations.reserve(operations.size());
  for (size_t i = 0; i < operations.size(); ++i) {
    const SubRequest& sub = operations[i];
    auto resolved = ResolveSubRequest(sub, root_path);
    if (!resolved.ok()) return fail(i, resolved.error());
    // Only entity writes belong in a changeset (Learn: performing-entity-group-transactions): no table
    // operations, no nested $batch, no reads.
    if (!protocol::IsEntityWriteOperation(resolved->operation)) return fail(i, ApiError::InvalidInput());
    const std::string& table = resolved->resource.table;
    if (i == 0) {
      // A name the flavour refuses in a URL is refused here as at the top level.
      if (auto bad = protocol::CheckTableName(flavor, table, protocol::TableNameUse::kAddress)) return fail(i, *bad);
      result.plan.table = table;
    } else if (!protocol::SameTableName(flavor, table, result.plan.table)) {
      // The service answers 400 InvalidInput for a changeset spanning tables.
      return fail(i, ApiError::InvalidInput());
    }

    PlannedOperation planned;
    planned.operation = resolved->operation;
    planned.content_id = sub.content_id;
    if (planned.operation == Operation::kInsertEntity) {
      // As at the top level, only inserts negotiate a body and honour Prefer (Learn:
      // setting-the-prefer-header-to-manage-response-echo-on-insert-operations, performing-entity-group-transactions).
      auto level = protocol::NegotiateMetadata(protocol::FindQueryParam(resolved->query, "$format"),
                                               sub.Header("accept"), version);
      if (!level.ok()) return fail(i, level.error());
      planned.level = *level;
      if (sub.HeaderCount("prefer") > 0) planned.prefer = protocol::ParsePrefer(sub.Header("prefer"));
    }

    EntityOpRequest req;
    req.operation = resolved->operation;
    req.url_key = resolved->resource.key;
    req.body = sub.body;
    req.if_match = OptionalHeader(sub, "if-match");
    req.if_none_match = OptionalHeader(sub, "if-none-match");
    req.content_type = OptionalHeader(sub, "content-type");
    req.version = version;
    req.flavor = &flavor;
    auto op = BuildWriteOp(req);
    if (!op.ok()) return fail(i, op.error());
    planned.op = std::move(op).value();

    const model::Entity& entity = planned.op.entity;
    if (i > 0 && entity.partition_key != result.plan.operations.front().op.entity.partition_key) {
      return fail(i, ApiError::CommandsInBatchActOnDifferentPartitions());
    }
    if (!row_keys.insert(entity.row_key).second) return fail(i, ApiError::InvalidDuplicateRow());
    if (authorize) {
      auto allowed = authorize(planned.operation, table, model::EntityKey{entity.partition_key, entity.row_key});
      if (!allowed.ok()) return fail(i, allowed.error());
    }
    result.plan.operations.push_back(std::move(planned));
  }
  return result;
}

}  // namespace tablestone::api
