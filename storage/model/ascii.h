// ASCII case folding, the one copy every layer uses. Azure compares names
// (tables, headers, media types, SAS fields, config values) case-
// insensitively in ASCII only: bytes outside A-Z, UTF-8 included, are kept.
// It lives in the model target because storage, protocol and server all link
// it and none may depend on a layer above (CMakeLists.txt). Independent of the
// C locale, unlike std::tolower.
#pragma once

#include <string>
#include <string_view>

namespace tablestone::model {

constexpr char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// A lower-cased copy of `s`.
inline std::string ToAsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

}  // namespace tablestone::model
