// CORS rule matching for the Table service (Learn:
// cross-origin-resource-sharing--cors--support-for-the-azure-storage-services): which stored rule answers a preflight
// (OPTIONS) request or an actual request that carries an Origin header, and the Access-Control-* headers that follow
// from it. Pure functions over protocol::xml::CorsRule; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/xml/service_xml.h"
#include "server/http/handler.h"

namespace tablestone::api {

// Splits a comma-separated CORS list ("GET, PUT") into trimmed, non-empty items.
std::vector<std::string> SplitCorsList(std::string_view list);

// How a rule matched an Origin: through an explicit entry or the "*" entry.
// The service echoes the Origin for the former and answers "*" for the latter
// (and only the former gets Allow-Credentials and Vary: Origin).
enum class OriginMatch { kNone, kExplicit, kWildcard };

// Origins compare case-insensitively (scheme and host are case-insensitive;
// browsers send them lower-cased anyway). An explicit entry wins over "*".
OriginMatch MatchOrigin(const protocol::xml::CorsRule& rule, std::string_view origin);
// Methods compare case-insensitively against AllowedMethods.
bool MatchMethod(const protocol::xml::CorsRule& rule, std::string_view method);
// Every requested header (comma list, may be empty) must be allowed by an
// exact name, a prefix wildcard ("x-ms-meta-*") or "*". Case-insensitive.
bool MatchRequestHeaders(const protocol::xml::CorsRule& rule, std::string_view requested_headers);

struct CorsRuleMatch {
  const protocol::xml::CorsRule* rule = nullptr;  // nullptr: no rule matched
  OriginMatch origin = OriginMatch::kNone;
};

// First rule (in stored order) matching origin, method and requested headers
// (Learn: cross-origin-resource-sharing--cors--support-for-the-azure-storage-services: "the first match wins").
CorsRuleMatch FindPreflightRule(const std::vector<protocol::xml::CorsRule>& rules, std::string_view origin,
                                std::string_view method, std::string_view requested_headers);
// First rule matching origin and method (actual requests carry no
// Access-Control-Request-Headers to check).
CorsRuleMatch FindRequestRule(const std::vector<protocol::xml::CorsRule>& rules, std::string_view origin,
                              std::string_view method);

// Adds the headers of a successful preflight to `response` (status and body
// are left to the caller): Allow-Origin, Allow-Methods (the requested method),
// Allow-Headers (the requested headers, when any), Max-Age, and
// Allow-Credentials for an explicit origin.
void SetPreflightHeaders(const CorsRuleMatch& match, std::string_view origin, std::string_view method,
                         std::string_view requested_headers, http::Response& response);

// Adds the CORS headers of an actual request to a finished response
// (status and body unchanged). With a matching rule: Allow-Origin,
// Expose-Headers (the rule's list plus every response header present, as the
// service does), Allow-Credentials and Vary: Origin for an explicit origin.
// Without a match but with rules configured: only Vary: Origin. Without
// rules: nothing.
void SetActualRequestHeaders(const std::vector<protocol::xml::CorsRule>& rules, std::string_view origin,
                             std::string_view method, http::Response& response);

}  // namespace tablestone::api
