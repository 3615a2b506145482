// An I/O thread's turn as the session keeps it (server/http/handler.h,
// ResponseSink::InTurn and AfterTurn), for dispatch tests: a turn is open on
// the test's thread until End(), which runs the work the handler left for
// the end of the turn.
#pragma once

#include <functional>
#include <future>
#include <thread>
#include <utility>
#include <vector>

#include "server/http/handler.h"

namespace tablestone::api::testing {

struct Turn {
  std::thread::id thread = std::this_thread::get_id();
  bool open = true;
  std::vector<std::function<void()>> after;
  void End() {
    open = false;
    for (auto& work : after) work();
  }
};

// A session's sink in `turn`: InTurn() on the turn's thread while it is
// open; records how the answer was to be delivered.
class TurnSink final : public http::ResponseSink {
 public:
  explicit TurnSink(Turn* turn) : turn_(turn) {}
  void Complete(http::Response&& response) override { CompleteWith(std::move(response), http::Delivery::kSend); }
  void CompleteWith(http::Response&& response, http::Delivery how) override {
    delivery = how;
    on_thread = std::this_thread::get_id();
    promise_.set_value(std::move(response));
  }
  bool InTurn() const override { return turn_->open && std::this_thread::get_id() == turn_->thread; }
  bool AfterTurn(std::function<void()> work) override {
    if (!InTurn()) return false;
    turn_->after.push_back(std::move(work));
    return true;
  }
  std::future<http::Response> Future() { return promise_.get_future(); }

  http::Delivery delivery = http::Delivery::kSend;  // read after the future is ready
  std::thread::id on_thread;                         // where the answer came from; the same

 private:
  Turn* turn_;
  std::promise<http::Response> promise_;
};

}  // namespace tablestone::api::testing
