// FaultInjector: the API side of fault injection (server/faults,
// docs/testing-with-faults.md), as a RequestStage around the dispatcher's
// (request_stage.h): the dispatcher hands it each routed, authenticated,
// placed request, and it does what realistic mode and the fault rules say
// before passing the request on:
//   - an error-before fault (serverBusy, throttle, timeoutBefore,
//     internalErrorBefore, realistic mode's TableBeingDeleted) is answered
//     through the inner stage's Refuse;
//   - latency before (a rule's, realistic mode's) holds the request for that
//     long on the delay thread, then hands it to the inner stage's lane
//     (ExecuteOnLane): no thread sleeps, and it never runs on the I/O thread;
//   - an after-action (timeoutAfter, closeAfter, resetMidResponse,
//     latencyAfter) wraps the request's Completion, so it applies to the
//     answer the handler gives once its write is durable;
//   - realistic mode's page cut wraps the engine the handler runs against
//     (RunHandler, page_cut_engine.h), and a deleted table is noted from the
//     handler's answer (TableBeingDeleted).
// With no rule and realistic mode off a request pays active(): one relaxed
// load, and the dispatcher has no branch of its own for faults.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "protocol/api_error.h"
#include "server/api/api_context.h"
#include "server/api/request_stage.h"
#include "server/faults/delay_queue.h"
#include "server/faults/fault_rules.h"
#include "server/http/handler.h"

namespace spdlog {
class logger;
}

namespace tablestone::api {

class FaultInjector final : public RequestStage {
 public:
  // `faults` and `inner` (the dispatcher's stage) must outlive the injector;
  // fault lines go to `log` at info level. Destroying it runs the delayed
  // requests at once (through inner.ExecuteOnLane).
  FaultInjector(faults::FaultSet& faults, std::shared_ptr<spdlog::logger> log, RequestStage& inner);

  void Execute(RequestInfo& info, http::Response response, http::Completion done) override;
  void Refuse(RequestInfo& info, const protocol::ApiError& error, http::Response response,
              http::Completion done) override {
    inner_.Refuse(info, error, std::move(response), std::move(done));
  }
  void ExecuteOnLane(std::shared_ptr<PendingRequest> pending) override { inner_.ExecuteOnLane(std::move(pending)); }
  void RunHandler(const RequestInfo& info, storage::Engine& engine, http::Response& response) override;

 private:
  struct Verdict {
    std::optional<protocol::ApiError> refusal;  // answer this; the handler does not run
    std::chrono::milliseconds delay{0};         // else run the handler after this, off the I/O thread
    std::optional<faults::PageCut> page_cut;    // realistic mode's cut of a query page
  };
  // Realistic mode and the fault rules for `info`. An after-action wraps
  // `done`.
  Verdict Inspect(const RequestInfo& info, http::Completion& done);

  faults::FaultSet& faults_;
  std::shared_ptr<spdlog::logger> log_;
  RequestStage& inner_;
  faults::DelayQueue delays_;  // last: destroying it runs the delayed calls, which need the rest
};

}  // namespace tablestone::api
