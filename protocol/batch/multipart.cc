#include "protocol/batch/multipart.h"

#include <cstdint>

#include "protocol/guid.h"
#include "storage/model/ascii.h"

namespace tablestone::protocol::batch {
namespace {

// Bounds that keep hostile input cheap; real requests are far below them.
constexpr size_t kMaxHeadersPerBlock = 200;
constexpr size_t kMaxBoundaryLength = 200;

constexpr std::string_view kWhitespace = " \t\r\n";

// Byte loops rather than find_first_not_of/find_last_not_of, which call
// memchr over `set` per byte: SplitParts trims every line of a $batch body.
std::string_view Trim(std::string_view s, std::string_view set = kWhitespace) {
  auto in_set = [set](char c) {
    for (char x : set) {
      if (c == x) return true;
    }
    return false;
  };
  size_t b = 0;
  size_t e = s.size();
  while (b < e && in_set(s[b])) ++b;
  while (e > b && in_set(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && model::ToAsciiLower(s.substr(0, prefix.size())) == prefix;
}

// The line starting at *pos without its terminator (LF or CRLF); advances
// *pos past the terminator. Requires *pos < text.size().
std::string_view NextLine(std::string_view text, size_t* pos) {
  size_t start = *pos;
  size_t nl = text.find('\n', start);
  size_t end = nl == std::string_view::npos ? text.size() : nl;
  *pos = nl == std::string_view::npos ? text.size() : nl + 1;
  std::string_view line = text.substr(start, end - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool IsTokenChar(char c) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= '0' && c <= '9') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

ApiError Malformed() { return ApiError::InvalidInput(); }

// The boundary parameter of a multipart/mixed Content-Type; nullopt when the
// media type is something else or the boundary is missing or unusable.
std::optional<std::string> MultipartBoundary(std::string_view content_type) {
  size_t semi = content_type.find(';');
  std::string_view media = Trim(content_type.substr(0, semi));
  if (model::ToAsciiLower(media) != "multipart/mixed" || semi == std::string_view::npos) return std::nullopt;
  std::string_view params = content_type.substr(semi + 1);
  while (!params.empty()) {
    size_t next = params.find(';');
    std::string_view param = Trim(params.substr(0, next));
    params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
    size_t eq = param.find('=');
    if (eq == std::string_view::npos || model::ToAsciiLower(Trim(param.substr(0, eq))) != "boundary") continue;
    std::string_view value = Trim(param.substr(eq + 1));
    if (!value.empty() && value.front() == '"') {
      // A quoted boundary may contain ';' in theory; SDK boundaries never do,
      // and a quote must close it.
      size_t close = value.find('"', 1);
      if (close == std::string_view::npos) return std::nullopt;
      value = value.substr(1, close - 1);
    }
    if (value.empty() || value.size() > kMaxBoundaryLength) return std::nullopt;
    return std::string(value);
  }
  return std::nullopt;
}

// Splits `text` on lines equal to "--boundary" (transport padding allowed),
// ending at "--boundary--" or at the end of the text (old JS versions close
// with "--boundary" and no "--"; Learn: performing-entity-group-transactions). The preamble before the first
// delimiter and the epilogue after the close are ignored. Each part is the
// text between its delimiter line and the next one.
std::vector<std::string_view> SplitParts(std::string_view text, std::string_view boundary, bool* saw_delimiter) {
  std::vector<std::string_view> parts;
  *saw_delimiter = false;
  bool in_part = false;
  size_t part_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t line_start = pos;
    std::string_view line = Trim(NextLine(text, &pos), " \t");
    if (line.size() < boundary.size() + 2 || line[0] != '-' || line[1] != '-' ||
        line.substr(2, boundary.size()) != boundary) {
      continue;
    }
    std::string_view rest = line.substr(2 + boundary.size());
    bool close = rest == "--";
    if (!close && !rest.empty()) continue;  // a longer boundary that shares our prefix
    *saw_delimiter = true;
    if (in_part) parts.push_back(text.substr(part_start, line_start - part_start));
    if (close) return parts;
    in_part = true;
    part_start = pos;
  }
  if (in_part) parts.push_back(text.substr(part_start));
  return parts;
}

using HeaderList = std::vector<std::pair<std::string, std::string>>;

bool ParseHeaderLine(std::string_view line, HeaderList* headers) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view name = line.substr(0, colon);
  if (!IsToken(name)) return false;
  headers->emplace_back(model::ToAsciiLower(name), std::string(Trim(line.substr(colon + 1), " \t")));
  return true;
}

std::string_view FindHeader(const HeaderList& headers, std::string_view lower_name) {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return {};
}

bool IsRequestMethod(std::string_view m) {
  return m == "GET" || m == "POST" || m == "PUT" || m == "MERGE" || m == "PATCH" || m == "DELETE";
}

// "METHOD URL [HTTP/x.y]".
bool ParseRequestLine(std::string_view line, SubRequest* out) {
  line = Trim(line, " \t");
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return false;
  std::string_view method = line.substr(0, sp1);
  std::string_view rest = Trim(line.substr(sp1 + 1), " \t");
  size_t sp2 = rest.find(' ');
  std::string_view url = rest.substr(0, sp2);
  if (sp2 != std::string_view::npos) {
    std::string_view version = Trim(rest.substr(sp2 + 1), " \t");
    if (version.substr(0, 5) != "HTTP/" || version.find(' ') != std::string_view::npos) return false;
  }
  if (!IsRequestMethod(method) || url.empty()) return false;
  out->method = std::string(method);
  out->url = std::string(url);
  return true;
}

bool LooksLikeRequestLine(std::string_view line) {
  size_t sp = line.find(' ');
  return sp != std::string_view::npos && IsRequestMethod(line.substr(0, sp));
}

// Reads a header block starting at *pos up to (and consuming) the blank line
// that ends it, or to the end of the text. With `allow_request_line`, a
// request line where the first header was expected ends the (then empty)
// block without consuming it: some writers omit the MIME part headers or the
// blank line after them.
bool ReadHeaderBlock(std::string_view text, size_t* pos, bool skip_leading_blanks, bool allow_request_line,
                     HeaderList* headers) {
  if (skip_leading_blanks) {
    while (*pos < text.size()) {
      size_t save = *pos;
      if (!Trim(NextLine(text, pos), " \t").empty()) {
        *pos = save;
        break;
      }
    }
  }
  while (*pos < text.size()) {
    size_t line_start = *pos;
    std::string_view line = NextLine(text, pos);
    if (Trim(line, " \t").empty()) return true;
    if (headers->size() >= kMaxHeadersPerBlock) return false;
    if (!ParseHeaderLine(line, headers)) {
      if (allow_request_line && LooksLikeRequestLine(line)) {
        *pos = line_start;
        return true;
      }
      return false;
    }
  }
  return true;
}

// One application/http part: MIME headers, then the HTTP request.
ApiResult<SubRequest> ParseHttpPart(std::string_view part) {
  SubRequest req;
  size_t pos = 0;
  HeaderList mime;
  if (!ReadHeaderBlock(part, &pos, /*skip_leading_blanks=*/true, /*allow_request_line=*/true, &mime)) {
    return Malformed();
  }
  std::string_view mime_type = FindHeader(mime, "content-type");
  if (!mime_type.empty() && !StartsWithNoCase(Trim(mime_type), "application/http")) return Malformed();
  if (std::string_view id = FindHeader(mime, "content-id"); !id.empty()) req.content_id = std::string(id);

  // Skip blank lines (JS writes extra CRLFs), then the request line.
  std::string_view request_line;
  while (pos < part.size() && request_line.empty()) request_line = Trim(NextLine(part, &pos), " \t");
  if (request_line.empty() || !ParseRequestLine(request_line, &req)) return Malformed();
  if (!ReadHeaderBlock(part, &pos, /*skip_leading_blanks=*/false, /*allow_request_line=*/false, &req.headers)) {
    return Malformed();
  }
  req.body = std::string(Trim(part.substr(pos)));
  return req;
}

void AppendHttpPart(std::string* out, const SubResponse& part) {
  out->append("Content-Type: application/http\r\n");
  out->append("Content-Transfer-Encoding: binary\r\n");
  if (part.content_id) out->append("Content-ID: ").append(*part.content_id).append("\r\n");
  out->append("\r\n");
  out->append("HTTP/1.1 ").append(std::to_string(part.status)).append(" ");
  out->append(ReasonPhrase(part.status)).append("\r\n");
  for (const auto& [name, value] : part.headers) out->append(name).append(": ").append(value).append("\r\n");
  out->append("\r\n");
  out->append(part.body).append("\r\n");
}

}  // namespace

std::string_view SubRequest::Header(std::string_view lower_name) const { return FindHeader(headers, lower_name); }

size_t SubRequest::HeaderCount(std::string_view lower_name) const {
  size_t n = 0;
  for (const auto& [name, value] : headers) n += name == lower_name ? 1 : 0;
  return n;
}

bool HasBatchBoundary(std::string_view content_type) { return MultipartBoundary(content_type).has_value(); }

std::optional<std::string> ContentTypeFromBatchBody(std::string_view body) {
  // Skip blank lines (a preamble of CRLFs) and read the first line.
  size_t pos = 0;
  while (pos < body.size() && (body[pos] == '\r' || body[pos] == '\n')) ++pos;
  const size_t eol = body.find('\n', pos);
  if (eol == std::string_view::npos) return std::nullopt;
  std::string_view line = body.substr(pos, eol - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);  // padding
  if (line.size() < 3 || line.substr(0, 2) != "--") return std::nullopt;
  std::string_view boundary = line.substr(2);
  if (boundary.size() > kMaxBoundaryLength) return std::nullopt;
  for (char c : boundary) {
    if (c <= 0x20 || c >= 0x7F || c == '"') return std::nullopt;
  }
  return "multipart/mixed; boundary=" + std::string(boundary);
}

ApiResult<BatchRequest> ParseBatchRequest(std::string_view content_type, std::string_view body, size_t max_operations) {
  std::optional<std::string> boundary = MultipartBoundary(content_type);
  if (!boundary) return Malformed();
  bool saw_delimiter = false;
  std::vector<std::string_view> outer = SplitParts(body, *boundary, &saw_delimiter);

  BatchRequest result;
  bool have_changeset = false;
  for (std::string_view part : outer) {
    if (Trim(part).empty()) continue;  // blank filler between delimiters
    size_t pos = 0;
    HeaderList mime;
    if (!ReadHeaderBlock(part, &pos, /*skip_leading_blanks=*/true, /*allow_request_line=*/true, &mime)) {
      return Malformed();
    }
    std::string_view type = Trim(FindHeader(mime, "content-type"));
    if (StartsWithNoCase(type, "multipart/")) {
      // Only one changeset, and never next to a query (Learn: performing-entity-group-transactions).
      if (have_changeset || result.is_query) return Malformed();
      have_changeset = true;
      std::optional<std::string> changeset_boundary = MultipartBoundary(type);
      if (!changeset_boundary) return Malformed();
      bool saw_inner = false;
      std::vector<std::string_view> inner = SplitParts(part.substr(pos), *changeset_boundary, &saw_inner);
      for (std::string_view op_part : inner) {
        if (Trim(op_part).empty()) continue;
        if (max_operations != 0 && result.operations.size() == max_operations) {
          return ApiError::InvalidInput("The batch request operation exceeds the maximum " +
                                        std::to_string(max_operations) + " changes per change set.")
              .WithBatchIndex(max_operations - 1);
        }
        ApiResult<SubRequest> op = ParseHttpPart(op_part);
        if (!op.ok()) return op.error();
        if (op->method == "GET") return Malformed();  // queries cannot sit in a changeset
        result.operations.push_back(std::move(op).value());
      }
      // Decision (not documented; docs/compatibility-notes/batch.md): an empty changeset is 400 InvalidInput.
      if (result.operations.empty()) return Malformed();
    } else {
      // A query: one application/http GET directly under the batch boundary.
      if (have_changeset || result.is_query) return Malformed();
      ApiResult<SubRequest> op = ParseHttpPart(part);
      if (!op.ok()) return op.error();
      if (op->method != "GET") return Malformed();
      result.is_query = true;
      result.operations.push_back(std::move(op).value());
    }
  }
  if (result.operations.empty()) return Malformed();
  return result;
}

bool IsQueryBatch(std::string_view content_type, std::string_view body) {
  std::optional<std::string> boundary = MultipartBoundary(content_type);
  if (!boundary) return false;
  // The first delimiter line opens the first part; its MIME headers say what it is.
  const std::string delimiter = "--" + *boundary;
  size_t at = body.find(delimiter);
  if (at == std::string_view::npos) return false;
  size_t pos = at + delimiter.size();
  if (body.substr(pos, 2) == "--") return false;  // the close delimiter: no part at all
  size_t line_end = body.find('\n', pos);
  if (line_end == std::string_view::npos) return false;
  std::string_view part = body.substr(line_end + 1);
  pos = 0;
  HeaderList mime;
  if (!ReadHeaderBlock(part, &pos, /*skip_leading_blanks=*/true, /*allow_request_line=*/true, &mime)) return false;
  // As in ParseBatchRequest: a part that is not multipart/ can only be the query.
  return !StartsWithNoCase(Trim(FindHeader(mime, "content-type")), "multipart/");
}

RequestTarget SplitRequestTarget(std::string_view url) {
  RequestTarget t;
  std::string_view rest = url;
  size_t scheme = rest.find("://");
  size_t first_slash = rest.find('/');
  if (scheme != std::string_view::npos && scheme > 0 && (first_slash == std::string_view::npos || scheme < first_slash)) {
    rest = rest.substr(scheme + 3);
    size_t path_start = rest.find_first_of("/?");
    rest = path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  }
  size_t q = rest.find('?');
  t.path = std::string(rest.substr(0, q));
  if (q != std::string_view::npos) t.query = std::string(rest.substr(q + 1));
  if (t.path.empty() && scheme != std::string_view::npos) t.path = "/";
  return t;
}

std::string WriteBatchResponseWithBoundaries(const std::vector<SubResponse>& parts, bool is_query,
                                             std::string_view batch_guid, std::string_view changeset_guid,
                                             std::string* content_type) {
  const std::string batch = "batchresponse_" + std::string(batch_guid);
  const std::string changeset = "changesetresponse_" + std::string(changeset_guid);
  if (content_type != nullptr) *content_type = "multipart/mixed; boundary=" + batch;
  std::string out;
  size_t estimate = 256;
  for (const SubResponse& p : parts) estimate += 256 + p.body.size();
  out.reserve(estimate);
  out.append("--").append(batch).append("\r\n");
  if (is_query) {
    for (const SubResponse& p : parts) AppendHttpPart(&out, p);
  } else {
    out.append("Content-Type: multipart/mixed; boundary=").append(changeset).append("\r\n\r\n");
    for (const SubResponse& p : parts) {
      out.append("--").append(changeset).append("\r\n");
      AppendHttpPart(&out, p);
    }
    out.append("--").append(changeset).append("--\r\n");
  }
  out.append("--").append(batch).append("--\r\n");
  return out;
}

std::string WriteBatchResponse(const std::vector<SubResponse>& parts, bool is_query, std::string* content_type) {
  return WriteBatchResponseWithBoundaries(parts, is_query, NewGuid(), NewGuid(), content_type);
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Request Entity Too Large";
    case 415: return "Unsupported Media Type";
    case 416: return "Requested Range Not Satisfiable";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 507: return "Insufficient Storage";
    default: return "Unknown";
  }
}

}  // namespace tablestone::protocol::batch
