// The admin routes (docs/admin-api.md), outside the Azure namespace and off
// unless ApiOptions::admin_api is set:
//   POST /_tablestone/snapshot?to=NAME    RocksDB checkpoint of the data directory into snapshot_dir/NAME
//   POST /_tablestone/reset[?account=A]   delete every table of A (default: every configured account)
//   GET  /_tablestone/trace               the request trace's state (trace.h)
//   POST /_tablestone/trace               switch it: JSON body {"enabled":B,"file":NAME,"bodies":B}
//   GET /_tablestone/faults               the fault rules with their counts, and realistic mode
//   POST /_tablestone/faults              add rules (body: a rule, an array, or {"rules":[...]})
//   DELETE /_tablestone/faults?id=ID      remove one rule; without ?id= remove every rule
//   POST /_tablestone/faults/realistic    realistic mode on/off, for all or one account/table
// (the fault routes exist only when ApiOptions::faults is set; formats in
// docs/testing-with-faults.md)
//
// Authentication: Authenticator::AuthenticateAdmin (the admin string-to-sign
// covers the query and the body's hash). Authorization (AuthorizeAdmin,
// docs/admin-api.md "Who may do what"): an operation on one account's data
// (reset?account=A, fault rules and realistic mode scoped to account A) is
// allowed to A's keys and to the admin; server-wide ones (snapshot, reset of
// every account, the trace, rules matching any account, the global realistic
// settings) to the admin only. Files: admin_files.h.
//
// The routes, like the UI's, answer only to a Host that no DNS-rebinding
// page can send (IsAllowedHost).
// The `_tablestone` segment cannot clash with an account name (lower-case
// letters and digits only).
#pragma once

#include <optional>
#include <string_view>

#include "server/api/api_options.h"
#include "server/api/authenticator.h"
#include "server/api/trace.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace tablestone::api {

// True for a target under /_tablestone/ that these routes answer (server_routes.h:
// RouteAuth::kAdminSignature), whether or not ApiOptions::admin_api turns them on.
bool IsAdminTarget(std::string_view target);

// True when `host` (a Host header value, with or without a port) is one a
// DNS-rebinding page cannot send: "localhost" or a name below ".localhost",
// an IPv4 or bracketed IPv6 literal (a page served from an IP literal is
// same-origin with nothing else), or one of options.allowed_hosts. Empty: false.
bool IsAllowedHost(std::string_view host, const ApiOptions& options);

// Whether `grant` may run the admin request `request` (already
// authenticated; `query` its parsed query); nullopt when it may, else the 403
// answer.
std::optional<http::Response> AuthorizeAdmin(const http::Request& request, const protocol::QueryParams& query,
                                             const AdminGrant& grant, const ApiOptions& options);

// Authenticator::AuthenticateAdmin on `request`, whose parsed query is
// `query`; the body's hash is checked only `with_body` (not at header time).
protocol::ApiResult<AdminGrant> AuthenticateAdminRequest(const http::Request& request,
                                                         const protocol::QueryParams& query,
                                                         const Authenticator& authenticator, bool with_body);
// The same, parsing the query (InvalidInput when it is malformed).
protocol::ApiResult<AdminGrant> AuthenticateAdminRequest(const http::Request& request,
                                                         const Authenticator& authenticator, bool with_body);

// On the headers alone (before the body is read): the Host check and the
// signature. nullopt when the request may go on, else the refusal.
std::optional<http::Response> AdmitAdmin(const http::Request& header, const ApiOptions& options,
                                         const Authenticator& authenticator);

// Answers one admin request; blocks on the disk (a lane's work, never an I/O thread's).
// `trace` may be null (the trace route then answers 404).
// JSON bodies: {"snapshot":PATH,"ms":N} / {"accounts":[..],"tablesDeleted":N,"ms":N} /
// {"enabled":B,"file":PATH|null,"bodies":B,"written":N,"dropped":N};
// errors {"error":CODE,"message":TEXT} with 400 (bad query or body, a body
// that does not match its signed hash, a target that is not a plain name),
// 403 (Host, authentication, authorization), 404 (unknown route or account),
// 405 (not POST, or not GET/POST for the trace), 409 (snapshot target
// exists), 500 (also: trace file cannot be opened).
http::Response HandleAdmin(const http::Request& request, storage::Engine& engine, const ApiOptions& options,
                           const Authenticator& authenticator, TraceWriter* trace = nullptr);

}  // namespace tablestone::api
