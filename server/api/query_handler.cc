// Query Entities (Learn: query-entities): $filter, $select, $top, continuation.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/continuation.h"
#include "protocol/filter/filter.h"
#include "protocol/odata_writer.h"
#include "protocol/request_options.h"
#include "server/api/handlers.h"
#include "server/api/response.h"

namespace tablestone::api {

using protocol::ApiError;

namespace {

// The rows a service SAS with a key range (spk/srk/epk/erk) may read, and-ed
// with the $filter if there is one. `grant` is the request's, which outlives
// the scan that uses this predicate.
class SasRangePredicate final : public model::RowPredicate {
 public:
  SasRangePredicate(const AuthGrant* grant, std::shared_ptr<const protocol::filter::Filter> filter)
      : grant_(grant), filter_(std::move(filter)) {}

  bool Matches(const model::Entity& e) const override {
    return grant_->InRange(e.partition_key, e.row_key) && (filter_ == nullptr || filter_->Matches(e));
  }

  void MatchBlock(const model::RowBlock& block, size_t begin, size_t end, uint8_t* keep) const override {
    if (filter_ != nullptr) {
      filter_->MatchBlock(block, begin, end, keep);
    } else {
      std::fill(keep, keep + (end - begin), uint8_t{1});
    }
    for (size_t i = begin; i < end; ++i) {
      if (keep[i - begin] != 0 && !grant_->InRange(block.partition_key, block.row_keys[i])) keep[i - begin] = 0;
    }
  }

 private:
  const AuthGrant* grant_;
  std::shared_ptr<const protocol::filter::Filter> filter_;
};

// A page's bytes as the response writes them (issue 22, finding 6): the
// stored size undercounts strings full of control characters sixfold.
class JsonRowSizer final : public model::RowSizer {
 public:
  explicit JsonRowSizer(const protocol::EntityWriteContext& ctx) : ctx_(ctx) {}
  size_t Bytes(const model::Entity& entity, size_t) const override {
    return protocol::EntityJsonSizeBound(entity, ctx_);
  }

 private:
  // Views into the request's RequestInfo, which outlives the scan.
  protocol::EntityWriteContext ctx_;
};

}  // namespace

protocol::ApiResult<std::shared_ptr<const protocol::filter::Filter>> ParseFilterOption(const RequestInfo& info) {
  const std::string* text = info.Query("$filter");
  if (text == nullptr) return std::shared_ptr<const protocol::filter::Filter>();
  return protocol::filter::Filter::Parse(*text);
}

void HandleQueryEntities(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  auto level = protocol::NegotiateMetadata(info.Query("$format"), info.Header("Accept"));
  if (!level.ok()) return WriteError(info, level.error(), response);
  auto select = protocol::ParseSelect(info.Query("$select"));
  if (!select.ok()) return WriteError(info, select.error(), response);
  auto top = protocol::ParseTop(info.Query("$top"));
  if (!top.ok()) return WriteError(info, top.error(), response);

  auto parsed_filter = ParseFilterOption(info);
  if (!parsed_filter.ok()) return WriteError(info, parsed_filter.error(), response);
  std::shared_ptr<const protocol::filter::Filter> filter = std::move(parsed_filter).value();

  model::ScanSpec spec;
  const std::string* next_pk = info.Query("NextPartitionKey");
  const std::string* next_rk = info.Query("NextRowKey");
  if (next_pk != nullptr) {
    auto pk = protocol::DecodeContinuation(*next_pk);
    if (!pk.ok()) return WriteError(info, pk.error(), response);
    model::EntityKey resume{std::move(pk).value(), {}};
    if (next_rk != nullptr && !next_rk->empty()) {
      auto rk = protocol::DecodeContinuation(*next_rk);
      if (!rk.ok()) return WriteError(info, rk.error(), response);
      resume.row_key = std::move(rk).value();
    }
    spec.resume_from = std::move(resume);
  } else if (next_rk != nullptr && !next_rk->empty()) {
    return WriteError(info, ApiError::InvalidInput(), response);
  }

  auto table = ctx.engine.GetTable(info.account(), info.route.resource.table);
  if (!table.ok()) return WriteError(info, protocol::FromStatus(table.status()), response);

  std::vector<model::Entity> entities;
  std::optional<model::EntityKey> next;
  protocol::EntityWriteContext wctx{info.base_url, info.account(), info.route.resource.table, *level, &*select};
  if (!top->has_value() || **top > 0) {
    if (filter) filter->PlanScan(&spec);
    const bool sas_range = info.grant.kind == AuthGrant::Kind::kServiceSas &&
                           (info.grant.sas_start.has_value() || info.grant.sas_end.has_value());
    if (sas_range) {
      // The token's range bounds the scan itself, so a page never reads past
      // it nor names a key outside it as the continuation, and a token
      // outside the range yields an empty, final page (docs/compatibility.md,
      // "SAS key ranges"). The predicate stays as a second check.
      spec.bound = model::KeyRange{info.grant.sas_start, info.grant.sas_end};
      spec.predicate = std::make_shared<SasRangePredicate>(&info.grant, filter);
    } else {
      spec.predicate = filter;
    }
    spec.max_results = top->has_value() ? static_cast<size_t>(**top) : model::kMaxPageEntities;
    spec.max_bytes = model::kMaxPageBytes;
    spec.row_sizer = std::make_shared<JsonRowSizer>(wctx);
    spec.deadline = std::chrono::steady_clock::now() + ctx.options.query_time_budget;
    const bool sliced = info.inline_slice != nullptr && info.inline_slice->until < *spec.deadline;
    if (sliced) spec.deadline = info.inline_slice->until;
    if (!spec.match_nothing) {
      auto result = ctx.engine.Scan(*table, spec);
      if (!result.ok()) return WriteError(info, protocol::FromStatus(result.status()), response);
      if (sliced && result->deadline_passed) {
        info.inline_slice->gave_up = true;  // too long for an I/O thread: the dispatcher runs it again
        return;
      }
      entities = std::move(result->entities);
      next = std::move(result->next);
    }
  }
  if (next) {
    response.set("x-ms-continuation-NextPartitionKey", protocol::EncodeContinuation(next->partition_key));
    response.set("x-ms-continuation-NextRowKey", protocol::EncodeContinuation(next->row_key));
  }
  WriteJson(response, 200, *level, protocol::WriteEntityFeed(entities, wctx));
}

}  // namespace tablestone::api
