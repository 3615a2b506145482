#include "protocol/filter/lexer.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

#include "storage/model/datetime.h"

namespace tablestone::protocol::filter {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Removes the quote doubling of an OData string literal body.
std::string Unescape(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    out.push_back(body[i]);
    if (body[i] == '\'') ++i;  // the lexer guarantees the quote is doubled
  }
  return out;
}

// datetime'...': ISO 8601 as model::ParseIsoDateTime reads it, but at most 7
// fraction digits (the tick resolution; the service's parser rejects more).
bool ParseDateTimeBody(std::string_view body, int64_t* ticks) {
  size_t dot = body.find('.');
  if (dot != std::string_view::npos) {
    size_t digits = 0;
    for (size_t i = dot + 1; i < body.size() && IsDigit(body[i]); ++i) ++digits;
    if (digits > 7) return false;
  }
  std::optional<int64_t> parsed = model::ParseIsoDateTime(body);
  if (!parsed || *parsed > model::kMaxDateTimeTicks) return false;
  *ticks = *parsed;
  return true;
}

// guid'...': the 36-character dashed form in any case, kept canonical lower case.
bool ParseGuidBody(std::string_view body, std::string* canonical) {
  if (body.size() != 36) return false;
  canonical->resize(36);
  for (size_t i = 0; i < 36; ++i) {
    char c = body[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
      (*canonical)[i] = '-';
      continue;
    }
    if (HexValue(c) < 0) return false;
    (*canonical)[i] = (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return true;
}

bool ParseHexBody(std::string_view body, std::string* bytes) {
  if (body.size() % 2 != 0) return false;
  bytes->resize(body.size() / 2);
  for (size_t i = 0; i < body.size(); i += 2) {
    int hi = HexValue(body[i]);
    int lo = HexValue(body[i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*bytes)[i / 2] = static_cast<char>(hi * 16 + lo);
  }
  return true;
}

}  // namespace

Token Lexer::Error(size_t pos) {
  failed_ = true;
  pos_ = text_.size();
  Token t;
  t.kind = TokenKind::kError;
  t.begin = pos;
  t.end = pos;
  return t;
}

Token Lexer::Next() {
  if (failed_) return Error(text_.size());
  while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  Token t;
  t.begin = pos_;
  if (pos_ >= text_.size()) {
    t.kind = TokenKind::kEnd;
    t.end = pos_;
    return t;
  }
  char c = text_[pos_];
  auto single = [&](TokenKind kind) {
    t.kind = kind;
    t.end = ++pos_;
    t.text = text_.substr(t.begin, 1);
    return t;
  };
  switch (c) {
    case '(': return single(TokenKind::kLParen);
    case ')': return single(TokenKind::kRParen);
    case ',': return single(TokenKind::kComma);
    case '\'': return LexQuoted(pos_, {});
    case '-':
      if (IsDigit(CharAt(pos_ + 1))) return LexNumber(pos_);
      return single(TokenKind::kMinus);
    default: break;
  }
  if (IsDigit(c)) return LexNumber(pos_);
  if (!IsWordStart(c)) return Error(pos_);
  size_t end = pos_;
  while (end < text_.size() && IsWordChar(text_[end])) ++end;
  if (end < text_.size() && text_[end] == '\'') {
    return LexQuoted(end, text_.substr(pos_, end - pos_));
  }
  t.kind = TokenKind::kWord;
  t.end = end;
  t.text = text_.substr(pos_, end - pos_);
  pos_ = end;
  return t;
}

// `quote` is the offset of the opening quote; `prefix` precedes it directly
// (empty for a plain string literal).
Token Lexer::LexQuoted(size_t quote, std::string_view prefix) {
  const size_t begin = quote - prefix.size();
  size_t i = quote + 1;
  for (;;) {
    if (i >= text_.size()) return Error(text_.size());  // unterminated
    if (text_[i] == '\'') {
      if (i + 1 < text_.size() && text_[i + 1] == '\'') {
        i += 2;
        continue;
      }
      break;
    }
    ++i;
  }
  const size_t end = i + 1;
  std::string_view body = text_.substr(quote + 1, i - quote - 1);
  Token t;
  t.kind = TokenKind::kLiteral;
  t.begin = begin;
  t.end = end;
  t.text = text_.substr(begin, end - begin);
  bool ok = false;
  if (prefix.empty()) {
    t.value = model::EdmValue::String(Unescape(body));
    ok = true;
  } else if (prefix == "datetime") {
    int64_t ticks = 0;
    ok = ParseDateTimeBody(body, &ticks);
    t.value = model::EdmValue::DateTime(ticks);
  } else if (prefix == "guid") {
    std::string canonical;
    ok = ParseGuidBody(body, &canonical);
    t.value = model::EdmValue::Guid(std::move(canonical));
  } else if (prefix == "X" || prefix == "x" || prefix == "binary") {
    std::string bytes;
    ok = ParseHexBody(body, &bytes);
    t.value = model::EdmValue::Binary(std::move(bytes));
  }
  // Unknown prefixes (datetimeoffset'..', time'..', `eq'x'`) fall through.
  if (!ok) return Error(end);
  pos_ = end;
  return t;
}

Token Lexer::LexNumber(size_t begin) {
  size_t i = begin;
  if (text_[i] == '-') ++i;
  while (i < text_.size() && IsDigit(text_[i])) ++i;
  bool is_double = false;
  if (i < text_.size() && text_[i] == '.') {
    ++i;
    if (!IsDigit(CharAt(i))) return Error(i);
    while (i < text_.size() && IsDigit(text_[i])) ++i;
    is_double = true;
  }
  if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
    size_t j = i + 1;
    if (CharAt(j) == '+' || CharAt(j) == '-') ++j;
    if (!IsDigit(CharAt(j))) return Error(j);
    while (j < text_.size() && IsDigit(text_[j])) ++j;
    i = j;
    is_double = true;
  }
  const std::string_view digits = text_.substr(begin, i - begin);
  char suffix = CharAt(i);
  bool is_int64 = false;
  if (suffix == 'L' || suffix == 'l') {
    if (is_double) return Error(i);
    is_int64 = true;
    ++i;
  } else if (suffix == 'D' || suffix == 'd' || suffix == 'M' || suffix == 'm' || suffix == 'F' ||
             suffix == 'f') {
    is_double = true;
    ++i;
  }
  if (i < text_.size() && IsWordChar(text_[i])) return Error(i);

  Token t;
  t.kind = TokenKind::kLiteral;
  t.begin = begin;
  t.end = i;
  t.text = text_.substr(begin, i - begin);
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  if (!is_double) {
    // An integer without 'L' is an Edm.Int32 literal: one outside the Int32
    // range is refused (400 InvalidInput, as the service answers
    // `v eq 5454161346626`: microsoft/AzureStorageExplorer#1382,
    // Azure/azure-sdk-for-node#1083), not widened to Int64 or Double.
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last) return Error(i);  // beyond Int64
    if (is_int64) {
      t.value = model::EdmValue::Int64(v);
    } else if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return Error(i);
    } else {
      t.value = model::EdmValue::Int32(static_cast<int32_t>(v));
    }
    pos_ = i;
    return t;
  }
  double d = 0;
  auto [ptr, ec] = std::from_chars(first, last, d);
  if (ec != std::errc() || ptr != last) return Error(i);  // overflow (or underflow) of a double
  t.value = model::EdmValue::Double(d);
  pos_ = i;
  return t;
}

}  // namespace tablestone::protocol::filter
