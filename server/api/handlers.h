// One function per REST operation (table_handlers.cc, entity_handlers.cc,
// query_handler.cc). Each writes the full status/headers/body of its
// response, errors included (via response.h); the dispatcher adds the common
// x-ms-* headers afterwards. None throws for expected failures.
#pragma once

#include "server/api/api_context.h"
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

}  // namespace tablestone::api
