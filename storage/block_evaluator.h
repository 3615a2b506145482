// Columnar evaluation of a $filter expression (storage/model/filter_expr.h)
// over a block of rows of one partition (row_block.h): the same answers as
// storage/model/filter_eval.h's EvaluateEntity, row for row, but computed one comparison at a time over all
// rows, with the type decisions taken once per column instead of once per row.
//
// How: each comparison fills a byte mask (1 = true) for the rows; and/or/not
// combine masks bytewise. A column whose rows all have the same type
// (RowColumn::uniform_tag) is compared in a tight loop over its payload array
// (ints, doubles or texts), the pair of types classified once by
// storage/model/comparison.h's table and the operator chosen outside the loop;
// a column of mixed types falls back to CompareValue per row. The type rules
// (literal widening, mismatch answers, NaN, ordinal strings, Guid case
// folding) are comparison.h's, the rest (missing property, system properties)
// filter_eval.h's; the equivalence is tested on random filters and rows
// (tests/unit/storage/block_evaluator_test.cc).
//
// Private to storage/ (the scan of a cached partition, rocks_engine_scan.cc).
//
// Zone maps: before the per-row work, EvaluateBlock asks BlockMayMatch
// whether the columns' value types and ranges (RowColumn's zone map) leave any
// row a chance; when they prove none, keep is zero-filled at once. The test
// is conservative: "maybe" whenever it cannot prove "none".
//
// Thread safety: pure function; no shared state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "storage/model/filter_expr.h"
#include "storage/row_block.h"

namespace tablestone::storage {

// False only if no row of `block` can satisfy `expr`, proved from the block's
// zone maps without looking at rows: a comparison on a missing column, on a
// column whose value type mismatches the literal where the fixed mismatch
// answer is false, or whose [min, max] cannot satisfy `op literal` (ne: only
// when min == max == literal); PartitionKey comparisons (one value per
// block); constants; a bare property that is never Boolean true. `and` is
// none if any operand is, `or` if all are; `not`, RowKey, Timestamp, strings,
// Guids and Binary are "maybe" (true). Cost: one column lookup per comparison.
bool BlockMayMatch(const model::FilterExpr& expr, const RowBlock& block);

// Sets keep[i - begin] = EvaluateEntity(expr, block.RowEntity(i)) ? 1 : 0 for
// every i in [begin, end) (no other values: the scan looks for kept rows with
// memchr). Allocates scratch masks for and/or nodes only; none when
// BlockMayMatch is false (keep is then zero-filled).
void EvaluateBlock(const model::FilterExpr& expr, const RowBlock& block, size_t begin, size_t end, uint8_t* keep);

}  // namespace tablestone::storage
