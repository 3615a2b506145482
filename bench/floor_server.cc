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
// With --cert and --key (PEM, as tablestone takes them) it serves the same
// response over TLS instead, with what tablestone's TLS session does per
// request and nothing else: the context of server/http/tls_context.cc (the
// same protocol versions, cipher preference and tickets), the handshake by
// Boost.Asio's ssl::stream, then records opened and sealed by
// server/http/tls_records.h on the connection's own buffers, the socket read
// and written directly. Each request is read and each response written as
// the plain floor does it (one asynchronous read per request, a fresh parser,
// Beast's http::async_write, over a stream that joins and seals what it is
// given). What it spends in TlsRecords per request is the least this record
// path costs, to hold tablestone's TLS part against, and wrk against both
// floors shows what TLS costs this machine's client and kernel besides
// (docs/benchmarks.md, "OpenSSL's share and the TLS floor"). The two floors'
// totals are no ratio of TLS to plain: the plain floor's gather write over
// Beast's buffer views costs more than the TLS floor's copy into one piece.
//
// --flat-write (plain HTTP only) sends each response as the TLS floor does, joined into one piece
// and written at once, instead of Beast's gather write over its buffer views (~15k instructions more
// per point GET): the plain counterpart of the TLS floor, so that the two differ by TLS alone.
//
// Usage: bench_floor_server [--host 127.0.0.1] [--port 20022] [--threads 1]
//                           [--body-bytes 300] [--cert FILE --key FILE] [--flat-write]
// Runs until SIGINT/SIGTERM.

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
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

#include "server/http/tls_context.h"
#include "server/http/tls_records.h"

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
  std::string cert;  // with key: TLS
  std::string key;
  bool flat_write = false;  // plain HTTP: one joined write per response (the TLS floor's shape)
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

// The stream Beast's http::async_write writes to when a response goes out in one piece: each write
// joins the buffers it is given (the serializer's views of head and body) into the owner's plain_
// and hands it to the owner's SendJoined, which sends it (sealed into records first over TLS, as
// tablestone joins head and body) and completes the write with the bytes given.
template <class Owner>
class JoiningStream {
 public:
  using executor_type = tcp::socket::executor_type;
  explicit JoiningStream(Owner& owner) : owner_(owner) {}
  executor_type get_executor() { return owner_.socket().get_executor(); }

  template <class ConstBufferSequence, class WriteHandler>
  void async_write_some(const ConstBufferSequence& buffers, WriteHandler&& handler) {
    std::string& plain = owner_.plain_;
    plain.clear();
    for (const auto b : beast::buffers_range_ref(buffers)) plain.append(static_cast<const char*>(b.data()), b.size());
    owner_.SendJoined(std::forward<WriteHandler>(handler));
  }

 private:
  Owner& owner_;
};

// Completes a JoiningStream write of `plain` bytes once `records` are on the socket.
template <class WriteHandler>
void SendThenComplete(tcp::socket& socket, const std::string& records, std::size_t plain, WriteHandler&& handler) {
  asio::async_write(socket, asio::buffer(records),
                    [plain, h = std::forward<WriteHandler>(handler)](beast::error_code ec, std::size_t) mutable {
                      std::move(h)(ec, ec ? 0 : plain);
                    });
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  // flat: each response joined into one piece and sent with one write (--flat-write), as the TLS
  // session sends its records; otherwise Beast's gather write of head and body.
  Session(tcp::socket socket, std::shared_ptr<const Response> response, bool flat)
      : stream_(std::move(socket)), response_(std::move(response)), flat_(flat) {}

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
    auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnWrite(ec); };
    if (flat_) return http::async_write(joining_, *response_, std::move(done));
    http::async_write(stream_, *response_, std::move(done));
  }

  friend class JoiningStream<Session>;
  tcp::socket& socket() { return stream_.socket(); }
  template <class WriteHandler>
  void SendJoined(WriteHandler&& handler) {
    SendThenComplete(stream_.socket(), plain_, plain_.size(), std::forward<WriteHandler>(handler));
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
  bool flat_;
  std::string plain_;  // flat_: the joined response
  JoiningStream<Session> joining_{*this};
  bool keep_alive_ = true;
};

// The same request/response loop over TLS (see the file comment). Records go
// through tablestone::http::TlsRecords, whose contract (its header) this
// follows: every read after the handshake is ours, on the connection's strand.
class TlsSession : public std::enable_shared_from_this<TlsSession> {
 public:
  TlsSession(tcp::socket socket, asio::ssl::context& tls, std::shared_ptr<const Response> response)
      : stream_(std::move(socket), tls), response_(std::move(response)) {}

  void Start() {
    stream_.async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->Close();
      self->Read();
    });
  }

 private:
  // 16 KiB of records per socket read, as tablestone's idle read.
  static constexpr std::size_t kReadBytes = 16 * 1024;

  void Read() {
    parser_.emplace();
    parser_->body_limit(8 * 1024 * 1024);
    parser_->eager(true);
    // The handshake's last read may have taken the request's first records.
    if (tablestone::http::TlsRecords::HasInput(stream_.native_handle())) return OpenRecords(nullptr, 0);
    ReadSome();
  }

  void ReadSome() {
    records_.resize(kReadBytes);
    stream_.next_layer().async_read_some(asio::buffer(records_),
                                         [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                                           if (ec) return self->Close();
                                           self->OpenRecords(self->records_.data(), n);
                                         });
  }

  // Opens `size` bytes of records (null: what OpenSSL already holds) and parses what they carry.
  void OpenRecords(const char* records, std::size_t size) {
    SSL* ssl = stream_.native_handle();
    using Opened = tablestone::http::TlsRecords::Opened;
    const std::size_t room = tablestone::http::TlsRecords::OpenCapacity(size);
    auto space = buffer_.prepare(room);
    std::size_t opened = 0;
    reply_.clear();
    const Opened result =
        records != nullptr
            ? tls_.Open(ssl, {records, size}, static_cast<char*>(space.data()), &opened, &reply_)
            : tls_.OpenHeld(ssl, static_cast<char*>(space.data()), room, &opened, &reply_);
    buffer_.commit(opened);
    if (result != Opened::kOk || !reply_.empty()) return Close();  // no key updates in a benchmark
    beast::error_code ec;
    while (buffer_.size() > 0 && !parser_->is_done()) {
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more) {
        ec = {};
        break;
      }
      if (ec || used == 0) break;
    }
    if (ec) return Close();
    if (!parser_->is_done()) return ReadSome();
    keep_alive_ = parser_->get().keep_alive();
    Write();
  }

  // The plain floor's write with sealing under it: Beast's http::async_write (serializer and write
  // operation) on a JoiningStream, whose joined piece is sealed here and sent with one write.
  friend class JoiningStream<TlsSession>;
  tcp::socket& socket() { return stream_.next_layer(); }
  template <class WriteHandler>
  void SendJoined(WriteHandler&& handler) {
    sealed_.clear();
    if (!tls_.Seal(stream_.native_handle(), {plain_}, &sealed_)) {
      return asio::post(socket().get_executor(), beast::bind_front_handler(std::forward<WriteHandler>(handler),
                                                                         beast::error_code(asio::error::fault), 0));
    }
    SendThenComplete(socket(), sealed_, plain_.size(), std::forward<WriteHandler>(handler));
  }

  void Write() {
    http::async_write(sealing_, *response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec || !self->keep_alive_) return self->Close();
      self->Read();
    });
  }

  void Close() {
    beast::error_code ignored;
    stream_.next_layer().shutdown(tcp::socket::shutdown_send, ignored);
  }

  asio::ssl::stream<tcp::socket> stream_;
  tablestone::http::TlsRecords tls_;
  beast::flat_buffer buffer_;
  std::string records_;  // read from the socket
  std::string reply_;    // what OpenSSL wrote while opening (nothing in a benchmark)
  std::string plain_;    // the serialized response
  std::string sealed_;   // its records
  JoiningStream<TlsSession> sealing_{*this};
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<const Response> response_;
  bool keep_alive_ = true;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& ioc, const tcp::endpoint& endpoint, std::shared_ptr<const Response> response,
           asio::ssl::context* tls, bool flat_write)
      : ioc_(ioc), acceptor_(ioc), response_(std::move(response)), tls_(tls), flat_write_(flat_write) {
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
        if (self->tls_ != nullptr) {
          std::make_shared<TlsSession>(std::move(socket), *self->tls_, self->response_)->Start();
        } else {
          std::make_shared<Session>(std::move(socket), self->response_, self->flat_write_)->Start();
        }
      }
      self->Accept();
    });
  }

  asio::io_context& ioc_;
  tcp::acceptor acceptor_;
  std::shared_ptr<const Response> response_;
  asio::ssl::context* tls_;  // null: plain HTTP
  bool flat_write_;
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
    } else if (a == "--cert" && (v = next())) {
      o.cert = v;
    } else if (a == "--key" && (v = next())) {
      o.key = v;
    } else if (a == "--flat-write") {
      o.flat_write = true;
    } else {
      std::cerr << "usage: bench_floor_server [--host H] [--port P] [--threads N] [--body-bytes B]"
                   " [--cert PEM --key PEM] [--flat-write]\n";
      return false;
    }
  }
  if (o.cert.empty() != o.key.empty()) {
    std::cerr << "bench_floor_server: --cert and --key go together\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  if (!ParseArgs(argc, argv, opts)) return 2;
  auto response = MakeResponse(opts.body_bytes);
  const tcp::endpoint endpoint(asio::ip::make_address(opts.host), opts.port);
  std::shared_ptr<asio::ssl::context> tls;
  if (!opts.cert.empty()) {
    std::string error;
    tls = tablestone::http::MakeTlsContext({.cert = opts.cert, .key = opts.key, .password = ""}, &error);
    if (!tls) {
      std::cerr << "bench_floor_server: " << error << "\n";
      return 1;
    }
  }

  std::vector<std::unique_ptr<asio::io_context>> contexts;
  try {
    for (int i = 0; i < opts.threads; ++i) {
      contexts.push_back(std::make_unique<asio::io_context>(1));
      std::make_shared<Listener>(*contexts.back(), endpoint, response, tls.get(), opts.flat_write)->Start();
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
            << " body_bytes=" << response->body().size() << (tls ? " tls" : "") << std::endl;
  std::vector<std::thread> threads;
  for (int i = 1; i < opts.threads; ++i) threads.emplace_back([&, i] { contexts[i]->run(); });
  contexts[0]->run();
  for (auto& t : threads) t.join();
  return 0;
}
