// Dispatcher: the http::RequestHandler of the Table API. For each request it
// assigns a request id, serves the health route, routes (protocol/route.h),
// checks x-ms-version, authenticates (Authenticator), refuses writes on the
// secondary endpoint, calls the one handler of the operation, and stamps the
// common headers (docs/compatibility.md) on every response, errors included.
//
// Where the operation's handler runs: its row in dispatcher.cc
// (kOperationEntries) names a Placement, and PlacementPolicy::Place
// (placement.h) turns it into the request's placement once, after routing
// and authentication; docs/architecture.md, "Where each operation runs",
// lists the operations by placement. Every refusal before the handler
// (routing, version, auth) is answered on the I/O thread.
// Work handed to a lane of the executor (server/exec/work_executor.h) answers
// 503 ServerBusy when its queue is full, is skipped when its client has gone,
// and is answered 503 when the executor stops before it ran.
//
// Group commit: a response that may reflect a write not yet in the log file
// (its own or another request's) is held by Engine::AwaitDurable and sent
// once the engine's next log write has covered it; 500 if that write failed.
//
// The server's own routes under /_tablestone/ (status, UI and admin:
// server_routes.h) are looked up in their one table before the Table API's
// routing, when the headers arrive and when the request is handled, and
// answered where their row places them, with the common headers and without
// being counted or traced. Who may call them: their row's RouteAuth
// (MayReadServerDetail for the details, admin_routes.h for the signed ones).
//
// Fault injection (server/faults, docs/testing-with-faults.md): with
// ApiOptions::faults set and active (a rule, or realistic mode on), a routed
// and authenticated request is shown to the FaultInjector (fault_injector.h)
// before its handler runs, and its verdict is done here: a refusal is
// answered like any other; a delay hands the request, once it has passed, to
// its lane; a page cut wraps the handler's engine. After-actions
// wrap the Completion inside the injector. Otherwise one relaxed load.
//
// Metrics: every answer of the Table API that goes through Handle,
// AdmitHeaders or RenderTransportError is counted once
// (Metrics::RecordRequest), when it is ready to send (after the group commit
// wait, if any).
//
// Trace: when the TraceWriter is on, each such answer also becomes one trace
// line (trace.h), formatted on the thread that answers and handed to the
// writer's queue; with tracing off that costs one relaxed load and a branch.
//
// Thread safety: Handle() may run concurrently on any number of I/O threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/route.h"
#include "server/api/api_context.h"
#include "server/api/api_options.h"
#include "server/api/authenticator.h"
#include "server/api/fault_injector.h"
#include "server/api/metrics.h"
#include "server/api/placement.h"
#include "server/api/server_routes.h"
#include "server/api/trace.h"
#include "server/exec/work_executor.h"
#include "server/faults/throughput.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace spdlog {
class logger;
}

namespace tablestone::api {

class Dispatcher : public http::RequestHandler {
 public:
  // `engine`, `executor` (the lanes the requests placed there run on),
  // `metrics` (may be null: no metrics route, nothing counted) and `trace`
  // (may be null: no trace, no trace admin route) must outlive the
  // dispatcher.
  Dispatcher(storage::Engine& engine, exec::WorkExecutor& executor, ApiOptions options, Metrics* metrics = nullptr,
             TraceWriter* trace = nullptr);
  // Answers the requests a fault rule still delays (through the executor:
  // 503 once it is shut down), then waits for the responses held for the log
  // write (Engine::AwaitDurable calls back on the engine's log writer thread,
  // within one log write). Shut the executor down first: a task still running
  // would call a destroyed dispatcher.
  ~Dispatcher() override;

  void Handle(const http::Request& request, const http::RequestContext& context, http::Completion done) override;
  // Routes, checks the version and authenticates on the headers alone, so an
  // unauthenticated body is never read (Shared Key and SAS sign no body).
  bool AdmitHeaders(const http::Request& header, const http::RequestContext& context,
                    http::Response& refusal) override;
  // The same; also bounds the body of what it admits unauthenticated (admin
  // routes: 64 KiB, no "100 Continue"; a preflight: none), and refuses any
  // body still to come on health, metrics and the UI (413).
  bool AdmitHeaders(const http::Request& header, const http::RequestContext& context, http::Response& refusal,
                    http::BodyAdmission& body) override;
  void RenderTransportError(http::TransportError error, const http::Request& partial_request,
                            http::Response& response) override;
  // protocol::RedactSecrets: no SAS signature reaches the access log.
  std::string LogSafeTarget(std::string_view target) const override;

 private:
  struct Pending;
  // What the metrics count a request under, and when its headers arrived.
  struct Tally {
    size_t account = 0;
    size_t operation = Metrics::kUnknownOperation;
    std::chrono::steady_clock::time_point start;
    std::shared_ptr<RequestTrace> trace;  // null unless the trace is on
  };

  // Answers `request` on `route` (server_routes.h), now or from its lane,
  // through `done`; false, `done` untouched, when the route leaves the
  // request to the Table API (a method a status or UI route does not serve,
  // the metrics of a dispatcher without Metrics).
  bool ServeServerRoute(const ServerRoute& route, const http::Request& request, const http::RequestContext& context,
                        http::Completion& done);
  // The detailed health answer, the metrics and the UI: true when `request`
  // may have them (a Host no DNS-rebinding page can send, and, but for the
  // UI, a loopback peer or an admin signature); else false with the 403 in
  // `refusal` (docs/admin-api.md, "Server details").
  bool MayReadServerDetail(const http::Request& request, std::string_view remote_ip, bool ui,
                           http::Response& refusal) const;
  std::string HealthDetail();
  std::string MetricsText();
  // Counts an answer under `tally` and, at debug level on the "api" logger,
  // says what the request did.
  void Record(const Tally& tally, const http::Request& request, std::string_view request_id,
              const http::Response& response) const;

  // Routes, checks the version and authenticates. Returns true with the
  // request's facts in *info (built in place) when the operation's handler is
  // to run; otherwise false, *info empty and the refusal in `response`. Sets *cors_account once the request's account is known, so
  // CORS headers go on whatever response follows (errors included), and
  // *tally's account and operation once routed.
  bool Prepare(const http::Request& request, const http::RequestContext& context, const std::string& request_id,
               http::Response& response, std::optional<std::string>* cors_account, Tally* tally,
               std::optional<RequestInfo>* info);
  // Prepare, timed into tally->trace->auth when tracing.
  bool PrepareTimed(const http::Request& request, const http::RequestContext& context, const std::string& request_id,
                    http::Response& response, std::optional<std::string>* cors_account, Tally* tally,
                    std::optional<RequestInfo>* info);
  // A request's trace record, started now.
  static std::shared_ptr<RequestTrace> NewTrace(const http::RequestContext& context);
  // Runs the operation's handler (never throws: a throw becomes a 500), on
  // the engine wrapped by what this request adds to it (realistic mode's page
  // cut, the trace: page_cut_engine.h, trace_engine.h); `trace` is null when
  // the request is not traced.
  void Run(const RequestInfo& info, RequestTrace* trace, http::Response& response);
  // Runs the handler on this (I/O) thread with `attempt` as the request's
  // inline_try (placement.h). True when it answered; false when it gave up
  // (a query out of its slice, a read that would wait for the disk), with
  // `response` reset for the lane that runs it again.
  bool TryInline(RequestInfo& info, RequestTrace* trace, InlineTry* attempt, http::Response& response);
  // Runs `pending` on the engine's `lane`, or answers 503 ServerBusy when the
  // lane refuses it.
  void RunOnLane(exec::WorkLane lane, std::shared_ptr<Pending> pending);
  // The common headers, and CORS headers when the request has an Origin.
  void Decorate(const http::Request& request, const std::string& request_id,
                const std::optional<std::string>& cors_account, http::Response& response);
  // Decorate, then the group commit wait, then `done`. `info` (null when the
  // request was refused before its handler) narrows the wait of an entity read
  // to writes its answer can reflect (Engine::TableReadIsDurable). Counts the
  // answer under `tally` when it is ready to send.
  void Finish(const http::Request& request, const std::string& request_id,
              const std::optional<std::string>& cors_account, http::Response response, http::Completion done,
              const RequestInfo* info, const Tally& tally);
  // The request-unit budget (budget_ set): true, with the 429 in `response`,
  // when `info`'s table is over its budget; Charge debits an answered request.
  bool OverBudget(const RequestInfo& info, http::Response& response);
  void Charge(const RequestInfo& info, const http::Response& response);

  storage::Engine& engine_;
  exec::WorkExecutor& executor_;
  ApiOptions options_;
  Authenticator authenticator_;
  Metrics* metrics_;
  TraceWriter* trace_;
  std::shared_ptr<spdlog::logger> log_;  // "api"
  PlacementPolicy placement_;
  protocol::QueryMemo query_memo_;  // the last query string routed (a SAS repeats it)
  ApiContext context_;
  // Responses waiting in Engine::AwaitDurable; the destructor waits for zero.
  // Raised without the mutex (only request threads raise it, and none runs
  // once the destructor does), lowered under it.
  std::atomic<size_t> held_{0};
  std::mutex held_mu_;
  std::condition_variable held_cv_;
  // The Cosmos flavour's request-unit budget (ApiOptions::ru_per_second), or
  // null: then a request pays one pointer test.
  std::unique_ptr<faults::ThroughputBudget> budget_;
  // Over options_.faults, or null. Last: its delayed calls, run when it is
  // destroyed, need the rest.
  std::unique_ptr<FaultInjector> faults_;
};

}  // namespace tablestone::api
