// The HTTP front end's limits and timeouts against a real Listener
// (listener_test_util.h): body and header limits, framing errors, read, idle
// and first-byte timeouts, lingering after an early refusal, unauthenticated
// admission, connection caps, and the drain at Stop.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/server/http/listener_test_util.h"

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;
using testing::ListenerTest;
using testing::RawClient;
using testing::RawResponse;

TEST_F(ListenerTest, BodyOverLimitGets413FromHandlerAndCloses) {
  HttpOptions options;
  options.body_limit = 1024;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\n" + std::string(2048, 'a')));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.body, "RequestBodyTooLarge");
  EXPECT_EQ(r.Header("connection"), "close");
  EXPECT_TRUE(client.WaitClosed(3s));
  EXPECT_TRUE(handler_.methods().empty());
  EXPECT_EQ(handler_.transport_errors(), 1);
}

TEST_F(ListenerTest, ChunkedBodyOverLimitGets413) {
  HttpOptions options;
  options.body_limit = 1024;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  std::string chunk(800, 'b');
  ASSERT_TRUE(client.Send("POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "320\r\n" + chunk + "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n"));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 413);
  EXPECT_TRUE(client.WaitClosed(3s));
}

TEST_F(ListenerTest, ChunkedBodyWithinLimitIsDelivered) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.body, "POST /t 5");
}

TEST_F(ListenerTest, OversizedHeadersAreRefusedAndClosed) {
  HttpOptions options;
  options.header_limit = 1024;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/t", "X-Big: " + std::string(4096, 'h') + "\r\n")));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_GE(r.status, 400);
  EXPECT_LT(r.status, 500);
  EXPECT_EQ(r.body, "HeaderTooLarge");
  EXPECT_TRUE(client.WaitClosed(3s));
}

TEST_F(ListenerTest, MalformedRequestGets400AndCloses) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("GET /t HTTP/1.1\r\nHost: x\r\nContent-Length: banana\r\n\r\n"));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "BadRequest");
  EXPECT_TRUE(client.WaitClosed(3s));
}

TEST_F(ListenerTest, SlowlorisConnectionIsClosedAfterReadTimeout) {
  HttpOptions options;
  options.read_timeout = 300ms;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  auto begin = std::chrono::steady_clock::now();
  // Keep trickling header bytes faster than any per-read timeout would need.
  ASSERT_TRUE(client.Send("GET /t HTTP/1.1\r\n"));
  bool closed = false;
  for (int i = 0; i < 30 && !closed; ++i) {
    if (!client.Send("X-A: b\r\n")) {
      closed = true;
      break;
    }
    closed = client.WaitClosed(100ms);
  }
  auto elapsed = std::chrono::steady_clock::now() - begin;
  EXPECT_TRUE(closed);
  EXPECT_LT(elapsed, 2s);
  EXPECT_TRUE(handler_.methods().empty());
}

// A request whole in the buffer is read without a deadline (DoReadHeader's fast path); the next
// request whose body has to be waited for gets a fresh one: not the expiry a write or an earlier
// request left on the stream's timers (long past here), and not none.
TEST_F(ListenerTest, ABodyReadAfterRequestsReadWholeHasItsOwnReadDeadline) {
  HttpOptions options;
  options.read_timeout = 1s;
  options.idle_timeout = 10s;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Send(Get("/fast")));
    EXPECT_EQ(client.ReadResponse().body, "GET /fast 0");
  }
  ASSERT_TRUE(client.Send(Get("/big")));  // larger than the socket buffer: its write waits, under a deadline
  std::this_thread::sleep_for(100ms);
  RawResponse big = client.ReadResponse();
  ASSERT_TRUE(big.ok);
  ASSERT_EQ(big.body.size(), 8u << 20);
  std::this_thread::sleep_for(1200ms);  // every deadline set so far has passed
  // Headers and half the body, the rest within the read timeout: served.
  ASSERT_TRUE(client.Send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab"));
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(client.Send("cd"));
  RawResponse slow = client.ReadResponse();
  ASSERT_TRUE(slow.ok);
  EXPECT_EQ(slow.body, "POST /slow 4");
  // Headers and half the body, and nothing more: closed at the read deadline.
  const auto begin = std::chrono::steady_clock::now();
  ASSERT_TRUE(client.Send("POST /stuck HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab"));
  EXPECT_TRUE(client.WaitClosed(5s));
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  EXPECT_GE(elapsed, 800ms);
  EXPECT_LT(elapsed, 3s);
}

TEST_F(ListenerTest, IdleConnectionIsClosedAfterIdleTimeout) {
  HttpOptions options;
  options.idle_timeout = 200ms;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/a")));
  ASSERT_TRUE(client.ReadResponse().ok);
  EXPECT_TRUE(client.WaitClosed(2s));
}

// The idle deadline counts from the last answer, not from the connection's first wait: the
// session's idle timer, armed once, fires before a deadline that has moved on and is re-armed.
TEST_F(ListenerTest, IdleTimeoutCountsFromTheLastAnswer) {
  HttpOptions options;
  options.first_byte_timeout = 500ms;
  options.idle_timeout = 500ms;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  for (int i = 0; i < 4; ++i) {  // 1 s in all: twice the timeout counted from the first wait
    ASSERT_TRUE(client.Send(Get("/a")));
    ASSERT_TRUE(client.ReadResponse().ok);
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_TRUE(client.Send(Get("/b")));
  EXPECT_EQ(client.ReadResponse().body, "GET /b 0");
  const auto answered = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.WaitClosed(3s));
  EXPECT_GE(std::chrono::steady_clock::now() - answered, 300ms);
}

TEST_F(ListenerTest, GracefulStopFinishesInFlightRequest) {
  HttpOptions options;
  options.drain_timeout = 5s;
  StartServer(options);
  RawClient busy;
  RawClient idle;
  ASSERT_TRUE(busy.Connect(listener_->port()));
  ASSERT_TRUE(idle.Connect(listener_->port()));
  ASSERT_TRUE(idle.Send(Get("/a")));
  ASSERT_TRUE(idle.ReadResponse().ok);
  ASSERT_TRUE(busy.Send(Get("/slow")));
  for (int i = 0; i < 200 && handler_.in_handler() == 0; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(handler_.in_handler(), 1);

  auto stopped = std::async(std::launch::async, [&] { listener_->Stop(); });
  // The idle keep-alive connection is closed without waiting for the drain.
  EXPECT_TRUE(idle.WaitClosed(2s));
  RawResponse r = busy.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "GET /slow 0");
  EXPECT_EQ(r.Header("connection"), "close");
  EXPECT_TRUE(busy.WaitClosed(3s));
  EXPECT_EQ(stopped.wait_for(3s), std::future_status::ready);
  EXPECT_EQ(listener_->connections(), 0u);

  RawClient late;
  EXPECT_FALSE(late.Connect(listener_->port()));
}

TEST_F(ListenerTest, StopForceClosesAfterDrainTimeout) {
  HttpOptions options;
  options.drain_timeout = 100ms;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("GET /t HTTP/1.1\r\n"));  // a request that never completes
  std::this_thread::sleep_for(50ms);
  auto begin = std::chrono::steady_clock::now();
  listener_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 1500ms);
  EXPECT_TRUE(client.WaitClosed(1s));
}

TEST_F(ListenerTest, HandlerExceptionBecomes500AndConnectionSurvives) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/throw")));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "InternalError");
  ASSERT_TRUE(client.Send(Get("/after")));
  EXPECT_EQ(client.ReadResponse().body, "GET /after 0");
}

TEST_F(ListenerTest, NoContentCarriesExplicitZeroLength) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/nocontent") + Get("/next")));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.Header("content-length"), "0");
  EXPECT_EQ(client.ReadResponse().body, "GET /next 0");
}

TEST_F(ListenerTest, Http10WithoutKeepAliveClosesAfterResponse) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("GET /old HTTP/1.0\r\n\r\n"));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.body, "GET /old 0");
  EXPECT_TRUE(client.WaitClosed(2s));
}

// RFC 9112 section 6.1: Transfer-Encoding in an HTTP/1.0 request is faulty
// framing (it was decoded and the connection kept alive, issue 30 item 9).
TEST_F(ListenerTest, Http10WithTransferEncodingIsRefusedAndClosed) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("POST /old HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "3\r\nabc\r\n0\r\n\r\n"));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "BadRequest");
  EXPECT_TRUE(client.WaitClosed(3s));
  EXPECT_TRUE(handler_.methods().empty());
}

// Issue 36, item 1: after an early 413 the session reads and drops the rest of
// the body, so a client that goes on writing it (as every SDK does) reads the
// 413 instead of meeting EPIPE or a reset. Before, lingering stopped after
// 1 MiB and the close reset the connection.
TEST_F(ListenerTest, EarlyRefusalLingersUntilTheClientHasSentItsBody) {
  HttpOptions options;
  options.body_limit = 1024;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  constexpr size_t kBody = 5 << 20;
  ASSERT_TRUE(client.Send("PUT /t HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(kBody) + "\r\n\r\n"));
  const std::string chunk(64 << 10, 'x');
  for (size_t sent = 0; sent < kBody; sent += chunk.size()) {
    ASSERT_TRUE(client.Send(chunk)) << "the server reset the connection after " << sent << " bytes";
    if (sent % (1 << 20) == 0) std::this_thread::sleep_for(20ms);  // slowly-ish
  }
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.Header("connection"), "close");
  EXPECT_TRUE(client.WaitClosed(3s));
  EXPECT_TRUE(handler_.methods().empty());
}

// ...but for a bounded number of bytes: then the connection closes.
TEST_F(ListenerTest, LingeringStopsAfterItsByteLimit) {
  HttpOptions options;
  options.body_limit = 1024;
  options.linger_max_bytes = 256 << 10;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("PUT /t HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"));
  const std::string chunk(64 << 10, 'x');
  bool cut = false;
  for (int i = 0; i < 2000 && !cut; ++i) cut = !client.Send(chunk);  // at most 128 MiB
  EXPECT_TRUE(cut);
}

// A route that authenticates only in Handle() (AdmitHeaders narrows the body):
// no "100 Continue", and a body over its limit is refused, declared or chunked.
TEST_F(ListenerTest, UnauthenticatedAdmissionReadsLittleAndSendsNoContinue) {
  StartServer();
  {
    RawClient client;
    ASSERT_TRUE(client.Connect(listener_->port()));
    ASSERT_TRUE(client.Send("PUT /unauth HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
    RawResponse early = client.ReadResponse(300ms);
    EXPECT_FALSE(early.ok) << early.status;  // nothing: no interim response
    ASSERT_TRUE(client.Send("hello"));
    RawResponse r = client.ReadResponse();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.body, "PUT /unauth 5");
  }
  {
    RawClient client;
    ASSERT_TRUE(client.Connect(listener_->port()));
    ASSERT_TRUE(client.Send("PUT /unauth HTTP/1.1\r\nHost: x\r\nContent-Length: 4194304\r\n\r\nabc"));
    RawResponse r = client.ReadResponse();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.status, 413);
    EXPECT_TRUE(client.WaitClosed(3s));
  }
  {
    RawClient client;
    ASSERT_TRUE(client.Connect(listener_->port()));
    ASSERT_TRUE(client.Send("PUT /unauth HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
    // After the headers have been read alone (a body that comes with them is parsed at once).
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(client.Send("8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"));
    RawResponse r = client.ReadResponse();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.status, 413);
  }
  // Other targets keep the listener's limit and the interim response.
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n"));
  EXPECT_EQ(client.ReadResponse().status, 100);
  ASSERT_TRUE(client.Send(std::string(50, 'y')));
  EXPECT_EQ(client.ReadResponse().body, "PUT /x 50");
}

// Issue 30, item 12: one client address cannot hold every connection slot.
TEST_F(ListenerTest, ConnectionsFromOneAddressAreCappedAndOthersStillGetIn) {
  HttpOptions options;
  options.max_connections_per_address = 3;
  StartServer(options);
  std::vector<std::unique_ptr<RawClient>> hog;
  for (int i = 0; i < 3; ++i) {
    hog.push_back(std::make_unique<RawClient>());
    ASSERT_TRUE(hog.back()->Connect(listener_->port(), "127.0.0.2"));
    ASSERT_TRUE(hog.back()->Send(Get("/h")));
    ASSERT_TRUE(hog.back()->ReadResponse().ok);
  }
  RawClient fourth;
  ASSERT_TRUE(fourth.Connect(listener_->port(), "127.0.0.2"));
  EXPECT_TRUE(fourth.WaitClosed(2s));
  RawClient other;  // another address
  ASSERT_TRUE(other.Connect(listener_->port(), "127.0.0.1"));
  ASSERT_TRUE(other.Send(Get("/o")));
  EXPECT_EQ(other.ReadResponse().body, "GET /o 0");
  // A slot given back can be taken again.
  hog.pop_back();
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    RawClient again;
    ASSERT_TRUE(again.Connect(listener_->port(), "127.0.0.2"));
    served = again.Send(Get("/again")) && again.ReadResponse(200ms).ok;
    if (!served) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(served);
}

// A new connection that sends nothing is closed after first_byte_timeout;
// once it has been answered it waits the (longer) idle timeout.
TEST_F(ListenerTest, SilentNewConnectionIsClosedAtTheFirstByteDeadline) {
  HttpOptions options;
  options.first_byte_timeout = 200ms;
  options.idle_timeout = 5s;
  StartServer(options);
  RawClient silent;
  ASSERT_TRUE(silent.Connect(listener_->port()));
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.WaitClosed(3s));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 2s);
  RawClient pooled;
  ASSERT_TRUE(pooled.Connect(listener_->port()));
  ASSERT_TRUE(pooled.Send(Get("/a")));
  ASSERT_TRUE(pooled.ReadResponse().ok);
  EXPECT_FALSE(pooled.WaitClosed(600ms));  // still open past the first-byte deadline
  ASSERT_TRUE(pooled.Send(Get("/b")));
  EXPECT_EQ(pooled.ReadResponse().body, "GET /b 0");
}

TEST_F(ListenerTest, ConnectionsOverTheLimitAreClosed) {
  HttpOptions options;
  options.max_connections = 1;
  StartServer(options);
  RawClient first;
  ASSERT_TRUE(first.Connect(listener_->port()));
  ASSERT_TRUE(first.Send(Get("/a")));
  ASSERT_TRUE(first.ReadResponse().ok);
  RawClient second;
  ASSERT_TRUE(second.Connect(listener_->port()));  // the kernel accepts...
  EXPECT_TRUE(second.WaitClosed(2s));              // ...and we close it at once
  ASSERT_TRUE(first.Send(Get("/b")));
  EXPECT_EQ(first.ReadResponse().body, "GET /b 0");
}

}  // namespace
}  // namespace tablestone::http
