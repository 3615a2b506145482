// Query Entities (Learn: query-entities): $filter, $select, $top, continuation.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/continuation.h"
#include "protocol/filter/filter.h"
#include "protocol/odata_writer.h"
#include "server/api/handlers.h"
#include "server/api/page_cut_engine.h"
#include "server/api/query_ops.h"
#include "server/api/response.h"
#include "server/api/response_writer.h"
#include "server/api/shuffled_scan.h"
#include "storage/model/datetime.h"
#include "storage/thread_priority.h"

namespace tablestone::api {

using protocol::ApiError;

namespace {

// The rows a service SAS with a key range (spk/srk/epk/erk) may read, and-ed
// with the $filter if there is one. `grant` is the request's, which outlives
// the scan that uses this predicate. The filter (an empty one, "every row",
// when the query has none) is the columnar() part, evaluated over cached
// partitions a column at a time; the key range is the rest, checked on the
// rows the filter keeps. The scan is already bounded by the range
// (ScanSpec::bound): this is the second check.
class SasRangePredicate final : public model::RowPredicate {
 public:
  SasRangePredicate(const AuthGrant* grant, std::shared_ptr<const protocol::filter::Filter> filter)
      : grant_(grant), filter_(filter != nullptr ? std::move(filter) : MatchEveryRow()) {}

  bool Matches(const model::Entity& e) const override { return MatchesRest(e) && filter_->Matches(e); }
  const model::FilterExpr* columnar() const override { return &filter_->expr(); }
  bool MatchesRest(const model::Entity& e) const override { return grant_->InRange(e.partition_key, e.row_key); }

 private:
  static std::shared_ptr<const protocol::filter::Filter> MatchEveryRow() {
    static const auto* const kAll = new std::shared_ptr<const protocol::filter::Filter>(
        protocol::filter::Filter::Parse("").value());
    return *kAll;
  }

  const AuthGrant* grant_;
  std::shared_ptr<const protocol::filter::Filter> filter_;  // never null
};

// A page's bytes as the response writes them, not as they are stored: a
// string full of control characters is written several times longer than it
// is stored (escapes). Bound() skips the scan for escapes, so a page far from
// 4 MiB sizes no string (model::RowSizer).
class JsonRowSizer final : public model::RowSizer {
 public:
  explicit JsonRowSizer(const protocol::EntityWriteContext& ctx) : ctx_(ctx) {
    if (ctx.select != nullptr) {
      std::vector<std::string> names = *ctx.select;
      std::sort(names.begin(), names.end());
      budget_bound_usable_ = std::adjacent_find(names.begin(), names.end()) == names.end();
    }
  }
  size_t Bytes(const model::Entity& entity, size_t) const override {
    return protocol::EntityJsonSizeBound(entity, ctx_);
  }
  size_t Bound(const model::Entity& entity, size_t stored_bytes) const override {
    // A row whose bound from its stored size alone is this small cannot
    // bring a page of 1,000 rows to 4 MiB: no property is looked at.
    constexpr size_t kSmallRow = model::kMaxPageBytes / model::kMaxPageEntities;
    if (budget_bound_usable_) {
      const size_t budget =
          protocol::EntityJsonSizeBudgetBound(entity.partition_key, entity.row_key, stored_bytes, ctx_);
      if (budget <= kSmallRow) return budget;
    }
    return protocol::EntityJsonSizeQuickBound(entity, ctx_);
  }

 private:
  // Views into the request's parts and RequestInfo, which outlive the scan.
  protocol::EntityWriteContext ctx_;
  // EntityJsonSizeBudgetBound holds only if no $select name repeats.
  bool budget_bound_usable_ = true;
};

// A kept row's JSON object, which the scan cache keeps for the next query of
// the same metadata level without $select (model::RowRenderer): a warm
// query then copies its rows' JSON instead of decoding and writing them.
// Full metadata names the request's host (odata.id) and Atom is no JSON:
// neither is kept (IdOf 0).
class JsonRowRenderer final : public model::RowRenderer {
 public:
  explicit JsonRowRenderer(const protocol::EntityWriteContext& ctx) : ctx_(ctx), sizer_(ctx) {}
  static uint64_t IdOf(const protocol::EntityWriteContext& ctx) {
    if (ctx.select != nullptr && !ctx.select->empty()) return 0;
    switch (ctx.level) {
      case protocol::MetadataLevel::kNoMetadata: return 1;
      case protocol::MetadataLevel::kMinimalMetadata: return 2;
      default: return 0;
    }
  }
  uint64_t id() const override { return IdOf(ctx_); }
  size_t Render(const model::Entity& entity, size_t stored_bytes, std::string* out) const override {
    // Written into a buffer reused by the thread, then copied at its exact
    // size: a row's string grown from empty was reallocated twice.
    static thread_local std::string scratch;
    scratch.clear();
    protocol::AppendFeedEntity(entity, ctx_, &scratch);
    out->append(scratch);
    return sizer_.Bytes(entity, stored_bytes);
  }

 private:
  protocol::EntityWriteContext ctx_;  // views that outlive the scan, as JsonRowSizer's
  JsonRowSizer sizer_;                // the page's sizer: rendered rows are sized as unrendered ones
};

// Query Entities' handler step: on success writes the 200 answer; on failure
// writes nothing and returns the error. A scan that reached the I/O thread's
// slice (InlineBound::kSlice) sets info.inline_try->gave_up (and ->suspended) and writes
// nothing; one given info.suspended_scan continues it. Consumes `req`
// (its resume key moves into the scan).
std::optional<ApiError> RunQueryEntities(const ApiContext& ctx, QueryEntitiesRequest&& req,
                                         const RequestInfo& info, http::Response& response) {
  auto table = ctx.engine.GetTable(req.account, req.table);
  if (!table.ok()) return protocol::FromStatus(table.status());

  std::vector<model::Entity> entities;
  std::vector<std::string_view> rendered;       // ScanResult::rendered
  std::vector<std::shared_ptr<const void>> pins;  // keep `rendered` valid
  std::optional<model::EntityKey> next;
  size_t rows_scanned = 0;
  protocol::EntityWriteContext wctx{info.base_url, req.account, req.table, req.level, &req.select};
  if (!req.top.has_value() || *req.top > 0) {
    model::ScanSpec spec;
    spec.resume_from = std::move(req.resume_from);
    if (req.filter) req.filter->PlanScan(&spec);
    const AuthGrant& grant = info.grant;
    const bool sas_range = grant.kind == AuthGrant::Kind::kServiceSas &&
                           (grant.sas_start.has_value() || grant.sas_end.has_value());
    if (sas_range) {
      // The token's range bounds the scan itself, so a page never reads past
      // it nor names a key outside it as the continuation, and a token
      // outside the range yields an empty, final page (docs/compatibility.md,
      // "SAS key ranges"). The predicate stays as a second check.
      spec.bound = model::KeyRange{grant.sas_start, grant.sas_end};
      spec.predicate = std::make_shared<SasRangePredicate>(&grant, req.filter);
    } else {
      spec.predicate = req.filter;
    }
    spec.select = req.select;  // rows are decoded with only these properties
    spec.max_results = req.top.has_value() ? static_cast<size_t>(*req.top) : model::kMaxPageEntities;
    spec.max_bytes = model::kMaxPageBytes;
    spec.row_sizer = std::make_shared<JsonRowSizer>(wctx);
    // How this call runs, apart from what it reads: its CPU slice or bursts,
    // and the rendering of the rows the scan cache may keep.
    model::ScanRun run;
    if (JsonRowRenderer::IdOf(wctx) != 0) {
      run.renderer = std::make_shared<JsonRowRenderer>(wctx);
    }
    spec.deadline = std::chrono::steady_clock::now() + ctx.options.query_time_budget;
    const bool sliced = info.inline_try != nullptr && info.inline_try->bound == InlineBound::kSlice;
    if (!sliced && ctx.options.scan_cpu_burst.count() > 0) {
      run.cpu_burst = ctx.options.scan_cpu_burst;
      run.give_way = storage::ScanGiveWay(ctx.options.scan_cpu_burst, ctx.options.scan_nice);
    }
    if (sliced) {
      // Kept when the slice runs out, for the long lane to continue.
      spec.resumable = true;
      run.cpu_budget = info.inline_try->cpu_budget;
      // A scan waiting on the disk uses no CPU: the wall clock bounds it too.
      const auto wall = std::chrono::steady_clock::now() + 10 * info.inline_try->cpu_budget;
      if (wall < *spec.deadline) spec.deadline = wall;
    }
    // The same spec and run as the I/O thread's try, built again: the first
    // one's predicate, sizer and renderer view that try's request, which has
    // moved.
    spec.resume_scan = info.suspended_scan.get();
    const protocol::FlavorPolicy& flavor = ctx.options.flavor;
    if (flavor.shuffle && !spec.match_nothing) {
      // Query order by flavour: Cosmos DB's is not the keys' (shuffled_scan.h).
      // Its page is known only once every kept row was seen, so it is not
      // cut at the page's time budget: on the I/O thread it gives up at the
      // slice and runs whole on the long lane.
      if (!sliced) spec.deadline.reset();
      const faults::PageCut* cut = info.page_cut ? &*info.page_cut : nullptr;  // CutsWholePage
      const size_t n = CutPageSize(req.top.has_value() ? static_cast<size_t>(*req.top) : model::kMaxPageEntities, cut);
      auto page = ScanShuffled(ctx.engine, *table, std::move(spec), std::move(run), n, flavor.shuffle_seed,
                               req.shuffled_after);
      if (!page.ok()) return protocol::FromStatus(page.status());
      if (page->deadline_passed) {
        info.inline_try->gave_up = true;
        return std::nullopt;
      }
      if (ctx.metrics != nullptr) {
        ctx.metrics->RecordQueryPage(ctx.metrics->AccountIndex(req.account), page->rows_examined,
                                     page->entities.size());
      }
      if (cut != nullptr && cut->max_rows == 0 && req.shuffled_after && !page->entities.empty()) {
        // Realistic mode's empty page: no row, and the token the request came with.
        page->entities.clear();
        page->next = req.shuffled_after;
      }
      if (page->next) {
        response.set("x-ms-continuation-NextPartitionKey",
                     protocol::EncodeCosmosToken(protocol::CosmosTokenKind::kShuffledEntities, *page->next));
        response.set("x-ms-continuation-NextRowKey", protocol::kCosmosNextRowKey);
      }
      WriterFor(req.level).EntityFeed(response, page->entities, {}, wctx);
      return std::nullopt;
    }
    if (!spec.match_nothing) {
      auto result = ctx.engine.Scan(*table, spec, run);
      if (!result.ok()) return protocol::FromStatus(result.status());
      if (sliced && result->deadline_passed) {
        // Too long for an I/O thread: the dispatcher hands it to the long
        // lane, which continues the suspended scan (or, without one, starts
        // it again).
        info.inline_try->gave_up = true;
        info.inline_try->suspended = std::move(result->suspended);
        return std::nullopt;
      }
      entities = std::move(result->entities);
      rendered = std::move(result->rendered);
      pins = std::move(result->pins);
      next = std::move(result->next);
      rows_scanned = result->rows_examined;
    }
  }
  if (ctx.metrics != nullptr) {
    ctx.metrics->RecordQueryPage(ctx.metrics->AccountIndex(req.account), rows_scanned, entities.size());
  }
  if (next && ctx.options.flavor.continuation == protocol::ContinuationStyle::kCosmosToken) {
    response.set("x-ms-continuation-NextPartitionKey",
                 protocol::EncodeCosmosToken(protocol::CosmosTokenKind::kKeyOrderEntities,
                                             {0, std::move(next->partition_key), std::move(next->row_key)}));
    response.set("x-ms-continuation-NextRowKey", protocol::kCosmosNextRowKey);
  } else if (next) {
    response.set("x-ms-continuation-NextPartitionKey", protocol::EncodeContinuation(next->partition_key));
    response.set("x-ms-continuation-NextRowKey", protocol::EncodeContinuation(next->row_key));
  }
  WriterFor(req.level).EntityFeed(response, entities, rendered, wctx);
  return std::nullopt;
}

}  // namespace

void AnswerQueryEntities(const ApiContext& ctx, const RequestParts& parts, const RequestInfo& info,
                         http::Response& response) {
  auto req = ParseQueryEntities(parts);
  if (!req.ok()) {
    return WriteError(protocol::Operation::kQueryEntities, parts, info.request_id, req.error(), response);
  }
  if (auto error = RunQueryEntities(ctx, std::move(*req), info, response)) {
    WriteError(protocol::Operation::kQueryEntities, parts, info.request_id, *error, response);
  }
}

void HandleQueryEntities(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  BeastRequestHeaders headers(info.request);
  AnswerQueryEntities(ctx, info.Parts(headers), info, response);
}

}  // namespace tablestone::api
