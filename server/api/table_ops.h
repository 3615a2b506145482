// The table operations as typed requests (Learn: query-tables, create-table,
// delete-table, get-table-acl, set-table-acl): "request parts -> validated
// request", pure (no engine, no Beast). The handlers (table_handlers.cc,
// service_handlers.cc) run them against the engine and render the answer.
// Every string_view points into the RequestParts the request was parsed from
// (request_parts.h).
#pragma once

#include "protocol/cosmos_token.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/acl_blob.h"
#include "protocol/api_error.h"
#include "protocol/filter/filter.h"
#include "protocol/request_options.h"
#include "server/api/request_parts.h"

namespace tablestone::api {

struct QueryTablesRequest {
  std::string_view account;
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  std::optional<int> top;  // 0..1000; 0 = an empty page without a listing
  std::shared_ptr<const protocol::filter::Filter> filter;  // null without $filter
  std::optional<std::string> resume_from;                  // decoded NextTableName
  // Cosmos flavour: the listing is in shuffled order (or by name with the
  // shuffle off) and resumes after this place (protocol/cosmos_token.h).
  std::optional<protocol::CosmosResume> cosmos_after;
};

// Errors, in this order: NegotiateMetadata's ($format, else Accept),
// ParseTop's, Filter::Parse's, DecodeContinuation's (NextTableName; under a
// flavour with Cosmos tokens, DecodeCosmosToken's).
protocol::ApiResult<QueryTablesRequest> ParseQueryTables(const RequestParts& parts);

struct CreateTableRequest {
  std::string_view account;
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;
  std::string name;  // from the body's TableName, validated
  protocol::PreferReturn prefer = protocol::PreferReturn::kNone;
  bool prefer_sent = false;  // a Prefer header was sent (Preference-Applied echoes only then)
};

// Errors, in this order: CheckBodyContentType's (Content-Type),
// NegotiateMetadata's, ParseTableNameJson's or ParseTableNameAtom's (body),
// protocol::CheckTableName's (the flavour's table-name rule).
protocol::ApiResult<CreateTableRequest> ParseCreateTable(const RequestParts& parts);

// Delete Table, Get Table and Get Table ACL: the table as addressed.
struct TableRequest {
  std::string_view account;
  std::string_view table;
  protocol::MetadataLevel level = protocol::MetadataLevel::kMinimalMetadata;  // Get Table only
};

// No errors: the route already checked the table name's shape.
protocol::ApiResult<TableRequest> ParseDeleteTable(const RequestParts& parts);
// Errors: NegotiateMetadata's.
protocol::ApiResult<TableRequest> ParseGetTable(const RequestParts& parts);
// No errors (an XML operation: $format and Accept are not read).
protocol::ApiResult<TableRequest> ParseGetTableAcl(const RequestParts& parts);

struct SetTableAclRequest {
  std::string_view account;
  std::string_view table;
  std::vector<protocol::AclEntry> entries;  // in body order, as stored (protocol::EncodeAclBlob)
};

// Errors: ParseSignedIdentifiers's (body; InvalidXmlDocument, InvalidXmlNodeValue, ...).
protocol::ApiResult<SetTableAclRequest> ParseSetTableAcl(const RequestParts& parts);

}  // namespace tablestone::api
