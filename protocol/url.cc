#include "protocol/url.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "storage/model/ascii.h"

namespace tablestone::protocol {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> Decode(std::string_view text, bool plus_is_space) {
  // Most names and values have nothing to decode: copy them at once (glibc's
  // memchr is vectorized; the loop below costs ~8 instructions per byte).
  // (Empty first: an empty view may have a null data(), which memchr must not get.)
  if (text.empty()) return std::string();
  if (std::memchr(text.data(), '%', text.size()) == nullptr &&
      (!plus_is_space || std::memchr(text.data(), '+', text.size()) == nullptr)) {
    return std::string(text);
  }
  // Writes through a raw pointer into a buffer sized for the worst case (no
  // escapes) rather than push_back per character. Byte by byte, not a word at
  // a time: most names and values of a query string are a few bytes long.
  std::string out(text.size(), '\0');
  char* o = out.data();
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    char c = *p;
    if (c == '%') {
      if (end - p < 3) return std::nullopt;
      int hi = HexValue(p[1]);
      int lo = HexValue(p[2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      *o++ = static_cast<char>(hi * 16 + lo);
      p += 3;
    } else {
      *o++ = (c == '+' && plus_is_space) ? ' ' : c;
      ++p;
    }
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return out;
}

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

}  // namespace

std::optional<std::string> PercentDecodePath(std::string_view text) { return Decode(text, false); }
std::optional<std::string> PercentDecodeQuery(std::string_view text) { return Decode(text, true); }

std::optional<QueryParams> ParseQueryString(std::string_view query) {
  QueryParams params;
  params.reserve(1 + static_cast<size_t>(std::count(query.begin(), query.end(), '&')));
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string_view raw_name = part.substr(0, eq);
    std::string_view raw_value = eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
    auto name = PercentDecodeQuery(raw_name);
    auto value = PercentDecodeQuery(raw_value);
    if (!name || !value) return std::nullopt;
    params.emplace(std::move(*name), std::move(*value));
  }
  return params;
}

const std::string* FindQueryParam(const QueryParams& params, std::string_view name) {
  auto it = params.find(name);
  return it == params.end() ? nullptr : &it->second;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

std::string PercentEncode(std::string_view text, std::string_view keep) {
  std::string out;
  out.reserve(text.size());
  AppendPercentEncoded(&out, text, keep);
  return out;
}

void AppendPercentEncoded(std::string* out, std::string_view text, std::string_view keep) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t run = 0;  // the start of the bytes kept as they are, appended at once
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c) || keep.find(ch) != std::string_view::npos) continue;
    out->append(text.data() + run, i - run);
    run = i + 1;
    const char escaped[3] = {'%', kHex[c >> 4], kHex[c & 15]};
    out->append(escaped, 3);
  }
  out->append(text.data() + run, text.size() - run);
}

void SplitTarget(std::string_view target, std::string_view* path, std::string_view* query) {
  size_t q = target.find('?');
  *path = target.substr(0, q);
  *query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

std::optional<AbsoluteTarget> ParseAbsoluteTarget(std::string_view target) {
  const size_t colon = target.find("://");
  if (colon == std::string_view::npos) return std::nullopt;
  AbsoluteTarget out;
  out.scheme = target.substr(0, colon);
  if (!model::EqualsIgnoreCase(out.scheme, "http") && !model::EqualsIgnoreCase(out.scheme, "https")) {
    return std::nullopt;
  }
  std::string_view rest = target.substr(colon + 3);
  const size_t end = rest.find_first_of("/?#");
  out.authority = rest.substr(0, end);
  if (out.authority.empty() || out.authority.find('@') != std::string_view::npos) return std::nullopt;
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (!rest.empty() && rest.front() == '#') return std::nullopt;  // a fragment never reaches a server
  if (rest.empty() || rest.front() == '?') out.origin_form.push_back('/');
  out.origin_form.append(rest);
  return out;
}

namespace {

// "host:80" -> "host" for http (443 for https); anything else unchanged.
std::string_view WithoutDefaultPort(std::string_view scheme, std::string_view authority) {
  const std::string_view port = model::EqualsIgnoreCase(scheme, "https") ? ":443" : ":80";
  if (authority.size() > port.size() && authority.substr(authority.size() - port.size()) == port) {
    return authority.substr(0, authority.size() - port.size());
  }
  return authority;
}

}  // namespace

bool SameAuthority(std::string_view scheme, std::string_view a, std::string_view b) {
  return model::EqualsIgnoreCase(WithoutDefaultPort(scheme, a), WithoutDefaultPort(scheme, b));
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace tablestone::protocol
