// The session with a handler that answers later from another thread
// (server/http/handler.h, Completion): responses arrive in order, a client
// that leaves while its request waits is seen as Cancelled(), a dropped
// Completion is answered 500, a graceful stop waits for a pending answer, and
// the fault-injection deliveries close or reset the connection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/http/listener.h"
#include "tests/unit/server/http/raw_client.h"

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;
using testing::RawResponse;

// Parks every request's Completion; the test answers them from its own
// thread with Answer(). "/now" is answered inline; "/drop" drops the
// Completion (the session must answer 500).
class ParkingHandler : public RequestHandler {
 public:
  void Handle(const Request& request, const RequestContext&, Completion done) override {
    const std::string target(request.target());
    if (target == "/now") {
      Response r;
      r.result(200);
      r.body() = "now";
      return done(std::move(r));
    }
    if (target == "/drop") return;  // `done` is destroyed here
    if (target == "/turn") {
      // Answered from the work left for the end of the I/O thread's turn:
      // says whether it ran there, after Handle() returned.
      const std::thread::id io = std::this_thread::get_id();
      const bool in_turn = done.InTurn();
      auto held = std::make_shared<Completion>(std::move(done));
      handling_turn_ = true;
      const bool took = held->AfterTurn([this, held, io] {
        Response r;
        r.result(200);
        r.body() = std::this_thread::get_id() == io && !handling_turn_ && !held->InTurn() ? "after the turn" : "wrong";
        (*held)(std::move(r));
      });
      handling_turn_ = false;
      if (!in_turn || !took) {
        Response r;
        r.result(500);
        r.body() = "not in its turn";
        (*held)(std::move(r));
      }
      return;
    }
    if (target == "/close" || target == "/reset") {  // fault injection's deliveries (handler.h, Delivery)
      Response r;
      r.result(200);
      r.body() = std::string(1000, 'x');
      return done(std::move(r), target == "/close" ? Delivery::kCloseWithoutResponse : Delivery::kResetMidBody);
    }
    std::lock_guard lock(mu_);
    parked_.push_back(Parked{target, std::move(done)});
    cv_.notify_all();
  }
  void RenderTransportError(TransportError error, const Request&, Response& response) override {
    response.result(error == TransportError::kInternalError ? 500 : 400);
    response.body() = "transport";
  }

  // Waits until `n` requests are parked.
  bool WaitParked(size_t n, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return parked_.size() >= n; });
  }
  bool FrontCancelled() {
    std::lock_guard lock(mu_);
    return !parked_.empty() && parked_.front().done.Cancelled();
  }
  // Whether the oldest parked request's Completion takes work for the end of
  // a turn here (the test's thread is not its I/O thread).
  bool FrontTakesWorkHere() {
    std::lock_guard lock(mu_);
    return !parked_.empty() && (parked_.front().done.InTurn() || parked_.front().done.AfterTurn([] {}));
  }
  // Answers the oldest parked request from a new thread, as an executor lane would.
  void AnswerFromAnotherThread() {
    Parked p;
    {
      std::lock_guard lock(mu_);
      p = std::move(parked_.front());
      parked_.pop_front();
    }
    std::thread([p = std::move(p)]() mutable {
      Response r;
      r.result(200);
      r.body() = "late " + p.target;
      p.done(std::move(r));
    }).join();
  }

 private:
  struct Parked {
    std::string target;
    Completion done;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Parked> parked_;
  bool handling_turn_ = false;  // inside Handle("/turn"); the I/O thread only
};

class AsyncSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.threads = 1;  // one I/O thread: a parked request must not stall the others
    options.drain_timeout = 3000ms;
    listener_ = std::make_unique<Listener>(options, handler_);
    std::string error;
    ASSERT_TRUE(listener_->Start(&error)) << error;
  }
  void TearDown() override {
    if (listener_) listener_->Stop();
  }
  static std::string Get(const std::string& target) { return "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"; }

  ParkingHandler handler_;
  std::unique_ptr<Listener> listener_;
};

TEST_F(AsyncSessionTest, AnswerFromAnotherThreadIsSentAndOthersAreServedMeanwhile) {
  RawClient slow, fast;
  ASSERT_TRUE(slow.Connect(listener_->port()));
  ASSERT_TRUE(slow.Send(Get("/slow")));
  ASSERT_TRUE(handler_.WaitParked(1));
  // The only I/O thread is free: another connection is answered at once.
  ASSERT_TRUE(fast.Connect(listener_->port()));
  ASSERT_TRUE(fast.Send(Get("/now")));
  RawResponse f = fast.ReadResponse();
  ASSERT_TRUE(f.ok);
  EXPECT_EQ(f.body, "now");
  handler_.AnswerFromAnotherThread();
  RawResponse s = slow.ReadResponse();
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.body, "late /slow");
  // Keep-alive goes on.
  ASSERT_TRUE(slow.Send(Get("/now")));
  EXPECT_EQ(slow.ReadResponse().body, "now");
}

TEST_F(AsyncSessionTest, WorkLeftForTheEndOfTheTurnRunsOnTheIoThreadAfterHandle) {
  RawClient c;
  ASSERT_TRUE(c.Connect(listener_->port()));
  ASSERT_TRUE(c.Send(Get("/turn")));
  RawResponse r = c.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "after the turn");
  // Outside Handle() and off the I/O thread a Completion takes no such work.
  ASSERT_TRUE(c.Send(Get("/slow")));
  ASSERT_TRUE(handler_.WaitParked(1));
  EXPECT_FALSE(handler_.FrontTakesWorkHere());
  handler_.AnswerFromAnotherThread();
  EXPECT_EQ(c.ReadResponse().body, "late /slow");
}

TEST_F(AsyncSessionTest, PipelinedRequestsWaitTheirTurnAndAreNotCancelled) {
  RawClient c;
  ASSERT_TRUE(c.Connect(listener_->port()));
  ASSERT_TRUE(c.Send(Get("/a") + Get("/b")));
  ASSERT_TRUE(handler_.WaitParked(1));
  std::this_thread::sleep_for(100ms);  // the watch sees the pipelined bytes
  EXPECT_FALSE(handler_.FrontCancelled());
  handler_.AnswerFromAnotherThread();
  ASSERT_TRUE(handler_.WaitParked(1));
  handler_.AnswerFromAnotherThread();
  EXPECT_EQ(c.ReadResponse().body, "late /a");
  EXPECT_EQ(c.ReadResponse().body, "late /b");
}

TEST_F(AsyncSessionTest, ClientThatLeavesIsSeenAsCancelled) {
  {
    RawClient c;
    ASSERT_TRUE(c.Connect(listener_->port()));
    ASSERT_TRUE(c.Send(Get("/gone")));
    ASSERT_TRUE(handler_.WaitParked(1));
    EXPECT_FALSE(handler_.FrontCancelled());
    c.Close();
  }
  bool cancelled = false;
  for (int i = 0; i < 500 && !(cancelled = handler_.FrontCancelled()); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(cancelled);
  handler_.AnswerFromAnotherThread();  // dropped quietly
  RawClient next;
  ASSERT_TRUE(next.Connect(listener_->port()));
  ASSERT_TRUE(next.Send(Get("/now")));
  EXPECT_EQ(next.ReadResponse().body, "now");
}

TEST_F(AsyncSessionTest, DeliveriesCloseOrResetTheConnection) {
  RawClient closed;
  ASSERT_TRUE(closed.Connect(listener_->port()));
  ASSERT_TRUE(closed.Send(Get("/close")));
  RawResponse c = closed.ReadResponse(2000ms);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.status, 0);  // not a byte of the response
  EXPECT_TRUE(closed.pending().empty());
  RawClient reset;
  ASSERT_TRUE(reset.Connect(listener_->port()));
  ASSERT_TRUE(reset.Send(Get("/reset")));
  RawResponse r = reset.ReadResponse(2000ms);
  EXPECT_FALSE(r.ok);  // cut: never the whole body
  EXPECT_LT(r.body.size() + reset.pending().size(), 1000u);
  // The server goes on serving other connections.
  RawClient next;
  ASSERT_TRUE(next.Connect(listener_->port()));
  ASSERT_TRUE(next.Send(Get("/now")));
  EXPECT_EQ(next.ReadResponse().body, "now");
}

TEST_F(AsyncSessionTest, DroppedCompletionIsAnswered500) {
  RawClient c;
  ASSERT_TRUE(c.Connect(listener_->port()));
  ASSERT_TRUE(c.Send(Get("/drop")));
  RawResponse r = c.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "transport");
}

TEST_F(AsyncSessionTest, GracefulStopWaitsForAPendingAnswer) {
  RawClient c;
  ASSERT_TRUE(c.Connect(listener_->port()));
  ASSERT_TRUE(c.Send(Get("/pending")));
  ASSERT_TRUE(handler_.WaitParked(1));
  std::thread stopper([&] { listener_->Stop(); });
  std::this_thread::sleep_for(200ms);
  handler_.AnswerFromAnotherThread();
  RawResponse r = c.ReadResponse();
  stopper.join();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.body, "late /pending");
  EXPECT_EQ(r.Header("connection"), "close");
}

}  // namespace
}  // namespace tablestone::http
