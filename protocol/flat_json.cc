#include "protocol/flat_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <limits>
#include <unordered_set>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "protocol/entity_members.h"
#include "protocol/url.h"

namespace tablestone::protocol {
namespace {

// Hand-written because this is the hot path of every entity write: the
// nlohmann SAX pass plus the conversion was a quarter of an insert's CPU.
// It mirrors nlohmann's lexer (lexer.hpp) rule by rule, so every body gets
// the same verdict as before; tests/unit/protocol/odata_json_test.cc checks
// that differentially against nlohmann on generated and mutated bodies.
class FlatObjectParser {
 public:
  FlatObjectParser(std::string_view body, FlatJsonLimits limits)
      : p_(reinterpret_cast<const unsigned char*>(body.data())), end_(p_ + body.size()),
        entity_limits_(limits == FlatJsonLimits::kEntity) {}

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

}  // namespace

ApiResult<std::vector<JsonMember>> ParseFlatJsonObject(std::string_view body, FlatJsonLimits limits) {
  return FlatObjectParser(body, limits).Parse();
}

}  // namespace tablestone::protocol
