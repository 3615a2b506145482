// Get/Set Table ACL (Learn: set-table-acl), Get/Set Table Service Properties (Learn: set-table-service-properties),
// Get Table Service Stats (Learn: get-table-service-stats), CORS preflight and actual-request headers
// (Learn: cross-origin-resource-sharing--cors--support-for-the-azure-storage-services).
#include "server/api/service_handlers.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "protocol/acl_blob.h"
#include "protocol/xml/acl_xml.h"
#include "server/api/cors.h"
#include "server/api/response.h"
#include "server/api/service_ops.h"
#include "server/api/table_ops.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

namespace http_ns = boost::beast::http;
using protocol::ApiError;
using protocol::ApiResult;
namespace pxml = protocol::xml;

// Set Table Service Properties is a read-modify-write of one account-meta
// value (sections left out keep their values); serialise it so two
// concurrent updates of different sections cannot lose one another.
std::mutex& PropertiesWriteMutex() {
  static std::mutex mu;
  return mu;
}

void WriteXmlError(const RequestInfo& info, const ApiError& error, http::Response& response) {
  WriteError(info, error, response, /*xml=*/true);
}

void WriteXmlBody(http::Response& response, unsigned status, std::string body) {
  response.result(status);
  response.set(http_ns::field::content_type, "application/xml");
  response.body() = std::move(body);
  response.prepare_payload();
}

// 202/204 without a body: the XML writes answer with Content-Length: 0.
void WriteEmpty(http::Response& response, unsigned status) {
  response.result(status);
  response.erase(http_ns::field::content_type);
  response.body().clear();
  response.content_length(0);
}

std::vector<pxml::SignedIdentifier> ToIdentifiers(const std::vector<protocol::AclEntry>& entries) {
  std::vector<pxml::SignedIdentifier> out;
  out.reserve(entries.size());
  for (const protocol::AclEntry& e : entries) {
    pxml::SignedIdentifier si;
    si.id = e.id;
    si.start = e.start;
    si.expiry = e.expiry;
    si.permission = e.permission;
    out.push_back(std::move(si));
  }
  return out;
}

}  // namespace

ApiResult<pxml::ServiceProperties> LoadServiceProperties(storage::Engine& engine, std::string_view account) {
  auto stored = engine.GetAccountMeta(account, kServicePropertiesKey);
  if (!stored.ok()) return protocol::FromStatus(stored.status());
  pxml::ServiceProperties defaults;
  if (!stored->has_value()) return defaults;
  auto parsed = pxml::ParseServiceProperties(**stored);
  // What we stored was written by WriteServiceProperties; failing to read it
  // back means the value is damaged, not that the client erred.
  if (!parsed.ok()) return ApiError::InternalError();
  return pxml::MergeServiceProperties(defaults, *parsed);
}

namespace {

// The handler steps: each runs its typed request (table_ops.h,
// service_ops.h) against the engine and writes the whole answer, errors
// included (XML).

// Get/Set Table ACL on a missing table: 404 ResourceNotFound, the code the
// service's ACL endpoint answers (docs/compatibility.md), as Delete
// Table does (Learn: delete-table); not the TableNotFound of entity operations.
ApiError AclTableError(const Status& status) {
  if (status.code() == StatusCode::kTableNotFound || status.code() == StatusCode::kNotFound) {
    return ApiError::ResourceNotFound();
  }
  return protocol::FromStatus(status);
}

void RunGetTableAcl(const ApiContext& ctx, const RequestInfo& info, const TableRequest& req,
                    http::Response& response) {
  auto table = ctx.engine.GetTable(req.account, req.table);
  if (!table.ok()) return WriteXmlError(info, AclTableError(table.status()), response);
  auto blob = ctx.engine.GetTableAcl(*table);
  if (!blob.ok()) return WriteXmlError(info, AclTableError(blob.status()), response);
  auto entries = protocol::DecodeAclBlob(*blob);
  if (!entries) return WriteXmlError(info, ApiError::InternalError(), response);
  WriteXmlBody(response, 200, pxml::WriteSignedIdentifiers(ToIdentifiers(*entries)));
}

void RunSetTableAcl(const ApiContext& ctx, const RequestInfo& info, const SetTableAclRequest& req,
                    http::Response& response) {
  auto table = ctx.engine.GetTable(req.account, req.table);
  if (!table.ok()) return WriteXmlError(info, AclTableError(table.status()), response);
  Status put = ctx.engine.PutTableAcl(*table, protocol::EncodeAclBlob(req.entries));
  if (!put.ok()) return WriteXmlError(info, AclTableError(put), response);
  WriteEmpty(response, 204);
}

void RunGetServiceProperties(const ApiContext& ctx, const RequestInfo& info, const GetServicePropertiesRequest& req,
                             http::Response& response) {
  auto properties = LoadServiceProperties(ctx.engine, req.account);
  if (!properties.ok()) return WriteXmlError(info, properties.error(), response);
  WriteXmlBody(response, 200, pxml::WriteServiceProperties(*properties));
}

void RunSetServiceProperties(const ApiContext& ctx, const RequestInfo& info, const SetServicePropertiesRequest& req,
                             http::Response& response) {
  std::lock_guard<std::mutex> lock(PropertiesWriteMutex());
  auto current = LoadServiceProperties(ctx.engine, req.account);
  if (!current.ok()) return WriteXmlError(info, current.error(), response);
  pxml::ServiceProperties merged = pxml::MergeServiceProperties(*current, req.update);
  Status put = ctx.engine.PutAccountMeta(req.account, kServicePropertiesKey, pxml::WriteServiceProperties(merged));
  if (!put.ok()) return WriteXmlError(info, protocol::FromStatus(put), response);
  WriteEmpty(response, 202);
}

void RunGetServiceStats(const GetServiceStatsRequest&, http::Response& response) {
  // One process holds both "locations", so replication is always current.
  WriteXmlBody(response, 200, pxml::WriteServiceStats("live", model::NowTicks()));
}

void RunPreflight(const ApiContext& ctx, const RequestInfo& info, const PreflightRequest& req,
                  http::Response& response) {
  auto properties = LoadServiceProperties(ctx.engine, req.account);
  if (!properties.ok()) return WriteXmlError(info, properties.error(), response);
  CorsRuleMatch match = FindPreflightRule(properties->cors, req.origin, req.method, req.requested_headers);
  if (match.rule == nullptr) return WriteXmlError(info, ApiError::CorsPreflightFailure(), response);
  SetPreflightHeaders(match, req.origin, req.method, req.requested_headers, response);
  WriteEmpty(response, 200);
}

}  // namespace

void HandleGetTableAcl(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseGetTableAcl(info.Parts(headers));
  if (!req.ok()) return WriteXmlError(info, req.error(), response);
  RunGetTableAcl(ctx, info, *req, response);
}

void HandleSetTableAcl(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  // Parse first: a malformed body is a 400 even for a missing table, and a
  // table lookup is not worth doing for it.
  BeastRequestHeaders headers(info.request);
  auto req = ParseSetTableAcl(info.Parts(headers));
  if (!req.ok()) return WriteXmlError(info, req.error(), response);
  RunSetTableAcl(ctx, info, *req, response);
}

void HandleGetServiceProperties(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseGetServiceProperties(info.Parts(headers));
  if (!req.ok()) return WriteXmlError(info, req.error(), response);
  RunGetServiceProperties(ctx, info, *req, response);
}

void HandleSetServiceProperties(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseSetServiceProperties(info.Parts(headers));
  if (!req.ok()) return WriteXmlError(info, req.error(), response);
  RunSetServiceProperties(ctx, info, *req, response);
}

void HandleGetServiceStats(const ApiContext&, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseGetServiceStats(info.Parts(headers));
  if (!req.ok()) return WriteXmlError(info, req.error(), response);
  RunGetServiceStats(*req, response);
}

void HandlePreflight(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParsePreflight(info.Parts(headers));
  if (!req.ok()) return WriteXmlError(info, req.error(), response);
  RunPreflight(ctx, info, *req, response);
}

void ApplyCorsHeaders(storage::Engine& engine, std::string_view account, const http::Request& request,
                      http::Response& response) {
  std::string_view origin = RequestHeader(request, "Origin");
  if (origin.empty()) return;
  auto properties = LoadServiceProperties(engine, account);
  if (!properties.ok()) return;
  std::string_view method(request.method_string().data(), request.method_string().size());
  SetActualRequestHeaders(properties->cors, origin, method, response);
}

}  // namespace tablestone::api
