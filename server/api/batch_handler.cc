// Entity group transactions (Learn: performing-entity-group-transactions): parse the multipart body, validate the
// whole changeset (batch_plan.h), apply it with ONE Engine::Write (one
// partition lock, one RocksDB WriteBatch, one timestamp), and answer 202 with
// one sub-response per operation, or with the single failing operation's
// error. Batch-level problems (413, malformed multipart) are plain JSON errors.
#include "server/api/batch_handler.h"

#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api/response_writer.h"
#include "protocol/batch/multipart.h"
#include "server/api/leniency.h"
#include "protocol/error_body.h"
#include "server/api/batch_plan.h"
#include "server/api/entity_ops.h"
#include "server/api/handlers.h"
#include "server/api/request_parts.h"
#include "server/api/response.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"
#include "storage/model/limits.h"

namespace tablestone::api {

using protocol::ApiError;
using protocol::Operation;
using protocol::batch::SubResponse;

namespace {

void AddFramingHeaders(SubResponse* part) {
  part->headers.emplace_back("X-Content-Type-Options", "nosniff");
  part->headers.emplace_back("Cache-Control", "no-cache");
}

// The failing operation's part (Learn: performing-entity-group-transactions): its real status, the OData JSON
// error from the one error renderer (its XML form for an Atom-era batch), message prefixed with "<index>:".
SubResponse ErrorPart(const ApiError& indexed, std::string_view request_id, bool prefer_applied_no_content,
                      bool xml, protocol::ErrorMessageStyle style) {
  SubResponse part;
  part.status = indexed.http_status;
  AddFramingHeaders(&part);
  if (prefer_applied_no_content) part.headers.emplace_back("Preference-Applied", "return-no-content");
  if (xml) {
    part.headers.emplace_back("DataServiceVersion", "1.0;");
    part.headers.emplace_back("Content-Type", "application/xml");
    part.body = protocol::RenderXmlError(indexed, request_id, model::NowTicks());
    return part;
  }
  part.headers.emplace_back("DataServiceVersion", "3.0;");
  part.headers.emplace_back("Content-Type", protocol::JsonContentType(protocol::MetadataLevel::kMinimalMetadata));
  part.body = protocol::RenderJsonError(indexed, request_id, model::NowTicks(), style);
  return part;
}

// A batch of an Atom-era version answers its errors in XML unless it asked for
// JSON (protocol::IsAtomEraVersion; the sub-requests' Accept is not read for
// the batch-level failure part).
bool XmlErrors(const RequestInfo& info) {
  if (!protocol::IsAtomEraVersion(info.api_version)) return false;
  auto level = protocol::NegotiateMetadata(nullptr, info.Header("Accept"), info.api_version);
  return !level.ok() || *level == protocol::MetadataLevel::kAtom;
}

void WriteBatchParts(const std::vector<SubResponse>& parts, bool is_query, http::Response& response) {
  std::string content_type;
  response.result(202);
  response.body() = protocol::batch::WriteBatchResponse(parts, is_query, &content_type);
  response.set(boost::beast::http::field::content_type, content_type);
  response.set(boost::beast::http::field::cache_control, "no-cache");
  response.set("X-Content-Type-Options", "nosniff");
  response.prepare_payload();
}

void WriteFailure(const RequestInfo& info, const ApiError& indexed, bool prefer_no_content,
                  http::Response& response) {
  LogServerError(info, indexed);  // a 500 inside the 202 envelope is still a server failure
  WriteBatchParts({ErrorPart(indexed, info.request_id, prefer_no_content, XmlErrors(info), info.flavor->error_messages)}, false, response);
}

BatchAuthorizer MakeAuthorizer(const ApiContext& ctx, const RequestInfo& info) {
  // SharedKey/SharedKeyLite/anonymous grants cover every operation; SAS
  // grants are checked per operation (permission letter, table, key range).
  if (info.grant.kind != AuthGrant::Kind::kAccountSas && info.grant.kind != AuthGrant::Kind::kServiceSas) {
    return nullptr;
  }
  return [&ctx, &info](Operation op, std::string_view table, const model::EntityKey& key) {
    return ctx.authenticator.AuthorizeBatchOperation(info.grant, op, table, key);
  };
}

// The headers of a $batch sub-request (names lower-cased by the parser),
// looked up like a top-level request's: first value, any case.
class SubRequestHeaders final : public RequestHeaders {
 public:
  explicit SubRequestHeaders(const protocol::batch::SubRequest& sub) : sub_(sub) {}
  std::optional<std::string_view> Find(std::string_view name) const override {
    for (const auto& [n, value] : sub_.headers) {
      if (model::EqualsIgnoreCase(n, name)) return std::string_view(value);
    }
    return std::nullopt;
  }

 private:
  const protocol::batch::SubRequest& sub_;
};

// A batch holding a single GET (Learn: performing-entity-group-transactions): run it through the same path as a
// top-level Get Entity / Query Entities (AnswerGetEntity / AnswerQueryEntities, from the sub-request's own parts)
// and wrap its response as the only part.
void RunQuery(const ApiContext& ctx, const RequestInfo& info, const protocol::batch::SubRequest& sub,
              http::Response& response) {
  auto single_part = [&](SubResponse part) { WriteBatchParts({std::move(part)}, true, response); };
  const bool xml = XmlErrors(info);
  auto resolved = ResolveSubRequest(sub, info.route.account.root_path);
  if (!resolved.ok()) return single_part(ErrorPart(resolved.error(), info.request_id, false, xml, info.flavor->error_messages));
  const Operation op = resolved->operation;
  if (op != Operation::kGetEntity && op != Operation::kQueryEntities) {
    return single_part(ErrorPart(ApiError::InvalidInput(), info.request_id, false, xml, info.flavor->error_messages));
  }
  if (BatchAuthorizer authorize = MakeAuthorizer(ctx, info)) {
    model::EntityKey key = resolved->resource.key.value_or(model::EntityKey{});
    auto allowed = authorize(op, resolved->resource.table, key);
    if (!allowed.ok()) return single_part(ErrorPart(allowed.error(), info.request_id, false, xml, info.flavor->error_messages));
  }

  // Only the outer request is authenticated; the sub-request's headers are
  // read for what the operation itself reads (Accept). Sub-requests do not
  // repeat x-ms-version: the outer request's decides the payload format.
  SubRequestHeaders headers(sub);
  RequestParts parts{info.account(), info.route.account.secondary, resolved->resource, resolved->query, headers,
                     sub.body, info.api_version, info.flavor};
  http::Response sub_response;
  sub_response.version(11);
  if (op == Operation::kGetEntity) {
    AnswerGetEntity(ctx, parts, info, sub_response);
  } else {
    AnswerQueryEntities(ctx, parts, info, sub_response);
  }
  SubResponse part;
  part.status = static_cast<int>(sub_response.result_int());
  part.content_id = sub.content_id;
  for (const auto& field : sub_response) {
    if (field.name() == boost::beast::http::field::content_length) continue;
    part.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  part.body = std::move(sub_response.body());
  single_part(std::move(part));
}

}  // namespace

void HandleBatch(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  // A body over the service's 4 MiB cap (Learn: performing-entity-group-transactions)
  // never gets here: Dispatch refuses it before any handler, as a plain error.
  const std::string_view content_type = info.Header("Content-Type");
  const size_t max_operations = info.flavor->max_batch_operations;
  auto parsed = protocol::batch::ParseBatchRequest(content_type, info.request.body(), max_operations);
  if (!parsed.ok() && ctx.options.loose && !protocol::batch::HasBatchBoundary(content_type)) {
    // --loose: a well-formed multipart body sent with another Content-Type is
    // read with the boundary it opens with, as Azurite reads it; otherwise the
    // first error stands.
    if (auto guessed = protocol::batch::ContentTypeFromBatchBody(info.request.body())) {
      auto retried = protocol::batch::ParseBatchRequest(*guessed, info.request.body(), max_operations);
      if (retried.ok() || retried.error().failed_index) {
        WarnLeniency(Leniency::kBatchContentType);
        parsed = std::move(retried);
      }
    }
  }
  if (!parsed.ok()) {
    // The parser blames an operation for ">100 operations"; the service
    // answers that one inside the 202 envelope, like any other per-operation
    // failure, so SDKs can read the index.
    if (parsed.error().failed_index) return WriteFailure(info, parsed.error(), false, response);
    return WriteError(info, parsed.error(), response);
  }
  // Counted once the handler is done, unless its try on the I/O thread gave
  // up (the short lane runs it again and counts it then).
  struct CountOnce {
    const ApiContext& ctx;
    const RequestInfo& info;
    size_t operations;
    ~CountOnce() {
      if (ctx.metrics != nullptr && (info.inline_try == nullptr || !info.inline_try->gave_up)) {
        ctx.metrics->RecordBatch(operations);
      }
    }
  } count_once{ctx, info, parsed->operations.size()};
  if (parsed->is_query) return RunQuery(ctx, info, parsed->operations.front(), response);

  // 1. Validate everything before touching the engine.
  PlanResult planned =
      PlanChangeset(parsed->operations, info.route.account.root_path, MakeAuthorizer(ctx, info), info.api_version,
                    *info.flavor);
  if (planned.failure) return WriteFailure(info, planned.failure->Indexed(), false, response);
  BatchPlan& plan = planned.plan;

  // 2. A missing table is the first operation's failure (Learn: performing-entity-group-transactions).
  auto table = ctx.engine.GetTable(info.account(), plan.table);
  if (!table.ok()) return WriteFailure(info, protocol::FromStatus(table.status()).WithBatchIndex(0), false, response);

  // 3. One atomic write: every op or none, one timestamp (storage/engine.h).
  std::vector<model::WriteOp> ops;
  ops.reserve(plan.operations.size());
  for (PlannedOperation& p : plan.operations) ops.push_back(std::move(p.op));
  storage::WriteResult result =
      ctx.engine.Write(*table, std::span<const model::WriteOp>(ops), ReadWaitOf(info.inline_try));
  if (info.inline_try != nullptr && result.status.code() == StatusCode::kWouldBlock) {
    // Tried on the I/O thread (placement.h, kByBatchContent) and a stored
    // version is only on disk: nothing was written; the short lane runs it again.
    info.inline_try->gave_up = true;
    return;
  }
  if (!result.status.ok()) {
    size_t index = result.failed_index < ops.size() ? result.failed_index : 0;
    const PlannedOperation& failed = plan.operations[index];
    bool prefer_applied = failed.operation == Operation::kInsertEntity &&
                          failed.prefer == protocol::PreferReturn::kReturnNoContent;
    return WriteFailure(info, protocol::FromStatus(result.status).WithBatchIndex(index), prefer_applied, response);
  }

  // 4. One part per operation, in request order (Learn: performing-entity-group-transactions).
  std::vector<SubResponse> parts;
  parts.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const PlannedOperation& p = plan.operations[i];
    WriteResponseContext wctx{info.base_url, info.account(), plan.table, p.level, p.prefer};
    EntityOpResponse out = RenderWriteSuccess(ops[i], result.timestamp, wctx);
    SubResponse part;
    part.status = static_cast<int>(out.status);
    part.content_id = p.content_id;
    AddFramingHeaders(&part);
    for (auto& [name, value] : out.headers) part.headers.emplace_back(name, std::move(value));
    if (!out.body.empty()) {
      part.headers.emplace_back("Content-Type", WriterFor(p.level).EntityContentType());
      part.body = std::move(out.body);
    }
    parts.push_back(std::move(part));
  }
  WriteBatchParts(parts, false, response);
}

std::optional<BatchTarget> BatchTargetOf(const RequestInfo& info) {
  if (info.request.body().size() > info.flavor->max_batch_body_bytes) return std::nullopt;
  auto parsed = protocol::batch::ParseBatchRequest(info.Header("Content-Type"), info.request.body(),
                                                   info.flavor->max_batch_operations);
  if (!parsed.ok() || parsed->operations.empty()) return std::nullopt;
  const protocol::batch::SubRequest& first = parsed->operations.front();
  auto resolved = ResolveSubRequest(first, info.route.account.root_path);
  if (!resolved.ok() || resolved->resource.table.empty()) return std::nullopt;
  BatchTarget target{resolved->resource.table, std::nullopt};
  if (resolved->resource.key) {
    target.partition_key = resolved->resource.key->partition_key;
  } else {  // an insert names its keys in its body
    auto body = nlohmann::json::parse(first.body, nullptr, false);
    if (body.is_object()) {
      auto pk = body.find("PartitionKey");
      if (pk != body.end() && pk->is_string()) target.partition_key = pk->get<std::string>();
    }
  }
  return target;
}

}  // namespace tablestone::api
