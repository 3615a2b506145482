#include "server/api/entity_ops.h"

#include "protocol/atom/atom_reader.h"
#include "protocol/atom/atom_writer.h"
#include "protocol/odata_json.h"
#include "protocol/odata_writer.h"
#include "storage/model/etag.h"
#include "storage/model/limits.h"

namespace tablestone::api {

using protocol::ApiError;
using protocol::Operation;

protocol::ApiResult<model::WriteOp> BuildWriteOp(const EntityOpRequest& req) {
  model::WriteOp op;
  switch (req.operation) {
    case Operation::kInsertEntity: op.kind = model::WriteKind::kInsert; break;
    case Operation::kUpdateEntity: op.kind = model::WriteKind::kUpdate; break;
    case Operation::kMergeEntity: op.kind = model::WriteKind::kMerge; break;
    case Operation::kInsertOrReplaceEntity: op.kind = model::WriteKind::kInsertOrReplace; break;
    case Operation::kInsertOrMergeEntity: op.kind = model::WriteKind::kInsertOrMerge; break;
    case Operation::kDeleteEntity: op.kind = model::WriteKind::kDelete; break;
    default: return ApiError::InternalError();
  }
  // Learn: update-entity2: If-None-Match is not supported on writes.
  if (req.if_none_match) {
    return ApiError::InvalidInput("If-None-Match HTTP header cannot be specified for update operations.");
  }
  const bool needs_if_match = op.kind == model::WriteKind::kUpdate || op.kind == model::WriteKind::kMerge ||
                              op.kind == model::WriteKind::kDelete;
  if (needs_if_match) {
    if (!req.if_match) return ApiError::InvalidInput();
    if (!model::ParseIfMatch(*req.if_match, &op.if_match) || op.if_match.kind == model::IfMatch::Kind::kNone) {
      return ApiError::InvalidInput("The etag value '" + std::string(*req.if_match) + "' specified in one of the "
                                    "request headers is not valid. Please make sure only one etag value is "
                                    "specified and is valid.");
    }
  }
  if (req.url_key) {
    for (const std::string* k : {&req.url_key->partition_key, &req.url_key->row_key}) {
      if (model::Utf16Length(*k) > model::kMaxKeyUtf16Units) return ApiError::PropertyValueTooLarge();
    }
  }
  if (op.kind == model::WriteKind::kDelete) {
    if (!req.url_key) return ApiError::InvalidInput();
    op.entity.partition_key = req.url_key->partition_key;
    op.entity.row_key = req.url_key->row_key;
    if (auto refused = protocol::CheckEntity(*req.flavor, op.entity)) return *refused;
    return op;
  }
  auto format = protocol::CheckBodyContentType(req.content_type, req.version, req.body);
  if (!format.ok()) return format.error();
  auto parsed = *format == protocol::BodyFormat::kAtom ? protocol::atom::ParseEntityAtom(req.body)
                                                       : protocol::ParseEntityJson(req.body);
  if (!parsed.ok()) return parsed.error();
  op.entity = std::move(parsed->entity);
  if (req.url_key) {
    // URL keys win; a body key that differs is a client error (Learn: update-entity2).
    if ((parsed->has_partition_key && op.entity.partition_key != req.url_key->partition_key) ||
        (parsed->has_row_key && op.entity.row_key != req.url_key->row_key)) {
      return ApiError::InvalidInput();
    }
    op.entity.partition_key = req.url_key->partition_key;
    op.entity.row_key = req.url_key->row_key;
  } else if (!parsed->has_partition_key || !parsed->has_row_key) {
    return ApiError::PropertiesNeedValue();
  }
  if (auto refused = protocol::CheckEntity(*req.flavor, op.entity)) return *refused;
  return op;
}

EntityOpResponse RenderWriteSuccess(const model::WriteOp& op, int64_t timestamp, const WriteResponseContext& ctx) {
  EntityOpResponse out;
  if (op.kind == model::WriteKind::kDelete) {
    out.status = 204;
    out.headers.emplace_back("DataServiceVersion", "1.0;");
    return out;
  }
  std::string etag = model::FormatETag(timestamp);
  if (op.kind != model::WriteKind::kInsert) {
    out.status = 204;
    out.headers.emplace_back("DataServiceVersion", "1.0;");
    out.headers.emplace_back("ETag", std::move(etag));
    return out;
  }
  std::string location(ctx.base_url);
  protocol::AppendEntityKeyPath(&location, ctx.table, op.entity.partition_key, op.entity.row_key);
  out.headers.reserve(5);
  if (ctx.prefer != protocol::PreferReturn::kNone) {
    out.headers.emplace_back("Preference-Applied", std::string(protocol::PreferReturnName(ctx.prefer)));
  }
  out.headers.emplace_back("DataServiceVersion", "3.0;");
  out.headers.emplace_back("Location", location);
  out.headers.emplace_back("DataServiceId", std::move(location));
  out.headers.emplace_back("ETag", std::move(etag));
  if (ctx.prefer == protocol::PreferReturn::kReturnNoContent) {
    out.status = 204;
    return out;
  }
  out.status = 201;
  model::Entity stored = op.entity;
  stored.timestamp = timestamp;
  protocol::EntityWriteContext wctx{ctx.base_url, ctx.account, ctx.table, ctx.level, nullptr};
  out.body = ctx.level == protocol::MetadataLevel::kAtom ? protocol::atom::WriteEntityEntry(stored, wctx)
                                                        : protocol::WriteEntity(stored, wctx);
  return out;
}

}  // namespace tablestone::api
