// RowPredicate: which rows a scan keeps (ScanSpec::predicate, scan_spec.h).
//
// A predicate is tested per row with Matches(). One that is (or contains) a
// `$filter` also exposes that filter as an expression tree (columnar()): the
// engine can then evaluate the expression over the columns of a cached
// partition a comparison at a time (storage/block_evaluator.h), ~1 ns a row
// instead of a decoded Entity per row, without knowing how the predicate was
// built. Predicates that are no filter (a SAS key range, a test's lambda)
// return null and are tested row by row.
//
// Contract, for every entity e:
//   columnar() == null:  Matches(e) is the answer;
//   columnar() == x:     Matches(e) == EvaluateEntity(*x, e) && MatchesRest(e)
//                        (filter_eval.h). A scan may use either side; on a
//                        cached partition it evaluates x over the columns and
//                        calls MatchesRest() for the rows x keeps only.
// columnar() returns the same tree, alive as long as the predicate, on every
// call.
//
// Thread safety: implementations must be immutable (scans run concurrently).
#pragma once

#include "storage/model/entity.h"
#include "storage/model/filter_expr.h"

namespace tablestone::model {

class RowPredicate {
 public:
  virtual ~RowPredicate() = default;
  virtual bool Matches(const Entity& entity) const = 0;
  // The $filter part of the predicate, or null (see the contract above).
  virtual const FilterExpr* columnar() const { return nullptr; }
  // The rest of the predicate, for rows columnar() keeps (called on the
  // decoded row, which a kept row needs anyway, holding only the properties
  // of ScanSpec::select when that is set); true by default: the expression
  // is all of it.
  virtual bool MatchesRest(const Entity& entity) const { return true; }
};

}  // namespace tablestone::model
