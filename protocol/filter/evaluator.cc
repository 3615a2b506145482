#include "protocol/filter/evaluator.h"

#include <cstring>

#include "protocol/filter/ordinal.h"
#include "storage/model/ascii.h"

namespace tablestone::protocol::filter {
namespace {

using model::EdmType;

// The service's fixed answer when the literal's type does not match the
// property's: as if the property sorted below the literal (Learn: querying-tables-and-entities).
bool Mismatch(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return false;
    case CompareOp::kNe: return true;
    case CompareOp::kLt: return true;
    case CompareOp::kLe: return true;
    case CompareOp::kGt: return false;
    case CompareOp::kGe: return false;
  }
  return false;
}

// Applies op to a three-way result (<0, 0, >0).
bool FromOrder(CompareOp op, int c) {
  switch (op) {
    case CompareOp::kEq: return c == 0;
    case CompareOp::kNe: return c != 0;
    case CompareOp::kLt: return c < 0;
    case CompareOp::kLe: return c <= 0;
    case CompareOp::kGt: return c > 0;
    case CompareOp::kGe: return c >= 0;
  }
  return false;
}

template <typename T>
int Order(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// IEEE comparison: with a NaN every operator but `ne` is false.
bool CompareDouble(CompareOp op, double a, double b) {
  switch (op) {
    case CompareOp::kEq: return a == b;
    case CompareOp::kNe: return a != b;
    case CompareOp::kLt: return a < b;
    case CompareOp::kLe: return a <= b;
    case CompareOp::kGt: return a > b;
    case CompareOp::kGe: return a >= b;
  }
  return false;
}

int CompareBytes(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c;
  return Order(a.size(), b.size());
}

// Stored Guids are canonical lower case already; folding keeps the
// comparison right even for a value that is not.
int CompareGuid(std::string_view a, std::string_view b) {
  size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    char x = model::AsciiLower(a[i]);
    char y = model::AsciiLower(b[i]);
    if (x != y) return static_cast<unsigned char>(x) < static_cast<unsigned char>(y) ? -1 : 1;
  }
  return Order(a.size(), b.size());
}

// Looks up properties of an entity without allocating.
struct EntityRow {
  const model::Entity& entity;
  bool Get(const PropertyRef& ref, ValueView* out) const {
    switch (ref.system) {
      case SystemProperty::kPartitionKey: *out = ValueView::String(entity.partition_key); return true;
      case SystemProperty::kRowKey: *out = ValueView::String(entity.row_key); return true;
      case SystemProperty::kTimestamp: *out = ValueView::DateTime(entity.timestamp); return true;
      case SystemProperty::kNone: break;
    }
    const model::Property* p = entity.Find(ref.name);
    if (p == nullptr) return false;
    *out = ValueView::Of(p->value);
    return true;
  }
};

struct TableRow {
  std::string_view table_name;
  bool Get(const PropertyRef& ref, ValueView* out) const {
    if (!ref.is_table_name) return false;
    *out = ValueView::String(table_name);
    return true;
  }
};

template <typename Row>
bool Eval(const Ast& ast, int index, const Row& row) {
  const Node& n = ast.nodes[static_cast<size_t>(index)];
  switch (n.kind) {
    case NodeKind::kAnd:
      for (int c : n.children) {
        if (!Eval(ast, c, row)) return false;
      }
      return true;
    case NodeKind::kOr:
      for (int c : n.children) {
        if (Eval(ast, c, row)) return true;
      }
      return false;
    case NodeKind::kNot: return !Eval(ast, n.children[0], row);
    case NodeKind::kConstant: return n.constant;
    case NodeKind::kBoolProperty: {
      ValueView v;
      return row.Get(n.property, &v) && v.type == EdmType::kBoolean && v.int_value != 0;
    }
    case NodeKind::kCompare: {
      ValueView v;
      if (!row.Get(n.property, &v)) return false;  // missing: false for every operator
      return CompareValue(v, n.op, n.literal);
    }
  }
  return false;
}

}  // namespace

bool CompareValue(const ValueView& p, CompareOp op, const model::EdmValue& lit) {
  switch (lit.type) {
    case EdmType::kString:
      if (p.type != EdmType::kString) return Mismatch(op);
      return FromOrder(op, CompareUtf16Ordinal(p.text, lit.text));
    case EdmType::kInt32:
      // Int32 literal widens to the Int64 or Double property.
      if (p.type == EdmType::kInt32 || p.type == EdmType::kInt64) {
        return FromOrder(op, Order(p.int_value, lit.int_value));
      }
      if (p.type == EdmType::kDouble) return CompareDouble(op, p.double_value, static_cast<double>(lit.int_value));
      return Mismatch(op);
    case EdmType::kInt64:
      // Int64 literal vs Int32 property is a mismatch: only the literal widens.
      if (p.type == EdmType::kInt64) return FromOrder(op, Order(p.int_value, lit.int_value));
      if (p.type == EdmType::kDouble) return CompareDouble(op, p.double_value, static_cast<double>(lit.int_value));
      return Mismatch(op);
    case EdmType::kDouble:
      if (p.type != EdmType::kDouble) return Mismatch(op);
      return CompareDouble(op, p.double_value, lit.double_value);
    case EdmType::kBoolean:
      if (p.type != EdmType::kBoolean) return Mismatch(op);
      return FromOrder(op, Order(p.int_value != 0, lit.int_value != 0));
    case EdmType::kDateTime:
      if (p.type != EdmType::kDateTime) return Mismatch(op);
      return FromOrder(op, Order(p.int_value, lit.int_value));
    case EdmType::kGuid:
      if (p.type != EdmType::kGuid) return Mismatch(op);
      return FromOrder(op, CompareGuid(p.text, lit.text));
    case EdmType::kBinary:
      if (p.type != EdmType::kBinary) return Mismatch(op);
      return FromOrder(op, CompareBytes(p.text, lit.text));
  }
  return Mismatch(op);
}

bool EvaluateEntity(const Ast& ast, const model::Entity& entity) {
  return Eval(ast, ast.root, EntityRow{entity});
}

bool EvaluateTableName(const Ast& ast, std::string_view table_name) {
  return Eval(ast, ast.root, TableRow{table_name});
}

}  // namespace tablestone::protocol::filter
