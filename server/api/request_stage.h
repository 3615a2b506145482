// RequestStage: what the dispatcher does with a request once it is routed,
// authenticated and placed (dispatcher.h): run its handler where its
// placement says and answer it. The Dispatcher is the stage; a wrapper of it
// (the FaultInjector, fault_injector.h) is a RequestStage too, given the
// dispatcher's, so that what only some requests need (an injected refusal or
// delay, realistic mode's page cut) is added around the dispatcher instead of
// inside it.
//
// Thread safety: every member may be called from any thread, for different
// requests at once.
#pragma once

#include <memory>
#include <utility>

#include "protocol/api_error.h"
#include "server/api/api_context.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace tablestone::api {

// A request that continues off the I/O thread's stack: on a lane of the
// executor, after a delay, or waiting for the log write. Its context, the
// answer being built and the session's completion; `info` refers to the
// session's request and connection, which stay valid until `done` is called.
struct PendingRequest {
  // Built in place by make_shared<PendingRequest>(info, response, done): each
  // part moved once (a braced temporary moved into the shared block moved the
  // large RequestInfo twice, on every write's wait for its log write).
  PendingRequest(RequestInfo&& request_info, http::Response&& answer, http::Completion&& completion)
      : info(std::move(request_info)), response(std::move(answer)), done(std::move(completion)) {}

  RequestInfo info;
  http::Response response;
  http::Completion done;
};

class RequestStage {
 public:
  virtual ~RequestStage() = default;
  // Runs `info`'s handler where info.placement says (tried on this I/O
  // thread first, or on its lane) and answers it through `done`. `response`
  // is empty but for its HTTP version.
  virtual void Execute(RequestInfo& info, http::Response response, http::Completion done) = 0;
  // Answers `error` (in the operation's error format) without running the
  // handler.
  virtual void Refuse(RequestInfo& info, const protocol::ApiError& error, http::Response response,
                      http::Completion done) = 0;
  // Runs `pending` on its placement's lane, never on the calling thread (a
  // delayed request: the caller is a timer thread).
  virtual void ExecuteOnLane(std::shared_ptr<PendingRequest> pending) = 0;
  // Runs the operation's handler of `info` against `engine` into `response`
  // on the calling thread (which Execute chose). May throw; the dispatcher
  // answers a throw with a 500.
  virtual void RunHandler(const RequestInfo& info, storage::Engine& engine, http::Response& response) = 0;
};

}  // namespace tablestone::api
