// Query planning: which (PartitionKey, RowKey) ranges a filter can match.
//
// The plan is a superset of the matching keys (the scanner still evaluates
// the filter on each row), computed per node:
//   * PartitionKey op 'string' -> the partitions it names (ne: two ranges);
//   * RowKey op 'string' -> a range inside partition p when the enclosing
//     conjunction also says `PartitionKey eq 'p'` (anywhere among its and-ed
//     terms, through nested and/or), one per partition when that term is an
//     `or` of such equalities (up to 64); elsewhere no narrowing;
//   * `not` over a key compared with a string -> the opposite comparison;
//   * a key compared with a non-string literal is a type mismatch whose answer
//     is fixed (Learn: querying-tables-and-entities): eq/gt/ge match no row, ne/lt/le match every row;
//   * a bare PartitionKey/RowKey test matches no row (keys are never Boolean);
//   * `false` matches nothing, `true` everything;
//   * and -> intersection, or -> union; any other `not` and anything else -> no narrowing.
// Ranges come out sorted, merged and disjoint in ordinal UTF-16 key order.
#pragma once

#include "storage/model/filter_expr.h"
#include "storage/model/scan_spec.h"

namespace tablestone::protocol::filter {

// Intersects spec->ranges (empty = whole table) with the filter's plan; sets
// match_nothing (and clears ranges) when nothing can match.
void PlanScanSpec(const model::FilterExpr& ast, model::ScanSpec* spec);

}  // namespace tablestone::protocol::filter
