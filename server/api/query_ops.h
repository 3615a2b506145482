// Get Entity and Query Entities as typed requests (Learn: query-entities):
// "request parts -> validated request", pure (no engine, no Beast), shared by
// top-level requests and the GET inside $batch. The handler step that runs a
// typed request against the engine is in handlers.h.
#pragma once

#include "protocol/cosmos_token.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/filter/filter.h"
#include "protocol/request_options.h"
#include "protocol/url.h"
#include "server/api/request_parts.h"
#include "storage/model/scan_spec.h"

namespace tablestone::api {

// The views point into the RequestParts it was parsed from (request_parts.h).
struct GetEntityRequest {
  std::string_view account;
  std::string_view table;  // as addressed
  std::string_view partition_key;
  std::string_view row_key;
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  std::vector<std::string> select;  // empty = every property
};

// Errors, in this order: NegotiateMetadata's ($format, else Accept), then
// ParseSelect's. The resource must be an entity (the route guarantees it);
// without a key: InternalError.
protocol::ApiResult<GetEntityRequest> ParseGetEntity(const RequestParts& parts);

// The views point into the RequestParts it was parsed from.
struct QueryEntitiesRequest {
  std::string_view account;
  std::string_view table;  // as addressed
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  std::vector<std::string> select;  // empty = every property
  std::optional<int> top;           // 0..max_top of the flavour; 0 = an empty page without a scan
  std::shared_ptr<const protocol::filter::Filter> filter;  // null without $filter
  // From NextPartitionKey (+ NextRowKey, empty when absent or empty).
  std::optional<model::EntityKey> resume_from;
  // Cosmos flavour with the shuffle on: the page starts after this place in
  // the shuffled order (protocol/cosmos_token.h); resume_from is then unset.
  std::optional<protocol::CosmosResume> shuffled_after;
};

// Errors, in this order: NegotiateMetadata's, ParseSelect's, ParseTop's,
// Filter::Parse's, DecodeContinuation's (NextPartitionKey, then
// NextRowKey), and InvalidInput for a non-empty NextRowKey without
// NextPartitionKey. Under a flavour with Cosmos tokens, NextPartitionKey is
// DecodeCosmosToken's and NextRowKey, when sent, must be "NA".
protocol::ApiResult<QueryEntitiesRequest> ParseQueryEntities(const RequestParts& parts);

// The $filter query option shared by Query Tables and Query Entities: null
// when absent, else the parsed filter or its 400/501 error.
protocol::ApiResult<std::shared_ptr<const protocol::filter::Filter>> ParseFilterOption(
    const protocol::QueryParams& query);

}  // namespace tablestone::api
