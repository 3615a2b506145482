// Listener: the HTTP front end. Owns the I/O threads, the acceptor and the
// registry of live connections; hands every parsed request to a
// RequestHandler.
//
// Threading: one io_context per I/O thread, each run by exactly that thread;
// accepted connections are dealt round-robin over them. A connection's
// session code therefore never runs concurrently (its io_context is its
// strand) and no two threads share a reactor, a scheduler queue or a lock on
// the hot path. Measured on 2 cores against a bare Beast server (bench/floor_server),
// this layout scaled to the second thread where a single io_context run by
// two threads (with a strand per connection) did not. The handler is
// asynchronous (RequestHandler::Handle(request, context, Completion), see
// handler.h): the session hands a request over and writes the response when
// the Completion is called, possibly from another thread, in which case it is
// posted back to the connection's io_context. The API handler answers point
// reads inline and runs scans, writes and log syncs on the storage engine's
// executor, so a slow request does not hold up the other connections of its
// I/O thread.
//
// Each connection gets TCP_NODELAY. When the process is out of descriptors or
// memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) accepting backs off exponentially
// (1 ms doubling to 1 s) instead of spinning, as Ceph RGW does.
//
// Graceful Stop(): stop accepting; connections idle between requests close at
// once; requests in flight finish and are answered with "Connection: close";
// after HttpOptions::drain_timeout the rest are force-closed; then the I/O
// threads are joined.
//
// Asio and Beast types stay out of this header (pImpl) so that server/app
// does not compile them.
//
// Thread safety: Start() and Stop() from one controlling thread, never from
// an I/O thread (Stop joins them). port() and connections() from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "server/http/handler.h"
#include "server/http/http_options.h"

namespace tablestone::http {

// I/O threads for HttpOptions::threads = 0: one fewer than the CPUs this
// process may run on (its affinity mask, so `taskset -c 0` or a container's
// cpuset of one CPU gives 1; std::thread::hardware_concurrency if the mask
// cannot be read), at least 1.
// One CPU is left to the clients: an emulator runs beside the tests that
// drive it. With as many busy I/O threads as CPUs, a client thread and an I/O
// thread share a CPU, and a runnable one waits for the other's scheduler
// slice. More threads than usable
// CPUs only add context switches.
// Reads the calling thread's mask; thread-safe.
int DefaultThreadCount();

class Listener {
 public:
  // `handler` must outlive the Listener. Logs go to the spdlog loggers
  // "http" and (when options.access_log) "access", if registered when the
  // Listener is constructed; an unregistered "access" logger means no access
  // log, an unregistered "http" logger means the default logger.
  Listener(HttpOptions options, RequestHandler& handler);
  ~Listener();  // Stop()
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds, listens and starts the I/O threads. On failure returns false and
  // sets `*error` to e.g. "cannot listen on 127.0.0.1:10002: Address already
  // in use". Call at most once.
  bool Start(std::string* error);

  // Graceful stop as described above. Idempotent; blocks until the I/O
  // threads have been joined.
  void Stop();

  // The bound port (useful with HttpOptions::port = 0); 0 before Start().
  uint16_t port() const;
  // Live connections right now.
  size_t connections() const;
  // I/O threads actually started.
  int threads() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablestone::http
