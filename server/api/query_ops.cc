#include "server/api/query_ops.h"

#include <utility>

#include "protocol/continuation.h"

namespace tablestone::api {

using protocol::ApiError;

protocol::ApiResult<std::shared_ptr<const protocol::filter::Filter>> ParseFilterOption(
    const protocol::QueryParams& query) {
  const std::string* text = protocol::FindQueryParam(query, "$filter");
  if (text == nullptr) return std::shared_ptr<const protocol::filter::Filter>();
  return protocol::filter::Filter::Parse(*text);
}

protocol::ApiResult<GetEntityRequest> ParseGetEntity(const RequestParts& parts) {
  GetEntityRequest req;
  auto level = protocol::NegotiateMetadata(parts.Query("$format"), parts.headers.Get("Accept"));
  if (!level.ok()) return level.error();
  req.level = *level;
  auto select = protocol::ParseSelect(parts.Query("$select"));
  if (!select.ok()) return select.error();
  req.select = std::move(select).value();
  if (!parts.resource.key) return ApiError::InternalError();
  req.account = parts.account;
  req.table = parts.resource.table;
  req.partition_key = parts.resource.key->partition_key;
  req.row_key = parts.resource.key->row_key;
  return req;
}

protocol::ApiResult<QueryEntitiesRequest> ParseQueryEntities(const RequestParts& parts) {
  QueryEntitiesRequest req;
  auto level = protocol::NegotiateMetadata(parts.Query("$format"), parts.headers.Get("Accept"));
  if (!level.ok()) return level.error();
  req.level = *level;
  auto select = protocol::ParseSelect(parts.Query("$select"));
  if (!select.ok()) return select.error();
  req.select = std::move(select).value();
  auto top = protocol::ParseTop(parts.Query("$top"));
  if (!top.ok()) return top.error();
  req.top = *top;
  auto filter = ParseFilterOption(parts.query);
  if (!filter.ok()) return filter.error();
  req.filter = std::move(filter).value();

  const std::string* next_pk = parts.Query("NextPartitionKey");
  const std::string* next_rk = parts.Query("NextRowKey");
  if (next_pk != nullptr) {
    auto pk = protocol::DecodeContinuation(*next_pk);
    if (!pk.ok()) return pk.error();
    model::EntityKey resume{std::move(pk).value(), {}};
    if (next_rk != nullptr && !next_rk->empty()) {
      auto rk = protocol::DecodeContinuation(*next_rk);
      if (!rk.ok()) return rk.error();
      resume.row_key = std::move(rk).value();
    }
    req.resume_from = std::move(resume);
  } else if (next_rk != nullptr && !next_rk->empty()) {
    return ApiError::InvalidInput();
  }
  req.account = parts.account;
  req.table = parts.resource.table;
  return req;
}

}  // namespace tablestone::api
