#include "storage/model/filter_eval.h"

#include <cstring>

#include "storage/model/ascii.h"
#include "storage/model/comparison.h"
#include "storage/model/ordinal.h"

namespace tablestone::model {
namespace {


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
    char x = AsciiLower(a[i]);
    char y = AsciiLower(b[i]);
    if (x != y) return static_cast<unsigned char>(x) < static_cast<unsigned char>(y) ? -1 : 1;
  }
  return Order(a.size(), b.size());
}

// Looks up properties of an entity without allocating.
struct EntityRow {
  const Entity& entity;
  bool Get(const PropertyRef& ref, ValueView* out) const {
    switch (ref.system) {
      case SystemProperty::kPartitionKey: *out = ValueView::String(entity.partition_key); return true;
      case SystemProperty::kRowKey: *out = ValueView::String(entity.row_key); return true;
      case SystemProperty::kTimestamp: *out = ValueView::DateTime(entity.timestamp); return true;
      case SystemProperty::kNone: break;
    }
    const Property* p = entity.Find(ref.name);
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
bool Eval(const FilterExpr& ast, int index, const Row& row) {
  const FilterNode& n = ast.nodes[static_cast<size_t>(index)];
  switch (n.kind) {
    case FilterNodeKind::kAnd:
      for (int c : n.children) {
        if (!Eval(ast, c, row)) return false;
      }
      return true;
    case FilterNodeKind::kOr:
      for (int c : n.children) {
        if (Eval(ast, c, row)) return true;
      }
      return false;
    case FilterNodeKind::kNot: return !Eval(ast, n.children[0], row);
    case FilterNodeKind::kConstant: return n.constant;
    case FilterNodeKind::kBoolProperty: {
      ValueView v;
      return row.Get(n.property, &v) && v.type == EdmType::kBoolean && v.int_value != 0;
    }
    case FilterNodeKind::kCompare: {
      ValueView v;
      if (!row.Get(n.property, &v)) return false;  // missing: false for every operator
      return CompareValue(v, n.op, n.literal);
    }
  }
  return false;
}

}  // namespace

bool CompareValue(const ValueView& p, CompareOp op, const EdmValue& lit) {
  // The type decisions are comparison.h's table; this only applies them.
  switch (Classify(p.type, lit.type)) {
    case CompareKind::kInt64:
    case CompareKind::kDateTime: return FromOrder(op, Order(p.int_value, lit.int_value));
    case CompareKind::kDouble: return CompareDouble(op, p.double_value, LiteralAsDouble(lit));
    case CompareKind::kBoolean: return FromOrder(op, Order(p.int_value != 0, lit.int_value != 0));
    case CompareKind::kString: return FromOrder(op, CompareUtf16Ordinal(p.text, lit.text));
    case CompareKind::kGuid: return FromOrder(op, CompareGuid(p.text, lit.text));
    case CompareKind::kBinary: return FromOrder(op, CompareBytes(p.text, lit.text));
    case CompareKind::kMismatch: break;
  }
  return MismatchAnswer(op);
}

namespace {

// Adapts a PropertySource to the template's Get (one virtual call per
// property read).
struct SourceRow {
  const PropertySource& source;
  bool Get(const PropertyRef& ref, ValueView* out) const { return source.Get(ref, out); }
};

}  // namespace

bool EvaluateWith(const FilterExpr& ast, const PropertySource& row) { return Eval(ast, ast.root, SourceRow{row}); }

bool EvaluateEntity(const FilterExpr& ast, const Entity& entity) {
  return Eval(ast, ast.root, EntityRow{entity});
}

bool EvaluateTableName(const FilterExpr& ast, std::string_view table_name) {
  return Eval(ast, ast.root, TableRow{table_name});
}

}  // namespace tablestone::model
