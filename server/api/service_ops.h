// The service operations as typed requests (Learn: set-table-service-properties,
// get-table-service-stats, cross-origin-resource-sharing--cors--support-for-the-azure-storage-services):
// "request parts -> validated request", pure (no engine, no Beast).
// service_handlers.cc runs them against the engine and renders the answer.
// Every string_view points into the RequestParts the request was parsed from
// (request_parts.h).
#pragma once

#include <string_view>

#include "protocol/api_error.h"
#include "protocol/xml/service_xml.h"
#include "server/api/request_parts.h"

namespace tablestone::api {

struct GetServicePropertiesRequest {
  std::string_view account;
};

// No errors.
protocol::ApiResult<GetServicePropertiesRequest> ParseGetServiceProperties(const RequestParts& parts);

struct SetServicePropertiesRequest {
  std::string_view account;
  protocol::xml::ServicePropertiesUpdate update;  // sections left out keep their stored values
};

// Errors: ParseServiceProperties's (body).
protocol::ApiResult<SetServicePropertiesRequest> ParseSetServiceProperties(const RequestParts& parts);

struct GetServiceStatsRequest {
  std::string_view account;
};

// Only the secondary endpoint answers stats (Learn: get-table-service-stats):
// on the primary, 400 InvalidQueryParameterValue.
protocol::ApiResult<GetServiceStatsRequest> ParseGetServiceStats(const RequestParts& parts);

// A CORS preflight (OPTIONS, anonymous).
struct PreflightRequest {
  std::string_view account;
  std::string_view origin;             // Origin, non-empty
  std::string_view method;             // Access-Control-Request-Method, non-empty
  std::string_view requested_headers;  // Access-Control-Request-Headers, empty when absent
};

// Errors: 400 InvalidHeaderValue when Origin or Access-Control-Request-Method
// is absent or empty.
protocol::ApiResult<PreflightRequest> ParsePreflight(const RequestParts& parts);

}  // namespace tablestone::api
