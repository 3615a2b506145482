#include "server/http/framing.h"


namespace tablestone::http {
namespace {

bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

// Calls `each` for every element of a comma-separated list (RFC 9110 section
// 5.6.1), empty elements included, each trimmed of whitespace.
template <typename F>
void ForEachListItem(std::string_view list, F each) {
  while (true) {
    const size_t comma = list.find(',');
    each(TrimOws(list.substr(0, comma)));
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// RFC 3986 reg-name characters other than '%' (unreserved and sub-delims).
bool IsRegNameChar(char c) {
  if (IsAlpha(c) || IsDigit(c)) return true;
  switch (c) {
    case '-': case '.': case '_': case '~':
    case '!': case '$': case '&': case '\'': case '(': case ')':
    case '*': case '+': case ',': case ';': case '=':
      return true;
    default:
      return false;
  }
}

bool IsRegName(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return false;
      if (!IsHex(s[i + 1]) || !IsHex(s[i + 2])) return false;
      i += 2;
      continue;
    }
    if (!IsRegNameChar(s[i])) return false;
  }
  return true;
}

// The inside of "[...]": an IPv6 address (hex digits, ':' and '.', for an
// embedded IPv4 tail); not fully validated, only restricted to its alphabet.
bool IsIpLiteralBody(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsHex(c) && c != ':' && c != '.') return false;
  }
  return true;
}

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool EqualsIgnoreCaseAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

bool IsValidHostValue(std::string_view value) {
  if (value.empty()) return true;
  std::string_view host = value;
  std::string_view port;
  bool has_port = false;
  if (value.front() == '[') {
    const size_t close = value.find(']');
    if (close == std::string_view::npos || !IsIpLiteralBody(value.substr(1, close - 1))) return false;
    host = value.substr(0, close + 1);
    std::string_view rest = value.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      has_port = true;
      port = rest.substr(1);
    }
  } else {
    const size_t colon = value.find(':');
    if (colon != std::string_view::npos) {
      host = value.substr(0, colon);
      has_port = true;
      port = value.substr(colon + 1);
    }
    if (host.empty() || !IsRegName(host)) return false;
  }
  if (has_port) {
    // RFC 3986 allows an empty port; five digits cover 65535.
    if (port.size() > 5) return false;
    for (char c : port) {
      if (!IsDigit(c)) return false;
    }
  }
  return true;
}

void FramingCheck::Add(std::string_view name, std::string_view value) {
  if (EqualsIgnoreCaseAscii(name, "Content-Length")) {
    ForEachListItem(value, [&](std::string_view item) {
      ++content_lengths_;
      if (item.empty() || item.size() > 19) bad_content_length_ = true;
      for (char c : item) {
        if (!IsDigit(c)) bad_content_length_ = true;
      }
    });
  } else if (EqualsIgnoreCaseAscii(name, "Transfer-Encoding")) {
    has_transfer_encoding_ = true;
    ForEachListItem(value, [&](std::string_view item) {
      // Empty list elements are allowed and ignored (RFC 9110 section 5.6.1).
      if (item.empty()) return;
      ++codings_;
      if (!EqualsIgnoreCaseAscii(item, "chunked")) chunked_only_ = false;
    });
  } else if (EqualsIgnoreCaseAscii(name, "Host")) {
    ++hosts_;
    if (!IsValidHostValue(TrimOws(value))) bad_host_ = true;
  }
}

FramingError FramingCheck::Result(unsigned version) const {
  // RFC 9112 section 6.1: a server that receives an HTTP/1.0 message with
  // Transfer-Encoding must treat its framing as faulty and close.
  if (version < 11 && has_transfer_encoding_) return FramingError::kTransferEncodingInHttp10;
  // RFC 9112 section 6.1: a request whose final coding is not chunked cannot
  // be framed; chunked twice is an error too, and no other coding is decoded
  // here, so anything but a single "chunked" is refused.
  if (has_transfer_encoding_ && (codings_ != 1 || !chunked_only_)) return FramingError::kBadTransferEncoding;
  // RFC 9112 section 6.1: both present is a smuggling attempt or a broken
  // client; a server may reject it, and must then close the connection.
  if (has_transfer_encoding_ && content_lengths_ > 0) return FramingError::kTransferEncodingWithContentLength;
  // RFC 9112 section 6.3: several Content-Length values (even equal ones) or
  // one that is not a number are unrecoverable framing errors.
  if (content_lengths_ > 1 || bad_content_length_) return FramingError::kBadContentLength;
  // RFC 9112 section 3.2: an HTTP/1.1 request lacking Host, or with more than
  // one, gets 400.
  if (version >= 11 && hosts_ != 1) return FramingError::kHostCount;
  if (bad_host_) return FramingError::kBadHost;
  return FramingError::kNone;
}

FramingError CheckRequestFraming(unsigned version, const std::vector<FieldView>& fields) {
  FramingCheck check;
  for (const FieldView& f : fields) check.Add(f.name, f.value);
  return check.Result(version);
}

FramingError CheckRequestFraming(unsigned version, const boost::beast::http::fields& fields) {
  FramingCheck check;
  for (const auto& f : fields) {
    // Beast knows these three names in any case (its field enum), so every
    // other field is skipped by one compare instead of three name compares.
    using boost::beast::http::field;
    if (f.name() != field::content_length && f.name() != field::transfer_encoding && f.name() != field::host) {
      continue;
    }
    const boost::beast::string_view name = f.name_string();
    const boost::beast::string_view value = f.value();
    check.Add(std::string_view(name.data(), name.size()), std::string_view(value.data(), value.size()));
  }
  return check.Result(version);
}

std::string_view FramingErrorText(FramingError error) {
  switch (error) {
    case FramingError::kNone: return "none";
    case FramingError::kBadTransferEncoding: return "Transfer-Encoding is not a single chunked coding";
    case FramingError::kTransferEncodingWithContentLength: return "Transfer-Encoding together with Content-Length";
    case FramingError::kBadContentLength: return "repeated or malformed Content-Length";
    case FramingError::kHostCount: return "HTTP/1.1 request without exactly one Host";
    case FramingError::kBadHost: return "Host is not host[:port]";
    case FramingError::kTransferEncodingInHttp10: return "Transfer-Encoding on an HTTP/1.0 request";
  }
  return "unknown";
}

}  // namespace tablestone::http
