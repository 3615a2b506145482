#include "server/api/table_ops.h"

#include <utility>

#include "protocol/atom/atom_reader.h"
#include "protocol/continuation.h"
#include "protocol/odata_json.h"
#include "protocol/route.h"
#include "protocol/xml/acl_xml.h"
#include "server/api/query_ops.h"

namespace tablestone::api {

protocol::ApiResult<QueryTablesRequest> ParseQueryTables(const RequestParts& parts) {
  QueryTablesRequest req;
  req.account = parts.account;
  auto level = protocol::NegotiateMetadata(parts.Query("$format"), parts.headers.Get("Accept"), parts.api_version);
  if (!level.ok()) return level.error();
  req.level = *level;
  auto top = protocol::ParseTop(parts.Query("$top"), parts.flavor->max_top);
  if (!top.ok()) return top.error();
  req.top = *top;
  auto filter = ParseFilterOption(parts.query);
  if (!filter.ok()) return filter.error();
  req.filter = std::move(filter).value();
  if (parts.flavor->continuation == protocol::ContinuationStyle::kCosmosToken) {
    if (const std::string* token = parts.Query("NextTableName")) {
      auto resume = protocol::DecodeCosmosToken(*token, protocol::CosmosTokenKind::kTables);
      if (!resume.ok()) return resume.error();
      req.cosmos_after = std::move(resume).value();
    }
    return req;
  }
  if (const std::string* token = parts.Query("NextTableName")) {
    auto resume = protocol::DecodeContinuation(*token);
    if (!resume.ok()) return resume.error();
    req.resume_from = std::move(resume).value();
  }
  return req;
}

protocol::ApiResult<CreateTableRequest> ParseCreateTable(const RequestParts& parts) {
  CreateTableRequest req;
  req.account = parts.account;
  auto format = protocol::CheckBodyContentType(parts.headers.Find("Content-Type"), parts.api_version, parts.body);
  if (!format.ok()) return format.error();
  auto level = protocol::NegotiateMetadata(parts.Query("$format"), parts.headers.Get("Accept"), parts.api_version);
  if (!level.ok()) return level.error();
  req.level = *level;
  auto name = *format == protocol::BodyFormat::kAtom ? protocol::atom::ParseTableNameAtom(parts.body)
                                                     : protocol::ParseTableNameJson(parts.body);
  if (!name.ok()) return name.error();
  if (auto bad = protocol::CheckTableName(*parts.flavor, *name, protocol::TableNameUse::kCreate)) return *bad;
  req.name = std::move(name).value();
  const std::optional<std::string_view> prefer = parts.headers.Find("Prefer");
  req.prefer_sent = prefer.has_value();
  req.prefer = protocol::ParsePrefer(prefer.value_or(std::string_view()));
  return req;
}

protocol::ApiResult<TableRequest> ParseDeleteTable(const RequestParts& parts) {
  return TableRequest{parts.account, parts.resource.table};
}

protocol::ApiResult<TableRequest> ParseGetTable(const RequestParts& parts) {
  auto level = protocol::NegotiateMetadata(parts.Query("$format"), parts.headers.Get("Accept"), parts.api_version);
  if (!level.ok()) return level.error();
  return TableRequest{parts.account, parts.resource.table, *level};
}

protocol::ApiResult<TableRequest> ParseGetTableAcl(const RequestParts& parts) {
  return TableRequest{parts.account, parts.resource.table};
}

protocol::ApiResult<SetTableAclRequest> ParseSetTableAcl(const RequestParts& parts) {
  auto identifiers = protocol::xml::ParseSignedIdentifiers(parts.body);
  if (!identifiers.ok()) return identifiers.error();
  SetTableAclRequest req;
  req.account = parts.account;
  req.table = parts.resource.table;
  req.entries.reserve(identifiers->size());
  for (protocol::xml::SignedIdentifier& si : *identifiers) {
    protocol::AclEntry e;
    e.has_policy = si.start.has_value() || si.expiry.has_value() || si.permission.has_value();
    e.id = std::move(si.id);
    e.start = si.start;
    e.expiry = si.expiry;
    e.permission = std::move(si.permission);
    req.entries.push_back(std::move(e));
  }
  return req;
}

}  // namespace tablestone::api
