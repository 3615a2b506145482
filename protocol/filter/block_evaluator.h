// Columnar evaluation of a parsed $filter over a block of rows of one
// partition (storage/model/row_block.h): the same answers as evaluator.h's
// EvaluateEntity, row for row, but computed one comparison at a time over all
// rows, with the type decisions taken once per column instead of once per row.
//
// How: each comparison fills a byte mask (1 = true) for the rows; and/or/not
// combine masks bytewise. A column whose rows all have the same type
// (RowColumn::uniform_tag) is compared in a tight loop over its payload array
// (ints, doubles or texts) with one switch on the literal's type and operator
// outside the loop; a column of mixed types falls back to CompareValue per row.
// The semantics (missing property, literal widening, mismatch answers, NaN,
// ordinal strings, Guid case folding, system properties) are evaluator.h's;
// the equivalence is tested on random filters and rows
// (tests/unit/protocol/filter_block_test.cc).
//
// Thread safety: pure function; no shared state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/filter/ast.h"
#include "storage/model/row_block.h"

namespace tablestone::protocol::filter {

// Sets keep[i - begin] = EvaluateEntity(ast, block.RowEntity(i)) ? 1 : 0 for
// every i in [begin, end). Allocates scratch masks for and/or nodes only.
void EvaluateBlock(const Ast& ast, const model::RowBlock& block, size_t begin, size_t end, uint8_t* keep);

}  // namespace tablestone::protocol::filter
