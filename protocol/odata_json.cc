#include "protocol/odata_json.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include "protocol/base64.h"
#include "protocol/entity_members.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"
#include "storage/model/limits.h"

namespace tablestone::protocol {
namespace {

using model::EdmType;
using model::EdmValue;

bool IsIdentifierStart(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}
bool IsIdentifierPart(unsigned char c) { return IsIdentifierStart(c) || (c >= '0' && c <= '9'); }

// The length limit first, then the identifier rule. One pass over the name:
// an ASCII name's UTF-16 length is its size.
ApiResult<bool> ValidatePropertyName(std::string_view name) {
  bool identifier = !name.empty() && IsIdentifierStart(static_cast<unsigned char>(name[0]));
  unsigned char high = 0;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    high |= u;
    identifier = identifier && IsIdentifierPart(u);
  }
  const size_t units = high < 0x80 ? name.size() : model::Utf16Length(name);
  if (units > model::kMaxPropertyNameLength) return ApiError::PropertyNameTooLong();
  if (!identifier) return ApiError::PropertyNameInvalid();
  return true;
}

bool ParseInt64Text(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  const char* begin = text.data();
  const char* end = begin + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseDoubleText(std::string_view text, double* out) {
  if (text == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (text == "Infinity" || text == "INF") {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (text == "-Infinity" || text == "-INF") {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (text.empty()) return false;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

std::optional<std::string> CanonicalGuid(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i) {
    char& c = out[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return std::nullopt;
      continue;
    }
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return out;
}

double NormalizeDouble(double d) { return d == 0 ? 0.0 : d; }  // -0.0 is stored as 0

// A string value moved into *out, within the service's limit on a string
// property (Learn: understanding-the-table-service-data-model).
std::optional<ApiError> TakeString(JsonScalar& v, EdmValue* out) {
  if (model::Utf16Length(v.s) > model::kMaxStringUtf16Units) return ApiError::PropertyValueTooLarge();
  out->type = EdmType::kString;
  out->text = std::move(v.s);
  return std::nullopt;
}

// Converts one raw JSON value to an EdmValue. `type` = annotation, if any.
// Consumes v.s (moved into the value) for strings.
ApiResult<EdmValue> ConvertValueOf(std::string_view name, JsonScalar& v, std::optional<EdmType> type) {
  using K = JsonScalar::Kind;
  if (!type) {
    switch (v.kind) {
      case K::kString: type = EdmType::kString; break;
      case K::kBool: return EdmValue::Boolean(v.b);
      case K::kInt:
        // Learn: payload-format-for-table-service-operations: integers within Int32 are Int32, others Double (not
        // Int64).
        if (v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max()) {
          return EdmValue::Int32(static_cast<int32_t>(v.i));
        }
        return EdmValue::Double(static_cast<double>(v.i));
      case K::kUInt: return EdmValue::Double(static_cast<double>(v.u));
      case K::kFloat: return EdmValue::Double(NormalizeDouble(v.d));
      case K::kNull: return ApiError::InternalError();  // callers skip nulls
    }
  }
  // A value that does not read as its declared type is the service's
  // conversion error (ApiError::ValueNotConvertible).
  switch (*type) {
    case EdmType::kString: {
      if (v.kind != K::kString) return ApiError::ValueNotConvertible();
      EdmValue value;
      if (auto error = TakeString(v, &value)) return *std::move(error);
      return value;
    }
    case EdmType::kBoolean:
      // An annotated string ("true"/"false", any case) is accepted, as the
      // service reads it (the Azure CLI sends every annotated value as a
      // string); any other text is InvalidInput.
      if (v.kind == K::kString) {
        if (model::EqualsIgnoreCase(v.s, "true")) return EdmValue::Boolean(true);
        if (model::EqualsIgnoreCase(v.s, "false")) return EdmValue::Boolean(false);
        return ApiError::ValueNotConvertible();
      }
      if (v.kind != K::kBool) return ApiError::ValueNotConvertible();
      return EdmValue::Boolean(v.b);
    case EdmType::kInt32: {
      int64_t x = 0;
      if (v.kind == K::kInt) {
        x = v.i;
      } else if (v.kind != K::kString || !ParseInt64Text(v.s, &x)) {
        return ApiError::ValueNotConvertible();
      }
      if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
        return ApiError::ValueNotConvertible();
      }
      return EdmValue::Int32(static_cast<int32_t>(x));
    }
    case EdmType::kInt64: {
      int64_t x = 0;
      if (v.kind == K::kInt) {
        x = v.i;  // lenient: a number with the annotation (Learn: payload-format-for-table-service-operations)
      } else if (v.kind != K::kString || !ParseInt64Text(v.s, &x)) {
        return ApiError::ValueNotConvertible();
      }
      return EdmValue::Int64(x);
    }
    case EdmType::kDouble: {
      double d = 0;
      if (v.kind == K::kInt) {
        d = static_cast<double>(v.i);
      } else if (v.kind == K::kUInt) {
        d = static_cast<double>(v.u);
      } else if (v.kind == K::kFloat) {
        d = v.d;
      } else if (v.kind != K::kString || !ParseDoubleText(v.s, &d)) {
        return ApiError::ValueNotConvertible();
      }
      return EdmValue::Double(NormalizeDouble(d));
    }
    case EdmType::kDateTime: {
      if (v.kind != K::kString) return ApiError::ValueNotConvertible();
      auto ticks = model::ParseIsoDateTime(v.s);
      if (!ticks) return ApiError::ValueNotConvertible();
      if (*ticks < model::kMinDateTimeTicks || *ticks > model::kMaxDateTimeTicks) {
        return ApiError::OutOfRangeInput("The '" + std::string(name) + "' parameter of value '" +
                                         FormatDateTimeForRangeError(*ticks) + "' is out of range.");
      }
      return EdmValue::DateTime(*ticks);
    }
    case EdmType::kGuid: {
      if (v.kind != K::kString) return ApiError::ValueNotConvertible();
      auto g = CanonicalGuid(v.s);
      if (!g) return ApiError::ValueNotConvertible();
      return EdmValue::Guid(std::move(*g));
    }
    case EdmType::kBinary: {
      if (v.kind != K::kString) return ApiError::ValueNotConvertible();
      auto bytes = Base64Decode(v.s);
      if (!bytes) return ApiError::ValueNotConvertible();
      if (bytes->size() > model::kMaxBinaryBytes) return ApiError::PropertyValueTooLarge();
      return EdmValue::Binary(std::move(*bytes));
    }
  }
  return ApiError::InvalidInput();
}

// ConvertValueOf into `out` (a property's value in place), with the common
// string value moved once rather than through each return.
std::optional<ApiError> ConvertValue(std::string_view name, JsonScalar& v, std::optional<EdmType> type,
                                     EdmValue* out) {
  if (v.kind == JsonScalar::Kind::kString && (!type || *type == EdmType::kString)) return TakeString(v, out);
  auto value = ConvertValueOf(name, v, type);
  if (!value.ok()) return value.error();
  *out = std::move(value).value();
  return std::nullopt;
}

}  // namespace

std::string FormatDateTimeForRangeError(int64_t ticks) {
  if (ticks < 0) ticks = 0;
  std::string iso = model::FormatDateTime7(ticks);  // yyyy-MM-ddTHH:mm:ss.fffffffZ
  if (iso.size() < 19) return iso;
  return iso.substr(5, 2) + "/" + iso.substr(8, 2) + "/" + iso.substr(0, 4) + " " + iso.substr(11, 8);
}

ApiResult<bool> ValidateBodyKey(std::string_view name, std::string_view value) {
  if (model::Utf16Length(value) > model::kMaxKeyUtf16Units) return ApiError::PropertyValueTooLarge();
  // Per byte: 1 refused ('/', '\\', '#', '?', C0 controls, DEL), 2 the lead
  // byte of the C1 controls (U+0080..U+009F are C2 80..C2 9F).
  static constexpr auto kLook = [] {
    std::array<uint8_t, 256> look{};
    for (int c = 0; c < 0x20; ++c) look[c] = 1;
    for (unsigned char c : {'/', '\\', '#', '?', '\x7F'}) look[c] = 1;
    look[0xC2] = 2;
    return look;
  }();
  for (size_t i = 0; i < value.size(); ++i) {
    const uint8_t look = kLook[static_cast<unsigned char>(value[i])];
    if (look == 0) continue;
    bool bad = look == 1;
    if (look == 2 && i + 1 < value.size()) {
      unsigned char n = static_cast<unsigned char>(value[i + 1]);
      bad = n >= 0x80 && n <= 0x9F;
    }
    if (bad) {
      return ApiError::OutOfRangeInput("The '" + std::string(name) + "' parameter of value '" +
                                       std::string(value) + "' is out of range.");
    }
  }
  return true;
}

ApiResult<ParsedEntity> ParseEntityJson(std::string_view body) {
  auto raw = ParseFlatJsonObject(body, FlatJsonLimits::kEntity);
  if (!raw.ok()) return raw.error();
  return EntityFromMembers(std::move(raw).value());
}

ApiResult<ParsedEntity> EntityFromMembers(std::vector<JsonMember>&& members) {
  // First pass: each member's kind (kept for the second pass, inline for a
  // typical entity), and the annotations by base name.
  constexpr size_t kInlineKinds = 64;
  MemberKind inline_kinds[kInlineKinds];
  std::vector<MemberKind> heap_kinds;
  MemberKind* kinds = inline_kinds;
  if (members.size() > kInlineKinds) {
    heap_kinds.resize(members.size());
    kinds = heap_kinds.data();
  }
  // base -> type name; a typical entity has a few.
  std::vector<std::pair<std::string_view, std::string_view>> annotations;
  size_t named = 0;  // members that name a property, null ones and the system ones included
  for (size_t i = 0; i < members.size(); ++i) {
    const JsonMember& p = members[i];
    kinds[i] = ClassifyMember(p.name);
    if (kinds[i] != MemberKind::kAnnotation) {
      named += kinds[i] == MemberKind::kProperty;
      continue;
    }
    if (p.value.kind == JsonScalar::Kind::kNull) continue;
    if (p.value.kind != JsonScalar::Kind::kString) return ApiError::InvalidInput();
    if (annotations.empty()) annotations.reserve(8);
    annotations.emplace_back(std::string_view(p.name).substr(0, p.name.size() - kTypeSuffix.size()),
                             p.value.s);
  }
  // A body naming more properties, or typing more, than an entity holds
  // (255 with PartitionKey, RowKey and Timestamp; Learn:
  // understanding-the-table-service-data-model) cannot be one: refused
  // before any value is converted. Null properties count: the body names
  // them (a body of nulls and orphan annotations is not an empty entity).
  if (named > model::kMaxProperties || annotations.size() > model::kMaxProperties) {
    return ApiError::TooManyProperties();
  }
  // A scan for the few annotations of a typical entity; an index once there
  // are many, so that any body costs time linear in its size
  // (fuzz_entity_scaling).
  constexpr size_t kScanMax = 16;
  std::unordered_map<std::string_view, std::string_view> annotation_index;
  if (annotations.size() > kScanMax) {
    annotation_index.reserve(annotations.size());
    for (const auto& a : annotations) annotation_index.emplace(a.first, a.second);
  }
  auto annotation_of = [&](std::string_view base) -> const std::string_view* {
    if (annotations.size() > kScanMax) {
      auto it = annotation_index.find(base);
      return it == annotation_index.end() ? nullptr : &it->second;
    }
    for (const auto& a : annotations) {
      if (a.first == base) return &a.second;
    }
    return nullptr;
  };

  ParsedEntity out;
  out.entity.properties.reserve(named);
  // Members are moved out; annotation members (skipped below) stay intact
  // because `annotations` points into them.
  for (size_t i = 0; i < members.size(); ++i) {
    // OData control information and type annotations are not data (Learn:
    // understanding-the-table-service-data-model).
    if (kinds[i] != MemberKind::kProperty) continue;
    JsonMember& p = members[i];
    const std::string_view name = p.name;
    if (name == std::string_view("Timestamp")) continue;  // set by the server (Learn: understanding-the-table-service-data-model)
    const std::string_view* type_name = annotation_of(name);
    std::optional<EdmType> type;
    if (type_name != nullptr) {
      type = model::EdmTypeFromName(*type_name);
      if (!type) return ApiError::InvalidInput();
    }
    const bool is_partition_key = name == std::string_view("PartitionKey");
    if (is_partition_key || name == std::string_view("RowKey")) {
      if (p.value.kind == JsonScalar::Kind::kNull) continue;  // null = absent
      // A key that is not a string (a JSON number or Boolean, or a value typed
      // anything but Edm.String) is InvalidInput on the service, recorded in
      // azure-sdk-for-python's tests/test_encoder.py (RowKey 1, True, 3.14
      // as Edm.Double, a DateTime or Guid key), not PrimaryKeyPropertyIsInvalidType.
      if (p.value.kind != JsonScalar::Kind::kString || (type && *type != EdmType::kString)) {
        return ApiError::InvalidInput();
      }
      auto valid = ValidateBodyKey(name, p.value.s);
      if (!valid.ok()) return valid.error();
      if (is_partition_key) {
        out.entity.partition_key = std::move(p.value.s);
        out.has_partition_key = true;
      } else {
        out.entity.row_key = std::move(p.value.s);
        out.has_row_key = true;
      }
      continue;
    }
    auto name_ok = ValidatePropertyName(name);
    if (!name_ok.ok()) return name_ok.error();
    // null = absent (Learn: payload-format-for-table-service-operations)
    if (p.value.kind == JsonScalar::Kind::kNull) continue;
    model::Property& property = out.entity.properties.emplace_back();
    if (auto error = ConvertValue(name, p.value, type, &property.value)) return *std::move(error);
    property.name = std::move(p.name);
    // Refused as soon as it cannot be an entity: the rest is not converted.
    if (out.entity.properties.size() > model::kMaxCustomProperties) return ApiError::TooManyProperties();
  }
  if (out.entity.properties.size() > model::kMaxCustomProperties) return ApiError::TooManyProperties();
  if (model::EntitySizeForLimit(out.entity) > model::kMaxEntityBytes) return ApiError::EntityTooLarge();
  return out;
}

ApiResult<bool> ValidateEntity(const model::Entity& entity) {
  for (auto [name, value] : {std::pair<std::string_view, std::string_view>{"PartitionKey", entity.partition_key},
                             {"RowKey", entity.row_key}}) {
    auto valid = ValidateBodyKey(name, value);
    if (!valid.ok()) return valid.error();
  }
  if (entity.properties.size() > model::kMaxCustomProperties) return ApiError::TooManyProperties();
  for (const model::Property& p : entity.properties) {
    auto name_ok = ValidatePropertyName(p.name);
    if (!name_ok.ok()) return name_ok.error();
    if (p.value.type == EdmType::kString && model::Utf16Length(p.value.text) > model::kMaxStringUtf16Units) {
      return ApiError::PropertyValueTooLarge();
    }
    if (p.value.type == EdmType::kBinary && p.value.text.size() > model::kMaxBinaryBytes) {
      return ApiError::PropertyValueTooLarge();
    }
  }
  if (model::EntitySizeForLimit(entity) > model::kMaxEntityBytes) return ApiError::EntityTooLarge();
  return true;
}

ApiResult<std::string> ParseTableNameJson(std::string_view body) {
  auto raw = ParseFlatJsonObject(body);
  if (!raw.ok()) return raw.error();
  for (JsonMember& p : *raw) {
    if (p.name != "TableName") continue;
    if (p.value.kind == JsonScalar::Kind::kNull) break;
    if (p.value.kind != JsonScalar::Kind::kString) return ApiError::InvalidInput();
    return std::move(p.value.s);
  }
  return ApiError::PropertiesNeedValue();
}

}  // namespace tablestone::protocol
