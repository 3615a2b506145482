// The one classification table of the service's $filter comparison rules:
// for a property of type P and a literal of type L, how `P op L` is decided.
// The row evaluator (filter_eval.cc CompareValue) and the block evaluator
// (storage/block_evaluator.cc: the column loops and the zone-map test) all dispatch
// on Classify(), so the type decisions live here and only here.
//
// The rules (the service's comparison matrix; pinned by
// tests/unit/model/comparison_test.cc and
// tests/unit/protocol/filter/filter_evaluator_test.cc,
// described in docs/compatibility-notes/filter.md):
//   * the literal may widen, never the property: an Int32 literal compares
//     with an Int32 or Int64 property as Int64, an Int32 or Int64 literal with
//     a Double property as double; an Int64 literal against an Int32 property
//     is a mismatch;
//   * every other pair of different types is a mismatch, answered without
//     looking at the values (MismatchAnswer): eq false, ne true, lt true,
//     le true, gt false, ge false (as if the property sorted below);
//   * same types: strings ordinally by UTF-16 code unit (ordinal.h), Guids
//     case-insensitively, Binary bytewise, Booleans false < true, DateTime by
//     ticks, doubles by IEEE rules (NaN unordered: only `ne` is true).
// A missing property is not a type: callers answer false for every operator.
//
// Cost: Classify is one load from a constexpr table, meant to be called once
// per literal and column (or per row in the row evaluator), never inside a
// column loop. Thread-safe (pure functions).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "storage/model/edm.h"
#include "storage/model/filter_expr.h"

namespace tablestone::model {

// How a (property type, literal type) pair is compared.
enum class CompareKind : uint8_t {
  kMismatch,  // fixed answer (MismatchAnswer), values not read
  kInt64,     // property int_value vs literal int_value, signed 64-bit order
  kDouble,    // property double_value vs the literal as double (LiteralAsDouble), IEEE
  kBoolean,   // int_value != 0 on both sides, false < true
  kDateTime,  // ticks (int_value) on both sides
  kString,    // text, ordinal UTF-16 (CompareUtf16Ordinal)
  kGuid,      // text, ASCII case-insensitive
  kBinary,    // text as bytes, memcmp order then length
};

namespace internal {

inline constexpr CompareKind kX = CompareKind::kMismatch;
inline constexpr CompareKind kI = CompareKind::kInt64;
inline constexpr CompareKind kD = CompareKind::kDouble;
inline constexpr CompareKind kB = CompareKind::kBoolean;
inline constexpr CompareKind kT = CompareKind::kDateTime;
inline constexpr CompareKind kS = CompareKind::kString;
inline constexpr CompareKind kG = CompareKind::kGuid;
inline constexpr CompareKind kY = CompareKind::kBinary;

// Rows: the property's type; columns: the literal's type; both indexed by
// the EdmType value (1..8; index 0 is no type and classifies as mismatch).
// clang-format off
inline constexpr std::array<std::array<CompareKind, 9>, 9> kCompareTable = {{
  //  literal:   -   String Int32 Int64 Double Bool DateTime Guid Binary
  /* -        */ {kX, kX,   kX,   kX,   kX,    kX,  kX,      kX,  kX},
  /* String   */ {kX, kS,   kX,   kX,   kX,    kX,  kX,      kX,  kX},
  /* Int32    */ {kX, kX,   kI,   kX,   kX,    kX,  kX,      kX,  kX},
  /* Int64    */ {kX, kX,   kI,   kI,   kX,    kX,  kX,      kX,  kX},
  /* Double   */ {kX, kX,   kD,   kD,   kD,    kX,  kX,      kX,  kX},
  /* Boolean  */ {kX, kX,   kX,   kX,   kX,    kB,  kX,      kX,  kX},
  /* DateTime */ {kX, kX,   kX,   kX,   kX,    kX,  kT,      kX,  kX},
  /* Guid     */ {kX, kX,   kX,   kX,   kX,    kX,  kX,      kG,  kX},
  /* Binary   */ {kX, kX,   kX,   kX,   kX,    kX,  kX,      kX,  kY},
}};
// clang-format on

}  // namespace internal

// How `property op literal` is decided for these types.
constexpr CompareKind Classify(EdmType property, EdmType literal) {
  const auto p = static_cast<size_t>(property);
  const auto l = static_cast<size_t>(literal);
  if (p >= internal::kCompareTable.size() || l >= internal::kCompareTable.size()) return CompareKind::kMismatch;
  return internal::kCompareTable[p][l];
}

// The service's fixed answer for a kMismatch pair.
constexpr bool MismatchAnswer(CompareOp op) {
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

// The literal of a kDouble pair as a double (an Int32/Int64 literal widens).
inline double LiteralAsDouble(const EdmValue& literal) {
  return literal.type == EdmType::kDouble ? literal.double_value : static_cast<double>(literal.int_value);
}

// "Int64", "Double", ... (test messages, logs).
std::string_view CompareKindName(CompareKind kind);

}  // namespace tablestone::model
