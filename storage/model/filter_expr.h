// FilterExpr: a parsed `$filter` as a plain value, the row filter a scan
// evaluates (storage/model/row_predicate.h). A small tree of boolean nodes
// stored in one vector (children refer to nodes by index): and/or/not,
// property-vs-literal comparisons (the property on the left, the literal
// typed by its Edm type), bare Boolean properties and Boolean constants.
//
// No parsing here: protocol/filter/parser.h builds the tree from the query
// text and rejects every construct the service does not evaluate. Evaluation:
// filter_eval.h row by row; storage/block_evaluator.h over the columns of a
// cached partition; both decide types by comparison.h's one table.
//
// Thread safety: plain data; concurrent const use is safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/model/edm.h"

namespace tablestone::model {

enum class CompareOp : uint8_t { kEq, kNe, kGt, kGe, kLt, kLe };

// The operator with its operands swapped (`5 lt x` == `x gt 5`).
inline CompareOp Mirror(CompareOp op) {
  switch (op) {
    case CompareOp::kGt: return CompareOp::kLt;
    case CompareOp::kGe: return CompareOp::kLe;
    case CompareOp::kLt: return CompareOp::kGt;
    case CompareOp::kLe: return CompareOp::kGe;
    default: return op;
  }
}

// Which value a property name denotes. Resolved once at parse time so the
// evaluator never compares the system names per row.
enum class SystemProperty : uint8_t { kNone, kPartitionKey, kRowKey, kTimestamp };

struct PropertyRef {
  std::string name;
  SystemProperty system = SystemProperty::kNone;
  bool is_table_name = false;  // `TableName`, the only property in Query Tables
};

enum class FilterNodeKind : uint8_t {
  kAnd,           // all children true (n-ary)
  kOr,            // any child true (n-ary)
  kNot,           // one child
  kCompare,       // property op literal
  kBoolProperty,  // bare property: true only when it is Boolean true
  kConstant,      // `true` / `false`
};

struct FilterNode {
  FilterNodeKind kind = FilterNodeKind::kConstant;
  std::vector<int> children;  // kAnd/kOr: >= 2; kNot: 1
  PropertyRef property;       // kCompare, kBoolProperty
  CompareOp op = CompareOp::kEq;
  EdmValue literal;    // kCompare; Guid text is canonical lower case
  bool constant = false;      // kConstant
};

struct FilterExpr {
  std::vector<FilterNode> nodes;
  int root = 0;
  size_t comparison_count = 0;  // comparisons + bare property tests
};

}  // namespace tablestone::model
