// Query Tables, Create Table, Delete Table, Get Table (Learn: query-tables, create-table, delete-table): each parses
// its typed request (table_ops.h), then runs it against the engine and renders the answer.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "protocol/continuation.h"
#include "server/api/handlers.h"
#include "server/api/response.h"
#include "server/api/response_writer.h"
#include "server/api/page_cut_engine.h"
#include "server/api/table_ops.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"
#include "storage/model/limits.h"

namespace tablestone::api {

using protocol::ApiError;

namespace {

// Query Tables under a flavour with Cosmos tokens: the account's matching
// tables ordered by (ShuffleKey(seed, name), name), or by name with the
// shuffle off (hash 0), a page of them after req.cosmos_after. The whole
// listing is read per page: an account's tables are few.
void RunCosmosQueryTables(const ApiContext& ctx, const RequestInfo& info, QueryTablesRequest&& req,
                          storage::TableListSpec&& spec, http::Response& response) {
  const protocol::FlavorPolicy& flavor = ctx.options.flavor;
  std::vector<std::pair<uint64_t, std::string>> placed;
  std::optional<protocol::CosmosResume> next;
  const faults::PageCut* cut = info.page_cut ? &*info.page_cut : nullptr;  // CutsWholePage
  const size_t n = CutPageSize(req.top.has_value() ? static_cast<size_t>(*req.top) : model::kMaxPageEntities, cut);
  if (n > 0) {
    spec.max_results = SIZE_MAX;
    auto result = ctx.engine.ListTables(req.account, spec);
    if (!result.ok()) return WriteError(info, protocol::FromStatus(result.status()), response);
    for (storage::TableInfo& table : result->tables) {
      const uint64_t hash = flavor.shuffle ? protocol::ShuffleKey(flavor.shuffle_seed, table.name) : 0;
      if (req.cosmos_after && std::tie(hash, table.name) <= std::tie(req.cosmos_after->hash, req.cosmos_after->first)) {
        continue;
      }
      placed.emplace_back(hash, std::move(table.name));
    }
    std::sort(placed.begin(), placed.end());
    if (placed.size() > n) {
      placed.resize(n);
      next = protocol::CosmosResume{placed.back().first, placed.back().second, {}};
    }
  }
  if (cut != nullptr && cut->max_rows == 0 && req.cosmos_after && !placed.empty()) {
    // Realistic mode's empty page: no table, and the token the request came with.
    placed.clear();
    next = req.cosmos_after;
  }
  std::vector<std::string> names;
  names.reserve(placed.size());
  for (auto& [hash, name] : placed) names.push_back(std::move(name));
  if (next) {
    response.set("x-ms-continuation-NextTableName", protocol::EncodeCosmosToken(protocol::CosmosTokenKind::kTables, *next));
  }
  WriterFor(req.level).TableFeed(response, names, info.base_url, req.account);
}

void RunQueryTables(const ApiContext& ctx, const RequestInfo& info, QueryTablesRequest&& req,
                    http::Response& response) {
  storage::TableListSpec spec;
  if (req.resume_from) spec.resume_from = std::move(*req.resume_from);
  if (req.filter) {
    spec.predicate = [filter = std::move(req.filter)](std::string_view name) {
      return filter->MatchesTableName(name);
    };
  }
  if (ctx.options.flavor.continuation == protocol::ContinuationStyle::kCosmosToken) {
    return RunCosmosQueryTables(ctx, info, std::move(req), std::move(spec), response);
  }
  std::vector<std::string> names;
  std::optional<std::string> next;
  if (!req.top.has_value() || *req.top > 0) {
    spec.max_results = req.top.has_value() ? static_cast<size_t>(*req.top) : 1000;
    auto result = ctx.engine.ListTables(req.account, spec);
    if (!result.ok()) return WriteError(info, protocol::FromStatus(result.status()), response);
    next = result->next;
    names.reserve(result->tables.size());
    for (const auto& t : result->tables) names.push_back(t.name);
  }
  if (next) response.set("x-ms-continuation-NextTableName", protocol::EncodeContinuation(*next));
  WriterFor(req.level).TableFeed(response, names, info.base_url, req.account);
}

void RunCreateTable(const ApiContext& ctx, const RequestInfo& info, const CreateTableRequest& req,
                    http::Response& response) {
  auto created = ctx.engine.CreateTable(req.account, req.name);
  if (!created.ok()) return WriteError(info, protocol::FromStatus(created.status()), response);

  std::string location = info.base_url + "Tables('" + created->name + "')";
  if (req.prefer == protocol::PreferReturn::kReturnNoContent) {
    WriteNoContent(response, "3.0;");
    response.set("Preference-Applied", "return-no-content");
  } else {
    WriterFor(req.level).TableEntry(response, 201, created->name, info.base_url, req.account);
    // Learn: setting-the-prefer-header-to-manage-response-echo-on-insert-operations: Preference-Applied only when the
    // request had Prefer.
    if (req.prefer_sent && req.prefer == protocol::PreferReturn::kReturnContent) {
      response.set("Preference-Applied", "return-content");
    }
  }
  response.set("Location", location);
  response.set("DataServiceId", location);
}

void RunDeleteTable(const ApiContext& ctx, const RequestInfo& info, const TableRequest& req,
                    http::Response& response) {
  Status st = ctx.engine.DeleteTable(req.account, req.table);
  if (!st.ok()) {
    // Learn: delete-table: a missing table answers ResourceNotFound (not TableNotFound).
    if (st.code() == StatusCode::kTableNotFound || st.code() == StatusCode::kNotFound) {
      return WriteError(info, ApiError::ResourceNotFound(), response);
    }
    return WriteError(info, protocol::FromStatus(st), response);
  }
  WriteNoContent(response);
}

void RunGetTable(const ApiContext& ctx, const RequestInfo& info, const TableRequest& req,
                 http::Response& response) {
  auto table = ctx.engine.GetTable(req.account, req.table);
  if (!table.ok()) {
    if (table.status().code() == StatusCode::kTableNotFound || table.status().code() == StatusCode::kNotFound) {
      return WriteError(info, ApiError::ResourceNotFound(), response);
    }
    return WriteError(info, protocol::FromStatus(table.status()), response);
  }
  WriterFor(req.level).TableEntry(response, 200, table->name, info.base_url, req.account);
}

}  // namespace

void HandleQueryTables(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseQueryTables(info.Parts(headers));
  if (!req.ok()) return WriteError(info, req.error(), response);
  RunQueryTables(ctx, info, std::move(*req), response);
}

const protocol::ApiResult<CreateTableRequest>& ParsedCreateTable(const RequestInfo& info) {
  if (!info.create_table) {
    BeastRequestHeaders headers(info.request);
    info.create_table = ParseCreateTable(info.Parts(headers));
  }
  // `account` views the context's route, which may have moved since the parse.
  if (info.create_table->ok()) (*info.create_table)->account = info.account();
  return *info.create_table;
}

void HandleCreateTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  const auto& req = ParsedCreateTable(info);
  if (!req.ok()) return WriteError(info, req.error(), response);
  RunCreateTable(ctx, info, *req, response);
}

void HandleDeleteTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseDeleteTable(info.Parts(headers));
  if (!req.ok()) return WriteError(info, req.error(), response);
  RunDeleteTable(ctx, info, *req, response);
}

void HandleGetTable(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  auto req = ParseGetTable(info.Parts(headers));
  if (!req.ok()) return WriteError(info, req.error(), response);
  RunGetTable(ctx, info, *req, response);
}

}  // namespace tablestone::api
