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

namespace {

// $format/Accept and $select, shared by Get Entity and Query Entities (same
// checks, same order, same errors).
protocol::ApiResult<bool> ParseEntityShape(const RequestParts& parts, protocol::MetadataLevel* level,
                                           std::vector<std::string>* select) {
  auto negotiated =
      protocol::NegotiateMetadata(parts.Query("$format"), parts.headers.Get("Accept"), parts.api_version);
  if (!negotiated.ok()) return negotiated.error();
  *level = *negotiated;
  auto selected = protocol::ParseSelect(parts.Query("$select"));
  if (!selected.ok()) return selected.error();
  *select = std::move(selected).value();
  return true;
}

}  // namespace

protocol::ApiResult<GetEntityRequest> ParseGetEntity(const RequestParts& parts) {
  GetEntityRequest req;
  if (auto shape = ParseEntityShape(parts, &req.level, &req.select); !shape.ok()) return shape.error();
  if (!parts.resource.key) return ApiError::InternalError();
  req.account = parts.account;
  req.table = parts.resource.table;
  req.partition_key = parts.resource.key->partition_key;
  req.row_key = parts.resource.key->row_key;
  return req;
}

protocol::ApiResult<QueryEntitiesRequest> ParseQueryEntities(const RequestParts& parts) {
  QueryEntitiesRequest req;
  if (auto shape = ParseEntityShape(parts, &req.level, &req.select); !shape.ok()) return shape.error();
  auto top = protocol::ParseTop(parts.Query("$top"), parts.flavor->max_top);
  if (!top.ok()) return top.error();
  req.top = *top;
  auto filter = ParseFilterOption(parts.query);
  if (!filter.ok()) return filter.error();
  req.filter = std::move(filter).value();
  req.account = parts.account;
  req.table = parts.resource.table;
  if (parts.flavor->continuation == protocol::ContinuationStyle::kCosmosToken) {
    const std::string* next_pk = parts.Query("NextPartitionKey");
    const std::string* next_rk = parts.Query("NextRowKey");
    if (next_rk != nullptr && (next_pk == nullptr || *next_rk != protocol::kCosmosNextRowKey)) {
      return ApiError::InvalidInput();
    }
    if (next_pk == nullptr) return req;
    const bool shuffled = parts.flavor->shuffle;
    auto resume = protocol::DecodeCosmosToken(*next_pk, shuffled ? protocol::CosmosTokenKind::kShuffledEntities
                                                                 : protocol::CosmosTokenKind::kKeyOrderEntities);
    if (!resume.ok()) return resume.error();
    if (shuffled) {
      req.shuffled_after = std::move(resume).value();
    } else {
      req.resume_from = model::EntityKey{std::move(resume->first), std::move(resume->second)};
    }
    return req;
  }

  // A token parameter that is present must be a token: an empty
  // `NextRowKey=` (or `NextPartitionKey=`) is 400 InvalidInput, as the service
  // answers it (microsoft/AzureStorageExplorer#5434, Azure/azure-sdk-for-js#20913).
  // NextPartitionKey alone resumes at the start of that partition.
  const std::string* next_pk = parts.Query("NextPartitionKey");
  const std::string* next_rk = parts.Query("NextRowKey");
  if (next_pk != nullptr) {
    auto pk = protocol::DecodeContinuation(*next_pk);
    if (!pk.ok()) return pk.error();
    model::EntityKey resume{std::move(pk).value(), {}};
    if (next_rk != nullptr) {
      auto rk = protocol::DecodeContinuation(*next_rk);
      if (!rk.ok()) return rk.error();
      resume.row_key = std::move(rk).value();
    }
    req.resume_from = std::move(resume);
  } else if (next_rk != nullptr) {
    return ApiError::InvalidInput();
  }
  return req;
}

}  // namespace tablestone::api
