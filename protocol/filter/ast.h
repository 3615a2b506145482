// The parsed form of a $filter: a small tree of boolean nodes stored in one
// vector (children refer to nodes by index). Only constructs the service
// evaluates survive parsing: and/or/not, property-vs-literal comparisons
// (normalised so the property is on the left), bare Boolean properties and
// Boolean constants. Everything else is rejected by the parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/model/edm.h"

namespace tablestone::protocol::filter {

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

enum class NodeKind : uint8_t {
  kAnd,           // all children true (n-ary)
  kOr,            // any child true (n-ary)
  kNot,           // one child
  kCompare,       // property op literal
  kBoolProperty,  // bare property: true only when it is Boolean true
  kConstant,      // `true` / `false`
};

struct Node {
  NodeKind kind = NodeKind::kConstant;
  std::vector<int> children;  // kAnd/kOr: >= 2; kNot: 1
  PropertyRef property;       // kCompare, kBoolProperty
  CompareOp op = CompareOp::kEq;
  model::EdmValue literal;    // kCompare; Guid text is canonical lower case
  bool constant = false;      // kConstant
};

struct Ast {
  std::vector<Node> nodes;
  int root = 0;
  size_t comparison_count = 0;  // comparisons + bare property tests
};

}  // namespace tablestone::protocol::filter
