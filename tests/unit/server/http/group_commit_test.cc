// Group commit in the session (server/http/handler.h, "Group commit"): a
// response that may reflect a write that is not durable yet is held until the
// handler's MakeDurable() returns, one MakeDurable() covers the responses a
// thread produced in between, and a failed one turns them into 500s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/http/listener.h"
#include "tests/unit/server/http/raw_client.h"

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;
using testing::RawResponse;

// A storage stand-in: "/write..." makes a write visible (visible_ + 1) that
// only MakeDurable() makes durable; any other target reads. MakeDurable() can
// be held closed (to observe that responses wait) and made to fail.
class DurableHandler : public RequestHandler {
 public:
  void Handle(Request& request, const RequestContext&, Response& response) override {
    const std::string target(request.target());
    if (target.rfind("/write", 0) == 0) ++visible_;
    response.result(boost::beast::http::status::ok);
    response.body() = target;
  }
  void RenderTransportError(TransportError, const Request&, Response& response) override {
    response.result(boost::beast::http::status::internal_server_error);
    response.body() = "InternalError";
  }
  uint64_t DurabilityTicket() override { return visible_.load(); }
  bool IsDurable(uint64_t ticket) override { return ticket <= durable_.load(); }
  bool MakeDurable() override {
    const uint64_t visible = visible_.load();  // read before "writing the log", as the engine does
    {
      std::unique_lock lock(mu_);
      ++entered_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    if (delay_first_.exchange(false)) std::this_thread::sleep_for(100ms);
    ++calls_;
    uint64_t d = durable_.load();
    while (d < visible && !durable_.compare_exchange_weak(d, visible)) {
    }
    return !fail_.load();
  }

  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Waits until `n` MakeDurable() calls have started.
  bool WaitEntered(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return entered_ >= n; });
  }

  std::atomic<uint64_t> visible_{0};
  std::atomic<uint64_t> durable_{0};
  std::atomic<int> calls_{0};
  std::atomic<bool> fail_{false};
  std::atomic<bool> delay_first_{false};

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int entered_ = 0;
};

class GroupCommitTest : public ::testing::Test {
 protected:
  void StartServer(int threads) {
    HttpOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.threads = threads;
    listener_ = std::make_unique<Listener>(options, handler_);
    std::string error;
    ASSERT_TRUE(listener_->Start(&error)) << error;
  }
  void TearDown() override {
    handler_.Open();
    if (listener_) listener_->Stop();
  }
  static std::string Get(const std::string& target) {
    return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  }

  DurableHandler handler_;
  std::unique_ptr<Listener> listener_;
};

TEST_F(GroupCommitTest, ReadsWithNothingPendingAreSentWithoutALogWrite) {
  StartServer(1);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Send(Get("/read")));
    RawResponse r = client.ReadResponse();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.body, "/read");
  }
  EXPECT_EQ(handler_.calls_.load(), 0);
}

TEST_F(GroupCommitTest, WriteIsAnsweredOnlyAfterMakeDurable) {
  StartServer(1);
  handler_.Close();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/write1")));
  ASSERT_TRUE(handler_.WaitEntered(1));
  // The log write has started but not finished: nothing may reach the client.
  EXPECT_FALSE(client.ReadResponse(300ms).ok);
  EXPECT_TRUE(client.pending().empty());
  handler_.Open();
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "/write1");
  EXPECT_EQ(handler_.calls_.load(), 1);
  EXPECT_EQ(handler_.durable_.load(), 1u);
  // Durable now: a read on the same connection goes out at once.
  ASSERT_TRUE(client.Send(Get("/read")));
  EXPECT_EQ(client.ReadResponse().body, "/read");
  EXPECT_EQ(handler_.calls_.load(), 1);
}

TEST_F(GroupCommitTest, ReadThatMayReflectAnUndurableWriteWaitsToo) {
  // Two I/O threads; connections are assigned round-robin, so the writer and
  // the reader are served by different threads.
  StartServer(2);
  handler_.Close();
  RawClient writer, reader;
  ASSERT_TRUE(writer.Connect(listener_->port()));
  ASSERT_TRUE(reader.Connect(listener_->port()));
  ASSERT_TRUE(writer.Send(Get("/write1")));
  ASSERT_TRUE(handler_.WaitEntered(1));
  // The write is visible (a real read could return it) but not durable.
  ASSERT_TRUE(reader.Send(Get("/read")));
  ASSERT_TRUE(handler_.WaitEntered(2));
  EXPECT_FALSE(reader.ReadResponse(300ms).ok);
  handler_.Open();
  EXPECT_EQ(writer.ReadResponse().body, "/write1");
  EXPECT_EQ(reader.ReadResponse().body, "/read");
}

TEST_F(GroupCommitTest, OneLogWriteCoversTheRequestsOfABatch) {
  StartServer(1);
  // The first log write is slow; the other clients' requests arrive while it
  // runs and are answered together by the next one.
  handler_.delay_first_ = true;
  constexpr int kClients = 20;
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<RawClient>());
    ASSERT_TRUE(clients.back()->Connect(listener_->port()));
    // A read first, so every connection is accepted and waiting for its next
    // request (as under load) before the writes are sent.
    ASSERT_TRUE(clients.back()->Send(Get("/read")));
    ASSERT_TRUE(clients.back()->ReadResponse().ok);
  }
  for (int i = 0; i < kClients; ++i) ASSERT_TRUE(clients[i]->Send(Get("/write" + std::to_string(i))));
  for (int i = 0; i < kClients; ++i) {
    RawResponse r = clients[i]->ReadResponse();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.body, "/write" + std::to_string(i));
  }
  EXPECT_EQ(handler_.visible_.load(), static_cast<uint64_t>(kClients));
  EXPECT_GE(handler_.calls_.load(), 1);
  EXPECT_LE(handler_.calls_.load(), kClients / 4) << "writes were not grouped";
}

TEST_F(GroupCommitTest, FailedLogWriteAnswers500AndTheConnectionGoesOn) {
  StartServer(1);
  handler_.fail_ = true;
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/write1")));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "InternalError");
  EXPECT_NE(r.Header("connection"), "close");
  handler_.fail_ = false;
  ASSERT_TRUE(client.Send(Get("/write2")));
  r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "/write2");
}

}  // namespace
}  // namespace tablestone::http
