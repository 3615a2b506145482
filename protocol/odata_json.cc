#include "protocol/odata_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>
#include <vector>

#include "protocol/base64.h"
#include "protocol/url.h"
#include "storage/model/datetime.h"
#include "storage/model/limits.h"

namespace tablestone::protocol {
namespace {

using Json = nlohmann::json;
using model::EdmType;
using model::EdmValue;

constexpr std::string_view kTypeSuffix = "@odata.type";

struct RawValue {
  enum class Kind { kNull, kBool, kInt, kUInt, kFloat, kString };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;
};

struct RawProperty {
  std::string name;
  RawValue value;
};

// SAX consumer: accepts exactly one flat JSON object, records its members in
// order and rejects duplicate names (nlohmann's DOM would keep only the last).
class FlatObjectSax {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  std::vector<RawProperty> props;
  std::optional<ApiError> error;

  bool null() { return Value(RawValue{}); }
  bool boolean(bool v) {
    RawValue r;
    r.kind = RawValue::Kind::kBool;
    r.b = v;
    return Value(std::move(r));
  }
  bool number_integer(number_integer_t v) {
    RawValue r;
    r.kind = RawValue::Kind::kInt;
    r.i = v;
    return Value(std::move(r));
  }
  bool number_unsigned(number_unsigned_t v) {
    RawValue r;
    if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      r.kind = RawValue::Kind::kInt;
      r.i = static_cast<int64_t>(v);
    } else {
      r.kind = RawValue::Kind::kUInt;
      r.u = v;
    }
    return Value(std::move(r));
  }
  bool number_float(number_float_t v, const string_t&) {
    RawValue r;
    r.kind = RawValue::Kind::kFloat;
    r.d = v;
    return Value(std::move(r));
  }
  bool string(string_t& v) {
    RawValue r;
    r.kind = RawValue::Kind::kString;
    r.s = std::move(v);
    return Value(std::move(r));
  }
  bool binary(binary_t&) { return Fail(ApiError::InvalidInput()); }
  bool start_object(std::size_t) {
    if (depth_++ != 0) return Fail(ApiError::InvalidInput());  // nested object
    started_ = true;
    return true;
  }
  bool key(string_t& k) {
    if (!names_.insert(k).second) return Fail(ApiError::DuplicatePropertiesSpecified());
    pending_key_ = std::move(k);
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) { return Fail(ApiError::InvalidInput()); }
  bool end_array() { return Fail(ApiError::InvalidInput()); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    if (!error) error = ApiError::InvalidInput();
    return false;
  }
  bool started() const { return started_; }

 private:
  bool Fail(ApiError e) {
    if (!error) error = std::move(e);
    return false;
  }
  bool Value(RawValue v) {
    if (depth_ != 1) return Fail(ApiError::InvalidInput());  // top-level scalar
    props.push_back({std::move(pending_key_), std::move(v)});
    return true;
  }

  int depth_ = 0;
  bool started_ = false;
  std::string pending_key_;
  std::unordered_set<std::string> names_;
};

ApiResult<std::vector<RawProperty>> ParseFlatObject(std::string_view body) {
  FlatObjectSax sax;
  bool ok = Json::sax_parse(body.begin(), body.end(), &sax, Json::input_format_t::json, true);
  if (sax.error) return *sax.error;
  if (!ok || !sax.started()) return ApiError::InvalidInput();
  return std::move(sax.props);
}

bool IsIdentifierStart(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}
bool IsIdentifierPart(unsigned char c) { return IsIdentifierStart(c) || (c >= '0' && c <= '9'); }

ApiResult<bool> ValidatePropertyName(std::string_view name) {
  if (model::Utf16Length(name) > model::kMaxPropertyNameLength) return ApiError::PropertyNameTooLong();
  if (name.empty() || !IsIdentifierStart(static_cast<unsigned char>(name[0]))) {
    return ApiError::PropertyNameInvalid();
  }
  for (char c : name) {
    if (!IsIdentifierPart(static_cast<unsigned char>(c))) return ApiError::PropertyNameInvalid();
  }
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

// Converts one raw JSON value to an EdmValue. `type` = annotation, if any.
ApiResult<EdmValue> ConvertValue(std::string_view name, const RawValue& v, std::optional<EdmType> type) {
  using K = RawValue::Kind;
  if (!type) {
    switch (v.kind) {
      case K::kString: type = EdmType::kString; break;
      case K::kBool: return EdmValue::Boolean(v.b);
      case K::kInt:
        // Spec §3.6: integers within Int32 are Int32, others Double (not Int64).
        if (v.i >= std::numeric_limits<int32_t>::min() && v.i <= std::numeric_limits<int32_t>::max()) {
          return EdmValue::Int32(static_cast<int32_t>(v.i));
        }
        return EdmValue::Double(static_cast<double>(v.i));
      case K::kUInt: return EdmValue::Double(static_cast<double>(v.u));
      case K::kFloat: return EdmValue::Double(NormalizeDouble(v.d));
      case K::kNull: return ApiError::InternalError();  // callers skip nulls
    }
  }
  switch (*type) {
    case EdmType::kString:
      if (v.kind != K::kString) return ApiError::InvalidInput();
      if (model::Utf16Length(v.s) > model::kMaxStringUtf16Units) return ApiError::PropertyValueTooLarge();
      return EdmValue::String(v.s);
    case EdmType::kBoolean:
      if (v.kind != K::kBool) return ApiError::InvalidInput();
      return EdmValue::Boolean(v.b);
    case EdmType::kInt32: {
      int64_t x = 0;
      if (v.kind == K::kInt) {
        x = v.i;
      } else if (v.kind != K::kString || !ParseInt64Text(v.s, &x)) {
        return ApiError::InvalidInput();
      }
      if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
        return ApiError::InvalidInput();
      }
      return EdmValue::Int32(static_cast<int32_t>(x));
    }
    case EdmType::kInt64: {
      int64_t x = 0;
      if (v.kind == K::kInt) {
        x = v.i;  // lenient: a number with the annotation (spec §3.6)
      } else if (v.kind != K::kString || !ParseInt64Text(v.s, &x)) {
        return ApiError::InvalidInput();
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
        return ApiError::InvalidInput();
      }
      return EdmValue::Double(NormalizeDouble(d));
    }
    case EdmType::kDateTime: {
      if (v.kind != K::kString) return ApiError::InvalidInput();
      auto ticks = model::ParseIsoDateTime(v.s);
      if (!ticks) return ApiError::InvalidInput();
      if (*ticks < model::kMinDateTimeTicks || *ticks > model::kMaxDateTimeTicks) {
        return ApiError::OutOfRangeInput("The '" + std::string(name) + "' parameter of value '" +
                                         FormatDateTimeForRangeError(*ticks) + "' is out of range.");
      }
      return EdmValue::DateTime(*ticks);
    }
    case EdmType::kGuid: {
      if (v.kind != K::kString) return ApiError::InvalidInput();
      auto g = CanonicalGuid(v.s);
      if (!g) return ApiError::InvalidInput();
      return EdmValue::Guid(std::move(*g));
    }
    case EdmType::kBinary: {
      if (v.kind != K::kString) return ApiError::InvalidInput();
      auto bytes = Base64Decode(v.s);
      if (!bytes) return ApiError::InvalidInput();
      if (bytes->size() > model::kMaxBinaryBytes) return ApiError::PropertyValueTooLarge();
      return EdmValue::Binary(std::move(*bytes));
    }
  }
  return ApiError::InvalidInput();
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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
  for (size_t i = 0; i < value.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    bool bad = c == '/' || c == '\\' || c == '#' || c == '?' || c < 0x20 || c == 0x7F;
    if (c == 0xC2 && i + 1 < value.size()) {
      unsigned char n = static_cast<unsigned char>(value[i + 1]);
      bad = bad || (n >= 0x80 && n <= 0x9F);
    }
    if (bad) {
      return ApiError::OutOfRangeInput("The '" + std::string(name) + "' parameter of value '" +
                                       std::string(value) + "' is out of range.");
    }
  }
  return true;
}

ApiResult<ParsedEntity> ParseEntityJson(std::string_view body) {
  auto raw = ParseFlatObject(body);
  if (!raw.ok()) return raw.error();

  // First pass: annotations by base name.
  std::vector<std::pair<std::string_view, std::string_view>> annotations;  // base -> type name
  for (const RawProperty& p : *raw) {
    if (!EndsWith(p.name, kTypeSuffix)) continue;
    if (p.value.kind == RawValue::Kind::kNull) continue;
    if (p.value.kind != RawValue::Kind::kString) return ApiError::InvalidInput();
    annotations.emplace_back(std::string_view(p.name).substr(0, p.name.size() - kTypeSuffix.size()),
                             p.value.s);
  }
  auto annotation_of = [&](std::string_view base) -> const std::string_view* {
    for (const auto& a : annotations) {
      if (a.first == base) return &a.second;
    }
    return nullptr;
  };

  ParsedEntity out;
  for (const RawProperty& p : *raw) {
    const std::string& name = p.name;
    if (EndsWith(name, kTypeSuffix)) continue;
    // OData control information is not data (spec §3.2).
    if (StartsWith(name, "odata.") || name.find("@odata.") != std::string::npos) continue;
    if (name == "Timestamp") continue;  // set by the server (spec §3.7)
    const std::string_view* type_name = annotation_of(name);
    std::optional<EdmType> type;
    if (type_name != nullptr) {
      type = model::EdmTypeFromName(*type_name);
      if (!type) return ApiError::InvalidInput();
    }
    if (name == "PartitionKey" || name == "RowKey") {
      if (p.value.kind == RawValue::Kind::kNull) continue;  // null = absent
      if (p.value.kind != RawValue::Kind::kString || (type && *type != EdmType::kString)) {
        return ApiError::PrimaryKeyPropertyIsInvalidType();
      }
      auto valid = ValidateBodyKey(name, p.value.s);
      if (!valid.ok()) return valid.error();
      if (name == "PartitionKey") {
        out.entity.partition_key = p.value.s;
        out.has_partition_key = true;
      } else {
        out.entity.row_key = p.value.s;
        out.has_row_key = true;
      }
      continue;
    }
    auto name_ok = ValidatePropertyName(name);
    if (!name_ok.ok()) return name_ok.error();
    if (p.value.kind == RawValue::Kind::kNull) continue;  // null = absent (spec §3.5)
    auto value = ConvertValue(name, p.value, type);
    if (!value.ok()) return value.error();
    out.entity.properties.push_back({name, std::move(value).value()});
  }
  if (out.entity.properties.size() > model::kMaxCustomProperties) return ApiError::TooManyProperties();
  if (model::EntitySizeForLimit(out.entity) > model::kMaxEntityBytes) return ApiError::EntityTooLarge();
  return out;
}

ApiResult<std::string> ParseTableNameJson(std::string_view body) {
  auto raw = ParseFlatObject(body);
  if (!raw.ok()) return raw.error();
  for (const RawProperty& p : *raw) {
    if (p.name != "TableName") continue;
    if (p.value.kind == RawValue::Kind::kNull) break;
    if (p.value.kind != RawValue::Kind::kString) return ApiError::InvalidInput();
    return p.value.s;
  }
  return ApiError::PropertiesNeedValue();
}

}  // namespace tablestone::protocol
