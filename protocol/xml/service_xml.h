// Table service properties (Learn: set-table-service-properties), service stats (Learn: get-table-service-stats) and
// the XML error body (Learn: table-service-error-codes). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"

namespace tablestone::protocol::xml {

inline constexpr size_t kMaxCorsRules = 5;
inline constexpr size_t kMaxCorsListItems = 64;
inline constexpr int kMinRetentionDays = 1;
inline constexpr int kMaxRetentionDays = 365;

struct RetentionPolicy {
  bool enabled = false;
  std::optional<int> days;  // meaningful (and written) only when enabled
  friend bool operator==(const RetentionPolicy&, const RetentionPolicy&) = default;
};

struct LoggingSettings {
  std::string version = "1.0";
  bool delete_ = false;
  bool read = false;
  bool write = false;
  RetentionPolicy retention;
  friend bool operator==(const LoggingSettings&, const LoggingSettings&) = default;
};

struct MetricsSettings {
  std::string version = "1.0";
  bool enabled = false;
  std::optional<bool> include_apis;  // written only when enabled
  RetentionPolicy retention;
  friend bool operator==(const MetricsSettings&, const MetricsSettings&) = default;
};

struct CorsRule {
  std::string allowed_origins;  // comma-separated, as sent
  std::string allowed_methods;
  std::string allowed_headers;
  std::string exposed_headers;
  int64_t max_age_seconds = 0;
  friend bool operator==(const CorsRule&, const CorsRule&) = default;
};

// Defaults match a fresh account (and Azurite): logging and metrics off,
// retention off, no CORS rules.
struct ServiceProperties {
  LoggingSettings logging;
  MetricsSettings hour_metrics;
  MetricsSettings minute_metrics;
  std::vector<CorsRule> cors;
  friend bool operator==(const ServiceProperties&, const ServiceProperties&) = default;
};

// What a Set Table Service Properties body contained: top-level sections
// left out are nullopt and keep their old values (MergeServiceProperties).
struct ServicePropertiesUpdate {
  std::optional<LoggingSettings> logging;
  std::optional<MetricsSettings> hour_metrics;
  std::optional<MetricsSettings> minute_metrics;
  std::optional<std::vector<CorsRule>> cors;  // present and empty = clear all rules
};

// Errors, all 400: InvalidXmlDocument for malformed XML, another root
// element, more than 5 CorsRule, or a CorsRule without AllowedOrigins,
// AllowedMethods or MaxAgeInSeconds; InvalidXmlNodeValue for a value out of
// its domain (booleans other than true/false, retention Days outside 1..365
// or missing while enabled, a method outside DELETE GET HEAD MERGE POST
// OPTIONS PUT PATCH, more than 64 origins/headers, a negative or non-numeric
// MaxAgeInSeconds).
// A CorsRule whose AllowedOrigins entry is not IsCorsOriginEntry, or whose
// AllowedHeaders/ExposedHeaders entry is not IsCorsHeaderEntry, is
// InvalidXmlNodeValue too.
ApiResult<ServicePropertiesUpdate> ParseServiceProperties(std::string_view body);

// One AllowedHeaders/ExposedHeaders entry: "*", a header name (an RFC 9110
// token), or a header name followed by "*" (a prefix, "x-ms-meta-*"); at most
// 256 characters, as the service documents ("Cross-Origin Resource Sharing
// (CORS) support for the Azure Storage services", Microsoft Learn).
bool IsCorsHeaderEntry(std::string_view entry);
// One AllowedOrigins entry: "*" or any origin string of visible ASCII
// without ',' ("www.xyz.com", "https://host:8080"), at most 256 characters,
// as the service stores them (recorded in azure-sdk-for-python's
// test_table_service_properties test_set_cors; docs/compatibility.md).
bool IsCorsOriginEntry(std::string_view entry);

ServiceProperties MergeServiceProperties(const ServiceProperties& current, const ServicePropertiesUpdate& update);

// Get Table Service Properties body (all sections, compact, utf-8 declaration).
std::string WriteServiceProperties(const ServiceProperties& properties);

// Get Table Service Stats body. `status` is live, bootstrap or unavailable;
// `last_sync_ticks` is written as RFC 1123, or empty when unset.
std::string WriteServiceStats(std::string_view status, std::optional<int64_t> last_sync_ticks);

// OData-style XML error (Learn: table-service-error-codes, the shape the Table service documents):
//   <?xml version="1.0" encoding="utf-8" standalone="yes"?>
//   <error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">
//     <code>..</code><message xml:lang="en-US">..\nRequestId:..\nTime:..</message></error>
// Time has 7 fraction digits.
std::string WriteXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks);
// Blob/Queue-style <Error><Code/><Message/></Error> (what Azurite writes), for
// callers that choose it; SDKs read x-ms-error-code first either way.
std::string WriteStorageXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks);

}  // namespace tablestone::protocol::xml
