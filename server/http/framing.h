// Message framing checks of a request's header block (RFC 9112 section 6, the
// rules that keep the server and any proxy in front of it agreeing on where a
// request ends), run by Session::OnHeader before a body is read. Beast frames
// "Transfer-Encoding: chunked, identity" plus Content-Length by the
// Content-Length, which lets a request hidden in a body run on its own
// (tests/reliability/hostile_test.py, the smuggling tests).
//
// Pure functions over the parsed header fields; no I/O, thread-safe.
#pragma once

#include <boost/beast/http/fields.hpp>
#include <cstddef>
#include <string_view>
#include <vector>

namespace tablestone::http {

enum class FramingError {
  kNone,
  // Transfer-Encoding is present but is not exactly one "chunked" (its final
  // coding is something else, or it names a coding the server cannot decode).
  kBadTransferEncoding,
  // Transfer-Encoding together with Content-Length.
  kTransferEncodingWithContentLength,
  // More than one Content-Length value (repeated field or a list), or one that
  // is not a plain decimal number.
  kBadContentLength,
  // An HTTP/1.1 request with no Host field, or with more than one.
  kHostCount,
  // A Host value that is not host[:port] (it is reflected into URLs of
  // response bodies, odata.metadata).
  kBadHost,
  // Transfer-Encoding on an HTTP/1.0 request: RFC 9112 section 6.1 makes its
  // framing faulty (an HTTP/1.0 hop in between would not decode chunks), even
  // with a Content-Length.
  kTransferEncodingInHttp10,
};

// One header field as received.
struct FieldView {
  std::string_view name;
  std::string_view value;
};

// Accumulates the fields of one header block, in any order; Result() is the
// first rule they break.
class FramingCheck {
 public:
  void Add(std::string_view name, std::string_view value);
  FramingError Result(unsigned version) const;

 private:
  size_t content_lengths_ = 0;  // values seen, over all Content-Length fields
  bool bad_content_length_ = false;
  bool has_transfer_encoding_ = false;
  size_t codings_ = 0;         // Transfer-Encoding list elements, over all fields
  bool chunked_only_ = true;   // every coding so far is "chunked"
  size_t hosts_ = 0;
  bool bad_host_ = false;
};

// The first framing rule `fields` break (kNone if none). `version` is the
// request's HTTP version times ten (11 = HTTP/1.1).
FramingError CheckRequestFraming(unsigned version, const std::vector<FieldView>& fields);
// Same over a Beast header block.
FramingError CheckRequestFraming(unsigned version, const boost::beast::http::fields& fields);

// True if `value` is a Host field value: uri-host [ ":" port ], where
// uri-host is a reg-name (unreserved, sub-delims, %XX) or a bracketed IPv6
// literal, and port is up to five digits. Empty is valid (RFC 9110 allows an
// empty Host when the target URI has no authority).
bool IsValidHostValue(std::string_view value);

// ASCII case-insensitive equality of header names and tokens. Use this, not
// boost::beast::iequals: Boost 1.81's reads one byte past the end of both
// strings when they differ only in the case of their last byte (an ASan
// heap-buffer-overflow that fuzz_http_framing found on a value ending in
// "chunkeD").
bool EqualsIgnoreCaseAscii(std::string_view a, std::string_view b);

// Short text of an error, for logs.
std::string_view FramingErrorText(FramingError error);

}  // namespace tablestone::http
