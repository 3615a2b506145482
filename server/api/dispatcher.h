// Dispatcher: the http::RequestHandler of the Table API. For each request it
// assigns a request id, serves the health route, routes (protocol/route.h),
// checks x-ms-version, authenticates (Authenticator), refuses writes on the
// secondary endpoint, calls the one handler of the operation, and stamps the
// common headers (spec §2.0.3) on every response, errors included.
//
// Thread safety: Handle() may run concurrently on any number of I/O threads.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "server/api/api_context.h"
#include "server/api/api_options.h"
#include "server/api/authenticator.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace tablestone::api {

class Dispatcher : public http::RequestHandler {
 public:
  // `engine` must outlive the dispatcher.
  Dispatcher(storage::Engine& engine, ApiOptions options);

  void Handle(http::Request& request, const http::RequestContext& context, http::Response& response) override;
  void RenderTransportError(http::TransportError error, const http::Request& partial_request,
                            http::Response& response) override;
  // Group commit, straight to the engine's marks (storage/engine.h, "Durability").
  uint64_t DurabilityTicket() override { return engine_.VisibleMark(); }
  bool IsDurable(uint64_t ticket) override { return ticket <= engine_.DurableMark(); }
  bool MakeDurable() override;

 private:
  // Sets *cors_account once the request's account is known, so Handle() can
  // add CORS headers to whatever response follows (errors included).
  void HandleRouted(http::Request& request, const http::RequestContext& context, const std::string& request_id,
                    http::Response& response, std::optional<std::string>* cors_account);

  storage::Engine& engine_;
  ApiOptions options_;
  Authenticator authenticator_;
  ApiContext context_;
};

}  // namespace tablestone::api
