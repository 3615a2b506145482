// Evaluation of a $filter expression (filter_expr.h) against one row
// (Learn: querying-tables-and-entities; docs/compatibility-notes/filter.md).
// The scan's row path and protocol::filter::Filter::Matches use it; the
// columnar path (storage/block_evaluator.h) gives the same answers.
//
// Semantics:
//  * a missing property makes the comparison false for every operator
//    (so `not (x eq 1)` is true when x is missing);
//  * `property op literal` for a present property follows the service's
//    comparison matrix, kept as one table in comparison.h (literal widening,
//    the fixed mismatch answers eq false, ne true, lt true, le true, gt false,
//    ge false, ordinal UTF-16 strings, case-insensitive Guids, NaN only `ne`);
//  * a bare property is true only when it is Boolean true.
//
// Hot path: no allocation, no exceptions. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string_view>

#include "storage/model/edm.h"
#include "storage/model/entity.h"
#include "storage/model/filter_expr.h"

namespace tablestone::model {

// A borrowed view of a property value (the system properties have no
// EdmValue of their own, so the evaluator works on views).
struct ValueView {
  EdmType type = EdmType::kString;
  int64_t int_value = 0;
  double double_value = 0;
  std::string_view text;

  static ValueView Of(const EdmValue& v) { return {v.type, v.int_value, v.double_value, v.text}; }
  static ValueView String(std::string_view s) { return {EdmType::kString, 0, 0, s}; }
  static ValueView DateTime(int64_t ticks) { return {EdmType::kDateTime, ticks, 0, {}}; }
};

// `property op literal` by the rules above (property present).
bool CompareValue(const ValueView& property, CompareOp op, const EdmValue& literal);

// The values a filter reads, from wherever a row keeps them (a decoded
// Entity, a table name, an encoded value: storage/encoded_filter.h). Get()
// fills *out for `ref` (system properties included) and returns true, or
// returns false when the row has no such property.
class PropertySource {
 public:
  virtual bool Get(const PropertyRef& ref, ValueView* out) const = 0;

 protected:
  ~PropertySource() = default;
};

// The whole filter against any PropertySource, by the same rules (one
// evaluator for every row form).
bool EvaluateWith(const FilterExpr& expr, const PropertySource& row);

// The whole filter against an entity (PartitionKey, RowKey, Timestamp
// included) or against a table name (the property `TableName`).
bool EvaluateEntity(const FilterExpr& expr, const Entity& entity);
bool EvaluateTableName(const FilterExpr& expr, std::string_view table_name);

}  // namespace tablestone::model
