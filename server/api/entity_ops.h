// The per-operation logic shared by top-level entity requests and $batch sub-requests, so both apply exactly the same
// validation (Learn: insert-entity, update-entity2, merge-entity, delete-entity1,
// performing-entity-group-transactions): "request parts -> validated model::WriteOp" and "successful write -> status,
// headers, body".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/flavor.h"
#include "protocol/operation.h"
#include "protocol/request_options.h"
#include "storage/model/scan_spec.h"
#include "storage/model/write_op.h"

namespace tablestone::api {

// One entity write as it arrived (top level or inside a changeset).
struct EntityOpRequest {
  protocol::Operation operation = protocol::Operation::kInsertEntity;
  std::optional<model::EntityKey> url_key;  // from the URL; absent for Insert
  std::string_view body;
  std::optional<std::string_view> if_match;
  std::optional<std::string_view> if_none_match;
  std::optional<std::string_view> content_type;
  std::string_view version;  // x-ms-version (empty when absent): Atom bodies before 2015-12-11
  // The listener's rules (protocol::CheckEntity), checked last.
  const protocol::FlavorPolicy* flavor = &protocol::StoragePolicy();
};

// Validates and converts. Errors: everything ParseEntityJson reports,
// PropertiesNeedValue (insert without PartitionKey/RowKey), InvalidInput
// (body keys differ from the URL keys, malformed If-Match, If-None-Match on a
// write), PropertyValueTooLarge (URL key > 1024 UTF-16 units), 415 for a
// non-JSON Content-Type (CheckBodyContentType's: an Atom-era request may send
// an Atom entry, read by protocol/atom/atom_reader.h).
protocol::ApiResult<model::WriteOp> BuildWriteOp(const EntityOpRequest& request);

// What a successful write answers.
struct EntityOpResponse {
  unsigned status = 204;
  // In order; no common x-ms-* headers. The names are string literals.
  std::vector<std::pair<std::string_view, std::string>> headers;
  std::string body;  // JSON, or an Atom entry for MetadataLevel::kAtom (201 insert only)
};

struct WriteResponseContext {
  std::string_view base_url;  // service root with trailing '/'
  std::string_view account;
  std::string_view table;     // as addressed
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  protocol::PreferReturn prefer = protocol::PreferReturn::kNone;
};

// Insert: 201 + entity body (or 204 with return-no-content), ETag, Location,
// DataServiceId, Preference-Applied when Prefer was sent. Update/Merge/
// upserts: 204 + ETag. Delete: 204. `timestamp` = WriteResult::timestamp.
// The caller adds Content-Type/X-Content-Type-Options/Cache-Control as its
// framing requires; DataServiceVersion is included here.
EntityOpResponse RenderWriteSuccess(const model::WriteOp& op, int64_t timestamp, const WriteResponseContext& ctx);

}  // namespace tablestone::api
