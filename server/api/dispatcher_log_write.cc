// The log-write hand-off of the Dispatcher (dispatcher.h): how an answer
// that may reflect a write not yet in the log file waits for the engine's log
// write (group commit, docs/architecture.md "The path of a write") and is
// then sent. Its contract is the members' in dispatcher.h: SendIfDurable and
// Finish (the durability check, then send or hold), FinishOnLane (a lane's answer makes
// the log write itself when that cannot wait), AwaitLogWrite and AwaitTurn
// (an I/O thread's answers wait for one log write per turn), AnswerDurable
// (sent, or 500/503 when the write failed; lowers held_, which ~Dispatcher
// waits on). Kept apart from the routing and placement in dispatcher.cc.
#include "server/api/dispatcher.h"

#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "protocol/operation.h"
#include "server/api/response.h"

namespace tablestone::api {

using protocol::ApiError;

bool Dispatcher::SendIfDurable(const RequestInfo& info, http::Response& response, http::Completion& done) {
  if (budget_ != nullptr && info.prepared) Charge(info, response);
  Decorate(info, response);
  // Nothing pending in the log that this answer can reflect (the common case
  // of a read): send now. An entity read asks only about its own table, so a
  // write burst elsewhere does not hold it (docs/architecture.md, "Write path").
  // A request refused before its handler ran asks about everything (a SAS
  // refusal may reflect a stored access policy just deleted).
  const bool entity_read = info.prepared && protocol::IsEntityReadOperation(info.route.operation);
  if (engine_.IsDurable() || (entity_read && engine_.TableReadIsDurable(info.account(), info.route.resource.table))) {
    Record(info, response);
    done(std::move(response));
    return true;
  }
  return false;
}

void Dispatcher::Finish(RequestInfo& info, http::Response response, http::Completion done) {
  if (SendIfDurable(info, response, done)) return;
  // The one allocation of a response that waits for the log write.
  AwaitLogWrite(std::make_shared<PendingRequest>(std::move(info), std::move(response), std::move(done)));
}

void Dispatcher::Finish(std::shared_ptr<PendingRequest> pending) {
  if (SendIfDurable(pending->info, pending->response, pending->done)) return;
  AwaitLogWrite(std::move(pending));
}

void Dispatcher::FinishOnLane(std::shared_ptr<PendingRequest> pending) {
  if (SendIfDurable(pending->info, pending->response, pending->done)) return;
  // The lane thread's own log write, as an I/O thread's at the end of its
  // turn (AwaitTurn): waking the log writer and its post of the answer cost
  // a `$batch` two more thread hops (docs/benchmarks.md, "Point writes
  // against 2f279ee, round 3").
  if (const std::optional<Status> status = engine_.TrySyncWal()) {
    HoldForLogWrite(*pending);
    AnswerDurable(*pending, *status);
    return;
  }
  AwaitLogWrite(std::move(pending));
}

void Dispatcher::HoldForLogWrite(PendingRequest& pending) {
  pending.done.WorkDone();  // only the log write is left: nothing for a leaving client to cancel
  held_.fetch_add(1, std::memory_order_relaxed);  // AnswerDurable lowers it
}

void Dispatcher::AwaitLogWrite(std::shared_ptr<PendingRequest> pending) {
  HoldForLogWrite(*pending);
  if (pending->done.InTurn()) {
    // Produced on its I/O thread: the answer joins the turn's group, which
    // waits for the log write once the turn's other requests have run
    // (AwaitTurn). The first of a group leaves that work with its own
    // Completion before the group is published: once published, another I/O
    // thread's AwaitTurn may answer (and so drop) it at any time.
    std::lock_guard lock(turn_mu_);
    if (!turn_pending_.empty() || pending->done.AfterTurn([this] { AwaitTurn(); })) {
      turn_pending_.push_back(std::move(pending));
      return;
    }
  }
  engine_.AwaitDurable([this, pending = std::move(pending)](Status status) { AnswerDurable(*pending, status); });
}

void Dispatcher::AwaitTurn() {
  std::vector<std::shared_ptr<PendingRequest>> group;
  {
    std::lock_guard lock(turn_mu_);
    group.swap(turn_pending_);
  }
  if (group.empty()) return;
  // On the I/O thread, the log write itself when it cannot wait (no fsync,
  // the log writer idle): the answers then go out from this thread, with no
  // wake-up of the log writer and no post back (docs/architecture.md, "The
  // path of a write").
  if (const std::optional<Status> status = engine_.TrySyncWal()) {
    for (const std::shared_ptr<PendingRequest>& pending : group) AnswerDurable(*pending, *status);
    return;
  }
  engine_.AwaitDurable([this, group = std::move(group)](Status status) {
    for (const std::shared_ptr<PendingRequest>& pending : group) AnswerDurable(*pending, status);
  });
}

void Dispatcher::AnswerDurable(PendingRequest& pending, Status status) {
  // A 5xx reflects no state, so it goes out as it is (a write refused by
  // the failing disk keeps its 503). Anything else may reflect a write that
  // a crash could take back (a 404 a delete's, a 409 an insert's).
  const RequestInfo& info = pending.info;  // its request lives until done
  http::Response& response = pending.response;
  if (!status.ok() && response.result_int() < 500) {
    // The write may be lost in a crash: never acknowledge it. A read that
    // waited changed nothing and can be retried once the disk recovers
    // (503); a write's answer is 500: it may or may not survive.
    const unsigned version = response.version();
    const auto method = info.request.method();
    const bool read_only = method == boost::beast::http::verb::get || method == boost::beast::http::verb::head;
    response = http::Response();
    response.version(version);
    ApiError error = read_only ? ApiError::ServerBusy() : ApiError::InternalError();
    error.cause = "not durable: " + status.ToString();
    LogServerError(info.request_id, "awaiting durability", error);
    WriteRefusal(info.request_id, RequestHeader(info.request, "Accept"), error, response);
    response.set("x-ms-request-id", info.request_id);
  }
  Record(info, response);
  pending.done(std::move(response));
  // Last: once the count is zero the dispatcher may be gone.
  std::lock_guard lock(held_mu_);
  if (held_.fetch_sub(1, std::memory_order_relaxed) == 1) held_cv_.notify_all();
}

}  // namespace tablestone::api
