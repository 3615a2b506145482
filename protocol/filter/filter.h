// Filter: the OData v3 `$filter` engine of the Table service (Learn: querying-tables-and-entities).
//
// Parse() turns the text of a $filter query option into an immutable,
// thread-safe Filter. Matches()/MatchesTableName() evaluate it against a row;
// PlanScan() derives the key ranges a query has to read.
//
// Thread safety: a parsed Filter is immutable; every const method may be
// called concurrently from any number of threads.
//
// Internals: lexer.h (tokens and literals), parser.h (grammar -> the
// expression tree storage/model/filter_expr.h), planner.h (key ranges). The
// tree is evaluated by storage/model/filter_eval.h (row by row, the service's
// comparison semantics) and, over cached partitions, by the storage engine.
// Compatibility decisions are listed in docs/compatibility-notes/filter.md.
#pragma once

#include <memory>
#include <string_view>

#include "protocol/api_error.h"
#include "storage/model/entity.h"
#include "storage/model/filter_expr.h"
#include "storage/model/row_predicate.h"
#include "storage/model/scan_spec.h"

namespace tablestone::protocol::filter {

// A Filter is the scan predicate of a query (model::RowPredicate): Matches()
// per row, and its expression tree as columnar(), which the engine evaluates
// a column at a time over cached partitions; both give the same answer for
// every row (the whole predicate is the expression: no MatchesRest()).
class Filter final : public model::RowPredicate {
 public:
  // Parses an OData v3 $filter expression (already percent-decoded, '+' already turned into spaces by the
  // caller). Errors: 400 InvalidInput "Syntax error at position N in '<filter>'." for syntax errors;
  // 400 InvalidInput for `eq null`/`ne null`; 400 InvalidInput "The operator 'LessThan' is not supported
  // for the 'null' literal; only equality checks are supported." (LessThanOrEqual, GreaterThan,
  // GreaterThanOrEqual) for lt/le/gt/ge null; 501 NotImplemented for property-vs-property and
  // constant-vs-constant comparisons, functions (startswith, substringof, tolower, ...), arithmetic
  // (add, sub, mul, div, mod); 400 InvalidInput for more than 15 comparisons, nesting deeper than a fixed
  // limit (e.g. 64), or input longer than a limit. Never crashes or throws on any input.
  //
  // Details: N is the 0-based offset, in UTF-16 code units, just past the
  // offending token (the service's one recorded example points there).
  // Syntax errors win over the other errors; among the rest the first one in
  // the text wins. An empty or all-whitespace text parses as "match every
  // row" (Learn: querying-tables-and-entities: an empty $filter= is no filter).
  static ApiResult<std::shared_ptr<const Filter>> Parse(std::string_view text);

  // Evaluates against an entity; PartitionKey, RowKey (strings) and Timestamp (Edm.DateTime from
  // entity.timestamp) are properties like any other. Must not allocate on the hot path: a filtered
  // scan must evaluate >= several million simple comparisons per second per core.
  bool Matches(const model::Entity& entity) const override;

  // The parsed expression; Matches(e) == model::EvaluateEntity(expr(), e).
  const model::FilterExpr& expr() const { return *expr_; }
  const model::FilterExpr* columnar() const override { return expr_.get(); }

  // Query Tables: evaluates with `TableName` (a string) as the only property.
  bool MatchesTableName(std::string_view table_name) const;

  // Planner: narrows spec->ranges / sets spec->match_nothing from key conditions so a query reads only the
  // key range it names (see storage/model/scan_spec.h for KeyBound semantics). The caller still applies
  // Matches() to every row read, so planning may be conservative (a superset) but never drop a match.
  //
  // Details: ranges already in spec->ranges are intersected with the plan;
  // the result is sorted and disjoint in ordinal UTF-16 key order. An empty
  // result sets match_nothing and clears ranges. spec->predicate is untouched.
  void PlanScan(model::ScanSpec* spec) const;

  ~Filter() override;
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;

 private:
  explicit Filter(std::unique_ptr<const model::FilterExpr> expr);

  std::unique_ptr<const model::FilterExpr> expr_;
};

}  // namespace tablestone::protocol::filter
