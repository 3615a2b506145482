#include "protocol/filter/filter.h"

#include <utility>

#include "protocol/filter/parser.h"
#include "protocol/filter/planner.h"
#include "protocol/url.h"
#include "storage/model/filter_eval.h"

namespace tablestone::protocol::filter {

Filter::Filter(std::unique_ptr<const model::FilterExpr> expr) : expr_(std::move(expr)) {}
Filter::~Filter() = default;

ApiResult<std::shared_ptr<const Filter>> Filter::Parse(std::string_view text) {
  // A percent-decoded $filter that is not UTF-8 (e.g. '%FF' in a literal) can never name a
  // stored key or value (those are UTF-8); refuse it as bad input rather than silently
  // matching nothing, so a client bug surfaces (docs/reliability.md, hostile clients).
  if (!IsValidUtf8(text)) return ApiError::InvalidInput("The $filter is not valid UTF-8.");
  ApiResult<std::unique_ptr<model::FilterExpr>> parsed = ParseFilter(text);
  if (!parsed.ok()) return parsed.error();
  return std::shared_ptr<const Filter>(new Filter(std::move(parsed).value()));
}

bool Filter::Matches(const model::Entity& entity) const { return model::EvaluateEntity(*expr_, entity); }

bool Filter::MatchesTableName(std::string_view table_name) const {
  return model::EvaluateTableName(*expr_, table_name);
}

void Filter::PlanScan(model::ScanSpec* spec) const { PlanScanSpec(*expr_, spec); }

}  // namespace tablestone::protocol::filter
