// $batch (entity group transaction) multipart framing, Learn: performing-entity-group-transactions
//
// Request grammar we accept (Learn: performing-entity-group-transactions; every SDK's variant):
//   body      := preamble? ( "--" B CRLF part )* ( "--" B "--" | "--" B | end-of-body ) epilogue?
//   part      := mime-headers CRLF ( changeset | http-request )
//   changeset := the same framing with the changeset boundary, each part an http-request
//   http-request := blank-lines* METHOD SP URL [SP "HTTP/1.1"] CRLF headers CRLF body
// where CRLF may also be a bare LF, header names are case-insensitive, blank
// lines may be repeated (JS writes three CRLFs), and the boundary in
// Content-Type may be quoted. Parsing is linear in the body size and never
// reads outside it (the parser is fuzzed).
//
// Response shape (Learn: performing-entity-group-transactions), written byte for byte as the service does:
//   --batchresponse_<B>
//   Content-Type: multipart/mixed; boundary=changesetresponse_<C>
//   <blank>
//   --changesetresponse_<C>
//   Content-Type: application/http
//   Content-Transfer-Encoding: binary
//   <blank>
//   HTTP/1.1 <status> <reason>
//   <headers>
//   <blank>
//   <body>
//   --changesetresponse_<C>--
//   --batchresponse_<B>--
// All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/api_error.h"

namespace tablestone::protocol::batch {

// The service's limit on operations in one change set.
inline constexpr size_t kMaxBatchOperations = 100;

struct SubRequest {
  std::string method;  // as written: POST, PUT, MERGE, PATCH, DELETE, GET
  std::string url;     // as written in the request line (absolute or relative)
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;                                          // leading/trailing whitespace trimmed
  std::optional<std::string> content_id;                     // from the MIME part headers
  // First value of the header (name given in lower case); "" if absent.
  std::string_view Header(std::string_view lower_name) const;
  size_t HeaderCount(std::string_view lower_name) const;
};

struct BatchRequest {
  bool is_query = false;               // a single GET directly under the batch boundary
  std::vector<SubRequest> operations;  // in order
};

// content_type: the outer Content-Type header ("multipart/mixed;
// boundary=batch_..." or a quoted boundary).
// Errors (all 400 InvalidInput): not multipart/mixed or no boundary; no part;
// no changeset and no query; two changesets; a query mixed with a changeset;
// a changeset without a boundary; bad part headers; a bad request line or an
// unknown method (GET is only allowed as the single query, the write verbs
// only inside the changeset); an empty changeset; more than 100 operations
// ("99:The batch request operation exceeds the maximum 100 changes per change
// set."). The 4 MiB / 413 check is done by the caller on the raw body size.
// `max_operations`: the most operations in the change set (more: 400
// InvalidInput blaming the last one allowed); 0 = no limit (Cosmos DB for
// Table documents none; protocol/flavor.h).
ApiResult<BatchRequest> ParseBatchRequest(std::string_view content_type, std::string_view body,
                                          size_t max_operations = kMaxBatchOperations);

// True when `body` may be a query batch: its first part directly under the
// batch boundary is not a changeset (multipart/...). Reads only that part's
// MIME headers, so the dispatcher can place the request before the handler
// parses it. Agrees with ParseBatchRequest's is_query on every body that
// parses; a malformed body may get either answer and fails in the parser.
bool IsQueryBatch(std::string_view content_type, std::string_view body);

// Splits a sub-request URL into its path (percent-encoded, as written) and its
// query (without '?'), dropping "scheme://host[:port]" when present. A
// relative URL without a leading '/' (e.g. "t(PartitionKey='a',RowKey='b')")
// is returned unchanged as the path; callers resolve it against the batch URL.
struct RequestTarget {
  std::string path;
  std::string query;
};
RequestTarget SplitRequestTarget(std::string_view url);

struct SubResponse {
  int status = 204;                                          // "HTTP/1.1 <status> <reason>"
  std::vector<std::pair<std::string, std::string>> headers;  // written in order, names as given ("ETag")
  std::string body;
  std::optional<std::string> content_id;  // echoed as a MIME part header when set
};

// Writes a complete batch response body (CRLF line endings, trailing CRLF
// after the final delimiter). For is_query, the single part is written
// directly under the batch boundary (no changeset). Boundaries are fresh
// random GUIDs. Returns the body; *content_type (if not null) receives
// "multipart/mixed; boundary=batchresponse_<B>".
std::string WriteBatchResponse(const std::vector<SubResponse>& parts, bool is_query, std::string* content_type);

// Same with caller-chosen GUIDs (tests and reproducible output).
std::string WriteBatchResponseWithBoundaries(const std::vector<SubResponse>& parts, bool is_query,
                                             std::string_view batch_guid, std::string_view changeset_guid,
                                             std::string* content_type);

// "No Content", "Created", "Conflict", ...; "Unknown" for codes we never send.
std::string_view ReasonPhrase(int status);

// True when `content_type` is multipart/mixed with a usable boundary, the
// only Content-Type ParseBatchRequest reads.
bool HasBatchBoundary(std::string_view content_type);

// --loose (Azurite reads a $batch whatever its Content-Type): the Content-Type
// the body would have had, "multipart/mixed; boundary=<b>", when its first
// non-blank line is "--<b>" with <b> 1 to 200 visible characters other than
// quotes (the limit a Content-Type boundary has here); nullopt otherwise. Only the caller's
// ParseBatchRequest decides whether the body is a well-formed batch.
std::optional<std::string> ContentTypeFromBatchBody(std::string_view body);

}  // namespace tablestone::protocol::batch
