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
#include "tests/unit/server/http/listener_test_util.h"
#include "tests/unit/server/http/raw_client.h"
#include "tests/unit/server/http/test_certificate.h"

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;
using testing::ListenerTest;
using testing::RawClient;
using testing::RawResponse;
using testing::TestCertificate;
using testing::TestHandler;

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

// With HttpOptions::access_line set (--logFormat json), the session hands
// that function the line's facts: the answer's status, x-ms-error-code and
// x-ms-request-id, the handler's LogSafeTarget and its AccessNote, which is
// cleared before the next request of the connection.
TEST_F(ListenerTest, AccessLineGetsTheAnswerAndTheHandlersNote) {
  class NotingHandler : public testing::SyncHandler {
   public:
    void HandleSync(const Request& request, const RequestContext& context, Response& response) override {
      if (request.target() == "/noted?sig=s3cret") context.access_note = {"acct", "GetEntity"};
      response.result(404);
      response.set("x-ms-error-code", "ResourceNotFound");
      response.set("x-ms-request-id", "id-1");
      response.body() = "gone";
    }
    std::string LogSafeTarget(std::string_view target) const override {
      return std::string(target.substr(0, target.find("sig="))) + "sig=REDACTED";
    }
    void RenderTransportError(TransportError, const Request&, Response& response) override { response.result(400); }
  };
  auto out = std::make_shared<std::ostringstream>();
  auto logger = std::make_shared<spdlog::logger>("access", std::make_shared<spdlog::sinks::ostream_sink_mt>(*out));
  logger->set_pattern("%v");
  spdlog::register_logger(logger);
  NotingHandler handler;
  HttpOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.access_line = [](const AccessRecord& r) {
    std::ostringstream line;
    line << r.peer << "|" << r.method << "|" << r.target << "|" << r.status << "|" << r.error_code << "|"
         << r.request_id << "|" << r.account << "|" << r.operation << "|" << r.bytes << "|" << (r.micros >= 0);
    return line.str();
  };
  Listener listener(options, handler);
  std::string error;
  ASSERT_TRUE(listener.Start(&error)) << error;
  RawClient client;
  ASSERT_TRUE(client.Connect(listener.port()));
  ASSERT_TRUE(client.Send(Get("/noted?sig=s3cret")));
  ASSERT_TRUE(client.ReadResponse().ok);
  ASSERT_TRUE(client.Send(Get("/plain")));
  ASSERT_TRUE(client.ReadResponse().ok);
  listener.Stop();
  spdlog::drop("access");
  const std::string lines = out->str();
  const std::string first = lines.substr(0, lines.find('\n'));
  EXPECT_EQ(first.substr(0, first.rfind('|', first.rfind('|') - 1)),
            "127.0.0.1|GET|/noted?sig=REDACTED|404|ResourceNotFound|id-1|acct|GetEntity")
      << lines;
  EXPECT_GT(std::stoul(first.substr(first.rfind('|', first.rfind('|') - 1) + 1)), 4u) << lines;  // head and body
  EXPECT_NE(lines.find("\n127.0.0.1|GET|/plainsig=REDACTED|404|ResourceNotFound|id-1|||"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("s3cret"), std::string::npos) << lines;
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

// The session frames a response without touching its fields: the head must be what Beast sends
// after the same content_length() and keep_alive() (Content-Length moved to the end, a Connection
// field added where the version needs one), for every version, keep-alive and Content-Length case.
TEST(SerializeResponseHeadTest, FramedHeadMatchesBeastAfterContentLengthAndKeepAlive) {
  std::vector<Response> cases;
  Response json;  // as WriteJson and SetCommonHeaders leave a GET's answer
  json.result(200);
  json.set(boost::beast::http::field::content_type, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
  json.set("X-Content-Type-Options", "nosniff");
  json.body() = R"({"PartitionKey":"p","RowKey":"r"})";
  json.prepare_payload();  // a Content-Length in the middle
  json.set("ETag", "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"");
  json.insert("x-ms-request-id", "0f5e6d4c-1b2a-4c3d-8e9f-0a1b2c3d4e5f");
  json.insert(boost::beast::http::field::date, "Sat, 21 Nov 2026 13:55:00 GMT");
  cases.push_back(json);
  Response twice = json;  // two Content-Length fields (a handler's and prepare_payload's): both replaced
  twice.insert(boost::beast::http::field::content_length, "7");
  cases.push_back(twice);
  Response none;  // no fields at all, no body
  none.result(204);
  cases.push_back(none);
  Response head_answer;  // HEAD: the handler's Content-Length without a body stands (framing unset)
  head_answer.result(200);
  head_answer.set(boost::beast::http::field::content_length, "1234");
  head_answer.set("x-ms-request-id", "id");
  cases.push_back(head_answer);

  int checked = 0;
  for (Response base : cases) {
    for (unsigned version : {10u, 11u}) {
      for (bool keep : {true, false}) {
        for (bool own_length : {true, false}) {
          Response r = base;
          r.version(version);
          HeadFraming framing;
          framing.keep_alive = keep;
          if (own_length) framing.content_length = r.body().size();
          std::string ours = "prefix:";  // appends, never overwrites
          const size_t fields = SerializeResponseHead(r, framing, &ours);
          ASSERT_NE(fields, kHeadNeedsBeastFraming);
          EXPECT_TRUE(HeadHasOnlyItsOwnLineBreaks(std::string_view(ours).substr(7), fields));
          Response framed = r;
          if (own_length) framed.content_length(r.body().size());
          framed.keep_alive(keep);
          EXPECT_EQ(ours.substr(7) + r.body(), BeastBytes(framed))
              << "version " << version << " keep " << keep << " own length " << own_length;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 32);
}

// A Connection or Transfer-Encoding field is rewritten token by token by Beast's framing: the
// framed serializer leaves such a response to it and appends nothing.
TEST(SerializeResponseHeadTest, FramedHeadLeavesConnectionAndTransferEncodingToBeast) {
  for (boost::beast::http::field name :
       {boost::beast::http::field::connection, boost::beast::http::field::transfer_encoding}) {
    Response r;
    r.version(11);
    r.result(200);
    r.set("x-ms-request-id", "id");
    r.set(name, "keep-alive, chunked");
    std::string out = "kept";
    EXPECT_EQ(SerializeResponseHead(r, HeadFraming{.content_length = 0, .keep_alive = true}, &out),
              kHeadNeedsBeastFraming);
    EXPECT_EQ(out, "kept");
  }
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
