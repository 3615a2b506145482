// The handler of Azurite's Blob and Queue ports when tablestone runs as
// `azurite` (docs/migrating-from-azurite.md, "The Blob and Queue ports").
//
// Harnesses that start Azurite's image wait for, or probe, all three of its
// services (Aspire lists Blob containers with a page size of 1; Testcontainers
// connects to every exposed port). tablestone serves only the Table service,
// so these ports are honest about it:
//   - List Containers (Blob: GET /<account>?comp=list) and List Queues (Queue:
//     the same URL) answer 200 with an empty, well-formed EnumerationResults
//     (Learn: "List Containers", "List Queues"): there is nothing to list;
//   - every other request gets 501 NotImplemented with an XML error body in
//     the Blob/Queue services' shape whose message says that this server is
//     the Table service only and what to use for Blob and Queue. Its body is
//     never read (refused in AdmitHeaders), so an upload costs nothing.
// Authentication: none. These ports hold no data and answer nothing but empty
// lists and refusals, so a key check would only make a readiness probe with a
// different key fail for no benefit; the Table port keeps its full checks.
//
// Thread safety: stateless after construction; Handle runs on any I/O thread.
#pragma once

#include <string>
#include <vector>

#include "server/http/handler.h"

namespace tablestone::api {

enum class SiblingService { kBlob, kQueue };

struct SiblingPortOptions {
  SiblingService service = SiblingService::kBlob;
  // Account names a path-style URL may name (others get 404 ResourceNotFound).
  std::vector<std::string> accounts;
  // Where the Table service is, for the refusal's message ("http://0.0.0.0:10002").
  std::string table_url;
};

class SiblingPortHandler final : public http::RequestHandler {
 public:
  explicit SiblingPortHandler(SiblingPortOptions options);

  void Handle(const http::Request& request, const http::RequestContext& context, http::Completion done) override;
  bool AdmitHeaders(const http::Request& header, const http::RequestContext& context,
                    http::Response& refusal) override;
  void RenderTransportError(http::TransportError error, const http::Request& partial_request,
                            http::Response& response) override;

  // The refusal's message (without RequestId/Time), for tests and docs.
  std::string RefusalMessage() const;

 private:
  void Answer(const http::Request& request, bool is_tls, http::Response& response) const;
  void WriteXmlError(const http::Request& request, unsigned status, std::string_view code,
                     const std::string& message, http::Response& response) const;

  SiblingPortOptions options_;
};

}  // namespace tablestone::api
