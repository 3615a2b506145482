// libFuzzer target: the HTTP framing layer of server/http (framing.h) and the
// response-header guard of the session (DropUnsafeHeaderFields).
//
// fuzz_http_request feeds whole requests to the API handler and never runs
// Session::OnHeader, where the framing rules apply, so this target covers
// them: the bytes are parsed with Beast's request parser under the session's
// header limit (chunked bodies, Transfer-Encoding and Content-Length
// combinations, obs-fold continuation lines), and the parsed fields go through
// CheckRequestFraming. The same bytes split into "name: value" lines go
// through it directly too, so values Beast would refuse are covered. Beyond
// "no crash", properties that must hold for every input:
//   - a request CheckRequestFraming accepts has at most one Content-Length
//     value, never both Transfer-Encoding and Content-Length, and a
//     Transfer-Encoding that is exactly "chunked";
//   - after DropUnsafeHeaderFields no field of a response holds CR, LF or NUL,
//     so the serialised head has exactly one CRLF per line.
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/framing.h"
#include "server/http/response_head.h"

namespace {

namespace bhttp = boost::beast::http;
using tablestone::http::CheckRequestFraming;
using tablestone::http::FieldView;
using tablestone::http::FramingError;

constexpr size_t kHeaderLimit = 16 * 1024;  // HttpOptions::header_limit's default

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// The properties an accepted header block must have (see the file comment).
void CheckAccepted(const std::vector<FieldView>& fields) {
  size_t content_length_values = 0;
  bool has_te = false;
  std::string te;
  for (const FieldView& f : fields) {
    const std::string name = Lower(f.name);
    if (name == "content-length") {
      content_length_values += 1 + static_cast<size_t>(std::count(f.value.begin(), f.value.end(), ','));
    } else if (name == "transfer-encoding") {
      if (has_te) te += ",";
      has_te = true;
      te += f.value;
    }
  }
  if (content_length_values > 1) abort();
  if (has_te && content_length_values > 0) abort();
  if (has_te) {
    // Empty list elements are allowed; what is left must be one "chunked".
    size_t chunked = 0;
    std::string_view rest = te;
    while (true) {
      const size_t comma = rest.find(',');
      const std::string item = Lower(Trim(rest.substr(0, comma)));
      if (!item.empty()) {
        if (item != "chunked") abort();
        ++chunked;
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (chunked != 1) abort();
  }
}

void CheckFields(unsigned version, const std::vector<FieldView>& fields) {
  if (CheckRequestFraming(version, fields) == FramingError::kNone) CheckAccepted(fields);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // 1. Through Beast, as the session parses a request.
  {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.header_limit(kHeaderLimit);
    parser.body_limit(4 * 1024 * 1024 + 64 * 1024);
    boost::beast::error_code ec;
    size_t used = 0;
    while (!ec && !parser.is_done() && used < input.size()) {
      const size_t n = parser.put(boost::asio::buffer(input.data() + used, input.size() - used), ec);
      if (n == 0 && !ec) break;
      used += n;
    }
    if (parser.is_header_done()) {
      const auto& req = parser.get();
      std::vector<FieldView> fields;
      for (const auto& f : req.base()) {
        fields.push_back({std::string_view(f.name_string().data(), f.name_string().size()),
                          std::string_view(f.value().data(), f.value().size())});
      }
      const FramingError a = CheckRequestFraming(req.version(), req.base());
      const FramingError b = CheckRequestFraming(req.version(), fields);
      if (a != b) abort();  // the two overloads must agree
      CheckFields(req.version(), fields);
      if (a == FramingError::kNone) {
        // A Host that passed is one value of host[:port] characters only.
        auto host = req[bhttp::field::host];
        if (!tablestone::http::IsValidHostValue(Trim(std::string_view(host.data(), host.size())))) abort();
      }
    }
  }

  // 2. Directly: the input as "name: value" lines (any bytes, no Beast rules).
  {
    std::vector<FieldView> fields;
    std::string_view rest = input;
    while (!rest.empty() && fields.size() < 64) {
      const size_t eol = rest.find('\n');
      std::string_view line = rest.substr(0, eol);
      const size_t colon = line.find(':');
      if (colon != std::string_view::npos) fields.push_back({line.substr(0, colon), line.substr(colon + 1)});
      if (eol == std::string_view::npos) break;
      rest.remove_prefix(eol + 1);
    }
    CheckFields(size > 0 && (data[0] & 1) ? 11 : 10, fields);
    tablestone::http::IsValidHostValue(input);
  }

  // 3. Response headers: any value the handler sets never reaches the wire
  // with a line break in it.
  {
    tablestone::http::Response response;
    const size_t half = input.size() / 2;
    response.set("x-ms-request-id", "r");
    response.set("Access-Control-Expose-Headers",
                 boost::beast::string_view(input.data(), half));
    response.set("X-Other", boost::beast::string_view(input.data() + half, input.size() - half));
    tablestone::http::DropUnsafeHeaderFields(&response);
    std::string head;
    tablestone::http::SerializeResponseHead(response, &head);
    // Every CR is followed by LF and every LF preceded by CR; no NUL.
    for (size_t i = 0; i < head.size(); ++i) {
      if (head[i] == '\0') abort();
      if (head[i] == '\r' && (i + 1 >= head.size() || head[i + 1] != '\n')) abort();
      if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) abort();
    }
  }
  return 0;
}
