// Get Entity and the six entity writes (Learn: query-entities, insert-entity, update-entity2, merge-entity,
// delete-entity1).
#include <optional>
#include <string>
#include <vector>

#include "protocol/odata_writer.h"
#include "protocol/request_options.h"
#include "server/api/entity_ops.h"
#include "server/api/handlers.h"
#include "server/api/response.h"
#include "storage/model/etag.h"

namespace tablestone::api {

using protocol::ApiError;

namespace {

std::optional<std::string_view> OptionalHeader(const RequestInfo& info, std::string_view name) {
  if (!info.HasHeader(name)) return std::nullopt;
  return info.Header(name);
}

// A service SAS may be limited to a key range (Learn: create-service-sas).
bool KeyAllowed(const RequestInfo& info, std::string_view pk, std::string_view rk) {
  if (info.grant.kind != AuthGrant::Kind::kServiceSas) return true;
  return info.grant.InRange(pk, rk);
}

}  // namespace

void HandleGetEntity(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  auto level = protocol::NegotiateMetadata(info.Query("$format"), info.Header("Accept"));
  if (!level.ok()) return WriteError(info, level.error(), response);
  auto select = protocol::ParseSelect(info.Query("$select"));
  if (!select.ok()) return WriteError(info, select.error(), response);
  const model::EntityKey& key = *info.route.resource.key;
  if (!KeyAllowed(info, key.partition_key, key.row_key)) {
    return WriteError(info, ApiError::AuthorizationFailure(), response);
  }
  auto table = ctx.engine.GetTable(info.account(), info.route.resource.table);
  if (!table.ok()) return WriteError(info, protocol::FromStatus(table.status()), response);
  auto entity = ctx.engine.GetEntity(*table, key.partition_key, key.row_key);
  if (!entity.ok()) return WriteError(info, protocol::FromStatus(entity.status()), response);
  protocol::EntityWriteContext wctx{info.base_url, info.account(), info.route.resource.table, *level, &*select};
  WriteJson(response, 200, *level, protocol::WriteEntity(*entity, wctx));
  response.set("ETag", model::FormatETag(entity->timestamp));
}

void HandleEntityWrite(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  EntityOpRequest req;
  req.operation = info.route.operation;
  req.url_key = info.route.resource.key;
  req.body = info.request.body();
  req.if_match = OptionalHeader(info, "If-Match");
  req.if_none_match = OptionalHeader(info, "If-None-Match");
  req.content_type = OptionalHeader(info, "Content-Type");
  const bool is_insert = req.operation == protocol::Operation::kInsertEntity;

  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  protocol::PreferReturn prefer = protocol::PreferReturn::kNone;
  if (is_insert) {
    // Only inserts have a body to negotiate and honour Prefer (Learn:
    // setting-the-prefer-header-to-manage-response-echo-on-insert-operations).
    auto negotiated = protocol::NegotiateMetadata(info.Query("$format"), info.Header("Accept"));
    if (!negotiated.ok()) return WriteError(info, negotiated.error(), response);
    level = *negotiated;
    if (info.HasHeader("Prefer")) prefer = protocol::ParsePrefer(info.Header("Prefer"));
  }
  auto op = BuildWriteOp(req);
  if (!op.ok()) return WriteError(info, op.error(), response);
  if (!KeyAllowed(info, op->entity.partition_key, op->entity.row_key)) {
    return WriteError(info, ApiError::AuthorizationFailure(), response);
  }
  auto table = ctx.engine.GetTable(info.account(), info.route.resource.table);
  if (!table.ok()) return WriteError(info, protocol::FromStatus(table.status()), response);
  storage::WriteResult result = ctx.engine.Write(*table, std::span<const model::WriteOp>(&*op, 1));
  if (!result.status.ok()) return WriteError(info, protocol::FromStatus(result.status), response);

  WriteResponseContext wctx{info.base_url, info.account(), info.route.resource.table, level, prefer};
  EntityOpResponse out = RenderWriteSuccess(*op, result.timestamp, wctx);
  if (out.status == 204) {
    WriteNoContent(response);
  } else {
    WriteJson(response, out.status, level, std::move(out.body));
  }
  for (auto& [name, value] : out.headers) response.set(name, value);
}

}  // namespace tablestone::api
