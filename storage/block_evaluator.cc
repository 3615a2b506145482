#include "storage/block_evaluator.h"

#include <cstring>
#include <string_view>
#include <vector>

#include "storage/model/comparison.h"
#include "storage/model/filter_eval.h"
#include "storage/model/ordinal.h"

namespace tablestone::storage {
namespace {

using model::Classify;
using model::CompareKind;
using model::CompareOp;
using model::CompareUtf16Ordinal;
using model::CompareValue;
using model::EdmType;
using model::FilterExpr;
using model::FilterNode;
using model::FilterNodeKind;
using model::LiteralAsDouble;
using model::MismatchAnswer;
using model::SystemProperty;
using model::ValueView;

// out[i] = (get(i) op lit) for i in [0, n): the operator is chosen once, the
// loop body is a plain comparison the compiler can vectorize. For doubles the
// built-in operators are IEEE's, as in CompareValue (NaN: only ne is true).
template <typename T, typename Get>
void CompareLoop(size_t n, CompareOp op, Get get, T lit, uint8_t* out) {
  switch (op) {
    case CompareOp::kEq: for (size_t i = 0; i < n; ++i) out[i] = get(i) == lit; break;
    case CompareOp::kNe: for (size_t i = 0; i < n; ++i) out[i] = get(i) != lit; break;
    case CompareOp::kLt: for (size_t i = 0; i < n; ++i) out[i] = get(i) < lit; break;
    case CompareOp::kLe: for (size_t i = 0; i < n; ++i) out[i] = get(i) <= lit; break;
    case CompareOp::kGt: for (size_t i = 0; i < n; ++i) out[i] = get(i) > lit; break;
    case CompareOp::kGe: for (size_t i = 0; i < n; ++i) out[i] = get(i) >= lit; break;
  }
}

// Ordinal UTF-16 string order (ordinal.h) against a string literal.
void CompareStrings(const std::string_view* v, size_t n, CompareOp op, std::string_view lit, uint8_t* out) {
  CompareLoop(n, op, [v, lit](size_t i) { return CompareUtf16Ordinal(v[i], lit); }, 0, out);
}

void Fill(uint8_t* out, size_t n, bool value) { std::memset(out, value ? 1 : 0, n); }

// Row `row` of a column as the evaluator's view (the row has the property).
ValueView ViewOf(const RowColumn& c, size_t row) {
  ValueView v;
  v.type = static_cast<EdmType>(c.tags[row]);
  switch (v.type) {
    case EdmType::kDouble: v.double_value = c.doubles[row]; break;
    case EdmType::kString:
    case EdmType::kGuid:
    case EdmType::kBinary: v.text = c.texts[row]; break;
    default: v.int_value = c.ints[row]; break;
  }
  return v;
}

// A column whose rows all have type `tag`, compared with `lit`: a tight loop
// for the pairs comparison.h orders by value, the fixed answer for a
// mismatch; false when the pair needs the general path (Guid, Binary).
bool CompareUniform(const RowColumn& c, EdmType tag, size_t begin, size_t n, CompareOp op,
                    const model::EdmValue& lit, uint8_t* out) {
  const int64_t* ints = c.ints.data() + (c.ints.empty() ? 0 : begin);
  const double* doubles = c.doubles.data() + (c.doubles.empty() ? 0 : begin);
  switch (Classify(tag, lit.type)) {
    case CompareKind::kInt64:
    case CompareKind::kDateTime:
      CompareLoop(n, op, [ints](size_t i) { return ints[i]; }, lit.int_value, out);
      return true;
    case CompareKind::kDouble:
      CompareLoop(n, op, [doubles](size_t i) { return doubles[i]; }, LiteralAsDouble(lit), out);
      return true;
    case CompareKind::kBoolean:
      CompareLoop(n, op, [ints](size_t i) { return ints[i] != 0; }, lit.int_value != 0, out);
      return true;
    case CompareKind::kString:
      CompareStrings(c.texts.data() + begin, n, op, lit.text, out);
      return true;
    case CompareKind::kMismatch:  // every row has the property, with the wrong type
      Fill(out, n, MismatchAnswer(op));
      return true;
    case CompareKind::kGuid:
    case CompareKind::kBinary: return false;
  }
  return false;
}

void CompareColumn(const RowColumn& c, size_t begin, size_t n, CompareOp op, const model::EdmValue& lit,
                   uint8_t* out) {
  if (c.uniform_tag != kMixedTag && c.uniform_tag != kAbsentTag &&
      CompareUniform(c, static_cast<EdmType>(c.uniform_tag), begin, n, op, lit, out)) {
    return;
  }
  // Mixed types, absent rows, or a pair with no tight loop: row by row.
  for (size_t i = 0; i < n; ++i) {
    const size_t row = begin + i;
    out[i] = c.tags[row] != kAbsentTag && CompareValue(ViewOf(c, row), op, lit);
  }
}

void Compare(const FilterNode& node, const RowBlock& block, size_t begin, size_t n, uint8_t* out) {
  const model::EdmValue& lit = node.literal;
  switch (node.property.system) {
    case SystemProperty::kPartitionKey:  // one partition per block: one answer
      return Fill(out, n, CompareValue(ValueView::String(block.partition_key), node.op, lit));
    case SystemProperty::kRowKey:  // a String
      if (Classify(EdmType::kString, lit.type) == CompareKind::kString) {
        return CompareStrings(block.row_keys.data() + begin, n, node.op, lit.text, out);
      }
      return Fill(out, n, MismatchAnswer(node.op));
    case SystemProperty::kTimestamp: {  // a DateTime
      if (Classify(EdmType::kDateTime, lit.type) == CompareKind::kDateTime) {
        const int64_t* ts = block.timestamps.data() + begin;
        return CompareLoop(n, node.op, [ts](size_t i) { return ts[i]; }, lit.int_value, out);
      }
      return Fill(out, n, MismatchAnswer(node.op));
    }
    case SystemProperty::kNone: break;
  }
  const RowColumn* column = block.FindColumn(node.property.name);
  if (column == nullptr) return Fill(out, n, false);  // missing: false for every operator
  CompareColumn(*column, begin, n, node.op, lit, out);
}

// A bare property: true only where it is Boolean true. Keys and Timestamp are
// never Boolean.
void BoolProperty(const FilterNode& node, const RowBlock& block, size_t begin, size_t n, uint8_t* out) {
  const RowColumn* c = node.property.system == SystemProperty::kNone ? block.FindColumn(node.property.name) : nullptr;
  if (c == nullptr) return Fill(out, n, false);
  const uint8_t* tags = c->tags.data() + begin;
  const int64_t* ints = c->ints.data() + (c->ints.empty() ? 0 : begin);
  for (size_t i = 0; i < n; ++i) {
    out[i] = tags[i] == static_cast<uint8_t>(EdmType::kBoolean) && ints[i] != 0;
  }
}

void Eval(const FilterExpr& ast, int index, const RowBlock& block, size_t begin, size_t n, uint8_t* out) {
  const FilterNode& node = ast.nodes[static_cast<size_t>(index)];
  switch (node.kind) {
    case FilterNodeKind::kAnd:
    case FilterNodeKind::kOr: {
      Eval(ast, node.children[0], block, begin, n, out);
      // The scan's chunks fit the stack buffer: no allocation per chunk.
      uint8_t stack[512];
      std::vector<uint8_t> heap(n > sizeof stack ? n : 0);
      uint8_t* other = n > sizeof stack ? heap.data() : stack;
      const bool is_and = node.kind == FilterNodeKind::kAnd;
      for (size_t c = 1; c < node.children.size(); ++c) {
        Eval(ast, node.children[c], block, begin, n, other);
        if (is_and) {
          for (size_t i = 0; i < n; ++i) out[i] &= other[i];
        } else {
          for (size_t i = 0; i < n; ++i) out[i] |= other[i];
        }
      }
      return;
    }
    case FilterNodeKind::kNot:
      Eval(ast, node.children[0], block, begin, n, out);
      for (size_t i = 0; i < n; ++i) out[i] ^= 1;
      return;
    case FilterNodeKind::kConstant: return Fill(out, n, node.constant);
    case FilterNodeKind::kBoolProperty: return BoolProperty(node, block, begin, n, out);
    case FilterNodeKind::kCompare: return Compare(node, block, begin, n, out);
  }
}

// Can some value in [lo, hi] satisfy `value op lit`? For doubles the bounds
// hold no NaN; a NaN literal fails every operator's test but ne's, as IEEE
// comparison fails every row (ne: every row is true).
template <typename T>
bool RangeMayMatch(T lo, T hi, CompareOp op, T lit) {
  switch (op) {
    case CompareOp::kEq: return lo <= lit && lit <= hi;
    case CompareOp::kNe: return !(lo == lit && hi == lit);
    case CompareOp::kLt: return lo < lit;
    case CompareOp::kLe: return lo <= lit;
    case CompareOp::kGt: return hi > lit;
    case CompareOp::kGe: return hi >= lit;
  }
  return true;
}

// A comparison on a column every row of which either lacks the property or
// has type c.value_tag, decided by comparison.h's table as CompareValue is.
bool ColumnMayMatch(const RowColumn& c, CompareOp op, const model::EdmValue& lit) {
  if (c.value_tag == kMixedTag || c.value_tag == kAbsentTag) return true;
  switch (Classify(static_cast<EdmType>(c.value_tag), lit.type)) {
    case CompareKind::kMismatch: return MismatchAnswer(op);  // every present row gets it
    case CompareKind::kString:
    case CompareKind::kGuid:
    case CompareKind::kBinary: return true;  // no range kept
    case CompareKind::kInt64:
    case CompareKind::kDateTime: return !c.has_range || RangeMayMatch(c.min_int, c.max_int, op, lit.int_value);
    case CompareKind::kBoolean:
      return !c.has_range || RangeMayMatch(c.min_int, c.max_int, op, int64_t{lit.int_value != 0 ? 1 : 0});
    case CompareKind::kDouble:
      return !c.has_range || RangeMayMatch(c.min_double, c.max_double, op, LiteralAsDouble(lit));
  }
  return true;
}

bool MayMatch(const FilterExpr& ast, int index, const RowBlock& block) {
  const FilterNode& node = ast.nodes[static_cast<size_t>(index)];
  switch (node.kind) {
    case FilterNodeKind::kAnd:
      for (int c : node.children) {
        if (!MayMatch(ast, c, block)) return false;
      }
      return true;
    case FilterNodeKind::kOr:
      for (int c : node.children) {
        if (MayMatch(ast, c, block)) return true;
      }
      return false;
    case FilterNodeKind::kNot: return true;  // "none" below says nothing about "all"
    case FilterNodeKind::kConstant: return node.constant;
    case FilterNodeKind::kBoolProperty: {
      if (node.property.system != SystemProperty::kNone) return false;  // never Boolean (BoolProperty)
      const RowColumn* c = block.FindColumn(node.property.name);
      if (c == nullptr) return false;
      return ColumnMayMatch(*c, CompareOp::kEq, model::EdmValue::Boolean(true));
    }
    case FilterNodeKind::kCompare:
      switch (node.property.system) {
        case SystemProperty::kPartitionKey:  // one value per block: the exact answer
          return CompareValue(ValueView::String(block.partition_key), node.op, node.literal);
        case SystemProperty::kRowKey:
        case SystemProperty::kTimestamp: return true;
        case SystemProperty::kNone: break;
      }
      {
        const RowColumn* c = block.FindColumn(node.property.name);
        if (c == nullptr) return false;  // missing: false for every operator
        return ColumnMayMatch(*c, node.op, node.literal);
      }
  }
  return true;
}

}  // namespace

bool BlockMayMatch(const FilterExpr& ast, const RowBlock& block) { return MayMatch(ast, ast.root, block); }

void EvaluateBlock(const FilterExpr& ast, const RowBlock& block, size_t begin, size_t end, uint8_t* keep) {
  if (end <= begin) return;
  if (!BlockMayMatch(ast, block)) return Fill(keep, end - begin, false);
  Eval(ast, ast.root, block, begin, end - begin, keep);
}

}  // namespace tablestone::storage
