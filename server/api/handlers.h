// One function per REST operation (table_handlers.cc, entity_handlers.cc,
// query_handler.cc). Each writes the full status/headers/body of its
// response, errors included (via response.h); the dispatcher adds the common
// x-ms-* headers afterwards. None throws for expected failures.
#pragma once

#include <memory>

#include "protocol/api_error.h"
#include "protocol/filter/filter.h"
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

// The $filter query option shared by Query Tables and Query Entities: null
// when absent, else the parsed filter or its 400/501 error.
protocol::ApiResult<std::shared_ptr<const protocol::filter::Filter>> ParseFilterOption(const RequestInfo& info);

}  // namespace tablestone::api
