// What every operation handler gets: the long-lived services (ApiContext) and
// the facts of one routed, authenticated request (RequestInfo).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/route.h"
#include "server/api/api_options.h"
#include "server/api/authenticator.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace tablestone::api {

// Shared by all requests; thread-safe (the engine and authenticator are).
struct ApiContext {
  storage::Engine& engine;
  const ApiOptions& options;
  const Authenticator& authenticator;
};

// One request. Built by the dispatcher before a handler runs.
struct RequestInfo {
  const http::Request& request;
  const http::RequestContext& connection;
  std::string request_id;   // GUID, also in x-ms-request-id and error texts
  int64_t start_ticks = 0;  // model::NowTicks() at arrival
  protocol::Route route;
  AuthGrant grant;
  std::string base_url;     // service root URL with trailing '/', e.g. "http://127.0.0.1:10002/devstoreaccount1/"

  // Header value by case-insensitive name; empty when absent.
  std::string_view Header(std::string_view name) const {
    auto it = request.find(boost::beast::string_view(name.data(), name.size()));
    if (it == request.end()) return {};
    return std::string_view(it->value().data(), it->value().size());
  }
  bool HasHeader(std::string_view name) const {
    return request.find(boost::beast::string_view(name.data(), name.size())) != request.end();
  }
  // First value of a query parameter (exact name), or nullptr.
  const std::string* Query(std::string_view name) const { return protocol::FindQueryParam(route.query, name); }
  const std::string& account() const { return route.account.account; }
};

}  // namespace tablestone::api
