// Query Tables, Create Table, Delete Table, Get Table (Learn: query-tables, create-table, delete-table).
#include <optional>
#include <string>
#include <vector>

#include "protocol/continuation.h"
#include "protocol/filter/filter.h"
#include "protocol/odata_json.h"
#include "protocol/odata_writer.h"
#include "protocol/request_options.h"
#include "server/api/handlers.h"
#include "server/api/response.h"

namespace tablestone::api {

using protocol::ApiError;

void HandleQueryTables(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  auto level = protocol::NegotiateMetadata(info.Query("$format"), info.Header("Accept"));
  if (!level.ok()) return WriteError(info, level.error(), response);
  auto top = protocol::ParseTop(info.Query("$top"));
  if (!top.ok()) return WriteError(info, top.error(), response);

  auto parsed_filter = ParseFilterOption(info);
  if (!parsed_filter.ok()) return WriteError(info, parsed_filter.error(), response);
  std::shared_ptr<const protocol::filter::Filter> filter = std::move(parsed_filter).value();
  storage::TableListSpec spec;
  if (const std::string* token = info.Query("NextTableName")) {
    auto resume = protocol::DecodeContinuation(*token);
    if (!resume.ok()) return WriteError(info, resume.error(), response);
    spec.resume_from = std::move(resume).value();
  }
  if (filter) {
    spec.predicate = [filter](std::string_view name) { return filter->MatchesTableName(name); };
  }
  std::vector<std::string> names;
  std::optional<std::string> next;
  if (!top->has_value() || **top > 0) {
    spec.max_results = top->has_value() ? static_cast<size_t>(**top) : 1000;
    auto result = ctx.engine.ListTables(info.account(), spec);
    if (!result.ok()) return WriteError(info, protocol::FromStatus(result.status()), response);
    names.reserve(result->tables.size());
    for (const auto& t : result->tables) names.push_back(t.name);
    next = result->next;
  }
  if (next) response.set("x-ms-continuation-NextTableName", protocol::EncodeContinuation(*next));
  WriteJson(response, 200, *level,
            protocol::WriteTableFeed(names, info.base_url, info.account(), *level));
}

void HandleCreateTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  auto ct = protocol::CheckJsonContentType(info.Header("Content-Type"), info.HasHeader("Content-Type"));
  if (!ct.ok()) return WriteError(info, ct.error(), response);
  auto level = protocol::NegotiateMetadata(info.Query("$format"), info.Header("Accept"));
  if (!level.ok()) return WriteError(info, level.error(), response);
  auto name = protocol::ParseTableNameJson(info.request.body());
  if (!name.ok()) return WriteError(info, name.error(), response);
  auto valid = protocol::ValidateTableName(*name);
  if (!valid.ok()) return WriteError(info, valid.error(), response);

  auto created = ctx.engine.CreateTable(info.account(), *name);
  if (!created.ok()) return WriteError(info, protocol::FromStatus(created.status()), response);

  const bool prefer_sent = info.HasHeader("Prefer");
  protocol::PreferReturn prefer = protocol::ParsePrefer(info.Header("Prefer"));
  std::string location = info.base_url + "Tables('" + created->name + "')";
  if (prefer == protocol::PreferReturn::kReturnNoContent) {
    WriteNoContent(response, "3.0;");
    response.set("Preference-Applied", "return-no-content");
  } else {
    WriteJson(response, 201, *level,
              protocol::WriteTableEntry(created->name, info.base_url, info.account(), *level));
    // Learn: setting-the-prefer-header-to-manage-response-echo-on-insert-operations: Preference-Applied only when the
    // request had Prefer.
    if (prefer_sent && prefer == protocol::PreferReturn::kReturnContent) {
      response.set("Preference-Applied", "return-content");
    }
  }
  response.set("Location", location);
  response.set("DataServiceId", location);
}

void HandleDeleteTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  Status st = ctx.engine.DeleteTable(info.account(), info.route.resource.table);
  if (!st.ok()) {
    // Learn: delete-table: a missing table answers ResourceNotFound (not TableNotFound).
    if (st.code() == StatusCode::kTableNotFound || st.code() == StatusCode::kNotFound) {
      return WriteError(info, ApiError::ResourceNotFound(), response);
    }
    return WriteError(info, protocol::FromStatus(st), response);
  }
  WriteNoContent(response);
}

void HandleGetTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  auto level = protocol::NegotiateMetadata(info.Query("$format"), info.Header("Accept"));
  if (!level.ok()) return WriteError(info, level.error(), response);
  auto table = ctx.engine.GetTable(info.account(), info.route.resource.table);
  if (!table.ok()) {
    if (table.status().code() == StatusCode::kTableNotFound || table.status().code() == StatusCode::kNotFound) {
      return WriteError(info, ApiError::ResourceNotFound(), response);
    }
    return WriteError(info, protocol::FromStatus(table.status()), response);
  }
  WriteJson(response, 200, *level, protocol::WriteTableEntry(table->name, info.base_url, info.account(), *level));
}

}  // namespace tablestone::api
