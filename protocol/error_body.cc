#include "protocol/error_body.h"

#include <cstdint>
#include <cstring>

#include "storage/model/datetime.h"

namespace tablestone::protocol {

namespace {

// True for bytes that JSON strings carry as-is (everything but '"', '\\',
// control characters and DEL, which the switch below escapes).
constexpr bool PlainJsonByte(unsigned char c) { return c >= 0x20 && c != '"' && c != '\\' && c != 0x7F; }

// Length of the leading run of plain bytes. Tests 8 bytes per step with the
// usual bit tricks ("has a byte < n", "has a zero byte" after XOR with the
// byte looked for); a word that may hold a special byte is finished bytewise,
// so the answer is exact. Strings are most of a query page's JSON
// (AppendJsonStringTest checks it against a bytewise reference).
[[gnu::always_inline]] inline size_t PlainPrefix(const char* p, size_t n) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v; };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    const uint64_t special = ((x - kOnes * 0x20) & ~x) | has_zero(x ^ (kOnes * '"')) |
                             has_zero(x ^ (kOnes * '\\')) | has_zero(x ^ (kOnes * 0x7F));
    if ((special & kHigh) != 0) break;
  }
  while (i < n && PlainJsonByte(static_cast<unsigned char>(p[i]))) ++i;
  return i;
}

// Length of the valid UTF-8 sequence starting at s[i] (s[i] >= 0x80), or 0
// when invalid (overlong forms, surrogates and code points above U+10FFFF are
// invalid).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
    return 0;
  }
  return n;
}

// Appends the escaped body of the literal (no quotes) of valid UTF-8 `text`.
void AppendEscaped(std::string& out, std::string_view text) {
  const size_t old_size = out.size();
  out.resize(old_size + JsonStringMaxSize(text.size()));
  char* end = WriteJsonString(out.data() + old_size, text);
  // WriteJsonString wrote the quotes too: drop them.
  std::memmove(out.data() + old_size, out.data() + old_size + 1, static_cast<size_t>(end - out.data()) - old_size - 2);
  out.resize(static_cast<size_t>(end - out.data()) - 2);
}

}  // namespace

char* WriteJsonString(char* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out++ = '"';
  // Copies runs of plain bytes in one go: per-character appends were a third
  // of the instructions of a 1000-entity query page.
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const size_t run = i + PlainPrefix(text.data() + i, n - i);
    std::memcpy(out, text.data() + i, run - i);
    out += run - i;
    if (run == n) break;
    unsigned char c = static_cast<unsigned char>(text[run]);
    i = run + 1;
    char short_escape = 0;
    switch (c) {
      case '"': short_escape = '"'; break;
      case '\\': short_escape = '\\'; break;
      case '\n': short_escape = 'n'; break;
      case '\r': short_escape = 'r'; break;
      case '\t': short_escape = 't'; break;
      case '\b': short_escape = 'b'; break;
      case '\f': short_escape = 'f'; break;
      default: break;
    }
    *out++ = '\\';
    if (short_escape != 0) {
      *out++ = short_escape;
    } else {
      const char esc[5] = {'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      std::memcpy(out, esc, 5);
      out += 5;
    }
  }
  *out++ = '"';
  return out;
}

size_t JsonStringSize(std::string_view text) {
  size_t size = text.size() + 2;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    i += PlainPrefix(text.data() + i, n - i);
    if (i == n) break;
    switch (text[i]) {
      case '"': case '\\': case '\n': case '\r': case '\t': case '\b': case '\f': size += 1; break;
      default: size += 5; break;  // \u00XX
    }
    ++i;
  }
  return size;
}

void AppendJsonString(std::string& out, std::string_view text, InvalidUtf8 invalid) {
  if (invalid == InvalidUtf8::kCopy) {
    const size_t old_size = out.size();
    out.resize(old_size + JsonStringMaxSize(text.size()));
    char* end = WriteJsonString(out.data() + old_size, text);
    out.resize(static_cast<size_t>(end - out.data()));
    return;
  }
  // Valid runs are escaped as above; each byte that starts no valid sequence
  // becomes one U+FFFD.
  out.push_back('"');
  size_t begin = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8Length(text, i);
    if (n != 0) {
      i += n;
      continue;
    }
    AppendEscaped(out, text.substr(begin, i - begin));
    out.append("\\ufffd");
    begin = ++i;
  }
  AppendEscaped(out, text.substr(begin));
  out.push_back('"');
}

void AppendXmlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\r': out += "&#xD;"; break;  // a literal CR would reach readers as LF
      default: out += c;
    }
  }
}

std::string ErrorMessageText(const ApiError& error, std::string_view request_id, int64_t time_ticks,
                             ErrorMessageStyle style) {
  std::string text;
  if (error.failed_index) {
    text += std::to_string(*error.failed_index);
    text += ':';
  }
  text += error.message;
  if (style == ErrorMessageStyle::kCosmos) {
    text += error.failed_index ? "\n\nRequestID:" : "\nRequestID:";
    text += request_id;
    text += '\n';
    return text;
  }
  text += "\nRequestId:";
  text += request_id;
  text += "\nTime:";
  text += model::FormatDateTime7(time_ticks);
  return text;
}

std::string RenderJsonError(const ApiError& error, std::string_view request_id, int64_t time_ticks,
                            ErrorMessageStyle style) {
  std::string out = "{\"odata.error\":{\"code\":";
  AppendJsonString(out, error.code);
  out += style == ErrorMessageStyle::kCosmos ? ",\"message\":{\"lang\":\"en-us\",\"value\":"
                                             : ",\"message\":{\"lang\":\"en-US\",\"value\":";
  AppendJsonString(out, ErrorMessageText(error, request_id, time_ticks, style));
  out += "}}}";
  return out;
}

XmlErrorForm XmlErrorFormFor(std::string_view version) {
  // ISO dates compare as text.
  return version.empty() || version >= "2013-08-15" ? XmlErrorForm::kPrefixed : XmlErrorForm::kOData;
}

std::string RenderXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks,
                           XmlErrorForm form) {
  const bool prefixed = form == XmlErrorForm::kPrefixed;
  std::string out = prefixed ? "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
                               "<m:error xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">"
                               "<m:code>"
                             : "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>"
                               "<error xmlns=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\"><code>";
  AppendXmlEscaped(out, error.code);
  out += prefixed ? "</m:code><m:message xml:lang=\"en-US\">" : "</code><message xml:lang=\"en-US\">";
  AppendXmlEscaped(out, ErrorMessageText(error, request_id, time_ticks));
  out += prefixed ? "</m:message></m:error>" : "</message></error>";
  return out;
}

}  // namespace tablestone::protocol
