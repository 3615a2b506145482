#include "server/http/listener.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <sched.h>

#include <cerrno>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/http/connection_registry.h"
#include "server/http/session.h"

namespace tablestone::http {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;

constexpr std::chrono::milliseconds kFirstBackoff{1};
constexpr std::chrono::milliseconds kMaxBackoff{1000};
// After a force-close, how long to wait for sessions to notice before the
// io_context is stopped regardless.
constexpr std::chrono::milliseconds kForceCloseWait{1000};

// Accept failures that mean "out of a resource right now": retrying at once
// would spin at 100% CPU; the resource usually comes back as others close.
bool IsResourceExhaustion(const error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  int v = ec.value();
  return v == EMFILE || v == ENFILE || v == ENOBUFS || v == ENOMEM;
}

std::shared_ptr<spdlog::logger> LoggerOrDefault(const char* name) {
  auto logger = spdlog::get(name);
  return logger ? logger : spdlog::default_logger();
}

}  // namespace

int DefaultThreadCount() {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) cpus = CPU_COUNT(&set);
  return std::max(1, cpus - 1);
}

class Listener::Impl {
 public:
  Impl(HttpOptions options, RequestHandler& handler)
      : options_(std::move(options)),
        thread_count_(options_.threads > 0 ? options_.threads : DefaultThreadCount()),
        contexts_(MakeContexts(thread_count_)),
        acceptor_(*contexts_[0]),
        backoff_timer_(*contexts_[0]) {
    env_.options = &options_;
    env_.handler = &handler;
    env_.registry = &registry_;
    env_.stopping = &stopping_;
    env_.counters = options_.counters;
    env_.log = LoggerOrDefault("http");
    if (options_.access_log) env_.access_log = spdlog::get("access");
  }

  ~Impl() { Stop(); }

  bool Start(std::string* error) {
    error_code ec;
    auto address = net::ip::make_address(options_.address, ec);
    if (ec) {
      *error = "invalid listen address '" + options_.address + "': " + ec.message();
      return false;
    }
    tcp::endpoint endpoint(address, options_.port);
    const std::string where = endpoint.address().to_string() + ":" + std::to_string(options_.port);
    auto fail = [&](const char* step) {
      *error = "cannot listen on " + where + " (" + step + "): " + ec.message();
      error_code ignored;
      acceptor_.close(ignored);
      return false;
    };
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) return fail("open");
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (ec) return fail("reuse_address");
    acceptor_.bind(endpoint, ec);
    if (ec) return fail("bind");
    acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return fail("listen");
    port_.store(acceptor_.local_endpoint(ec).port());

    threads_.reserve(thread_count_);
    for (auto& context : contexts_) {
      work_.emplace_back(context->get_executor());
      threads_.emplace_back([this, ctx = context.get()] { RunLoop(*ctx); });
    }
    started_ = true;
    net::post(*contexts_[0], [this] { DoAccept(); });
    return true;
  }

  void Stop() {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (!started_ || stopped_) return;
    stopped_ = true;
    stopping_.store(true);
    net::post(*contexts_[0], [this] {
      error_code ec;
      acceptor_.close(ec);
      backoff_timer_.cancel();
    });
    registry_.CloseAll(CloseMode::kGraceful);
    if (!registry_.WaitUntilEmpty(options_.drain_timeout)) {
      env_.log->warn("drain timeout: force-closing {} connection(s)", registry_.Size());
      registry_.CloseAll(CloseMode::kForce);
      registry_.WaitUntilEmpty(kForceCloseWait);
    }
    work_.clear();
    for (auto& context : contexts_) context->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  uint16_t port() const { return port_.load(); }
  size_t connections() const { return registry_.Size(); }
  int threads() const { return started_ ? thread_count_ : 0; }

 private:
  static std::vector<std::unique_ptr<net::io_context>> MakeContexts(int count) {
    std::vector<std::unique_ptr<net::io_context>> contexts;
    // Concurrency hint 1: each context is run by exactly one thread.
    for (int i = 0; i < count; ++i) contexts.push_back(std::make_unique<net::io_context>(1));
    return contexts;
  }

  void RunLoop(net::io_context& context) {
    // A handler that escapes an exception must not take the whole server
    // down; sessions already guard the RequestHandler, this is the backstop.
    for (;;) {
      try {
        context.run();
        return;
      } catch (const std::exception& e) {
        env_.log->error("uncaught exception on an I/O thread: {}", e.what());
      } catch (...) {
        env_.log->error("uncaught non-exception on an I/O thread");
      }
    }
  }

  void DoAccept() {
    if (stopping_.load()) return;
    // Connections are dealt round-robin over the contexts; the accept
    // handler itself runs on context 0.
    net::io_context& target = *contexts_[next_context_];
    next_context_ = (next_context_ + 1) % contexts_.size();
    acceptor_.async_accept(target, [this](error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
  }

  void OnAccept(error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == net::error::operation_aborted || stopping_.load()) return;
      if (IsResourceExhaustion(ec)) {
        backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
        env_.log->warn("accept: {}; retrying in {} ms", ec.message(), backoff_.count());
        backoff_timer_.expires_after(backoff_);
        backoff_timer_.async_wait([this](error_code wait_ec) {
          if (!wait_ec) DoAccept();
        });
        return;
      }
      // E.g. ECONNABORTED: the peer gave up before we accepted. Keep going.
      env_.log->debug("accept: {}", ec.message());
      return DoAccept();
    }
    backoff_ = std::chrono::milliseconds{0};
    if (!stopping_.load()) {
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      const tcp::endpoint remote = socket.remote_endpoint(ignored);
      const std::string address = ignored ? std::string() : remote.address().to_string();
      if (options_.tls) {
        Admit(std::make_shared<TlsSession>(
                  boost::beast::ssl_stream<boost::beast::tcp_stream>(boost::beast::tcp_stream(std::move(socket)),
                                                                     *options_.tls),
                  env_),
              address);
      } else {
        Admit(std::make_shared<Session>(boost::beast::tcp_stream(std::move(socket)), env_), address);
      }
    }
    DoAccept();
  }

  template <class S>
  void Admit(std::shared_ptr<S> session, const std::string& address) {
    auto id = registry_.Add(session, options_.max_connections, address, options_.max_connections_per_address);
    if (id != 0) {
      session->Start(id);
    } else {
      // Over max_connections or the per-address cap (or stopping): the
      // session is dropped here and its socket closes with it, which the
      // client sees at once.
      env_.log->debug("connection from {} refused: {} live connections, {} from it", address, registry_.Size(),
                      registry_.CountFrom(address));
    }
  }

  // Order matters for destruction: sessions (destroyed with the contexts'
  // pending handlers) refer to options_, env_ and registry_.
  HttpOptions options_;
  int thread_count_;
  ConnectionRegistry registry_;
  std::atomic<bool> stopping_{false};
  SessionEnv env_;
  std::vector<std::unique_ptr<net::io_context>> contexts_;
  tcp::acceptor acceptor_;           // on contexts_[0]
  net::steady_timer backoff_timer_;  // on contexts_[0]
  size_t next_context_ = 0;          // accept handler only
  std::chrono::milliseconds backoff_{0};
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  std::atomic<uint16_t> port_{0};
  std::mutex stop_mu_;
  bool started_ = false;
  bool stopped_ = false;
};

Listener::Listener(HttpOptions options, RequestHandler& handler)
    : impl_(std::make_unique<Impl>(std::move(options), handler)) {}

Listener::~Listener() { Stop(); }

bool Listener::Start(std::string* error) { return impl_->Start(error); }

void Listener::Stop() { impl_->Stop(); }

uint16_t Listener::port() const { return impl_->port(); }

size_t Listener::connections() const { return impl_->connections(); }

int Listener::threads() const { return impl_->threads(); }

}  // namespace tablestone::http
