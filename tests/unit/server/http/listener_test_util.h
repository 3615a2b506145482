// The HTTP front end's test fixture: a real Listener on 127.0.0.1:0 with a
// small RequestHandler (TestHandler), driven through raw sockets (raw_client.h).
// Shared by listener_test.cc and listener_limits_test.cc.
#pragma once

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

#include "server/http/listener.h"

namespace tablestone::http::testing {

using namespace std::chrono_literals;

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

}  // namespace tablestone::http::testing
