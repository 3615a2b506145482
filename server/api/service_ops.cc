#include "server/api/service_ops.h"

#include <utility>

namespace tablestone::api {

using protocol::ApiError;

protocol::ApiResult<GetServicePropertiesRequest> ParseGetServiceProperties(const RequestParts& parts) {
  return GetServicePropertiesRequest{parts.account};
}

protocol::ApiResult<SetServicePropertiesRequest> ParseSetServiceProperties(const RequestParts& parts) {
  auto update = protocol::xml::ParseServiceProperties(parts.body);
  if (!update.ok()) return update.error();
  return SetServicePropertiesRequest{parts.account, std::move(update).value()};
}

protocol::ApiResult<GetServiceStatsRequest> ParseGetServiceStats(const RequestParts& parts) {
  if (!parts.secondary) return ApiError::InvalidQueryParameterValue();
  return GetServiceStatsRequest{parts.account};
}

protocol::ApiResult<PreflightRequest> ParsePreflight(const RequestParts& parts) {
  PreflightRequest req;
  req.account = parts.account;
  req.origin = parts.headers.Get("Origin");
  req.method = parts.headers.Get("Access-Control-Request-Method");
  if (req.origin.empty() || req.method.empty()) {
    return ApiError::InvalidHeaderValue("A required CORS header is not present.");
  }
  req.requested_headers = parts.headers.Get("Access-Control-Request-Headers");
  return req;
}

}  // namespace tablestone::api
