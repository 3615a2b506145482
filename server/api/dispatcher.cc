#include "server/api/dispatcher.h"

#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
#include <nlohmann/json.hpp>
#include <exception>
#include <string>
#include <vector>

#include "protocol/acl_blob.h"
#include "protocol/guid.h"
#include "protocol/redact.h"
#include "protocol/request_options.h"
#include "protocol/route.h"
#include "server/api/admin_routes.h"
#include "server/api/api_handler.h"
#include "server/api/batch_handler.h"
#include "server/api/fault_injector.h"
#include "server/api/handlers.h"
#include "server/api/response.h"
#include "server/api/server_routes.h"
#include "server/api/service_handlers.h"
#include "server/api/trace_engine.h"
#include "server/api/ui_routes.h"
#include "storage/model/datetime.h"
#include "storage/model/limits.h"
#include "storage/thread_priority.h"

namespace tablestone::api {
namespace {

using protocol::ApiError;
using protocol::Operation;

// The most body bytes read for a request that AdmitHeaders could not judge
// (it threw; Handle() answers it): nobody is authenticated, and hundreds of
// such connections must not cost more than a few MiB each
// (tests/reliability/hostile_test.py).
constexpr uint64_t kUnauthenticatedAdminBodyLimit = 64 * 1024;
// The most body bytes of an admin request admitted on its signed headers:
// room for a server's whole set of fault rules (faults::FaultSet::kMaxRules).
constexpr uint64_t kAdminBodyLimit = 1024 * 1024;

std::string_view ToView(boost::beast::string_view v) { return std::string_view(v.data(), v.size()); }

// Before routing succeeds, guess from the query whether an XML operation was meant.
bool LooksLikeXmlRequest(std::string_view target) {
  return target.find("comp=acl") != std::string_view::npos ||
         target.find("restype=service") != std::string_view::npos;
}

Authenticator::PolicyLookup MakePolicyLookup(storage::Engine& engine) {
  return [&engine](std::string_view account, std::string_view table,
                   std::string_view id) -> std::optional<AccessPolicy> {
    auto info = engine.GetTable(account, table);
    if (!info.ok()) return std::nullopt;
    auto blob = engine.GetTableAcl(*info);
    if (!blob.ok()) return std::nullopt;
    auto entries = protocol::DecodeAclBlob(*blob);
    if (!entries) return std::nullopt;
    for (const protocol::AclEntry& e : *entries) {
      if (e.id != id) continue;
      AccessPolicy policy;
      policy.start = e.start;
      policy.expiry = e.expiry;
      policy.permission = e.permission.value_or("");
      return policy;
    }
    return std::nullopt;
  };
}

using Handler = void (*)(const ApiContext&, const RequestInfo&, http::Response&);

// The dispatcher's row of an operation: its handler and where it runs. Its
// error format is the operation's (protocol::RowOf(op).errors).
struct OperationEntry {
  Operation operation;
  Handler handler;
  Placement placement;
};

// One row per operation, in the enum's order (checked below).
constexpr std::array<OperationEntry, protocol::kOperationCount> kOperationEntries = {{
    {Operation::kQueryTables, HandleQueryTables, Placement::kLongLane},
    {Operation::kCreateTable, HandleCreateTable, Placement::kShortLane},
    {Operation::kDeleteTable, HandleDeleteTable, Placement::kLongLane},
    {Operation::kGetTable, HandleGetTable, Placement::kIoThread},
    {Operation::kQueryEntities, HandleQueryEntities, Placement::kIoThreadSlice},
    {Operation::kGetEntity, HandleGetEntity, Placement::kIoThreadNoWait},
    {Operation::kInsertEntity, HandleEntityWrite, Placement::kIoThreadNoWaitUnlessStalled},
    {Operation::kUpdateEntity, HandleEntityWrite, Placement::kIoThreadNoWaitUnlessStalled},
    {Operation::kMergeEntity, HandleEntityWrite, Placement::kIoThreadNoWaitUnlessStalled},
    {Operation::kInsertOrReplaceEntity, HandleEntityWrite, Placement::kIoThreadNoWaitUnlessStalled},
    {Operation::kInsertOrMergeEntity, HandleEntityWrite, Placement::kIoThreadNoWaitUnlessStalled},
    {Operation::kDeleteEntity, HandleEntityWrite, Placement::kIoThreadNoWaitUnlessStalled},
    {Operation::kBatch, HandleBatch, Placement::kByBatchContent},
    {Operation::kGetTableAcl, HandleGetTableAcl, Placement::kIoThread},
    {Operation::kSetTableAcl, HandleSetTableAcl, Placement::kShortLane},
    {Operation::kGetServiceProperties, HandleGetServiceProperties, Placement::kIoThread},
    {Operation::kSetServiceProperties, HandleSetServiceProperties, Placement::kShortLane},
    {Operation::kGetServiceStats, HandleGetServiceStats, Placement::kIoThread},
    {Operation::kPreflight, HandlePreflight, Placement::kIoThread},
}};

constexpr bool EntriesInEnumOrder() {
  for (size_t i = 0; i < kOperationEntries.size(); ++i) {
    if (static_cast<size_t>(kOperationEntries[i].operation) != i || kOperationEntries[i].handler == nullptr) {
      return false;
    }
  }
  return true;
}
static_assert(EntriesInEnumOrder(), "kOperationEntries: one row per Operation, in the enum's order");

const OperationEntry& EntryOf(Operation op) { return kOperationEntries[static_cast<size_t>(op)]; }

void Dispatch(const ApiContext& ctx, const RequestInfo& info, http::Response& response) {
  // The service's 4 MiB cap on any request body (Learn: understanding-the-table-service-data-model,
  // performing-entity-group-transactions); a $batch's is the flavour's (Cosmos
  // DB: 2 MB). The transport reads a little more (limits.maxBodyBytes) so that
  // this answer, and not a closed connection, is what a body just over the cap gets.
  const size_t cap = info.route.operation == Operation::kBatch ? info.flavor->max_batch_body_bytes
                                                                 : model::kMaxRequestBodyBytes;
  if (info.request.body().size() > cap) {
    return WriteError(info, ApiError::RequestBodyTooLarge(), response);
  }
  EntryOf(info.route.operation).handler(ctx, info, response);
}

}  // namespace

Dispatcher::Dispatcher(storage::Engine& engine, exec::WorkExecutor& executor, ApiOptions options, Metrics* metrics,
                       TraceWriter* trace)
    : engine_(engine),
      executor_(executor),
      options_(std::move(options)),
      // Stored access policies resolve only where the flavour has them (a
      // Cosmos DB SAS naming one is refused as an unknown identifier).
      authenticator_(options_.accounts, options_.allow_anonymous,
                     options_.flavor.stored_access_policies ? MakePolicyLookup(engine) : nullptr),
      metrics_(metrics),
      trace_(trace),
      log_(spdlog::get("api") ? spdlog::get("api") : spdlog::default_logger()),
      placement_(engine_, metrics, options_.inline_query_slice),
      context_{engine_, options_, authenticator_, metrics},
      budget_(options_.flavor.flavor == protocol::Flavor::kCosmos && options_.ru_per_second > 0
                  ? std::make_unique<faults::ThroughputBudget>(options_.ru_per_second,
                                                               &std::chrono::steady_clock::now,
                                                               options_.table_creates_per_minute)
                  : nullptr),
      faults_(options_.faults != nullptr ? std::make_unique<FaultInjector>(*options_.faults, log_, *this) : nullptr),
      stage_(faults_ != nullptr ? static_cast<RequestStage*>(faults_.get()) : this) {
  authenticator_.SetLoose(options_.loose);
  authenticator_.SetFlavor(&options_.flavor);
  authenticator_.SetOAuthBasic(options_.oauth_basic);
  authenticator_.SetAdminCredentials(options_.admin_key, options_.admin_account);
}

Dispatcher::~Dispatcher() {
  // First the delayed calls (they may hold responses for the log write too).
  faults_.reset();
  // Answers left for the end of a turn that will not come (the I/O threads
  // have stopped): to the log writer with the rest.
  AwaitTurn();
  std::unique_lock lock(held_mu_);
  held_cv_.wait(lock, [this] { return held_.load(std::memory_order_relaxed) == 0; });
}

void Dispatcher::Record(const RequestInfo& info, const http::Response& response) const {
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed = now - info.start;
  if (metrics_ != nullptr) {
    metrics_->RecordRequest(info.metrics_account, info.metrics_operation, response.result_int(), elapsed);
    // The access log's account and operation: the metrics' labels, which
    // outlive every session (http::AccessNote).
    info.connection.access_note.account = metrics_->AccountLabel(info.metrics_account);
  }
  if (info.metrics_operation != Metrics::kUnknownOperation) {
    info.connection.access_note.operation = Metrics::OperationLabel(info.metrics_operation);
  }
  if (info.trace != nullptr) {
    trace_->Submit(FormatTraceLine(info.trace.get(), info.request, response, info.request_id, info.start, now,
                                   trace_->bodies()));
  }
  if (log_->should_log(spdlog::level::debug)) {
    const auto error = response.find("x-ms-error-code");
    log_->debug("request {} {} {} -> {} {} {}{} in {}us", info.request_id,
                info.metrics_operation == Metrics::kUnknownOperation
                    ? std::string_view("(not routed)")
                    : Metrics::OperationLabel(info.metrics_operation),
                protocol::RedactSecrets(ToView(info.request.target())), response.result_int(), ToView(response.reason()),
                error == response.end() ? std::string_view() : std::string_view("error "),
                error == response.end() ? std::string_view() : ToView(error->value()),
                std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  }
}

bool Dispatcher::ServeServerRoute(const ServerRoute& route, const http::Request& request,
                                  const http::RequestContext& context, http::Completion& done) {
  if (!ServesMethod(route, ToView(request.method_string()))) {
    // A status or UI route leaves other methods to the Table API's routing;
    // an admin route answers them (405) itself.
    if (route.auth != RouteAuth::kAdminSignature) return false;
  }
  if (route.id == ServerRouteId::kMetrics && metrics_ == nullptr) return false;  // no metrics: no route
  const std::string request_id = protocol::NewGuid();
  if (route.placement == Placement::kLongLane) {
    // The admin routes: a snapshot or a reset waits for the disk.
    struct Call {
      const http::Request& request;
      std::string request_id;
      http::Completion done;
    };
    auto call = std::make_shared<Call>(Call{request, request_id, std::move(done)});
    auto answer = [this, call](http::Response r) {
      r.prepare_payload();
      Decorate(call->request, call->request_id, std::nullopt, r);
      call->done(std::move(r));
    };
    Status submitted = executor_.Submit(exec::WorkLane::kLong, [this, call, answer](bool dropped) {
      if (call->done.Cancelled()) return call->done(http::Response());
      answer(dropped ? http::Response(boost::beast::http::status::service_unavailable, call->request.version())
                     : HandleAdmin(call->request, engine_, options_, authenticator_, trace_));
    });
    if (!submitted.ok()) answer(http::Response(boost::beast::http::status::service_unavailable, request.version()));
    return true;
  }
  const std::string_view target = ToView(request.target());
  const std::string_view path = target.substr(0, target.find('?'));
  http::Response response;
  response.version(request.version());
  // Only the status and UI routes are answered on the I/O thread.
  const RouteAuth auth = AuthOf(route, target);
  const bool allowed =
      auth == RouteAuth::kAnyone ||
      MayReadServerDetail(request, context.remote_ip, /*ui=*/auth == RouteAuth::kAllowedHost, response);
  if (!allowed) {
    // `response` holds the 403.
  } else if (route.id == ServerRouteId::kHealth) {
    response.result(200);
    response.set(boost::beast::http::field::content_type, "application/json");
    response.body() = auth == RouteAuth::kServerDetail ? HealthDetail() : std::string("{\"status\":\"ok\"}");
  } else if (route.id == ServerRouteId::kMetrics) {
    response.result(200);
    response.set(boost::beast::http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    response.body() = MetricsText();
  } else if (route.id == ServerRouteId::kUi) {
    ServeUi(path, context.remote_ip, options_, response);
  } else if (route.id == ServerRouteId::kUiAtRoot) {
    ServeUiAtRoot(response);
  }
  response.prepare_payload();
  Decorate(request, request_id, std::nullopt, response);
  done(std::move(response));
  return true;
}

bool Dispatcher::MayReadServerDetail(const http::Request& request, std::string_view remote_ip, bool ui,
                                     http::Response& refusal) const {
  auto refuse = [&](std::string_view code, std::string_view message) {
    refusal.result(403);
    refusal.set(boost::beast::http::field::content_type, "application/json");
    refusal.body() = nlohmann::json({{"error", code}, {"message", message}}).dump();
    return false;
  };
  if (!IsAllowedHost(RequestHeader(request, "Host"), options_)) {
    return refuse("HostNotAllowed",
                  "answered only to localhost, an IP literal or --allowedHosts (docs/admin-api.md, DNS rebinding)");
  }
  if (ui || IsLoopbackAddress(remote_ip)) return true;
  auto grant = AuthenticateAdminRequest(request, authenticator_, /*with_body=*/true);
  if (grant.ok() && grant->admin) return true;
  return refuse("AuthorizationFailure",
                "the server's details are answered to loopback peers, or to requests signed with the admin "
                "credential (docs/observability.md)");
}

void Dispatcher::Handle(const http::Request& request, const http::RequestContext& context, http::Completion done) {
  if (const ServerRoute* route = FindServerRoute(request, options_)) {
    if (ServeServerRoute(*route, request, context, done)) return;
  }
  RequestInfo info(request, context, protocol::NewGuid());
  http::Response response;
  response.version(request.version());
  if (metrics_ != nullptr) info.metrics_account = metrics_->AccountIndex("");
  try {
    if (trace_ != nullptr && trace_->enabled()) info.trace = NewTrace(context);
    PrepareTimed(info, response);
  } catch (const std::exception& e) {
    ApiError error = ApiError::InternalError();
    error.cause = e.what();
    LogServerError(info.request_id, "before its handler", error);
    info.prepared = false;
    response = http::Response();
    response.version(request.version());
    WriteRefusal(info.request_id, {}, error, response);
  }
  if (!info.prepared) return Finish(info, std::move(response), std::move(done));
  if (budget_ != nullptr && OverBudget(info, response)) return Finish(info, std::move(response), std::move(done));
  info.placement = placement_.Place(info, EntryOf(info.route.operation).placement, done);
  // A point request (anything not bound for the long lane): the scans on the
  // long lane give way while these are answered (storage/thread_priority.h).
  if (info.placement.lane == exec::WorkLane::kShort) storage::NoteForegroundWork();
  stage_->Execute(info, std::move(response), std::move(done));
}

void Dispatcher::Execute(RequestInfo& info, http::Response response, http::Completion done) {
  const RequestPlacement& placement = info.placement;
  if (placement.io_thread_first) {
    if (placement.bound == InlineBound::kNone) {
      Run(info, response);
      return Finish(info, std::move(response), std::move(done));
    }
    InlineTry attempt = placement_.TryFor(placement);
    if (TryInline(info, &attempt, response)) return Finish(info, std::move(response), std::move(done));
    // The lane continues a query's scan where the slice left it.
    info.suspended_scan = std::move(attempt.suspended);
    placement_.GaveUp(info, placement);
  }
  ExecuteOnLane(std::make_shared<PendingRequest>(std::move(info), std::move(response), std::move(done)));
}

void Dispatcher::Refuse(RequestInfo& info, const ApiError& error, http::Response response, http::Completion done) {
  WriteError(info, error, response, protocol::IsXmlOperation(info.route.operation));
  Finish(info, std::move(response), std::move(done));
}

bool Dispatcher::TryInline(RequestInfo& info, InlineTry* attempt, http::Response& response) {
  info.inline_try = attempt;
  Run(info, response);
  info.inline_try = nullptr;
  if (!attempt->gave_up) return true;
  const unsigned version = response.version();
  response = http::Response();  // the handler may have started it
  response.version(version);
  return false;
}

void Dispatcher::ExecuteOnLane(std::shared_ptr<PendingRequest> pending) {
  const exec::WorkLane lane = pending->info.placement.lane;
  Status submitted = executor_.Submit(lane, [this, pending](bool dropped) {
    if (pending->done.Cancelled()) return pending->done(http::Response());  // its client has gone
    if (dropped) {
      // The server is stopping: the work never started, so a retry is safe.
      // A suspended scan lets go of the engine, which waits for it to close.
      pending->info.suspended_scan.reset();
      pending->response = http::Response();
      pending->response.version(pending->info.request.version());
      WriteError(pending->info, ApiError::ServerBusy(), pending->response, protocol::IsXmlOperation(pending->info.route.operation));
    } else {
      Run(pending->info, pending->response);
      pending->info.suspended_scan.reset();  // its snapshot and the engine's gate, let go before the answer waits
    }
    FinishOnLane(std::move(pending));
  });
  if (!submitted.ok()) {
    // Queue full (or stopping): the service's answer to overload.
    pending->info.suspended_scan.reset();
    pending->response = http::Response();
    pending->response.version(pending->info.request.version());
    WriteError(pending->info, ApiError::ServerBusy(), pending->response, protocol::IsXmlOperation(pending->info.route.operation));
    Finish(std::move(pending));
  }
}

void Dispatcher::Run(const RequestInfo& info, http::Response& response) {
  RequestTrace* const trace = info.trace.get();
  const auto begin = trace != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  try {
    stage_->RunHandler(info, engine_, response);
  } catch (const std::exception& e) {
    ApiError error = ApiError::InternalError();
    error.cause = std::string("threw: ") + e.what();
    response = http::Response();
    response.version(info.request.version());
    WriteError(info, error, response, protocol::IsXmlOperation(info.route.operation));  // logs it once
  }
  if (trace != nullptr) {
    // Added, not set: a query given up on the I/O thread runs a second time.
    trace->handler += std::chrono::steady_clock::now() - begin;
    // A query page answered without a scan ($top=0, a filter no row can
    // match) read and returned no row (docs/observability.md, "Request trace").
    if (info.route.operation == Operation::kQueryEntities && response.result_int() == 200 && !trace->rows_scanned) {
      trace->rows_scanned = 0;
      trace->rows_returned = 0;
    }
  }
}

void Dispatcher::RunHandler(const RequestInfo& info, storage::Engine& engine, http::Response& response) {
  // The handler's engine: `engine` (the engine itself, or it wrapped by a
  // stage around this one, such as realistic mode's page cut) and, outside
  // that (so it sees the cut page), the trace's when the request is traced.
  std::optional<TracingEngine> traced;
  storage::Engine* run_on = &engine;
  if (info.trace != nullptr) run_on = &traced.emplace(engine, *info.trace, info.route.operation);
  if (run_on == &engine_) {
    Dispatch(context_, info, response);
  } else {
    Dispatch(ApiContext{*run_on, options_, authenticator_, metrics_}, info, response);
  }
}

std::shared_ptr<RequestTrace> Dispatcher::NewTrace(const http::RequestContext& context) {
  auto trace = std::make_shared<RequestTrace>();
  trace->received = std::chrono::steady_clock::now();
  trace->client = context.remote_ip;
  return trace;
}

void Dispatcher::PrepareTimed(RequestInfo& info, http::Response& response) {
  if (info.trace == nullptr) return Prepare(info, response);
  const auto begin = std::chrono::steady_clock::now();
  Prepare(info, response);
  info.trace->auth = std::chrono::steady_clock::now() - begin;
}

bool Dispatcher::AdmitHeaders(const http::Request& header, const http::RequestContext& context,
                              http::Response& refusal) {
  http::BodyAdmission body;
  return AdmitHeaders(header, context, refusal, body);
}

bool Dispatcher::AdmitHeaders(const http::Request& header, const http::RequestContext& context,
                              http::Response& refusal, http::BodyAdmission& body) {
  const ServerRoute* route = FindServerRoute(header, options_);
  if (route != nullptr && route->auth != RouteAuth::kAdminSignature) {
    // Routes without a body and without a signature: a body still to come is
    // refused unread (413 and a lingering close that drops it), so that
    // unauthenticated clients cannot park bodies here.
    const auto length = header[boost::beast::http::field::content_length];
    if (!header.chunked() && (length.empty() || length == "0")) return true;
    RenderTransportError(http::TransportError::kBodyTooLarge, header, refusal);
    return false;
  }
  if (route != nullptr) {
    // Signed on the headers (the body's hash among them): a refusal needs no
    // body, and an admitted one is small (rules, a trace setting).
    auto refused = AdmitAdmin(header, options_, authenticator_);
    if (refused) {
      refusal = std::move(*refused);
      return false;
    }
    body.limit = kAdminBodyLimit;
    return true;
  }
  RequestInfo info(header, context, protocol::NewGuid());
  if (metrics_ != nullptr) info.metrics_account = metrics_->AccountIndex("");
  if (trace_ != nullptr && trace_->enabled()) info.trace = NewTrace(context);
  try {
    PrepareTimed(info, refusal);
    if (info.prepared) {
      if (info.route.operation == Operation::kPreflight) {
        // A preflight is not authenticated and has no body (Fetch standard,
        // CORS-preflight request): none is read.
        body.limit = 0;
        body.send_continue = false;
      }
      return true;
    }
  } catch (const std::exception&) {
    // Handle() will meet the same problem and answer it; nobody is
    // authenticated, so the body is read as for an admin route.
    body.limit = kUnauthenticatedAdminBodyLimit;
    body.send_continue = false;
    return true;
  }
  Decorate(info, refusal);
  Record(info, refusal);
  return false;
}

void Dispatcher::Decorate(const http::Request& request, const std::string& request_id,
                          const std::optional<std::string>& cors_account, http::Response& response) {
  SetCommonHeaders(request, request_id, response);
  // Rendering by flavour: Cosmos DB names an error's code in its body only.
  if (!options_.flavor.error_code_header) response.erase("x-ms-error-code");
  // After the common headers, so Access-Control-Expose-Headers lists them.
  if (options_.flavor.cors && cors_account && FindRequestHeader(request, "Origin").has_value()) {
    try {
      ApplyCorsHeaders(engine_, *cors_account, request, response);
    } catch (const std::exception&) {
      // CORS headers are an addition; the response itself stands.
    }
  }
}

namespace {

// Which budget a request draws on (faults::ThroughputBudget): its table's; a
// $batch its first operation's table; the table operations the account's
// pseudo-table "$tables" (no table name has a '$').
std::string BudgetTableOf(const RequestInfo& info) {
  if (info.route.operation == Operation::kBatch) {
    auto target = BatchTargetOf(info);
    return target ? target->table : std::string("$batch");
  }
  if (protocol::RowOf(info.route.operation).scope == protocol::OperationScope::kEntity) {
    return info.route.resource.table;
  }
  return "$tables";
}

}  // namespace

bool Dispatcher::OverBudget(const RequestInfo& info, http::Response& response) {
  std::optional<uint64_t> wait;
  if (info.route.operation == Operation::kCreateTable) wait = budget_->AdmitTableCreate(info.account());
  if (!wait) wait = budget_->Admit(info.account(), BudgetTableOf(info));
  if (!wait) return false;
  WriteRefusal(info.request_id, info.Header("Accept"), protocol::RequestRateTooLarge(), response);
  response.set("x-ms-retry-after-ms", std::to_string(*wait));
  return true;
}

void Dispatcher::Charge(const RequestInfo& info, const http::Response& response) {
  if (response.result_int() >= 300) return;  // only answered requests: unknown names cost no memory
  double cost = faults::ThroughputBudget::kTableOperationCost;
  switch (info.route.operation) {
    case Operation::kQueryEntities:
    case Operation::kGetEntity:
    case Operation::kQueryTables:
    case Operation::kGetTable:
      cost = faults::ThroughputBudget::ReadCost(response.body().size());
      break;
    case Operation::kCreateTable:
      budget_->NoteTableCreate(info.account());
      break;
    case Operation::kDeleteTable:
      break;
    default:
      cost = faults::ThroughputBudget::WriteCost(info.request.body().size());
      break;
  }
  budget_->Charge(info.account(), BudgetTableOf(info), cost);
}

void Dispatcher::WriteRefusal(std::string_view request_id, std::string_view accept, const protocol::ApiError& error,
                              http::Response& response, bool xml) const {
  WriteErrorRaw(request_id, accept, error, response, xml, protocol::XmlErrorForm::kOData,
                options_.flavor.error_messages);
}

void Dispatcher::Prepare(RequestInfo& info, http::Response& response) {
  info.prepared = false;
  const http::Request& request = info.request;
  const http::RequestContext& context = info.connection;
  const std::string_view target = ToView(request.target());
  const std::string_view accept = RequestHeader(request, "Accept");

  protocol::RouteInput in;
  in.method = ToView(request.method_string());
  in.host = RequestHeader(request, "Host");
  in.target = target;
  auto [xb, xe] = request.equal_range("X-HTTP-Method");
  for (auto it = xb; it != xe; ++it) in.x_http_method.push_back(ToView(it->value()));
  in.has_if_match = FindRequestHeader(request, "If-Match").has_value();
  in.is_known_account = [this](std::string_view name) { return authenticator_.IsKnownAccount(name); };
  in.disable_product_style = options_.disable_product_style_url;
  in.default_account = options_.default_account;
  in.query_memo = &query_memo_;
  auto route = protocol::ResolveRoute(in);
  if (!route.ok()) {
    WriteRefusal(info.request_id, accept, route.error(), response, LooksLikeXmlRequest(target));
    return;
  }

  info.route = std::move(route).value();
  info.flavor = &options_.flavor;
  info.start_ticks = model::NowTicks();
  info.metrics_operation = Metrics::OperationIndex(info.route.operation);
  if (info.trace != nullptr) {
    RequestTrace& t = *info.trace;
    t.account = info.route.account.account;
    t.operation = protocol::OperationName(info.route.operation);
    if (!info.route.resource.table.empty()) t.table = info.route.resource.table;
    if (info.route.resource.key) {
      t.partition_key = info.route.resource.key->partition_key;
      t.row_key = info.route.resource.key->row_key;
    }
  }
  if (metrics_ != nullptr) info.metrics_account = metrics_->AccountIndex(info.route.account.account);
  if (info.route.operation != Operation::kPreflight) info.cors_account = info.route.account.account;
  const bool xml = protocol::IsXmlOperation(info.route.operation);
  std::string_view host = in.host;
  if (host.empty()) host = "127.0.0.1";
  // Sized once: one allocation per request instead of a temporary per piece.
  const std::string_view scheme = context.is_tls ? "https://" : "http://";
  const std::string& root = info.route.account.root_path;
  info.base_url.clear();
  info.base_url.reserve(scheme.size() + host.size() + root.size());
  info.base_url.append(scheme).append(host).append(root);

  const std::optional<std::string_view> api_version = FindRequestHeader(request, "x-ms-version");
  info.api_version = api_version.value_or(std::string_view());
  if (!options_.skip_api_version_check) {
    auto version = protocol::CheckApiVersion(info.api_version, api_version.has_value());
    if (!version.ok()) {
      WriteError(info, version.error(), response, xml);
      return;
    }
  }

  if (info.route.operation != Operation::kPreflight) {
    AuthRequest auth;
    auth.method = in.method;
    auth.raw_path = info.route.raw_path;
    auth.query = &info.route.query;
    auth.raw_query = info.route.raw_query;
    auth.header = [&request](std::string_view name) { return RequestHeader(request, name); };
    auth.remote_ip = context.remote_ip;
    auth.is_https = context.is_tls;
    auth.account = info.route.account.account;
    auth.secondary = info.route.account.secondary;
    auth.operation = info.route.operation;
    auth.table = info.route.resource.table;
    auth.entity_key = info.route.resource.key;
    auto grant = authenticator_.Authenticate(auth);
    if (!grant.ok()) {
      WriteError(info, grant.error(), response, xml);
      return;
    }
    info.grant = std::move(grant).value();

    // The secondary endpoint is read-only.
    if (info.route.account.secondary && protocol::IsWriteOperation(info.route.operation)) {
      WriteError(info, ApiError::WriteOnSecondary(), response, xml);
      return;
    }
  }
  // Admission by flavour, the one test the storage flavour pays: what the
  // imitated service refuses before any handler runs (an operation it does
  // not have, a table name it does not accept, a SAS creating tables, Atom).
  // Answered in JSON whatever was asked for, as the Cosmos DB service
  // answers its 501s (docs/compatibility.md, "Cosmos DB for Table mode: choices").
  if (options_.flavor.admission_checks) {
    protocol::AdmissionFacts facts;
    facts.operation = info.route.operation;
    facts.table = info.route.resource.table;
    facts.signed_with_sas =
        info.grant.kind == AuthGrant::Kind::kAccountSas || info.grant.kind == AuthGrant::Kind::kServiceSas;
    facts.api_version = info.api_version;
    facts.format = protocol::FindQueryParam(info.route.query, "$format");
    facts.accept = accept;
    facts.content_type = FindRequestHeader(request, "Content-Type");
    if (auto refused = protocol::RefuseRequest(options_.flavor, facts)) {
      WriteRefusal(info.request_id, accept, *refused, response);
      return;
    }
  }
  info.prepared = true;
}

void Dispatcher::RenderTransportError(http::TransportError error, const http::Request& partial_request,
                                      http::Response& response) {
  const std::string request_id = protocol::NewGuid();
  ApiError e = ApiError::InternalError();
  switch (error) {
    case http::TransportError::kBodyTooLarge: e = ApiError::RequestBodyTooLarge(); break;
    case http::TransportError::kHeaderTooLarge:
      e = ApiError::InvalidHeaderValue("The size of the request headers exceeds the maximum permissible limit.");
      break;
    case http::TransportError::kBadRequest: e = ApiError::InvalidInput(); break;
    default: e = ApiError::InternalError(); break;
  }
  response.version(partial_request.version() == 0 ? 11 : partial_request.version());
  // Not logged here: a kInternalError means Handle() threw, which the session
  // has logged with the exception on the "http" logger (the other cause, a
  // dropped Completion, does not happen: every path of Handle() calls it).
  WriteRefusal(request_id, RequestHeader(partial_request, "Accept"), e, response);
  SetCommonHeaders(partial_request, request_id, response);
  // No start time reaches here: counted, but left out of the latency histogram.
  if (metrics_ != nullptr) {
    metrics_->RecordRequest(metrics_->AccountIndex(""), Metrics::kUnknownOperation, response.result_int(),
                            std::chrono::nanoseconds(-1));
  }
  if (trace_ != nullptr && trace_->enabled()) {
    const auto now = std::chrono::steady_clock::now();
    trace_->Submit(FormatTraceLine(nullptr, partial_request, response, request_id, now, now, trace_->bodies()));
  }
}

std::string Dispatcher::LogSafeTarget(std::string_view target) const { return protocol::RedactSecrets(target); }

std::unique_ptr<http::RequestHandler> MakeApiHandler(storage::Engine& engine, exec::WorkExecutor& executor,
                                                     ApiOptions options, Metrics* metrics, TraceWriter* trace) {
  return std::make_unique<Dispatcher>(engine, executor, std::move(options), metrics, trace);
}

}  // namespace tablestone::api
