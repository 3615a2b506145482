#include "storage/model/etag.h"

#include <cstring>

#include "storage/model/datetime.h"

namespace tablestone::model {

size_t FormatETagTo(int64_t ticks, char (&buf)[kETagBufferSize]) {
  static_assert(kETagBufferSize >= 12 + kDateTimeBufferSize + 2 * 2 + 2, "room for the longest ETag");
  char time[kDateTimeBufferSize];
  const size_t n = FormatDateTimeTrimmedTo(ticks, time);
  size_t at = 0;
  auto put = [&](const char* text, size_t len) {
    std::memcpy(buf + at, text, len);
    at += len;
  };
  put("W/\"datetime'", 12);
  size_t run = 0;  // copied between the colons in runs, each ':' as %3A
  for (size_t i = 0; i < n; ++i) {
    if (time[i] != ':') continue;
    put(time + run, i - run);
    put("%3A", 3);
    run = i + 1;
  }
  put(time + run, n - run);
  put("'\"", 2);
  return at;
}

void AppendETag(std::string& out, int64_t ticks) {
  char etag[kETagBufferSize];
  out.append(etag, FormatETagTo(ticks, etag));
}

std::string FormatETag(int64_t ticks) {
  std::string out;
  out.reserve(48);
  AppendETag(out, ticks);
  return out;
}

bool ParseIfMatch(std::string_view h, IfMatch* out) {
  while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.remove_prefix(1);
  while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.remove_suffix(1);
  if (h == "*") {
    *out = {IfMatch::Kind::kAny, 0};
    return true;
  }
  if (h.size() < 4 || (h[0] != 'W' && h[0] != 'w') || h[1] != '/' || h[2] != '"' || h.back() != '"') {
    return false;
  }
  std::string_view inner = h.substr(3, h.size() - 4);
  constexpr std::string_view kPrefix = "datetime'";
  if (inner.size() > kPrefix.size() + 1 && inner.substr(0, kPrefix.size()) == kPrefix && inner.back() == '\'') {
    std::string_view enc = inner.substr(kPrefix.size(), inner.size() - kPrefix.size() - 1);
    std::string decoded;
    for (size_t i = 0; i < enc.size(); ++i) {
      if (enc[i] == '%' && i + 2 < enc.size() + 0 && enc.substr(i + 1, 2) == "3A") {
        decoded += ':';
        i += 2;
      } else if (enc[i] == '%' && i + 2 < enc.size() + 0 && enc.substr(i + 1, 2) == "3a") {
        decoded += ':';
        i += 2;
      } else {
        decoded += enc[i];
      }
    }
    if (auto ticks = ParseIsoDateTime(decoded)) {
      *out = {IfMatch::Kind::kTimestamp, *ticks};
      return true;
    }
  }
  // A syntactically valid weak ETag of another shape can never match.
  *out = {IfMatch::Kind::kNever, 0};
  return true;
}

}  // namespace tablestone::model
