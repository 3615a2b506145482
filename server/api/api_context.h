// What every operation handler gets: the long-lived services (ApiContext) and
// the facts of one routed, authenticated request (RequestInfo).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/route.h"
#include "server/api/api_options.h"
#include "server/api/authenticator.h"
#include "server/api/metrics.h"
#include "server/api/placement.h"
#include "server/api/entity_ops.h"
#include "server/api/request_parts.h"
#include "server/api/table_ops.h"
#include "server/api/trace.h"
#include "server/faults/fault_rules.h"
#include "server/http/handler.h"
#include "storage/engine.h"
#include "storage/model/ascii.h"
#include "storage/model/scan_spec.h"

namespace tablestone::api {

// The first value of a request header by case-insensitive name, or nullopt.
// A linear scan with a length check first: a request carries a dozen headers
// at most, and the dispatcher looks up about fifteen names per request, for
// which the ordered lookup of Beast's fields makes a case-insensitive compare
// at every tree step.
inline std::optional<std::string_view> FindRequestHeader(const http::Request& request, std::string_view name) {
  for (const auto& field : request) {
    const boost::beast::string_view n = field.name_string();
    if (n.size() == name.size() && model::EqualsIgnoreCase(std::string_view(n.data(), n.size()), name)) {
      return std::string_view(field.value().data(), field.value().size());
    }
  }
  return std::nullopt;
}

// The same, empty when absent (the Azure rules treat an empty header as a
// missing one almost everywhere; use FindRequestHeader where they differ).
inline std::string_view RequestHeader(const http::Request& request, std::string_view name) {
  return FindRequestHeader(request, name).value_or(std::string_view());
}

// The headers of a Beast request, for RequestParts. Holds a reference: the
// request must outlive it.
class BeastRequestHeaders final : public RequestHeaders {
 public:
  explicit BeastRequestHeaders(const http::Request& request) : request_(request) {}
  std::optional<std::string_view> Find(std::string_view name) const override {
    return FindRequestHeader(request_, name);
  }

 private:
  const http::Request& request_;
};

// Shared by all requests; thread-safe (the engine and authenticator are).
struct ApiContext {
  storage::Engine& engine;
  const ApiOptions& options;
  const Authenticator& authenticator;
  Metrics* metrics = nullptr;  // null: nothing counted (tests)
};

// One request's context: created once per request by the dispatcher when its
// headers are handled, filled in as it is routed and authenticated, and
// passed by reference to its handler (and, for the GET inside a `$batch`, to
// the read it runs). It carries what the dispatcher and the handlers share:
// the request's facts, its placement and I/O-thread try, realistic mode's page
// cut, its trace and its timing. Moved whole (Dispatcher::Pending) when the
// request continues on a lane or waits for the log write; `request` and
// `connection` stay valid until its Completion is called.
struct RequestInfo {
  RequestInfo(const http::Request& request_in, const http::RequestContext& connection_in,
              std::string request_id_in)
      : request(request_in),
        connection(connection_in),
        request_id(std::move(request_id_in)),
        start(connection_in.start) {}

  const http::Request& request;
  const http::RequestContext& connection;
  std::string request_id;   // GUID, also in x-ms-request-id and error texts
  // When the request's headers arrived (the session's clock): its latency
  // in the metrics and the trace counts from here.
  std::chrono::steady_clock::time_point start;

  // ---- Set by the dispatcher while it routes and authenticates ----
  // True once the request is routed, its version checked and it is
  // authenticated: its handler may run. Until then only `request_id`,
  // `start`, `trace` and the metrics indices below are meaningful.
  bool prepared = false;
  int64_t start_ticks = 0;  // model::NowTicks() when routed
  protocol::Route route;
  AuthGrant grant;
  std::string base_url;     // service root URL with trailing '/', e.g. "http://127.0.0.1:10002/devstoreaccount1/"
  // x-ms-version as sent (empty when absent), checked by the dispatcher before any handler runs.
  std::string_view api_version;
  // The listener's flavour (ApiOptions::flavor), which outlives the request.
  const protocol::FlavorPolicy* flavor = &protocol::StoragePolicy();
  // The account whose CORS rules apply to the answer (errors included); set
  // once the account is known, never for a preflight.
  std::optional<std::string> cors_account;
  // What the metrics count the answer under (Metrics::AccountIndex,
  // Metrics::OperationIndex): the unknown account and operation until routed.
  size_t metrics_account = 0;
  size_t metrics_operation = Metrics::kUnknownOperation;
  // The request's trace record, null unless the trace is on: the dispatcher
  // times routing, authentication and the handler into it, and wraps the
  // handler's engine in a TracingEngine that records the storage calls.
  std::shared_ptr<RequestTrace> trace;

  // ---- Where it runs ----
  // PlacementPolicy::Place's answer, decided once before its handler runs.
  RequestPlacement placement;
  InlineTry* inline_try = nullptr;  // set only while it is tried on the I/O thread (placement.h)
  // The scan a query's I/O-thread try left (InlineTry::suspended), which its
  // run on the long lane continues; dropped by the dispatcher once that ran.
  std::shared_ptr<model::SuspendedScan> suspended_scan;
  // Realistic mode (FaultInjector): how this query page is cut; none = a
  // normal page. The dispatcher wraps the handler's engine in a
  // PageCutEngine, except where the handler cuts the whole page it builds
  // (CutsWholePage, page_cut_engine.h).
  std::optional<faults::PageCut> page_cut;

  // ---- The body, parsed once ----
  // A Create Table's or an entity write's typed request, parsed by its first
  // reader (a fault rule matching on the body's TableName or PartitionKey,
  // fault_injector.h; else the handler) and read by the others
  // (ParsedCreateTable, ParsedWriteOp: handlers.h). Set on the thread that
  // runs the request; it moves with the context.
  mutable std::optional<protocol::ApiResult<CreateTableRequest>> create_table;
  mutable std::optional<protocol::ApiResult<model::WriteOp>> write_op;

  // Header value by case-insensitive name; empty when absent.
  std::string_view Header(std::string_view name) const { return RequestHeader(request, name); }
  bool HasHeader(std::string_view name) const { return FindRequestHeader(request, name).has_value(); }
  // First value of a query parameter (exact name), or nullptr.
  const std::string* Query(std::string_view name) const { return protocol::FindQueryParam(route.query, name); }
  const std::string& account() const { return route.account.account; }
  // The parts the typed requests are parsed from, viewing this request;
  // `headers` is normally BeastRequestHeaders(request). Both must outlive
  // the parts.
  RequestParts Parts(const RequestHeaders& headers) const {
    return RequestParts{account(), route.account.secondary, route.resource, route.query, headers,
                        std::string_view(request.body()), api_version, flavor};
  }
};

}  // namespace tablestone::api
