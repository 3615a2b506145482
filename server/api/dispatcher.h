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
// server_routes.h), and a browser's GET / (sent to the UI), are looked up in their one table before the Table API's
// routing, when the headers arrive and when the request is handled, and
// answered where their row places them, with the common headers and without
// being counted or traced. Who may call them: their row's RouteAuth
// (MayReadServerDetail for the details, admin_routes.h for the signed ones).
//
// After routing, authentication and placement the request goes to the
// outermost RequestStage (request_stage.h): the dispatcher itself (Execute:
// tried on the I/O thread, or on its lane), or, with ApiOptions::faults set,
// the FaultInjector around it (fault_injector.h, docs/testing-with-faults.md),
// which may refuse, delay or cut the request before handing it on. The
// dispatcher has no branch of its own for faults.
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
#include <vector>

#include "protocol/route.h"
#include "server/api/api_context.h"
#include "server/api/api_options.h"
#include "server/api/authenticator.h"
#include "server/api/fault_injector.h"
#include "server/api/metrics.h"
#include "server/api/placement.h"
#include "server/api/request_stage.h"
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

class Dispatcher final : public http::RequestHandler, public RequestStage {
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

  // RequestStage: the innermost stage, which runs the handler.
  void Execute(RequestInfo& info, http::Response response, http::Completion done) override;
  void Refuse(RequestInfo& info, const protocol::ApiError& error, http::Response response,
              http::Completion done) override;
  void ExecuteOnLane(std::shared_ptr<PendingRequest> pending) override;
  // Dispatches to the operation's handler against `engine`, wrapped in a
  // TracingEngine when the request is traced.
  void RunHandler(const RequestInfo& info, storage::Engine& engine, http::Response& response) override;

 private:
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
  // Counts an answer under `info`'s metrics indices, adds its trace line
  // (when traced) and, at debug level on the "api" logger, says what the
  // request did.
  void Record(const RequestInfo& info, const http::Response& response) const;

  // Routes, checks the version and authenticates `info`'s request, filling
  // in `info` as it goes (its route, account, metrics indices, trace fields,
  // CORS account, grant). Sets info.prepared when the operation's handler is
  // to run; otherwise the refusal is in `response`.
  void Prepare(RequestInfo& info, http::Response& response);
  // Prepare, timed into info.trace->auth when tracing.
  void PrepareTimed(RequestInfo& info, http::Response& response);
  // A request's trace record, started now.
  static std::shared_ptr<RequestTrace> NewTrace(const http::RequestContext& context);
  // Runs the operation's handler through the outermost stage's RunHandler
  // (never throws: a throw becomes a 500), timed into the trace.
  void Run(const RequestInfo& info, http::Response& response);
  // Runs the handler on this (I/O) thread with `attempt` as the request's
  // inline_try (placement.h). True when it answered; false when it gave up
  // (a query out of its slice, a read that would wait for the disk), with
  // `response` reset for the lane that runs it again.
  bool TryInline(RequestInfo& info, InlineTry* attempt, http::Response& response);
  // The common headers, and CORS headers when the request has an Origin.
  void Decorate(const http::Request& request, const std::string& request_id,
                const std::optional<std::string>& cors_account, http::Response& response);
  void Decorate(const RequestInfo& info, http::Response& response) {
    Decorate(info.request, info.request_id, info.cors_account, response);
  }
  // Decorate, then the group commit wait, then `done`; the answer is counted
  // (Record) when it is ready to send. The wait of an entity read that ran is
  // narrowed to writes its answer can reflect (Engine::TableReadIsDurable).
  // From the I/O thread's stack (`info` moves into a PendingRequest only when
  // the answer must wait) or from a PendingRequest.
  void Finish(RequestInfo& info, http::Response response, http::Completion done);
  void Finish(std::shared_ptr<PendingRequest> pending);
  // Finish for an answer produced on a lane thread, which has no turn to wait
  // for: when the log write cannot wait (Engine::TrySyncWal: no fsync, the
  // log writer idle) the lane makes it and sends the answer itself, with no
  // wake-up of the log writer; otherwise as Finish.
  void FinishOnLane(std::shared_ptr<PendingRequest> pending);
  // What every answer waiting for the log write goes through first: its
  // work is done (no cancel any more), and it holds the dispatcher until
  // AnswerDurable has sent it.
  void HoldForLogWrite(PendingRequest& pending);
  // Decorate; then, when nothing the answer may reflect waits for the log
  // write, Record and send it and return true.
  bool SendIfDurable(const RequestInfo& info, http::Response& response, http::Completion& done);
  // Holds `pending`'s answer for the engine's next log write (AwaitDurable),
  // then sends it (a 500 or 503 if that write failed). An answer produced on
  // its I/O thread (Completion::InTurn) waits with that turn's others
  // (AwaitTurn).
  void AwaitLogWrite(std::shared_ptr<PendingRequest> pending);
  // Hands the answers gathered since the last call to Engine::AwaitDurable as
  // one callback. Run at the end of an I/O thread's turn (Completion::
  // AfterTurn), so the log writer is woken once per turn, after the turn's
  // writes, and not by the first of them: woken at once it takes the CPU
  // from the I/O thread (on a busy or pinned core) and each log write then
  // covers one or two requests instead of the turn's.
  void AwaitTurn();
  // Sends `pending`'s answer once its log write ended with `status`, and
  // lowers held_ (last: the dispatcher may be gone after).
  void AnswerDurable(PendingRequest& pending, Status status);
  // The request-unit budget (budget_ set): true, with the 429 in `response`,
  // when `info`'s table is over its budget; Charge debits an answered request.
  bool OverBudget(const RequestInfo& info, http::Response& response);
  // WriteErrorRaw (response.h) in this listener's error-message style
  // (FlavorPolicy::error_messages), OData form: the dispatcher's own refusals.
  void WriteRefusal(std::string_view request_id, std::string_view accept, const protocol::ApiError& error,
                    http::Response& response, bool xml = false) const;
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
  // Answers waiting for the end of their I/O thread's turn (AwaitLogWrite).
  // With several I/O threads, whichever turn ends first takes them all.
  std::mutex turn_mu_;
  std::vector<std::shared_ptr<PendingRequest>> turn_pending_;  // guarded by turn_mu_
  // The Cosmos flavour's request-unit budget (ApiOptions::ru_per_second), or
  // null: then a request pays one pointer test.
  std::unique_ptr<faults::ThroughputBudget> budget_;
  // Over options_.faults, or null; the destructor drops it first: its
  // delayed calls, run when it is destroyed, need the rest.
  std::unique_ptr<FaultInjector> faults_;
  // The outermost stage: faults_, or this dispatcher.
  RequestStage* stage_;
};

}  // namespace tablestone::api
