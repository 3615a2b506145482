#include "tools/cli_text.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace tablestone::tools {
namespace {

constexpr size_t kMaxConnectionFileBytes = 64u << 10;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Length of the valid UTF-8 sequence at text[i], 0 if none.
size_t Utf8Length(std::string_view text, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(i + k) & 0x3F);
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, surrogate
  return n;
}

}  // namespace

bool ResolveConnectionArgument(std::string_view argument, std::string* connection, std::string* error) {
  if (argument.starts_with("env:")) {
    std::string name(argument.substr(4));
    const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
    if (value == nullptr || *value == '\0') {
      *error = "environment variable '" + TerminalSafe(name) + "' (named by env:) is not set or empty";
      return false;
    }
    *connection = std::string(Trim(value));
    return true;
  }
  if (argument.starts_with("file:")) {
    std::string path(argument.substr(5));
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) {
      *error = "cannot read connection string file '" + TerminalSafe(path) + "': " + std::strerror(errno);
      return false;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(kMaxConnectionFileBytes)) {
      *error = "connection string file '" + TerminalSafe(path) + "' is not a regular file of at most 64 KiB";
      return false;
    }
    std::ifstream in(path, std::ios::binary);
    std::string text(static_cast<size_t>(st.st_size), '\0');
    if (!in || !in.read(text.data(), static_cast<std::streamsize>(text.size()))) {
      *error = "cannot read connection string file '" + TerminalSafe(path) + "'";
      return false;
    }
    *connection = std::string(Trim(text));
    if (connection->empty()) {
      *error = "connection string file '" + TerminalSafe(path) + "' is empty";
      return false;
    }
    return true;
  }
  *connection = std::string(argument);
  return true;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[8];
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = Utf8Length(text, i);
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      ++i;
    } else if (n == 1 && (c < 0x20 || c == 0x7F)) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          std::snprintf(buf, sizeof buf, "\\x%02X", c);
          out += buf;
      }
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {  // C1: U+0080..U+009F
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned char>(text[i + 1]));
      out += buf;
      i += 2;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace tablestone::tools
