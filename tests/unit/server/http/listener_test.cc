// End-to-end tests of the HTTP front end: a real Listener on 127.0.0.1:0 with
// a small RequestHandler, driven through raw sockets.
#include "server/http/listener.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/http/session.h"
#include "server/http/tls_context.h"
#include "tests/unit/server/http/raw_client.h"
#include "tests/unit/server/http/test_certificate.h"

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;
using testing::RawResponse;
using testing::TestCertificate;

// A handler that answers inline, as the point reads of server/api do; a throw
// drops the Completion, which the session answers with a 500.
class SyncHandler : public RequestHandler {
 public:
  void Handle(const Request& request, const RequestContext& context, Completion done) override {
    Response response;
    HandleSync(request, context, response);
    done(std::move(response));
  }
  virtual void HandleSync(const Request& request, const RequestContext& context, Response& response) = 0;
};

// Echoes what it saw; a few targets trigger special behaviour.
class TestHandler : public SyncHandler {
 public:
  void HandleSync(const Request& request, const RequestContext& context, Response& response) override {
    std::string target(request.target());
    {
      std::lock_guard<std::mutex> lock(mu_);
      methods_.emplace_back(request.method_string());
      remote_ips_.push_back(context.remote_ip);
    }
    ++in_handler_;
    if (target == "/slow") std::this_thread::sleep_for(400ms);
    --in_handler_;
    if (target == "/throw") throw std::runtime_error("boom");
    if (target == "/big") {  // far more than a socket buffer: the write completes asynchronously
      response.result(boost::beast::http::status::ok);
      response.body() = std::string(8 << 20, 'b');
      response.body().back() = 'e';
      return;
    }
    if (target == "/nocontent") {
      response.result(boost::beast::http::status::no_content);
      return;
    }
    response.result(boost::beast::http::status::ok);
    response.set(boost::beast::http::field::content_type, "text/plain");
    response.body() = std::string(request.method_string()) + " " + target + " " +
                      std::to_string(request.body().size());
  }

  // Targets under /unauth play a route that authenticates only in Handle():
  // a body of at most 10 bytes, and no "100 Continue".
  bool AdmitHeaders(const Request& header, const RequestContext&, Response&, BodyAdmission& body) override {
    if (std::string_view(header.target()).rfind("/unauth", 0) == 0) {
      body.limit = 10;
      body.send_continue = false;
    }
    return true;
  }

  void RenderTransportError(TransportError error, const Request&, Response& response) override {
    ++transport_errors_;
    switch (error) {
      case TransportError::kBodyTooLarge:
        response.result(boost::beast::http::status::payload_too_large);
        response.body() = "RequestBodyTooLarge";
        break;
      case TransportError::kHeaderTooLarge:
        response.result(boost::beast::http::status::request_header_fields_too_large);
        response.body() = "HeaderTooLarge";
        break;
      case TransportError::kBadRequest:
        response.result(boost::beast::http::status::bad_request);
        response.body() = "BadRequest";
        break;
      case TransportError::kInternalError:
        response.result(boost::beast::http::status::internal_server_error);
        response.body() = "InternalError";
        break;
    }
  }

  std::vector<std::string> methods() {
    std::lock_guard<std::mutex> lock(mu_);
    return methods_;
  }
  std::vector<std::string> remote_ips() {
    std::lock_guard<std::mutex> lock(mu_);
    return remote_ips_;
  }
  int transport_errors() const { return transport_errors_.load(); }
  int in_handler() const { return in_handler_.load(); }

 private:
  std::mutex mu_;
  std::vector<std::string> methods_;
  std::vector<std::string> remote_ips_;
  std::atomic<int> transport_errors_{0};
  std::atomic<int> in_handler_{0};
};

class ListenerTest : public ::testing::Test {
 protected:
  void StartServer(HttpOptions options = {}) {
    options.address = "127.0.0.1";
    options.port = 0;
    options.threads = 2;
    listener_ = std::make_unique<Listener>(options, handler_);
    std::string error;
    ASSERT_TRUE(listener_->Start(&error)) << error;
    ASSERT_NE(listener_->port(), 0);
  }
  void TearDown() override {
    if (listener_) listener_->Stop();
  }

  static std::string Get(const std::string& target, const std::string& extra = "") {
    return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n" + extra + "\r\n";
  }

  TestHandler handler_;
  std::unique_ptr<Listener> listener_;
};

TEST_F(ListenerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/a")));
  RawResponse first = client.ReadResponse();
  ASSERT_TRUE(first.ok);
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "GET /a 0");
  EXPECT_EQ(first.Header("content-length"), "8");
  EXPECT_NE(first.Header("connection"), "close");

  ASSERT_TRUE(client.Send(Get("/b")));
  RawResponse second = client.ReadResponse();
  ASSERT_TRUE(second.ok);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.body, "GET /b 0");
  EXPECT_EQ(listener_->connections(), 1u);
  EXPECT_EQ(handler_.remote_ips().front(), "127.0.0.1");
}

TEST_F(ListenerTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/one") + "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + Get("/three")));
  EXPECT_EQ(client.ReadResponse().body, "GET /one 0");
  EXPECT_EQ(client.ReadResponse().body, "POST /two 3");
  EXPECT_EQ(client.ReadResponse().body, "GET /three 0");
}

TEST_F(ListenerTest, ResponseLargerThanTheSocketBufferArrivesWholeAndTheConnectionGoesOn) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/big") + Get("/after")));  // the second waits in the server's buffer
  // Let the server fill the socket buffer and wait for the reader.
  std::this_thread::sleep_for(100ms);
  RawResponse big = client.ReadResponse();
  ASSERT_TRUE(big.ok);
  EXPECT_EQ(big.status, 200);
  ASSERT_EQ(big.body.size(), 8u << 20);
  EXPECT_EQ(big.body.back(), 'e');
  EXPECT_EQ(big.body.find_first_not_of('b'), big.body.size() - 1);
  EXPECT_EQ(client.ReadResponse().body, "GET /after 0");
}

// ---- HTTPS (HttpOptions::tls) ----------------------------------------------------------------

class TlsListenerTest : public ListenerTest {
 protected:
  void StartTls(HttpOptions options = {}) {
    std::string error;
    options.tls = MakeTlsContext(cert_.files(), &error);
    ASSERT_TRUE(options.tls) << error;
    StartServer(options);
  }
  TestCertificate cert_;
};

// Plain HTTP sent to the HTTPS port: a plain-text 400 that says why, then the connection closes; the
// handler never sees it.
TEST_F(TlsListenerTest, PlainHttpGetsA400ThatSaysWhyAndTheConnectionCloses) {
  StartTls();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/x")));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Header("connection"), "close");
  EXPECT_EQ(r.body.rfind("The plain HTTP request was sent to HTTPS port", 0), 0u) << r.body;
  EXPECT_TRUE(client.WaitClosed(3s));
  EXPECT_TRUE(handler_.methods().empty());
}

// Issue 30, item 12: a TLS connection that never completes its handshake
// (silent, or stalled after its first record byte) is closed at the
// handshake deadline, not after the 30 s read timeout.
TEST_F(TlsListenerTest, ConnectionThatNeverHandshakesIsClosedAtTheHandshakeDeadline) {
  HttpOptions options;
  options.handshake_timeout = 200ms;
  StartTls(options);
  RawClient silent;
  ASSERT_TRUE(silent.Connect(listener_->port()));
  RawClient stalled;
  ASSERT_TRUE(stalled.Connect(listener_->port()));
  ASSERT_TRUE(stalled.Send(std::string("\x16\x03\x01\x02\x00", 5)));  // a ClientHello record's header only
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(silent.WaitClosed(3s));
  EXPECT_TRUE(stalled.WaitClosed(3s));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 2500ms);
}

// Bodies far beyond one TLS record both ways, on one kept-alive connection: an 8 MiB response (a
// response past the first record was once cut after its head), a 100 KiB request body, then a small
// request.
TEST_F(TlsListenerTest, LargeBodiesCrossTheTlsStreamWhole) {
  StartTls();
  namespace bhttp = boost::beast::http;
  boost::asio::io_context io;
  boost::asio::ssl::context client_tls(boost::asio::ssl::context::tls_client);
  client_tls.set_verify_mode(boost::asio::ssl::verify_none);
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream(io, client_tls);
  stream.next_layer().connect({boost::asio::ip::make_address("127.0.0.1"), listener_->port()});
  // A response that stops short fails the read after 10 s instead of hanging the test.
  timeval limit{10, 0};
  setsockopt(stream.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  stream.handshake(boost::asio::ssl::stream_base::client);
  boost::beast::flat_buffer buffer;
  auto exchange = [&](bhttp::verb method, const std::string& target, std::string body) {
    bhttp::request<bhttp::string_body> request{method, target, 11};
    request.set(bhttp::field::host, "127.0.0.1");
    request.body() = std::move(body);
    request.prepare_payload();
    bhttp::write(stream, request);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(16 << 20);
    bhttp::read(stream, buffer, parser);
    return parser.release();
  };
  auto big = exchange(bhttp::verb::get, "/big", "");
  EXPECT_EQ(big.result_int(), 200);
  ASSERT_EQ(big.body().size(), 8u << 20);
  EXPECT_EQ(big.body().back(), 'e');
  EXPECT_EQ(exchange(bhttp::verb::post, "/upload", std::string(100 << 10, 'u')).body(), "POST /upload 102400");
  EXPECT_EQ(exchange(bhttp::verb::get, "/after", "").body(), "GET /after 0");
}

TEST_F(ListenerTest, LongPipelinedBurstIsAnsweredInOrder) {
  // Responses are written synchronously when the socket takes them, and the
  // requests already buffered are continued through a post (not from inside
  // the write): many buffered reads' worth of requests, all in order.
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  constexpr int kRequests = 20000;
  std::string burst;
  for (int i = 0; i < kRequests; ++i) burst += Get("/p" + std::to_string(i));
  std::thread sender([&] { EXPECT_TRUE(client.Send(burst)); });
  int in_order = 0;
  for (int i = 0; i < kRequests; ++i) {
    RawResponse r = client.ReadResponse();
    if (!r.ok) break;
    if (r.body == "GET /p" + std::to_string(i) + " 0") ++in_order;
  }
  sender.join();
  EXPECT_EQ(in_order, kRequests);
}

TEST_F(ListenerTest, MergeMethodReachesTheHandler) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("MERGE /acct/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nHost: x\r\n"
                          "If-Match: *\r\nContent-Length: 2\r\n\r\n{}"));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "MERGE /acct/t(PartitionKey='p',RowKey='r') 2");
  ASSERT_EQ(handler_.methods().size(), 1u);
  EXPECT_EQ(handler_.methods()[0], "MERGE");
}

TEST_F(ListenerTest, ExpectContinueGetsInterimResponseBeforeBody) {
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send("PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  RawResponse interim = client.ReadResponse();
  ASSERT_TRUE(interim.ok);
  EXPECT_EQ(interim.status, 100);
  EXPECT_TRUE(handler_.methods().empty());  // the handler waits for the body
  ASSERT_TRUE(client.Send("hello"));
  RawResponse final_response = client.ReadResponse();
  ASSERT_TRUE(final_response.ok);
  EXPECT_EQ(final_response.status, 200);
  EXPECT_EQ(final_response.body, "PUT /x 5");
}

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

TEST_F(ListenerTest, AccessLogLineHasMethodTargetStatusBytesAndLatency) {
  auto out = std::make_shared<std::ostringstream>();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*out);
  auto logger = std::make_shared<spdlog::logger>("access", sink);
  logger->set_pattern("%v");
  spdlog::register_logger(logger);
  StartServer();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/logged?x=1")));
  RawResponse r = client.ReadResponse();
  ASSERT_TRUE(r.ok);
  listener_->Stop();
  spdlog::drop("access");
  std::string line = out->str();
  EXPECT_NE(line.find("127.0.0.1 \"GET /logged?x=1\" 200 "), std::string::npos) << line;
  EXPECT_NE(line.find("us\n"), std::string::npos) << line;
}

TEST_F(ListenerTest, AccessLogDisabledWritesNothing) {
  auto out = std::make_shared<std::ostringstream>();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*out);
  spdlog::register_logger(std::make_shared<spdlog::logger>("access", sink));
  HttpOptions options;
  options.access_log = false;
  StartServer(options);
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  ASSERT_TRUE(client.Send(Get("/quiet")));
  ASSERT_TRUE(client.ReadResponse().ok);
  listener_->Stop();
  spdlog::drop("access");
  EXPECT_TRUE(out->str().empty()) << out->str();
}

TEST(ListenerStartTest, PortInUseIsReportedNotThrown) {
  TestHandler handler;
  HttpOptions options;
  options.port = 0;
  options.threads = 1;
  Listener first(options, handler);
  std::string error;
  ASSERT_TRUE(first.Start(&error)) << error;
  options.port = first.port();
  Listener second(options, handler);
  EXPECT_FALSE(second.Start(&error));
  EXPECT_NE(error.find("cannot listen on 127.0.0.1:"), std::string::npos) << error;
}

TEST(ListenerStartTest, BadAddressIsReported) {
  TestHandler handler;
  HttpOptions options;
  options.address = "not-an-ip";
  Listener listener(options, handler);
  std::string error;
  EXPECT_FALSE(listener.Start(&error));
  EXPECT_NE(error.find("not-an-ip"), std::string::npos) << error;
}

// The session writes head + body itself; the bytes must be Beast's.
std::string BeastBytes(const Response& response) {
  std::ostringstream os;
  os << response;  // Beast's serializer
  return os.str();
}

std::string OurBytes(const Response& response) {
  std::string out = "prefix:";  // appends, never overwrites
  SerializeResponseHead(response, &out);
  EXPECT_EQ(out.substr(0, 7), "prefix:");
  return out.substr(7) + response.body();
}

TEST(SerializeResponseHeadTest, MatchesBeastSerializer) {
  std::vector<Response> cases;
  Response get;
  get.version(11);
  get.result(200);
  get.set(boost::beast::http::field::content_type, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
  get.set("X-Content-Type-Options", "nosniff");
  get.set("ETag", "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"");
  get.set("x-ms-request-id", "0f5e6d4c-1b2a-4c3d-8e9f-0a1b2c3d4e5f");
  get.set(boost::beast::http::field::date, "Sat, 21 Nov 2026 13:55:00 GMT");
  get.body() = R"({"PartitionKey":"p","RowKey":"r"})";
  get.content_length(get.body().size());
  get.keep_alive(true);
  cases.push_back(get);

  Response no_content;
  no_content.version(11);
  no_content.result(204);
  no_content.content_length(0);
  no_content.keep_alive(false);
  cases.push_back(no_content);

  Response old_client = get;  // HTTP/1.0 keep-alive adds "Connection: keep-alive"
  old_client.version(10);
  old_client.keep_alive(true);
  cases.push_back(old_client);

  Response custom_reason;
  custom_reason.version(11);
  custom_reason.result(404);
  custom_reason.reason("The specified resource does not exist.");
  custom_reason.set("x-ms-error-code", "ResourceNotFound");
  custom_reason.body() = "{}";
  custom_reason.content_length(2);
  cases.push_back(custom_reason);

  Response unknown_status;  // no standard reason phrase
  unknown_status.version(11);
  unknown_status.result(599);
  unknown_status.content_length(0);
  cases.push_back(unknown_status);

  Response no_headers;
  no_headers.version(11);
  no_headers.result(500);
  cases.push_back(no_headers);

  Response repeated;  // same name twice, empty value, insertion order kept
  repeated.version(11);
  repeated.result(201);
  repeated.insert("Vary", "Origin");
  repeated.insert("vary", "Accept");
  repeated.insert("X-Empty", "");
  repeated.body() = std::string(5000, 'x');
  repeated.content_length(5000);
  cases.push_back(repeated);

  for (const Response& r : cases) EXPECT_EQ(OurBytes(r), BeastBytes(r));
}

// DefaultThreadCount follows the affinity mask, as `taskset` sets it, and
// leaves one CPU to the clients (at least one thread). The mask is the
// calling thread's, so the test narrows a helper thread's mask.
TEST(DefaultThreadCountTest, LeavesOneCpuOfTheAffinityMaskToTheClients) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(DefaultThreadCount(), std::max(1, CPU_COUNT(&all) - 1));

  int first_cpu = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first_cpu < 0; ++cpu) {
    if (CPU_ISSET(cpu, &all)) first_cpu = cpu;
  }
  ASSERT_GE(first_cpu, 0);
  int pinned_count = 0;
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first_cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) pinned_count = DefaultThreadCount();
  });
  pinned.join();
  EXPECT_EQ(pinned_count, 1);
}

TEST(DefaultThreadCountTest, ListenerUsesItWhenThreadsIsZero) {
  class NoopHandler : public RequestHandler {
   public:
    void Handle(const Request&, const RequestContext&, Completion done) override { done(Response()); }
    void RenderTransportError(TransportError, const Request&, Response&) override {}
  } handler;
  HttpOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.threads = 0;
  Listener listener(options, handler);
  std::string error;
  ASSERT_TRUE(listener.Start(&error)) << error;
  EXPECT_EQ(listener.threads(), DefaultThreadCount());
  listener.Stop();
}

}  // namespace
}  // namespace tablestone::http
