#include "protocol/redact.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "protocol/url.h"

namespace tablestone::protocol {
namespace {

constexpr std::array<std::string_view, 5> kSecretHeaders = {
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-ms-copy-source-authorization"};

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsLower(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != lower[i]) return false;
  }
  return true;
}

// A byte that may appear in a query parameter name as clients send it
// (unreserved characters and percent escapes).
bool IsNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '%' || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// A byte of a signature as sent: base64 (raw or percent-encoded) and nothing
// that ends a URL, a header line or a quoted string.
bool IsSigValueByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '%' || c == '+' ||
         c == '/' || c == '=';
}

// True when `name` (as sent) percent-decodes to "sig" in any case. A
// doubly-encoded name (%2573ig) is also caught: decoding repeats while it
// changes, up to a few rounds.
bool NameIsSig(std::string_view name) {
  std::string decoded(name);
  for (int round = 0; round < 3; ++round) {
    if (EqualsLower(decoded, "sig")) return true;
    if (decoded.find('%') == std::string::npos) return false;
    // A malformed escape stays in the name whatever is done with it, so such
    // a name can never read "sig": not a signature.
    std::optional<std::string> next = PercentDecodePath(decoded);
    if (!next || *next == decoded) return false;
    decoded = std::move(*next);
  }
  return EqualsLower(decoded, "sig");
}

// The name of the header line that starts at text[line] ("Name:" with
// optional leading blanks), when it is a secret header: the offset just
// after its ':'; nullopt otherwise.
std::optional<size_t> SecretHeaderLine(std::string_view text, size_t line) {
  size_t i = line;
  while (i < text.size() && i - line < 8 && (text[i] == ' ' || text[i] == '\t')) ++i;
  // The longest secret header name is 30 bytes: look no further (linear in the text).
  const std::string_view window = text.substr(i, 40);
  const size_t colon_at = window.find(':');
  if (colon_at == std::string_view::npos || window.substr(0, colon_at).find('\n') != std::string_view::npos) {
    return std::nullopt;
  }
  const size_t colon = i + colon_at;
  std::string_view name = text.substr(i, colon - i);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
  return IsSecretHeader(name) ? std::optional<size_t>(colon + 1) : std::nullopt;
}

constexpr std::string_view kMacEcho = "signature found in the HTTP request '";

}  // namespace

bool IsSecretHeader(std::string_view name) {
  for (std::string_view secret : kSecretHeaders) {
    if (EqualsLower(name, secret)) return true;
  }
  return false;
}

std::string RedactSecrets(std::string_view text) {
  // Each pass below notes the byte ranges to replace; they are then applied
  // in order (overlaps merged), so the passes do not see each other's output.
  std::vector<std::pair<size_t, size_t>> ranges;
  // Header lines: at the start of the text and after every line break.
  for (size_t line = 0; line < text.size();) {
    if (auto value = SecretHeaderLine(text, line)) {
      size_t end = text.find_first_of("\r\n", *value);
      if (end == std::string_view::npos) end = text.size();
      size_t start = *value;
      while (start < end && (text[start] == ' ' || text[start] == '\t')) ++start;
      ranges.emplace_back(start, end);
    }
    const size_t nl = text.find('\n', line);
    if (nl == std::string_view::npos) break;
    line = nl + 1;
  }
  // `sig` parameters: from '=' to '=' (most texts have a handful).
  for (size_t eq = text.find('='); eq != std::string_view::npos; eq = text.find('=', eq + 1)) {
    size_t name_start = eq;
    while (name_start > 0 && eq - name_start < 16 && IsNameByte(text[name_start - 1])) --name_start;
    if (name_start == eq || !NameIsSig(text.substr(name_start, eq - name_start))) continue;
    size_t end = eq + 1;
    // '&' (also of "&amp;" in XML), a quote, a blank or a line break ends it.
    while (end < text.size() && IsSigValueByte(text[end])) ++end;
    ranges.emplace_back(eq + 1, end);
    if (end == text.size()) break;
    eq = end - 1;
  }
  // The MAC echoed by an AuthenticationFailed message.
  for (size_t at = text.find(kMacEcho); at != std::string_view::npos; at = text.find(kMacEcho, at + 1)) {
    const size_t start = at + kMacEcho.size();
    size_t end = text.find('\'', start);
    if (end == std::string_view::npos) end = text.size();
    ranges.emplace_back(start, end);
  }
  if (ranges.empty()) return std::string(text);
  std::sort(ranges.begin(), ranges.end());
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  for (const auto& [from, to] : ranges) {
    if (to <= copied && from < copied) continue;  // inside a range already replaced
    const size_t start = std::max(from, copied);
    out.append(text.substr(copied, start - copied));
    if (from >= copied) out.append(kRedacted);
    copied = std::max(copied, to);
  }
  out.append(text.substr(copied));
  return out;
}

std::string RedactHeaderValue(std::string_view name, std::string_view value) {
  return IsSecretHeader(name) ? std::string(kRedacted) : RedactSecrets(value);
}

}  // namespace tablestone::protocol
