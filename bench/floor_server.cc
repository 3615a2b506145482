// bench_floor_server: the HTTP floor for the benchmarks in docs/benchmarks.md.
//
// A minimal Boost.Beast server that answers every request, whatever its
// method or target, with the same 200 response: a JSON body of a chosen size
// and headers shaped like a point GET of an entity (content type, ETag,
// request id, version, date). It does no routing, no authentication and no
// storage work, so the throughput and latency measured against it with the
// same wrk command are the best that HTTP on this machine allows; the
// tablestone figures are reported as a fraction of it.
//
// Design: N threads, each with its own io_context and its own SO_REUSEPORT
// acceptor on the same port, so the kernel spreads connections over threads
// and no two threads share a socket or a lock. Each connection reads a
// request with a fresh parser (as a real server would), then writes the
// shared, immutable response; keep-alive is honoured.
//
// Usage: bench_floor_server [--host 127.0.0.1] [--port 20022] [--threads 1]
//                           [--body-bytes 300]
// Runs until SIGINT/SIGTERM.

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

using Response = http::response<http::string_body>;

struct Options {
  std::string host = "127.0.0.1";
  unsigned short port = 20022;
  int threads = 1;
  std::size_t body_bytes = 300;
};

// A JSON object of exactly `n` bytes (n >= 16), so clients that look at the
// body see well-formed JSON.
std::string MakeBody(std::size_t n) {
  if (n < 16) n = 16;
  const std::string head = "{\"Filler\":\"";
  const std::string tail = "\"}";
  std::string body = head;
  body.append(n - head.size() - tail.size(), 'x');
  body += tail;
  return body;
}

std::shared_ptr<const Response> MakeResponse(std::size_t body_bytes) {
  auto res = std::make_shared<Response>(http::status::ok, 11);
  // Header set modelled on a Query Entity (point GET) response, so the bytes
  // on the wire are comparable to the servers under test.
  res->set(http::field::server, "bench_floor_server");
  res->set(http::field::content_type, "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
  res->set(http::field::cache_control, "no-cache");
  res->set(http::field::etag, "W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"");
  res->set("x-ms-request-id", "00000000-0000-0000-0000-000000000000");
  res->set("x-ms-version", "2019-02-02");
  res->set("X-Content-Type-Options", "nosniff");
  res->set(http::field::date, "Mon, 01 Jan 2024 00:00:00 GMT");
  res->keep_alive(true);
  res->body() = MakeBody(body_bytes);
  res->prepare_payload();
  return res;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<const Response> response)
      : stream_(std::move(socket)), response_(std::move(response)) {}

  void Start() { Read(); }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(8 * 1024 * 1024);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) return Close();
    keep_alive_ = parser_->get().keep_alive();
    http::async_write(stream_, *response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnWrite(ec); });
  }

  void OnWrite(beast::error_code ec) {
    if (ec || !keep_alive_) return Close();
    Read();
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<const Response> response_;
  bool keep_alive_ = true;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& ioc, const tcp::endpoint& endpoint, std::shared_ptr<const Response> response)
      : ioc_(ioc), acceptor_(ioc), response_(std::move(response)) {
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    int one = 1;
    // One acceptor per thread on the same port; the kernel balances accepts.
    if (::setsockopt(acceptor_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
      throw std::runtime_error("setsockopt(SO_REUSEPORT) failed");
    }
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  void Start() { Accept(); }

 private:
  void Accept() {
    acceptor_.async_accept(ioc_, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (!ec) {
        socket.set_option(tcp::no_delay(true));
        std::make_shared<Session>(std::move(socket), self->response_)->Start();
      }
      self->Accept();
    });
  }

  asio::io_context& ioc_;
  tcp::acceptor acceptor_;
  std::shared_ptr<const Response> response_;
};

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--host" && (v = next())) {
      o.host = v;
    } else if (a == "--port" && (v = next())) {
      o.port = static_cast<unsigned short>(std::atoi(v));
    } else if (a == "--threads" && (v = next())) {
      o.threads = std::max(1, std::atoi(v));
    } else if (a == "--body-bytes" && (v = next())) {
      o.body_bytes = static_cast<std::size_t>(std::atoll(v));
    } else {
      std::cerr << "usage: bench_floor_server [--host H] [--port P] [--threads N] [--body-bytes B]\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  if (!ParseArgs(argc, argv, opts)) return 2;
  auto response = MakeResponse(opts.body_bytes);
  const tcp::endpoint endpoint(asio::ip::make_address(opts.host), opts.port);

  std::vector<std::unique_ptr<asio::io_context>> contexts;
  try {
    for (int i = 0; i < opts.threads; ++i) {
      contexts.push_back(std::make_unique<asio::io_context>(1));
      std::make_shared<Listener>(*contexts.back(), endpoint, response)->Start();
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_floor_server: cannot listen on " << opts.host << ":" << opts.port << ": " << e.what() << "\n";
    return 1;
  }

  // Stop every context on SIGINT/SIGTERM; the signal set lives on context 0.
  asio::signal_set signals(*contexts[0], SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) {
    for (auto& c : contexts) c->stop();
  });

  std::cout << "bench_floor_server listening on " << opts.host << ":" << opts.port << " threads=" << opts.threads
            << " body_bytes=" << response->body().size() << std::endl;
  std::vector<std::thread> threads;
  for (int i = 1; i < opts.threads; ++i) threads.emplace_back([&, i] { contexts[i]->run(); });
  contexts[0]->run();
  for (auto& t : threads) t.join();
  return 0;
}
