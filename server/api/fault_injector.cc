#include "server/api/fault_injector.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <string>
#include <utility>

#include "protocol/operation.h"
#include "server/api/batch_handler.h"
#include "server/api/handlers.h"
#include "server/api/page_cut_engine.h"
#include "server/api/response.h"

namespace tablestone::api {
namespace {

using protocol::ApiError;
using protocol::Operation;

std::string_view ToView(boost::beast::string_view v) { return std::string_view(v.data(), v.size()); }

// Applies a fault rule's after-action to the answer the handler gives (once
// durable): wraps the request's Completion.
class FaultSink final : public http::ResponseSink {
 public:
  FaultSink(http::Completion inner, faults::FaultDecision decision, faults::DelayQueue* delays,
            std::string request_id, std::string accept, bool xml, protocol::ErrorMessageStyle style)
      : inner_(std::move(inner)),
        decision_(std::move(decision)),
        delays_(delays),
        request_id_(std::move(request_id)),
        accept_(std::move(accept)),
        xml_(xml),
        style_(style) {}

  void Complete(http::Response&& response) override {
    switch (decision_.action) {
      case faults::FaultAction::kTimeoutAfter: {
        // The write stands; the client only hears that it timed out.
        http::Response r;
        r.version(response.version());
        WriteErrorRaw(request_id_, accept_, ApiError::OperationTimedOut(), r, xml_, protocol::XmlErrorForm::kOData,
                      style_);
        for (const char* name : {"x-ms-request-id", "x-ms-version", "Date", "Server", "x-ms-client-request-id"}) {
          if (auto it = response.find(name); it != response.end()) r.set(name, it->value());
        }
        return inner_(std::move(r));
      }
      case faults::FaultAction::kCloseAfter:
        return inner_(std::move(response), http::Delivery::kCloseWithoutResponse);
      case faults::FaultAction::kResetMidResponse:
        return inner_(std::move(response), http::Delivery::kResetMidBody);
      case faults::FaultAction::kLatencyAfter: {
        auto held = std::make_shared<std::pair<http::Completion, http::Response>>(std::move(inner_), std::move(response));
        return delays_->After(decision_.latency, [held] { held->first(std::move(held->second)); });
      }
      default: return inner_(std::move(response));
    }
  }
  bool Cancelled() const override { return inner_.Cancelled(); }
  void WorkDone() override { inner_.WorkDone(); }
  bool InTurn() const override { return inner_.InTurn(); }
  bool AfterTurn(std::function<void()> work) override { return inner_.AfterTurn(std::move(work)); }
  void Abandoned() override { http::Completion dropped = std::move(inner_); }  // its sink answers 500

 private:
  http::Completion inner_;
  faults::FaultDecision decision_;
  faults::DelayQueue* delays_;
  std::string request_id_;
  std::string accept_;
  bool xml_;  // the operation answers errors in XML
  protocol::ErrorMessageStyle style_;  // the listener's (FlavorPolicy::error_messages)
};

}  // namespace

FaultInjector::FaultInjector(faults::FaultSet& faults, std::shared_ptr<spdlog::logger> log, RequestStage& inner)
    : faults_(faults), log_(std::move(log)), inner_(inner) {}

void FaultInjector::Execute(RequestInfo& info, http::Response response, http::Completion done) {
  if (!faults_.active()) return inner_.Execute(info, std::move(response), std::move(done));
  Verdict verdict = Inspect(info, done);
  if (verdict.refusal) return inner_.Refuse(info, *verdict.refusal, std::move(response), std::move(done));
  info.page_cut = verdict.page_cut;
  if (verdict.delay.count() == 0) return inner_.Execute(info, std::move(response), std::move(done));
  // Held on the delay thread, then run on the request's lane: no thread waits for it.
  auto pending = std::make_shared<PendingRequest>(std::move(info), std::move(response), std::move(done));
  delays_.After(verdict.delay, [this, pending]() mutable { inner_.ExecuteOnLane(std::move(pending)); });
}

void FaultInjector::RunHandler(const RequestInfo& info, storage::Engine& engine, http::Response& response) {
  // A handler that builds its page from whole scans cuts that page itself
  // (CutsWholePage): a cut of its scans would be lost.
  if (!info.page_cut || (info.flavor != nullptr && CutsWholePage(*info.flavor, info.route.operation))) {
    inner_.RunHandler(info, engine, response);
  } else {
    // Inside the trace's wrapper (the inner stage adds it), so the trace
    // counts the rows of the cut page.
    PageCutEngine cut(engine, *info.page_cut);
    inner_.RunHandler(info, cut, response);
    // A Cosmos token holds the whole resume point; its NextRowKey ("NA") stays.
    const bool cosmos_token =
        info.flavor != nullptr && info.flavor->continuation == protocol::ContinuationStyle::kCosmosToken;
    if (cut.drop_next_row_key() && !cosmos_token) {
      response.erase("x-ms-continuation-NextRowKey");
    }
  }
  // What an answer tells realistic mode: a table deleted now is "being
  // deleted" for a while (TableBeingDeleted).
  if (info.route.operation == Operation::kDeleteTable && response.result_int() == 204 && faults_.active()) {
    faults_.NoteTableDeleted(info.account(), info.route.resource.table);
  }
}

FaultInjector::Verdict FaultInjector::Inspect(const RequestInfo& info, http::Completion& done) {
  Verdict verdict;
  const http::Request& request = info.request;
  const Operation op = info.route.operation;
  const bool xml_errors = protocol::IsXmlOperation(op);
  const std::string& account = info.account();
  // A Create Table names its table in the body: read from the handler's own
  // parse of it, made here once and kept for the handler (ParsedCreateTable).
  std::optional<std::string_view> body_table;
  if (op == Operation::kCreateTable) {
    const auto& create = ParsedCreateTable(info);
    if (create.ok()) body_table = create->name;
  }
  // A $batch's URL names no table: its operations do, and a rule scoped by
  // match.table applies to them (tests/e2e/python/test_faults.py,
  // test_table_rule_fires_on_that_tables_batch).
  std::optional<BatchTarget> batch_target;
  if (op == Operation::kBatch) batch_target = BatchTargetOf(info);
  const std::string_view table = body_table     ? *body_table
                                 : batch_target ? std::string_view(batch_target->table)
                                                : std::string_view(info.route.resource.table);

  // Realistic mode (docs/testing-with-faults.md, "Realistic mode").
  if (faults_.Realistic(account, table)) {
    if (op == Operation::kCreateTable && faults_.TableBeingDeleted(account, table)) {
      log_->info("fault injected rule=realistic action=tableBeingDeleted operation={} account={} table={} request={}",
                 protocol::OperationName(op), account, table, info.request_id);
      verdict.refusal = ApiError::TableBeingDeleted();
      return verdict;
    }
    if (op == Operation::kQueryEntities || op == Operation::kQueryTables) verdict.page_cut = faults_.NextPageCut();
    verdict.delay = faults_.NextLatency();
  }

  // Fault rules.
  faults::FaultRequest q;
  q.account = account;
  q.table = table;
  q.operation = protocol::OperationName(op);
  q.method = ToView(request.method_string());
  q.header = [&request](std::string_view name) { return FindRequestHeader(request, name); };
  if (info.route.resource.key) {
    q.partition_key = info.route.resource.key->partition_key;
  } else if (batch_target && batch_target->partition_key) {
    q.partition_key = *batch_target->partition_key;
  } else if (op == Operation::kInsertEntity && faults_.wants_partition_key()) {
    // The handler's own parse of the body, made once (ParsedWriteOp).
    const auto& write = ParsedWriteOp(info);
    if (write.ok()) q.partition_key = write->entity.partition_key;
  }
  std::optional<faults::FaultDecision> decision = faults_.Evaluate(q);
  if (!decision) return verdict;
  log_->info("fault injected rule={} action={} operation={} account={} table={} request={}", decision->rule_id,
             faults::ActionName(decision->action), q.operation, account, table, info.request_id);
  switch (decision->action) {
    case faults::FaultAction::kServerBusy:
    case faults::FaultAction::kThrottle: verdict.refusal = ApiError::ServerBusy(); break;
    case faults::FaultAction::kTimeoutBefore: verdict.refusal = ApiError::OperationTimedOut(); break;
    case faults::FaultAction::kInternalErrorBefore: {
      ApiError error = ApiError::InternalError();
      error.cause = "injected by fault rule " + decision->rule_id;
      verdict.refusal = std::move(error);
      break;
    }
    case faults::FaultAction::kLatencyBefore: verdict.delay += decision->latency; break;
    case faults::FaultAction::kTimeoutAfter:
    case faults::FaultAction::kCloseAfter:
    case faults::FaultAction::kResetMidResponse:
    case faults::FaultAction::kLatencyAfter:
      done = http::Completion(std::make_shared<FaultSink>(std::move(done), *decision, &delays_, info.request_id,
                                                          std::string(RequestHeader(request, "Accept")), xml_errors,
                                                          info.flavor->error_messages));
      break;
  }
  return verdict;
}

}  // namespace tablestone::api
