// Service-level and XML operations (Learn: set-table-service-properties): Get/Set Table ACL, Get/Set
// Table Service Properties, Get Table Service Stats, CORS preflight, and the
// CORS headers added to ordinary responses.
//
// ACL storage: Set Table ACL stores protocol::EncodeAclBlob(...) via
// Engine::PutTableAcl; the dispatcher's PolicyLookup (service SAS with
// `si=`) reads it back with protocol::DecodeAclBlob (protocol/acl_blob.h).
//
// Service properties storage: one account-meta value per account under
// kServicePropertiesKey holding the Get Table Service Properties XML of the
// full, merged settings (protocol/xml/service_xml.h writes and reads it), so
// the stored form is the wire form and needs no codec of its own.
//
// Each handler writes the whole response, errors included (XML error body,
// Learn: table-service-error-codes). Thread-safe.
#pragma once

#include <string_view>

#include "protocol/api_error.h"
#include "protocol/xml/service_xml.h"
#include "server/api/api_context.h"
#include "server/http/handler.h"

namespace tablestone::api {

inline constexpr std::string_view kServicePropertiesKey = "table-service-properties";

void HandleGetTableAcl(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleSetTableAcl(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleGetServiceProperties(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleSetServiceProperties(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
// 200 on the secondary endpoint; 400 InvalidQueryParameterValue on the
// primary (the service answers so, Learn: get-table-service-stats).
void HandleGetServiceStats(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
// OPTIONS: anonymous; `info.grant` is not set. 200 with the Access-Control-*
// headers of the first matching rule; 400 InvalidHeaderValue without Origin or
// Access-Control-Request-Method; 403 CorsPreflightFailure without a match.
void HandlePreflight(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

// The stored service properties of `account` (defaults, Learn: set-table-service-properties, when none
// were ever set). Errors: storage failures mapped by protocol::FromStatus;
// an unreadable stored value -> InternalError.
protocol::ApiResult<protocol::xml::ServiceProperties> LoadServiceProperties(storage::Engine& engine,
                                                                            std::string_view account);

// Called by the dispatcher for every non-preflight response (errors included, so a browser can read them) of a request
// that carries an Origin header, once the account is known (Learn:
// cross-origin-resource-sharing--cors--support-for-the-azure-storage-services). Adds headers only; never changes the
// status or body. A failure to read the rules adds nothing.
void ApplyCorsHeaders(storage::Engine& engine, std::string_view account, const http::Request& request,
                      http::Response& response);

}  // namespace tablestone::api
