// libFuzzer target: $batch multipart parsing (protocol/batch/multipart.h).
//
// Input layout: the first line (up to '\n') is the outer Content-Type, the rest
// is the body, so the fuzzer can vary both the boundary and the framing. The
// seed corpus holds the variants real SDKs send. Also splits every parsed
// sub-request URL and writes a response for the parsed operations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/batch/multipart.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tablestone::protocol::batch;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view content_type = input;
  std::string_view body;
  if (size_t nl = input.find('\n'); nl != std::string_view::npos) {
    content_type = input.substr(0, nl);
    body = input.substr(nl + 1);
  }
  auto parsed = ParseBatchRequest(content_type, body);
  if (!parsed.ok()) {
    if (parsed.error().http_status != 400) abort();
    return 0;
  }
  const BatchRequest& req = parsed.value();
  if (req.operations.empty() || req.operations.size() > kMaxBatchOperations) abort();
  if (req.is_query && req.operations.size() != 1) abort();
  std::vector<SubResponse> parts;
  for (const SubRequest& op : req.operations) {
    RequestTarget t = SplitRequestTarget(op.url);
    (void)op.Header("content-type");
    (void)op.HeaderCount("if-match");
    SubResponse r;
    r.status = op.method == "POST" ? 201 : 204;
    r.body = t.path + "?" + t.query;
    r.content_id = op.content_id;
    parts.push_back(std::move(r));
  }
  std::string ct;
  std::string out = WriteBatchResponseWithBoundaries(parts, req.is_query, "b", "c", &ct);
  if (out.empty() || ct.empty()) abort();
  return 0;
}
