// FaultInjector: the API side of fault injection (server/faults,
// docs/testing-with-faults.md). The dispatcher shows it each routed,
// authenticated request before the handler runs (Inspect) and does what the
// verdict says; everything else a fault does happens here or in what the
// verdict wraps around the request:
//   - an error-before fault (serverBusy, throttle, timeoutBefore,
//     internalErrorBefore, realistic mode's TableBeingDeleted) is a refusal
//     the dispatcher answers like any other;
//   - latency before (a rule's, realistic mode's) is a delay after which the
//     dispatcher runs the handler from After()'s thread, so on an executor lane;
//   - an after-action (timeoutAfter, closeAfter, resetMidResponse,
//     latencyAfter) wraps the request's Completion, so it applies to the
//     answer the handler gives once its write is durable;
//   - realistic mode's page cut is an engine decorator around the handler
//     (page_cut_engine.h).
// With no rule and realistic mode off the dispatcher pays active(): one
// relaxed load.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "protocol/api_error.h"
#include "server/api/api_context.h"
#include "server/faults/delay_queue.h"
#include "server/faults/fault_rules.h"
#include "server/http/handler.h"

namespace spdlog {
class logger;
}

namespace tablestone::api {

class FaultInjector {
 public:
  // `faults` must outlive the injector; fault lines go to `log` at info level.
  FaultInjector(faults::FaultSet& faults, std::shared_ptr<spdlog::logger> log);

  bool active() const { return faults_.active(); }

  struct Verdict {
    std::optional<protocol::ApiError> refusal;  // answer this; the handler does not run
    std::chrono::milliseconds delay{0};         // else run the handler after this, off the I/O thread
    std::optional<faults::PageCut> page_cut;    // realistic mode's cut of a query page
  };
  // Realistic mode and the fault rules for `info`. An after-action wraps
  // `done`; `xml_errors` says whether the operation answers errors in XML
  // (for the error an after-action substitutes).
  Verdict Inspect(const RequestInfo& info, bool xml_errors, http::Completion& done);

  // Calls `then` on the delay thread once `delay` has passed. Pending calls
  // run at once when the injector is destroyed.
  void After(std::chrono::milliseconds delay, std::function<void()> then) { delays_.After(delay, std::move(then)); }

  // What an answer tells realistic mode: a table deleted now is "being
  // deleted" for a while (TableBeingDeleted).
  void NoteAnswer(const RequestInfo& info, const http::Response& response);

 private:
  faults::FaultSet& faults_;
  std::shared_ptr<spdlog::logger> log_;
  faults::DelayQueue delays_;
};

}  // namespace tablestone::api
