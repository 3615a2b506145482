// Typed property values of the Azure Table data model (the eight Edm types).
//
// Contract: an EdmValue holds exactly one typed value. The payload field used
// depends on `type`:
//   kString   -> text (UTF-8)
//   kBinary   -> text (raw bytes, at most 64 KiB)
//   kGuid     -> text (canonical lower-case 36-char form "xxxxxxxx-xxxx-...")
//   kInt32    -> int_value (within int32 range)
//   kInt64    -> int_value
//   kBoolean  -> int_value (0 or 1)
//   kDateTime -> int_value (ticks: 100 ns units since 0001-01-01T00:00:00Z,
//                as .NET DateTime; see datetime.h)
//   kDouble   -> double_value
// Validation of ranges happens where values are parsed (protocol/); the model
// does not re-check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tablestone::model {

// Persisted in the storage value format: never reorder or renumber.
enum class EdmType : uint8_t {
  kString = 1,
  kInt32 = 2,
  kInt64 = 3,
  kDouble = 4,
  kBoolean = 5,
  kDateTime = 6,
  kGuid = 7,
  kBinary = 8,
};

// "Edm.String", "Edm.Int32", ...
std::string_view EdmTypeName(EdmType type);
// Inverse of EdmTypeName (exact, case-sensitive, as the service).
std::optional<EdmType> EdmTypeFromName(std::string_view name);

struct EdmValue {
  EdmType type = EdmType::kString;
  int64_t int_value = 0;
  double double_value = 0;
  std::string text;

  static EdmValue String(std::string s) { return {EdmType::kString, 0, 0, std::move(s)}; }
  static EdmValue Binary(std::string bytes) { return {EdmType::kBinary, 0, 0, std::move(bytes)}; }
  static EdmValue Guid(std::string canonical) { return {EdmType::kGuid, 0, 0, std::move(canonical)}; }
  static EdmValue Int32(int32_t v) { return {EdmType::kInt32, v, 0, {}}; }
  static EdmValue Int64(int64_t v) { return {EdmType::kInt64, v, 0, {}}; }
  static EdmValue Boolean(bool v) { return {EdmType::kBoolean, v ? 1 : 0, 0, {}}; }
  static EdmValue DateTime(int64_t ticks) { return {EdmType::kDateTime, ticks, 0, {}}; }
  static EdmValue Double(double v) { return {EdmType::kDouble, 0, v, {}}; }

  bool bool_value() const { return int_value != 0; }

  // Same type and same value (doubles compared bitwise-equal except that NaN == NaN,
  // so that round-trip tests are meaningful).
  friend bool operator==(const EdmValue& a, const EdmValue& b);
};

}  // namespace tablestone::model
