// One function per REST operation (table_handlers.cc, entity_handlers.cc,
// query_handler.cc). Each writes the full status/headers/body of its
// response, errors included (via response.h); the dispatcher adds the common
// x-ms-* headers afterwards. None throws for expected failures.
//
// Each parses its typed request first (entity_ops.h, query_ops.h,
// table_ops.h: pure, all input validation), then runs it against the engine
// and renders the answer.
#pragma once

#include <string_view>

#include "server/api/api_context.h"
#include "server/api/request_parts.h"
#include "server/http/handler.h"

namespace tablestone::api {

void HandleQueryTables(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleCreateTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleDeleteTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
void HandleGetTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

void HandleGetEntity(const ApiContext& ctx, const RequestInfo& info, http::Response& response);
// Insert, Update, Merge, InsertOrReplace, InsertOrMerge, Delete.
void HandleEntityWrite(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

void HandleQueryEntities(const ApiContext& ctx, const RequestInfo& info, http::Response& response);

// Who asks, and how the answer addresses its entities, for an entity read
// run from RequestParts. Views into the caller's request, which outlives the
// call.
struct ReadScope {
  std::string_view request_id;  // for error bodies and the 500 log line
  std::string_view base_url;    // service root with trailing '/'
  const AuthGrant& grant;       // a service SAS may limit the keys readable
  InlineTry* inline_try = nullptr;  // RequestInfo::inline_try
  model::SuspendedScan* resume_scan = nullptr;  // RequestInfo::suspended_scan: a query continues it
  const faults::PageCut* page_cut = nullptr;    // RequestInfo::page_cut, for a page cut whole (CutsWholePage)
};

// The read scope of `info`, the one place it is built: a top-level read and
// the GET inside a $batch (whose request is never tried on the I/O thread nor
// continued, so its slice and scan are null) both read through it.
inline ReadScope ScopeOf(const RequestInfo& info) {
  return ReadScope{info.request_id, info.base_url, info.grant, info.inline_try, info.suspended_scan.get(),
                   info.page_cut ? &*info.page_cut : nullptr};
}

// Get Entity and Query Entities from their request parts: parse the typed
// request (query_ops.h), run it against the engine, and write the whole
// response, errors included. The same path for a top-level request (the
// Handle* functions above) and for the GET inside $batch (batch_handler.cc).
// A read that reached the bound of `scope.inline_try` sets its gave_up (a
// query also its suspended, its scan's state) and writes nothing; given `scope.resume_scan`, it
// continues that scan instead of starting one.
void AnswerGetEntity(const ApiContext& ctx, const RequestParts& parts, const ReadScope& scope,
                     http::Response& response);
void AnswerQueryEntities(const ApiContext& ctx, const RequestParts& parts, const ReadScope& scope,
                         http::Response& response);

}  // namespace tablestone::api
