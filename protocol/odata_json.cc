#include "protocol/odata_json.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "protocol/base64.h"
#include "protocol/url.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"
#include "storage/model/limits.h"

namespace tablestone::protocol {
namespace {

using model::EdmType;
using model::EdmValue;

constexpr std::string_view kTypeSuffix = "@odata.type";

// Defined before their uses so that each call with a literal compiles to an
// inline compare (out of line, they were a call and a memcmp per member).
inline bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
inline bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

// What the members of one entity body may hold: at most 255 named properties
// (PartitionKey, RowKey, Timestamp and null-valued ones included; Learn:
// understanding-the-table-service-data-model), at most one type annotation
// each, and a few more members of OData control information. A body past any
// of these cannot be an entity (TooManyProperties).
// What a member of an entity body is, by its name: a type annotation
// ("<name>@odata.type"), other OData control information ("odata.*",
// "<name>@odata.*"; not data, Learn: understanding-the-table-service-data-model)
// or a property.
enum class MemberKind : uint8_t { kProperty, kAnnotation, kControl };

inline MemberKind ClassifyMember(std::string_view name) {
  if (EndsWith(name, kTypeSuffix)) return MemberKind::kAnnotation;
  if (StartsWith(name, "odata.")) return MemberKind::kControl;
  // Most names hold no '@': one memchr instead of a search for "@odata.".
  if (std::memchr(name.data(), '@', name.size()) != nullptr && name.find("@odata.") != std::string_view::npos) {
    return MemberKind::kControl;
  }
  return MemberKind::kProperty;
}

class EntityMemberBudget {
 public:
  // Counts one member; false once the budget is spent.
  bool Take(std::string_view name) {
    if (++members_ > kMaxMembers) return false;
    switch (ClassifyMember(name)) {
      case MemberKind::kAnnotation: return ++annotations_ <= model::kMaxProperties;
      case MemberKind::kControl: return true;
      case MemberKind::kProperty: break;
    }
    return ++named_ <= model::kMaxProperties;
  }

 private:
  // Properties, their type annotations, and as many other control members.
  static constexpr size_t kMaxMembers = 4 * model::kMaxProperties;
  size_t members_ = 0;
  size_t annotations_ = 0;
  size_t named_ = 0;
};

// Hand-written because this is the hot path of every entity write: the
// nlohmann SAX pass plus the conversion was a quarter of an insert's CPU.
// It mirrors nlohmann's lexer (lexer.hpp) rule by rule, so every body gets
// the same verdict as before; tests/unit/protocol/odata_json_test.cc checks
// that differentially against nlohmann on generated and mutated bodies.
class FlatObjectParser {
 public:
  // `entity_limits`: stop with TooManyProperties as soon as the members read
  // so far cannot be one entity (EntityMemberBudget), so that a hostile body
  // costs microseconds, not the parse of all of it.
  explicit FlatObjectParser(std::string_view body, bool entity_limits = false)
      : p_(reinterpret_cast<const unsigned char*>(body.data())), end_(p_ + body.size()),
        entity_limits_(entity_limits) {}

  ApiResult<std::vector<JsonMember>> Parse() {
    std::vector<JsonMember> members;
    members.reserve(16);  // a typical entity: no regrowth, which moves every member
    // nlohmann skips a complete BOM at the very start; a partial one is an error.
    if (p_ < end_ && *p_ == 0xEF) {
      if (end_ - p_ < 3 || p_[1] != 0xBB || p_[2] != 0xBF) return ApiError::InvalidInput();
      p_ += 3;
    }
    if (NextToken() != '{') return ApiError::InvalidInput();  // also a top-level scalar/array
    ++p_;
    int c = NextToken();
    if (c == '}') {
      ++p_;
      return Finish(std::move(members));
    }
    for (;;) {
      if (c != '"') return ApiError::InvalidInput();
      ++p_;
      std::string name;
      if (!ParseString(&name)) return ApiError::InvalidInput();
      if (IsDuplicate(members, name)) return ApiError::DuplicatePropertiesSpecified();
      if (entity_limits_ && !budget_.Take(name)) return ApiError::TooManyProperties();
      if (NextToken() != ':') return ApiError::InvalidInput();
      ++p_;
      JsonMember& m = members.emplace_back();
      m.name = std::move(name);
      if (!ParseValue(&m.value)) return ApiError::InvalidInput();
      c = NextToken();
      if (c == '}') {
        ++p_;
        return Finish(std::move(members));
      }
      if (c != ',') return ApiError::InvalidInput();
      ++p_;
      c = NextToken();
    }
  }

 private:
  static constexpr int kEnd = -1;

  // Skips JSON whitespace; returns the next byte, or kEnd at the end of the
  // input or at a NUL byte (nlohmann's lexer reads NUL as end of input).
  int NextToken() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    if (p_ == end_ || *p_ == 0) return kEnd;
    return *p_;
  }

  ApiResult<std::vector<JsonMember>> Finish(std::vector<JsonMember> members) {
    if (NextToken() != kEnd) return ApiError::InvalidInput();  // strict: nothing after the object
    return members;
  }

  // Linear for typical entities; a set once there are many members, so a
  // hostile body with thousands of names stays linear overall.
  bool IsDuplicate(const std::vector<JsonMember>& members, const std::string& name) {
    constexpr size_t kLinearMax = 32;
    if (members.size() < kLinearMax) {
      for (const JsonMember& m : members) {
        if (m.name == name) return true;
      }
      return false;
    }
    if (names_.empty()) {
      for (const JsonMember& m : members) names_.insert(m.name);
    }
    return !names_.insert(name).second;
  }

  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  bool ParseValue(JsonScalar* v) {
    using K = JsonScalar::Kind;
    switch (NextToken()) {
      case '"':
        ++p_;
        v->kind = K::kString;
        return ParseString(&v->s);
      case 't':
        v->kind = K::kBool;
        v->b = true;
        return Literal("true");
      case 'f':
        v->kind = K::kBool;
        v->b = false;
        return Literal("false");
      case 'n':
        v->kind = K::kNull;
        return Literal("null");
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        return ParseNumber(v);
      default:
        return false;  // '{' and '[' (nested values) included
    }
  }

  static bool IsDigit(const unsigned char* p, const unsigned char* end) { return p < end && *p >= '0' && *p <= '9'; }

  bool ParseNumber(JsonScalar* v) {
    const unsigned char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (!IsDigit(p_, end_)) return false;
    bool is_float = false;
    if (*p_ == '0') {
      ++p_;  // a leading zero ends the integer part ("01" fails at the next token)
    } else {
      while (IsDigit(p_, end_)) ++p_;
    }
    const unsigned char* int_end = p_;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!IsDigit(p_, end_)) return false;
      while (IsDigit(p_, end_)) ++p_;
      is_float = true;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!IsDigit(p_, end_)) return false;
      while (IsDigit(p_, end_)) ++p_;
      is_float = true;
    }
    if (!is_float) {
      // Exact integer arithmetic; on overflow nlohmann falls back to strtod.
      uint64_t magnitude = 0;
      bool overflow = false;
      for (const unsigned char* d = start + (negative ? 1 : 0); d < int_end; ++d) {
        unsigned digit = *d - '0';
        if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
          overflow = true;
          break;
        }
        magnitude = magnitude * 10 + digit;
      }
      if (!overflow) {
        constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        if (!negative) {
          if (magnitude <= kInt64Max) {
            v->kind = JsonScalar::Kind::kInt;
            v->i = static_cast<int64_t>(magnitude);
          } else {
            v->kind = JsonScalar::Kind::kUInt;
            v->u = magnitude;
          }
          return true;
        }
        if (magnitude <= kInt64Max + 1) {
          v->kind = JsonScalar::Kind::kInt;
          v->i = magnitude == kInt64Max + 1 ? std::numeric_limits<int64_t>::min()
                                            : -static_cast<int64_t>(magnitude);
          return true;
        }
      }
    }
    // nlohmann uses strtod. from_chars rounds identically (both are correctly
    // rounded) and is faster; where it reports out of range (overflow,
    // underflow) strtod decides, so huge and tiny numbers behave as before.
    double d = 0;
    const char* first = reinterpret_cast<const char*>(start);
    const char* last = reinterpret_cast<const char*>(p_);
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || ptr != last) {
      std::string text(first, last);  // strtod needs a NUL-terminated copy
      char* parsed_end = nullptr;
      d = std::strtod(text.c_str(), &parsed_end);
    }
    if (!std::isfinite(d)) return false;  // nlohmann: "number overflow"
    v->kind = JsonScalar::Kind::kFloat;
    v->d = d;
    return true;
  }

  static int Hex(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits after "\u"; -1 if malformed.
  int32_t ParseHex4() {
    if (end_ - p_ < 4) return -1;
    int32_t cp = 0;
    for (int k = 0; k < 4; ++k) {
      int h = Hex(p_[k]);
      if (h < 0) return -1;
      cp = cp * 16 + h;
    }
    p_ += 4;
    return cp;
  }

  static bool InRange(const unsigned char* p, unsigned char lo, unsigned char hi) { return *p >= lo && *p <= hi; }

  // Length of the valid UTF-8 sequence at p_ (lead byte >= 0x80) with
  // nlohmann's (RFC 3629) ranges, or 0 if invalid.
  size_t Utf8SequenceLength() const {
    const unsigned char* p = p_;
    const size_t left = static_cast<size_t>(end_ - p);
    const unsigned char c = *p;
    if (c >= 0xC2 && c <= 0xDF) return left >= 2 && InRange(p + 1, 0x80, 0xBF) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
      if (left < 3) return 0;
      unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;
      unsigned char hi = c == 0xED ? 0x9F : 0xBF;
      return InRange(p + 1, lo, hi) && InRange(p + 2, 0x80, 0xBF) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
      if (left < 4) return 0;
      unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
      unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;
      return InRange(p + 1, lo, hi) && InRange(p + 2, 0x80, 0xBF) && InRange(p + 3, 0x80, 0xBF) ? 4 : 0;
    }
    return 0;  // continuation byte, overlong lead (C0/C1) or above U+10FFFF
  }

  // After the opening quote; consumes the closing quote.
  // Whether any of the 8 bytes at p is a control character, non-ASCII, '"'
  // or '\\'. (v - 0x01..) & ~v & 0x80.. is non-zero iff some byte of v is 0;
  // with 0x20.. it flags bytes < 0x20 (bytes >= 0x80 are caught separately).
  static bool WordNeedsLook(const unsigned char* p) {
    constexpr uint64_t kOnes = 0x0101010101010101ull;
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    uint64_t v;
    std::memcpy(&v, p, 8);
    const uint64_t quote = v ^ (kOnes * '"');
    const uint64_t backslash = v ^ (kOnes * '\\');
    const uint64_t control = (v - kOnes * 0x20) & ~v;
    const uint64_t zero_quote = (quote - kOnes) & ~quote;
    const uint64_t zero_backslash = (backslash - kOnes) & ~backslash;
    return ((v | control | zero_quote | zero_backslash) & kHigh) != 0;
  }

#if defined(__SSE2__)
  // The index of the first of the 16 bytes at p that needs a look (as
  // WordNeedsLook's), or 16. A signed compare below 0x20 flags the control
  // characters and every byte >= 0x80 at once.
  static unsigned FirstToLook16(const unsigned char* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote, backslash))));
    return mask == 0 ? 16 : static_cast<unsigned>(__builtin_ctz(mask));
  }
#endif

  bool ParseString(std::string* out) {
    out->clear();
    for (;;) {
      // Copy the longest plain ASCII run at once, found 8 bytes at a time
      // while no byte of the word needs a look.
      const unsigned char* run = p_;
#if defined(__SSE2__)
      // 16 bytes at a time, stopping at the exact byte: no byte-wise tail
      // but the last 15 bytes of the body.
      while (end_ - p_ >= 16) {
        const unsigned k = FirstToLook16(p_);
        p_ += k;
        if (k < 16) break;
      }
      if (end_ - p_ < 16) {
        while (p_ < end_ && *p_ >= 0x20 && *p_ < 0x80 && *p_ != '"' && *p_ != '\\') ++p_;
      }
#else
      while (end_ - p_ >= 8 && !WordNeedsLook(p_)) p_ += 8;
      while (p_ < end_ && *p_ >= 0x20 && *p_ < 0x80 && *p_ != '"' && *p_ != '\\') ++p_;
#endif
      out->append(reinterpret_cast<const char*>(run), static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      const unsigned char c = *p_;
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;  // control characters must be escaped
      if (c >= 0x80) {
        size_t n = Utf8SequenceLength();
        if (n == 0) return false;
        out->append(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        continue;
      }
      // Backslash escape.
      ++p_;
      if (p_ == end_) return false;
      const unsigned char e = *p_++;
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          int32_t cp = ParseHex4();
          if (cp < 0) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            // A high surrogate must be followed by "\u" and a low one.
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            int32_t low = ParseHex4();
            if (low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;  // lone low surrogate
          }
          AppendUtf8(static_cast<uint32_t>(cp), out);
          break;
        }
        default: return false;
      }
    }
  }

  const unsigned char* p_;
  const unsigned char* const end_;
  std::unordered_set<std::string> names_;
  const bool entity_limits_;
  EntityMemberBudget budget_;
};

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

ApiResult<std::vector<JsonMember>> ParseFlatJsonObject(std::string_view body) {
  return FlatObjectParser(body).Parse();
}

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
  auto raw = FlatObjectParser(body, /*entity_limits=*/true).Parse();
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
