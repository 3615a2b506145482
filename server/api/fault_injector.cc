#include "server/api/fault_injector.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "protocol/operation.h"
#include "server/api/batch_handler.h"
#include "server/api/response.h"

namespace tablestone::api {
namespace {

using protocol::ApiError;
using protocol::Operation;

std::string_view ToView(boost::beast::string_view v) { return std::string_view(v.data(), v.size()); }

// A string field of the request's JSON body ("PartitionKey" of an insert,
// "TableName" of Create Table), for the fault rules only; nullopt when the
// body is not a JSON object with that string. The rules decide before the
// handler parses the body, so this is a parse of its own: it is made only
// while faults are active, and for an insert only when a rule matches on
// PartitionKey (FaultSet::wants_partition_key).
std::optional<std::string> BodyField(const http::Request& request, const char* field) {
  auto body = nlohmann::json::parse(request.body(), nullptr, false);
  if (!body.is_object()) return std::nullopt;
  auto it = body.find(field);
  if (it == body.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// Applies a fault rule's after-action to the answer the handler gives (once
// durable): wraps the request's Completion.
class FaultSink final : public http::ResponseSink {
 public:
  FaultSink(http::Completion inner, faults::FaultDecision decision, faults::DelayQueue* delays,
            std::string request_id, std::string accept, bool xml)
      : inner_(std::move(inner)),
        decision_(std::move(decision)),
        delays_(delays),
        request_id_(std::move(request_id)),
        accept_(std::move(accept)),
        xml_(xml) {}

  void Complete(http::Response&& response) override {
    switch (decision_.action) {
      case faults::FaultAction::kTimeoutAfter: {
        // The write stands; the client only hears that it timed out.
        http::Response r;
        r.version(response.version());
        WriteErrorRaw(request_id_, accept_, ApiError::OperationTimedOut(), r, xml_);
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
  void Abandoned() override { http::Completion dropped = std::move(inner_); }  // its sink answers 500

 private:
  http::Completion inner_;
  faults::FaultDecision decision_;
  faults::DelayQueue* delays_;
  std::string request_id_;
  std::string accept_;
  bool xml_;  // the operation answers errors in XML
};

}  // namespace

FaultInjector::FaultInjector(faults::FaultSet& faults, std::shared_ptr<spdlog::logger> log)
    : faults_(faults), log_(std::move(log)) {}

FaultInjector::Verdict FaultInjector::Inspect(const RequestInfo& info, bool xml_errors, http::Completion& done) {
  Verdict verdict;
  const http::Request& request = info.request;
  const Operation op = info.route.operation;
  const std::string& account = info.account();
  std::optional<std::string> body_table;
  if (op == Operation::kCreateTable) body_table = BodyField(request, "TableName");
  // A $batch's URL names no table: its operations do, and a rule scoped by
  // match.table applies to them (tests/e2e/python/test_faults.py,
  // test_table_rule_fires_on_that_tables_batch).
  std::optional<BatchTarget> batch_target;
  if (op == Operation::kBatch) batch_target = BatchTargetOf(info);
  const std::string_view table = body_table     ? std::string_view(*body_table)
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
  std::optional<std::string> body_pk;
  if (info.route.resource.key) {
    q.partition_key = info.route.resource.key->partition_key;
  } else if (batch_target && batch_target->partition_key) {
    q.partition_key = *batch_target->partition_key;
  } else if (op == Operation::kInsertEntity && faults_.wants_partition_key()) {
    body_pk = BodyField(request, "PartitionKey");
    if (body_pk) q.partition_key = *body_pk;
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
                                                          std::string(RequestHeader(request, "Accept")), xml_errors));
      break;
  }
  return verdict;
}

void FaultInjector::NoteAnswer(const RequestInfo& info, const http::Response& response) {
  if (info.route.operation == Operation::kDeleteTable && response.result_int() == 204 && faults_.active()) {
    faults_.NoteTableDeleted(info.account(), info.route.resource.table);  // realistic mode's TableBeingDeleted
  }
}

}  // namespace tablestone::api
