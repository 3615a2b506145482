// The parts of one routed request that the typed operation requests
// (query_ops.h, table_ops.h, service_ops.h) are parsed from, without Beast:
// a top-level request and a GET inside $batch both become RequestParts, so
// both go through the same parse function and the same handler step.
#pragma once

#include <optional>
#include <string_view>

#include "protocol/flavor.h"
#include "protocol/route.h"
#include "protocol/url.h"

namespace tablestone::api {

// Request headers by case-insensitive name. Implemented over the Beast
// request (api_context.h) and over a $batch sub-request (batch_handler.cc).
class RequestHeaders {
 public:
  virtual ~RequestHeaders() = default;
  // The first value of the header, or nullopt when absent.
  virtual std::optional<std::string_view> Find(std::string_view name) const = 0;
  // The same, empty when absent (the Azure rules treat an empty header as a
  // missing one almost everywhere; use Find where they differ).
  std::string_view Get(std::string_view name) const { return Find(name).value_or(std::string_view()); }
};

// Views into one request, already routed (the operation is known, so the
// method is not among them) and authenticated. Everything referenced must
// outlive the RequestParts and every typed request parsed from them, whose
// string_views point into the same storage.
struct RequestParts {
  std::string_view account;  // without "-secondary"
  bool secondary = false;    // addressed as <account>-secondary
  const protocol::Resource& resource;
  const protocol::QueryParams& query;
  const RequestHeaders& headers;
  std::string_view body;
  // x-ms-version as sent (empty when absent), read once by the dispatcher; a
  // $batch sub-request has the outer request's. Versions before 2015-12-11
  // may use Atom payloads (protocol::IsAtomEraVersion).
  std::string_view api_version;
  // The listener's flavour (ApiOptions::flavor); parse functions ask it for
  // the rules that differ between the services.
  const protocol::FlavorPolicy* flavor = &protocol::StoragePolicy();

  // First value of a query parameter (exact name), or nullptr.
  const std::string* Query(std::string_view name) const { return protocol::FindQueryParam(query, name); }
};

}  // namespace tablestone::api
