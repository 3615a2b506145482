// Service-level and XML operations (spec §9): Get/Set Table ACL, Get/Set
// Table Service Properties, Get Table Service Stats, CORS preflight, and the
// CORS headers added to ordinary responses.
//
// ACL storage: Set Table ACL stores protocol::EncodeAclBlob(...) via
// Engine::PutTableAcl; the dispatcher's PolicyLookup (service SAS with
// `si=`) reads it back with protocol::DecodeAclBlob (protocol/acl_blob.h).
#pragma once

#include "server/api/api_context.h"
#include "server/http/handler.h"

namespace tablestone::api {

void HandleGetTableAcl(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleSetTableAcl(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleGetServiceProperties(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleSetServiceProperties(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleGetServiceStats(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
// OPTIONS: anonymous; `info.grant` is not set.
void HandlePreflight(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

// Called by the dispatcher for every non-preflight response of a request that
// carries an Origin header (spec §9.3). Must not change status or body.
void ApplyCorsHeaders(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

}  // namespace tablestone::api
