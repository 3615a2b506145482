// Get Entity and the six entity writes (Learn: query-entities, insert-entity, update-entity2, merge-entity,
// delete-entity1).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "protocol/request_options.h"
#include "server/api/entity_ops.h"
#include "server/api/handlers.h"
#include "server/api/query_ops.h"
#include "server/api/response.h"
#include "server/api/response_writer.h"
#include "storage/model/etag.h"

namespace tablestone::api {

using protocol::ApiError;

namespace {

constexpr std::string_view kDataServiceVersion = "DataServiceVersion";

// The first value of each of `fields` in the request (as FindRequestHeader
// finds by name; Beast names every field it knows when it parses the head),
// in one pass over its headers.
template <size_t N>
std::array<std::optional<std::string_view>, N> RequestFields(const http::Request& request,
                                                             const std::array<boost::beast::http::field, N>& fields) {
  std::array<std::optional<std::string_view>, N> found;
  for (const auto& f : request) {
    for (size_t i = 0; i < N; ++i) {
      if (f.name() == fields[i] && !found[i]) found[i] = std::string_view(f.value().data(), f.value().size());
    }
  }
  return found;
}

// A service SAS may be limited to a key range (Learn: create-service-sas).
bool KeyAllowed(const RequestInfo& info, std::string_view pk, std::string_view rk) {
  if (info.grant.kind != AuthGrant::Kind::kServiceSas) return true;
  return info.grant.InRange(pk, rk);
}

// True when a read bounded by the I/O thread's try (ReadWaitOf, placement.h)
// would have waited for the disk: the try is then marked given up, and the
// dispatcher runs the request again on its lane (nothing was answered or
// written).
bool GaveUpForTheDisk(InlineTry* inline_try, const Status& status) {
  if (inline_try == nullptr || status.code() != StatusCode::kWouldBlock) return false;
  inline_try->gave_up = true;
  return true;
}

}  // namespace

namespace {

// Get Entity's handler step: on success writes the 200 answer; on failure
// writes nothing and returns the error.
std::optional<ApiError> RunGetEntity(const ApiContext& ctx, const GetEntityRequest& req, const RequestInfo& info,
                                     http::Response& response) {
  if (!KeyAllowed(info, req.partition_key, req.row_key)) return ApiError::AuthorizationFailure();
  auto table = ctx.engine.GetTable(req.account, req.table);
  if (!table.ok()) return protocol::FromStatus(table.status());
  auto entity = ctx.engine.GetEntity(*table, req.partition_key, req.row_key, ReadWaitOf(info.inline_try));
  if (GaveUpForTheDisk(info.inline_try, entity.status())) return std::nullopt;
  if (!entity.ok()) return protocol::FromStatus(entity.status());
  protocol::EntityWriteContext wctx{info.base_url, req.account, req.table, req.level, &req.select};
  WriterFor(req.level).Entity(response, 200, *entity, wctx);
  char etag[model::kETagBufferSize];
  response.set(boost::beast::http::field::etag, std::string_view(etag, model::FormatETagTo(entity->timestamp, etag)));
  return std::nullopt;
}

}  // namespace

void AnswerGetEntity(const ApiContext& ctx, const RequestParts& parts, const RequestInfo& info,
                     http::Response& response) {
  auto req = ParseGetEntity(parts);
  if (!req.ok()) return WriteError(protocol::Operation::kGetEntity, parts, info.request_id, req.error(), response);
  if (auto error = RunGetEntity(ctx, *req, info, response)) {
    WriteError(protocol::Operation::kGetEntity, parts, info.request_id, *error, response);
  }
}

void HandleGetEntity(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  AnswerGetEntity(ctx, info.Parts(headers), info, response);
}

const protocol::ApiResult<model::WriteOp>& ParsedWriteOp(const RequestInfo& info) {
  if (!info.write_op) {
    using boost::beast::http::field;
    const auto [if_match, if_none_match, content_type] =
        RequestFields(info.request, std::array{field::if_match, field::if_none_match, field::content_type});
    EntityOpRequest req;
    req.operation = info.route.operation;
    req.url_key = info.route.resource.key;
    req.body = info.request.body();
    req.if_match = if_match;
    req.if_none_match = if_none_match;
    req.content_type = content_type;
    req.version = info.api_version;
    req.flavor = info.flavor;
    info.write_op = BuildWriteOp(req);
  }
  return *info.write_op;
}

void HandleEntityWrite(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  const bool is_insert = info.route.operation == protocol::Operation::kInsertEntity;

  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  protocol::PreferReturn prefer = protocol::PreferReturn::kNone;
  if (is_insert) {
    // Only inserts have a body to negotiate and honour Prefer (Learn:
    // setting-the-prefer-header-to-manage-response-echo-on-insert-operations).
    using boost::beast::http::field;
    const auto [accept, prefer_header] = RequestFields(info.request, std::array{field::accept, field::prefer});
    auto negotiated = protocol::NegotiateMetadata(info.Query("$format"), accept.value_or(std::string_view()),
                                                  info.api_version);
    if (!negotiated.ok()) return WriteError(info, negotiated.error(), response);
    level = *negotiated;
    if (prefer_header) prefer = protocol::ParsePrefer(*prefer_header);
  }
  const auto& op = ParsedWriteOp(info);
  if (!op.ok()) return WriteError(info, op.error(), response);
  if (!KeyAllowed(info, op->entity.partition_key, op->entity.row_key)) {
    return WriteError(info, ApiError::AuthorizationFailure(), response);
  }
  auto table = ctx.engine.GetTable(info.account(), info.route.resource.table);
  if (!table.ok()) return WriteError(info, protocol::FromStatus(table.status()), response);
  storage::WriteResult result =
      ctx.engine.Write(*table, std::span<const model::WriteOp>(&*op, 1), ReadWaitOf(info.inline_try));
  if (GaveUpForTheDisk(info.inline_try, result.status)) return;
  if (!result.status.ok()) return WriteError(info, protocol::FromStatus(result.status), response);

  WriteResponseContext wctx{info.base_url, info.account(), info.route.resource.table, level, prefer};
  EntityOpResponse out = RenderWriteSuccess(*op, result.timestamp, wctx);
  // The answer's DataServiceVersion is the operation's (RenderWriteSuccess):
  // it replaces the framing's. Its other headers are not set by the framing,
  // so they are inserted, without a search for one to replace.
  std::string_view data_service_version;
  for (const auto& [name, value] : out.headers) {
    if (name == kDataServiceVersion) data_service_version = value;
  }
  if (out.status == 204) {
    WriteNoContent(response, data_service_version);
  } else {
    WriterFor(level).RenderedEntity(response, out.status, std::move(out.body));
    response.set(kDataServiceVersion, data_service_version);
  }
  for (auto& [name, value] : out.headers) {
    if (name != kDataServiceVersion) response.insert(name, value);
  }
}

}  // namespace tablestone::api
