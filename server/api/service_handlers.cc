// Placeholders until the service-level operations land: 501 NotImplemented
// in the XML error shape these operations use (spec §7.1).
#include "server/api/service_handlers.h"

#include "server/api/response.h"

namespace tablestone::api {

namespace {
void NotYet(const RequestInfo& info, http::Response& response) {
  WriteError(info, protocol::ApiError::NotImplemented(), response, /*xml=*/true);
}
}  // namespace

void HandleGetTableAcl(const ApiContext&, const RequestInfo& info, http::Response& r) { NotYet(info, r); }
void HandleSetTableAcl(const ApiContext&, const RequestInfo& info, http::Response& r) { NotYet(info, r); }
void HandleGetServiceProperties(const ApiContext&, const RequestInfo& info, http::Response& r) { NotYet(info, r); }
void HandleSetServiceProperties(const ApiContext&, const RequestInfo& info, http::Response& r) { NotYet(info, r); }
void HandleGetServiceStats(const ApiContext&, const RequestInfo& info, http::Response& r) { NotYet(info, r); }
void HandlePreflight(const ApiContext&, const RequestInfo& info, http::Response& r) { NotYet(info, r); }
void ApplyCorsHeaders(const ApiContext&, const RequestInfo&, http::Response&) {}

}  // namespace tablestone::api
