// Session: one HTTP/1.1 connection, from accept to close.
//
// Per request (on the connection's executor; only the handler's work may run
// elsewhere):
//   wait for the first byte (idle timeout; on a new connection the shorter
//   first-byte timeout, after the TLS handshake's own deadline) -> read
//   headers and body with a FRESH parser (header/body limits; one deadline
//   for the whole request) -> if the body has not arrived with the headers,
//   RequestHandler::AdmitHeaders (authentication) decides whether to read it
//   at all, and may narrow its limit and withhold "100 Continue"
//   (BodyAdmission) -> "100 Continue" if the client asked -> read the body -> RequestHandler::Handle, which
//   answers through a Completion now or later from any thread (the session
//   comes back to its executor) -> settle Content-Length and keep-alive ->
//   write (write deadline) -> access-log line -> next request or close.
// While the handler works elsewhere the session watches the socket: if the
// client closes its connection, Completion::Cancelled() turns true (queued
// work is skipped) and the response is dropped when it comes. It does not
// watch when the handler called Completion::WorkDone() during Handle().
// Pipelined requests are served in order: bytes after one request stay in the
// connection's buffer and are parsed after its response has been written.
//
// Errors: malformed HTTP -> the handler's RenderTransportError(kBadRequest)
// (400), headers over the limit -> kHeaderTooLarge, body over the limit ->
// kBodyTooLarge (413); each closes the connection after the response, with a
// lingering close (HttpOptions::linger_*) so that a client still sending its
// body reads the answer instead of a reset. A
// handler that throws gets kInternalError (500). A peer that closes, resets or
// misses a deadline is closed quietly.
//
// Fault injection (handler.h, Delivery): a response completed with
// kCloseWithoutResponse closes the connection instead of being written; one
// with kResetMidBody is cut after half its body and the connection reset
// (SO_LINGER 0), as a client sees when a proxy or the host drops it.
//
// Thread safety: the public methods may be called from any thread; the rest
// runs on the connection's executor.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <array>
#include <atomic>
#include <thread>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "server/http/connection_registry.h"
#include "server/http/handler.h"
#include "server/http/http_options.h"
#include "server/http/response_head.h"
#include "server/http/tls_records.h"
#include "server/http/transport_counters.h"

namespace spdlog {
class logger;
}

namespace tablestone::http {

// The most bytes a connection's read buffer holds (the header limit plus a
// small slack). Reading past it fails the request with 400 and closes the
// connection: neither Beast's header limit nor its body limit covers a
// chunk-size line or chunk extension that never ends, so this is what bounds
// an unauthenticated client's memory (docs/reliability.md, "Memory bounds").
size_t ReadBufferLimit(const HttpOptions& options);

// Read granularity while waiting for the next request.
inline constexpr size_t kIdleReadBytes = 16 * 1024;

// What every session of one listener shares. Owned by the Listener, which
// outlives its sessions.
struct SessionEnv {
  const HttpOptions* options = nullptr;
  RequestHandler* handler = nullptr;
  ConnectionRegistry* registry = nullptr;
  std::shared_ptr<spdlog::logger> log;         // "http": connection-level problems
  std::shared_ptr<spdlog::logger> access_log;  // "access"; null = no access log
  const std::atomic<bool>* stopping = nullptr;  // set once a graceful stop begins
  TransportCounters* counters = nullptr;        // null = nothing counted
};

// One session type per transport: plain TCP (boost::beast::tcp_stream) or
// TLS over TCP (boost::beast::ssl_stream<tcp_stream>, HTTPS on the same port
// when --cert is given). The code is the same; a TLS session first reads the
// client's first bytes (under the read deadline): a TLS handshake record
// starts the handshake with them, anything else (plain HTTP to the HTTPS
// port) gets a plain-text 400 and the connection closes. A TLS session
// seals each response into records itself (tls_records.h) and sends them on the
// socket as the plain session sends a response.
template <class Stream>
class BasicSession : public Closable,
                     public ResponseSink,
                     public std::enable_shared_from_this<BasicSession<Stream>> {
 public:
  static constexpr bool kIsTls = !std::is_same_v<Stream, boost::beast::tcp_stream>;

  // `stream`'s executor must run its handlers one at a time (an io_context
  // run by one thread, or a strand).
  BasicSession(Stream stream, const SessionEnv& env);
  ~BasicSession() override;

  // Starts serving; `id` is this session's registration in env.registry,
  // which the session removes when it ends.
  void Start(ConnectionRegistry::Id id);

  // Closable: posts onto the connection's executor (never touches the socket directly).
  void RequestClose(CloseMode mode) override;

  // ResponseSink: the handler's answer to the request in flight (any thread).
  void Complete(Response&& response) override;
  void CompleteWith(Response&& response, Delivery delivery) override;
  bool Cancelled() const override { return cancelled_.load(std::memory_order_relaxed); }
  void WorkDone() override { work_done_.store(true, std::memory_order_relaxed); }
  bool InTurn() const override;
  bool AfterTurn(std::function<void()> work) override;
  void Abandoned() override;

 private:
  enum class State { kStarting, kIdle, kReading, kHandling, kWriting, kClosing, kClosed };

  // TLS only, defined in session_tls.cc (instantiated there for TlsSession alone; the plain
  // session names them only in discarded `if constexpr` branches).
  // The connection's first bytes are in (see the class comment).
  void OnFirstBytes(boost::beast::error_code ec, size_t bytes);
  void OnHandshake(boost::beast::error_code ec);
  // DoReadIdle's wait, under `timeout`: reads the records itself while tls_reads_own_.
  void DoReadIdleTls(std::chrono::milliseconds timeout);
  // Opens `size` bytes of records read from the socket (null: what the SSL object already holds)
  // into buffer_, sends what OpenSSL answered, then reads the request on.
  void OpenTls(const char* records, size_t size);
  // DoWrite's response (head_ and the body, `total` bytes) sealed into records in the thread's
  // TlsScratch; `buffers` and `total` become the records. False: OpenSSL refused, the
  // connection is closed.
  bool SealForWrite(std::array<boost::asio::const_buffer, 2>& buffers, size_t& total);
  // After DoWrite's synchronous send of `sent` of `total` bytes: the records the socket did not
  // take move to sealed_ (`buffers`, `total`, `sent` then describe them) and the thread's
  // buffer is released.
  void KeepUnsentRecords(const boost::beast::error_code& ec, std::array<boost::asio::const_buffer, 2>& buffers,
                         size_t& total, size_t& sent);
  // CloseNow's close_notify, if the socket takes it at once.
  void SendCloseNotify();

  void DoReadIdle();
  void OnIdleRead(boost::beast::error_code ec, size_t bytes);
  void DoReadHeader();
  // The request's read deadline (HttpOptions::read_timeout, one for the headers, the "100
  // Continue" and the body), set before the request's first operation on the stream: the
  // stream's timers keep an earlier request's expiry, which must never bound a later one.
  void ArmReadDeadline();
  void OnHeader(boost::beast::error_code ec, size_t bytes);
  void OnContinueWritten(boost::beast::error_code ec, size_t bytes);
  // The handler refused the request on its headers (AdmitHeaders): answer and
  // close without reading the body.
  void RefuseBeforeBody(Response refusal);
  void DoReadBody();
  void OnBody(boost::beast::error_code ec, size_t bytes);
  void OnReadError(boost::beast::error_code ec);
  void HandleRequest();
  void FailRequest(TransportError error);
  // Replaces the response with the handler's 500 InternalError (a bare 500
  // when rendering fails too).
  void RenderInternalError();
  // Settles framing_ (the body's length, keep-alive) for the response in response_.
  void FinishResponse();
  // Puts framing_ into response_'s fields through Beast (content_length(), keep_alive()).
  void ApplyFramingToFields();
  // head_ := response_'s head under framing_, written by SerializeResponseHead beside the
  // response's fields, or after ApplyFramingToFields when the response holds a field Beast's
  // framing rewrites (Connection, Transfer-Encoding). Returns the number of fields.
  size_t SerializeHead();
  // The handler's response arrived (on our executor).
  void OnHandled(Response&& response, Delivery delivery = Delivery::kSend);
  // Delivery::kResetMidBody: writes the head and half the body, then resets.
  void DoWriteThenReset();
  // Watches the socket while the handler works elsewhere (see above).
  void StartCancelWatch();
  void OnCancelWatch(boost::beast::error_code ec, uint64_t seq);
  void StopCancelWatch();
  void DoWrite();
  void OnWrite(boost::beast::error_code ec, size_t bytes);
  // Plain HTTP's wait between requests is bounded by idle_timer_, armed at
  // most once per idle_deadline_ it reaches (see DoReadIdle).
  void ArmIdleTimer();
  void OnIdleTimer(boost::beast::error_code ec);
  // Queues `work` on the connection's executor behind the handlers already
  // ready, through the io_context's own executor when that is what the stream
  // runs on (asio's type-erased post costs about 2k instructions more).
  template <class Work>
  void PostHere(Work&& work);
  void DoLingeringClose();
  void OnLinger(boost::beast::error_code ec, size_t bytes);
  void CloseNow();
  void OnCloseRequested(CloseMode mode);
  void LogAccess(size_t bytes);
  // Adds parser-consumed request bytes to env_.counters (if any).
  void CountBytesIn(size_t bytes);

  boost::beast::tcp_stream& Tcp() { return boost::beast::get_lowest_layer(stream_); }

  Stream stream_;
  // Plain HTTP only: the deadline of the wait for the next request, and the
  // timer that enforces it. Beast's own deadline armed and cancelled a timer
  // per wait (~1.5k instructions of a point GET); this one is re-armed only
  // when it fires before a deadline that moved on, about once per idle
  // timeout of a busy connection. It holds no reference to the session.
  boost::asio::steady_timer idle_timer_;
  bool idle_timer_armed_ = false;
  std::chrono::steady_clock::time_point idle_deadline_;
  // Reused for every request of the connection; max_size = ReadBufferLimit().
  boost::beast::flat_buffer buffer_;
  SessionEnv env_;
  RegistryGuard registration_;
  bool started_ = false;  // Start() ran: the connection counts as opened
  RequestContext context_;  // remote address filled once; start per request
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Request request_;
  Response response_;
  std::string head_;  // serialized status line + headers, reused per request
  HeadFraming framing_;             // FinishResponse's, for the response in response_
  bool framing_in_fields_ = false;  // ApplyFramingToFields ran for it
  bool read_deadline_armed_ = false;  // ArmReadDeadline ran for the request being read
  // TLS only: seals responses; the records of a response that the socket did not take at once (the
  // rest are sealed and sent from a buffer of the I/O thread, tls_scratch.h), and the
  // response's size in plain text.
  struct NoTls {};
  [[no_unique_address]] std::conditional_t<kIsTls, TlsRecords, NoTls> tls_;
  std::string sealed_;
  size_t message_bytes_ = 0;
  // TLS only: records read from the socket (DoReadIdle), and what OpenSSL wrote while opening them.
  std::string tls_in_;
  std::string tls_reply_;
  bool tls_reads_own_ = true;  // no read went through stream_ since the handshake
  State state_ = State::kStarting;
  bool shutting_down_ = false;     // a stop was requested: close after this request
  bool close_after_write_ = false; // transport error: the stream state is unknown
  uint64_t lingered_bytes_ = 0;
  uint64_t linger_max_bytes_ = 0;  // of this lingering close
  bool linger_short_ = false;      // the close follows a 400 for malformed HTTP
  std::chrono::steady_clock::time_point linger_deadline_;
  uint64_t request_seq_ = 0;      // numbers the requests of this connection
  bool handled_ = false;          // the request in flight has its response
  bool watching_ = false;         // a cancel watch is pending for request_seq_
  std::atomic<bool> cancelled_{false};  // the client left while the request waited
  std::atomic<bool> work_done_{false};  // WorkDone(): no cancel watch for this request
  // The thread inside the handler's Handle() for this session, while there:
  // an answer given on it is sent without a hop (CompleteWith).
  std::atomic<std::thread::id> handling_on_{};
};

using Session = BasicSession<boost::beast::tcp_stream>;
using TlsSession = BasicSession<boost::beast::ssl_stream<boost::beast::tcp_stream>>;
extern template class BasicSession<boost::beast::tcp_stream>;
extern template class BasicSession<boost::beast::ssl_stream<boost::beast::tcp_stream>>;

}  // namespace tablestone::http
