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

// The typed request of a Create Table or an entity write, parsed from the
// body on the first call for `info` and kept in it (RequestInfo::create_table,
// RequestInfo::write_op): a fault rule that matches on the body and the
// handler read the one parse.
const protocol::ApiResult<CreateTableRequest>& ParsedCreateTable(const RequestInfo& info);
const protocol::ApiResult<model::WriteOp>& ParsedWriteOp(const RequestInfo& info);

// Get Entity and Query Entities from their request parts: parse the typed
// request (query_ops.h), run it against the engine, and write the whole
// response, errors included. The same path for a top-level request (the
// Handle* functions above) and for the GET inside $batch (batch_handler.cc),
// whose parts are the sub-request's and whose `info` is the outer request's
// (who asks, the service root the answer names; a `$batch` is never tried on
// the I/O thread nor continued, so its inline_try and suspended_scan are
// null). A read that reached the bound of `info.inline_try` sets its gave_up
// (a query also its suspended, its scan's state) and writes nothing; given
// `info.suspended_scan`, a query continues that scan instead of starting one.
void AnswerGetEntity(const ApiContext& ctx, const RequestParts& parts, const RequestInfo& info,
                     http::Response& response);
void AnswerQueryEntities(const ApiContext& ctx, const RequestParts& parts, const RequestInfo& info,
                         http::Response& response);

}  // namespace tablestone::api
