#include "server/http/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string_view>
#include <vector>

#include <sys/socket.h>

#include "server/http/framing.h"

namespace tablestone::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace net = boost::asio;

// Static so the 100-continue write needs neither a message nor a serializer.
constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
// Bytes the read buffer may hold beyond the header limit (ReadBufferLimit):
// a chunk-size line with its extensions, or a trailer, must fit in them.
constexpr size_t kReadBufferSlack = 8 * 1024;
// A buffer or body that grew past this for one large request is given back
// before the connection goes idle, so 10k idle connections stay small.
constexpr size_t kKeepCapacity = 64 * 1024;
// What a lingering close drops at most after a 400 for malformed HTTP (the
// endless chunk-size line of tests/reliability/hostile_test.py).
constexpr uint64_t kShortLingerBytes = 1024 * 1024;


// Status used when the handler did not render a transport error itself.
bhttp::status DefaultStatus(TransportError error) {
  switch (error) {
    case TransportError::kBodyTooLarge:
      return bhttp::status::payload_too_large;
    case TransportError::kHeaderTooLarge:
      return bhttp::status::request_header_fields_too_large;
    case TransportError::kBadRequest:
      return bhttp::status::bad_request;
    case TransportError::kInternalError:
      return bhttp::status::internal_server_error;
  }
  return bhttp::status::internal_server_error;
}

// Peer went away or a deadline passed: nothing useful can be sent.
bool IsQuietReadError(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
         ec == net::error::eof || ec == net::error::operation_aborted || ec == beast::error::timeout ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::not_connected || ec == net::error::bad_descriptor;
}


}  // namespace

size_t ReadBufferLimit(const HttpOptions& options) {
  // The header block must fit whole (Beast parses it in one piece); after it,
  // body bytes are moved into the body as they arrive, so what stays in the
  // buffer is at most one chunk-size line (with extensions) or trailer, which
  // the slack bounds. Never below the idle read size (DoReadIdle prepares it).
  return std::max(options.header_limit, kIdleReadBytes) + kReadBufferSlack;
}

template <class Stream>
BasicSession<Stream>::BasicSession(Stream stream, const SessionEnv& env)
    : stream_(std::move(stream)),
      idle_timer_(stream_.get_executor()),
      buffer_(ReadBufferLimit(*env.options)),
      env_(env) {
  beast::error_code ec;
  // DoWrite's synchronous first attempt must never block the I/O thread
  // (asynchronous operations are unaffected by this flag).
  Tcp().socket().non_blocking(true, ec);
  auto remote = Tcp().socket().remote_endpoint(ec);
  context_.remote_ip = ec ? std::string("-") : remote.address().to_string();
  context_.is_tls = kIsTls;
}

template <class Stream>
BasicSession<Stream>::~BasicSession() {
  if (started_ && env_.counters != nullptr) env_.counters->Add(env_.counters->connections_closed, 1);
}

template <class Stream>
void BasicSession<Stream>::Start(ConnectionRegistry::Id id) {
  registration_.Assign(env_.registry, id);
  started_ = true;
  if (env_.counters != nullptr) env_.counters->Add(env_.counters->connections_opened, 1);
  if constexpr (kIsTls) {
    // The first bytes decide: a TLS record starts the handshake with them, anything else is
    // plain HTTP sent to the HTTPS port and gets a plain 400 (OnFirstBytes).
    // The first bytes and the handshake share one deadline, short, so that
    // connections that never handshake do not pile up.
    state_ = State::kReading;
    Tcp().expires_after(env_.options->handshake_timeout);
    Tcp().async_read_some(buffer_.prepare(kIdleReadBytes),
                          beast::bind_front_handler(&BasicSession::OnFirstBytes, this->shared_from_this()));
  } else {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&BasicSession::DoReadIdle, this->shared_from_this()));
  }
}

template <class Stream>
void BasicSession<Stream>::RequestClose(CloseMode mode) {
  net::post(stream_.get_executor(), [self = this->shared_from_this(), mode] { self->OnCloseRequested(mode); });
}

template <class Stream>
void BasicSession<Stream>::OnCloseRequested(CloseMode mode) {
  shutting_down_ = true;
  if (state_ == State::kClosed) return;
  if (mode == CloseMode::kForce) {
    // Cancel + shutdown on our own executor; the pending operation completes
    // with an error and the session ends (the socket closes with it).
    beast::error_code ec;
    Tcp().socket().cancel(ec);
    Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
    return;
  }
  // Graceful: a connection between requests goes now, as does one lingering
  // after its last answer; one with a request in flight answers it with
  // "Connection: close" (see HandleRequest/OnWrite).
  if (state_ == State::kIdle || state_ == State::kClosing) {
    beast::error_code ec;
    Tcp().socket().cancel(ec);
  }
}

template <class Stream>
void BasicSession<Stream>::DoReadIdle() {
  if (shutting_down_) return CloseNow();
  if (buffer_.size() > 0) return DoReadHeader();  // pipelined request already here
  if (buffer_.capacity() > kKeepCapacity) buffer_.shrink_to_fit();
  state_ = State::kIdle;
  // A new connection gets the short first-byte deadline; one that has been
  // answered before is a client's pooled connection and waits idle_timeout.
  const std::chrono::milliseconds timeout =
      request_seq_ == 0 ? std::min(env_.options->first_byte_timeout, env_.options->idle_timeout)
                        : env_.options->idle_timeout;
  if constexpr (!kIsTls) {
    // The socket read itself, without Beast's per-operation deadline: the
    // deadline only moves later from one wait to the next (the first-byte
    // timeout is the first wait's, never longer than idle_timeout), so the
    // timer armed for an earlier one fires first and re-arms (OnIdleTimer).
    idle_deadline_ = std::chrono::steady_clock::now() + timeout;
    if (!idle_timer_armed_) ArmIdleTimer();
    Tcp().socket().async_read_some(buffer_.prepare(kIdleReadBytes),
                                   [self = this->shared_from_this()](beast::error_code ec, size_t bytes) {
                                     self->OnIdleRead(ec, bytes);
                                   });
  } else {
    DoReadIdleTls(timeout);
  }
}

template <class Stream>
void BasicSession<Stream>::ArmIdleTimer() {
  idle_timer_armed_ = true;
  idle_timer_.expires_at(idle_deadline_);
  idle_timer_.async_wait([weak = this->weak_from_this()](beast::error_code ec) {
    if (auto self = weak.lock()) self->OnIdleTimer(ec);
  });
}

template <class Stream>
void BasicSession<Stream>::OnIdleTimer(beast::error_code ec) {
  idle_timer_armed_ = false;
  // Cancelled (a close), or the connection is busy with a request: the next
  // wait for a request arms it again.
  if (ec || state_ != State::kIdle) return;
  if (std::chrono::steady_clock::now() < idle_deadline_) return ArmIdleTimer();
  // The wait outlived its deadline: it ends as Beast's timeout ended it, with
  // the read failing and the connection closing (OnIdleRead).
  beast::error_code ignored;
  Tcp().socket().cancel(ignored);
}

template <class Stream>
void BasicSession<Stream>::OnIdleRead(beast::error_code ec, size_t bytes) {
  buffer_.commit(bytes);
  if (ec) return CloseNow();  // EOF, idle timeout, reset or a graceful stop
  // Bytes that raced with a graceful stop are a request the client already
  // sent: serve it (the response says "Connection: close").
  DoReadHeader();
}

template <class Stream>
void BasicSession<Stream>::DoReadHeader() {
  state_ = State::kReading;
  close_after_write_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(std::min<size_t>(env_.options->header_limit, UINT32_MAX)));
  parser_->body_limit(env_.options->body_limit);
  // One deadline for headers + body, so that a client trickling bytes is cut off, armed by the
  // first read that has to wait (ArmReadDeadline): a request already whole in the buffer needs
  // none, and setting it read the clock and touched the stream's timers on every request.
  read_deadline_armed_ = false;
  // Fast path: a typical request arrives whole in the read that ended the
  // idle wait. Parsing it here, synchronously, saves the completion post
  // (and possible thread wake-up) an async read would cost for data that is
  // already buffered. Anything incomplete falls back to the async reads.
  parser_->eager(true);
  beast::error_code ec;
  while (buffer_.size() > 0 && !parser_->is_done()) {
    size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    CountBytesIn(used);
    if (ec == bhttp::error::need_more) {
      ec = {};
      break;
    }
    if (ec || used == 0) break;
  }
  if (ec) return OnReadError(ec);
  if (parser_->is_header_done()) return OnHeader(ec, 0);
  if constexpr (kIsTls) tls_reads_own_ = false;  // DoReadIdle
  ArmReadDeadline();
  bhttp::async_read_header(stream_, buffer_, *parser_,
                           beast::bind_front_handler(&BasicSession::OnHeader, this->shared_from_this()));
}

template <class Stream>
void BasicSession<Stream>::ArmReadDeadline() {
  if (read_deadline_armed_) return;
  read_deadline_armed_ = true;
  Tcp().expires_after(env_.options->read_timeout);
}

template <class Stream>
void BasicSession<Stream>::OnHeader(beast::error_code ec, size_t bytes) {
  CountBytesIn(bytes);
  if (ec) return OnReadError(ec);
  context_.start = std::chrono::steady_clock::now();
  context_.access_note = {};
  const auto& req = parser_->get();
  // Framing the parser let through but a proxy may read differently (request
  // smuggling): refused before any body is read, and the connection closes.
  if (const FramingError framing = CheckRequestFraming(req.version(), req.base()); framing != FramingError::kNone) {
    env_.log->debug("request from {} refused: {}", context_.remote_ip, FramingErrorText(framing));
    return FailRequest(TransportError::kBadRequest);
  }
  // A body that is wholly in the read buffer already (a small request sent in
  // one piece, as SDKs send entity writes) costs nothing more to read, and
  // Handle() authenticates anyway: asking first would route and authenticate
  // every write twice.
  const auto length = parser_->content_length();
  const bool body_buffered = length.has_value() && buffer_.size() >= *length;
  BodyAdmission admission;
  if (!parser_->is_done() && !body_buffered) {
    // The body is still to come: is the request worth reading it for?
    Response refusal;
    refusal.version(req.version());
    bool admitted = true;
    try {
      admitted = env_.handler->AdmitHeaders(req, context_, refusal, admission);
    } catch (const std::exception& e) {
      env_.log->error("AdmitHeaders threw: {}", e.what());
    }
    if (!admitted) return RefuseBeforeBody(std::move(refusal));
    if (admission.limit < env_.options->body_limit) {
      // A declared length over it fails at once; a chunked body when it passes the limit.
      if (length.has_value() && *length > admission.limit) return FailRequest(TransportError::kBodyTooLarge);
      parser_->body_limit(admission.limit);
    }
  }
  if (!parser_->is_done() && req.version() >= 11 && admission.send_continue) {
    auto expect = req[bhttp::field::expect];
    if (!expect.empty() && EqualsIgnoreCaseAscii(std::string_view(expect.data(), expect.size()), "100-continue")) {
      ArmReadDeadline();
      net::async_write(stream_, net::buffer(kContinue, sizeof(kContinue) - 1),
                       beast::bind_front_handler(&BasicSession::OnContinueWritten, this->shared_from_this()));
      return;
    }
  }
  DoReadBody();
}

template <class Stream>
void BasicSession<Stream>::RefuseBeforeBody(Response refusal) {
  state_ = State::kHandling;
  close_after_write_ = true;  // the unread body makes the stream unusable
  request_ = parser_->release();
  parser_.reset();
  ++request_seq_;
  handled_ = true;
  response_ = std::move(refusal);
  FinishResponse();
  DoWrite();  // then a lingering close drops what the client still sends
}

template <class Stream>
void BasicSession<Stream>::OnContinueWritten(beast::error_code ec, size_t) {
  if (ec) return CloseNow();
  DoReadBody();
}

template <class Stream>
void BasicSession<Stream>::DoReadBody() {
  if (parser_->is_done()) return HandleRequest();
  if constexpr (kIsTls) tls_reads_own_ = false;  // DoReadIdle
  ArmReadDeadline();
  bhttp::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&BasicSession::OnBody, this->shared_from_this()));
}

template <class Stream>
void BasicSession<Stream>::OnBody(beast::error_code ec, size_t bytes) {
  CountBytesIn(bytes);
  if (ec) return OnReadError(ec);
  HandleRequest();
}

template <class Stream>
void BasicSession<Stream>::OnReadError(beast::error_code ec) {
  if (!parser_ || !parser_->is_header_done()) {
    context_.start = std::chrono::steady_clock::now();
    context_.access_note = {};
  }
  if (ec == bhttp::error::body_limit) return FailRequest(TransportError::kBodyTooLarge);
  if (ec == bhttp::error::header_limit) return FailRequest(TransportError::kHeaderTooLarge);
  static const beast::error_code kHttpError = bhttp::error::bad_method;
  if (IsQuietReadError(ec) || ec.category() != kHttpError.category()) {
    // Not an HTTP syntax problem (peer gone, deadline, socket error): close.
    if (ec != bhttp::error::end_of_stream && ec != net::error::eof && ec != net::error::operation_aborted) {
      env_.log->debug("connection from {} closed while reading: {}", context_.remote_ip, ec.message());
    }
    return CloseNow();
  }
  env_.log->debug("malformed request from {}: {}", context_.remote_ip, ec.message());
  FailRequest(TransportError::kBadRequest);
}

template <class Stream>
void BasicSession<Stream>::HandleRequest() {
  state_ = State::kHandling;
  request_ = parser_->release();
  parser_.reset();
  response_ = Response{};
  response_.version(request_.version());
  const uint64_t seq = ++request_seq_;
  handled_ = false;
  cancelled_.store(false, std::memory_order_relaxed);
  work_done_.store(false, std::memory_order_relaxed);
  // Restored, not cleared: an inline answer may start the next request,
  // whose Handle() runs inside this one.
  const std::thread::id outer = handling_on_.exchange(std::this_thread::get_id(), std::memory_order_relaxed);
  try {
    env_.handler->Handle(request_, context_, Completion(this->shared_from_this()));
  } catch (const std::exception& e) {
    // The dropped Completion has posted Abandoned() -> 500.
    env_.log->error("handler threw on {} {}: {}", std::string_view(request_.method_string()),
                    std::string_view(request_.target()), e.what());
  } catch (...) {
    env_.log->error("handler threw a non-exception on {} {}", std::string_view(request_.method_string()),
                    std::string_view(request_.target()));
  }
  handling_on_.store(outer, std::memory_order_relaxed);
  // Answered inline (a point read): the write is already under way or done,
  // and request_seq_ may have moved on. Otherwise watch for the client
  // leaving, unless the handler said its work is done (an applied write
  // waiting for its log write): the watch costs epoll calls.
  if (seq == request_seq_ && !handled_ && state_ == State::kHandling && !work_done_.load(std::memory_order_relaxed)) {
    StartCancelWatch();
  }
}

template <class Stream>
void BasicSession<Stream>::Complete(Response&& response) {
  CompleteWith(std::move(response), Delivery::kSend);
}

template <class Stream>
void BasicSession<Stream>::CompleteWith(Response&& response, Delivery delivery) {
  // A handler answering at once, inside our Handle() call and on its thread
  // (RequestHandler::Handle's contract): straight on, as a dispatch() onto
  // our executor would, without wrapping the response in a heap-allocated
  // function.
  if (handling_on_.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
    return OnHandled(std::move(response), delivery);
  }
  // Otherwise posted back to our executor (inline if already on it).
  net::dispatch(stream_.get_executor(), [self = this->shared_from_this(), r = std::move(response), delivery]() mutable {
    self->OnHandled(std::move(r), delivery);
  });
}

template <class Stream>
bool BasicSession<Stream>::InTurn() const {
  return handling_on_.load(std::memory_order_relaxed) == std::this_thread::get_id();
}

template <class Stream>
bool BasicSession<Stream>::AfterTurn(std::function<void()> work) {
  if (!InTurn()) return false;
  // A post from the executor's own thread queues behind the handlers that
  // are ready already (those of this turn's other connections).
  net::post(stream_.get_executor(), std::move(work));
  return true;
}

template <class Stream>
void BasicSession<Stream>::Abandoned() {
  net::post(stream_.get_executor(), [self = this->shared_from_this()] {
    self->RenderInternalError();
    Response rendered = std::move(self->response_);  // OnHandled moves into response_
    self->OnHandled(std::move(rendered));
  });
}

template <class Stream>
void BasicSession<Stream>::OnHandled(Response&& response, Delivery delivery) {
  if (state_ != State::kHandling || handled_) return;
  handled_ = true;
  StopCancelWatch();
  response_ = std::move(response);
  if (cancelled_.load(std::memory_order_relaxed) || delivery == Delivery::kCloseWithoutResponse) {
    // The client closed its connection while the request waited (nobody
    // reads this), or a fault rule asked for a connection that just closes.
    LogAccess(0);
    return CloseNow();
  }
  FinishResponse();
  if (delivery == Delivery::kResetMidBody) return DoWriteThenReset();
  DoWrite();
}

template <class Stream>
void BasicSession<Stream>::DoWriteThenReset() {
  state_ = State::kWriting;
  SerializeHead();
  const std::string& body = response_.body();
  // Half the body; a response without one loses the end of its head instead.
  if (body.empty()) {
    head_.resize(head_.size() / 2);
  } else {
    head_.append(body, 0, body.size() / 2);
  }
  Tcp().expires_after(env_.options->read_timeout);
  net::async_write(stream_, net::buffer(head_), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
    if (self->env_.counters != nullptr) self->env_.counters->Add(self->env_.counters->bytes_out, n);
    self->LogAccess(n);
    beast::error_code ignored;
    self->Tcp().socket().set_option(net::socket_base::linger(true, 0), ignored);
    self->state_ = State::kClosed;
    self->Tcp().close();  // with linger 0: an RST, not a FIN
  });
}

template <class Stream>
void BasicSession<Stream>::StartCancelWatch() {
  watching_ = true;
  Tcp().socket().async_wait(net::socket_base::wait_read,
                              [self = this->shared_from_this(), seq = request_seq_](beast::error_code ec) {
                                self->OnCancelWatch(ec, seq);
                              });
}

template <class Stream>
void BasicSession<Stream>::OnCancelWatch(beast::error_code ec, uint64_t seq) {
  if (seq != request_seq_ || !watching_) return;  // a watch of an earlier request, cancelled
  watching_ = false;
  if (ec) return;  // cancelled by StopCancelWatch or a close
  // Readable: either the peer closed (EOF, reset) or it pipelined its next
  // request, which stays in the socket for later.
  char byte;
  const ssize_t n = ::recv(Tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    cancelled_.store(true, std::memory_order_relaxed);
    env_.log->debug("client {} left while its request waited", context_.remote_ip);
  }
}

template <class Stream>
void BasicSession<Stream>::StopCancelWatch() {
  if (!watching_) return;
  watching_ = false;
  beast::error_code ec;
  Tcp().socket().cancel(ec);
}

template <class Stream>
void BasicSession<Stream>::RenderInternalError() {
  response_ = Response{};
  response_.version(request_.version());
  try {
    env_.handler->RenderTransportError(TransportError::kInternalError, request_, response_);
  } catch (...) {
    response_ = Response{};
  }
  if (response_.result() == bhttp::status::ok) response_.result(bhttp::status::internal_server_error);
}

template <class Stream>
void BasicSession<Stream>::FailRequest(TransportError error) {
  state_ = State::kHandling;
  close_after_write_ = true;
  linger_short_ = error == TransportError::kBadRequest;
  // The partial request (whatever was parsed) is what the handler and the
  // access log see.
  if (parser_) {
    request_ = parser_->release();
    parser_.reset();
  } else {
    request_ = Request{};
  }
  response_ = Response{};
  response_.version(11);
  try {
    env_.handler->RenderTransportError(error, request_, response_);
  } catch (...) {
    response_ = Response{};
  }
  if (response_.result() == bhttp::status::ok) response_.result(DefaultStatus(error));
  response_.version(11);
  FinishResponse();
  DoWrite();
}

template <class Stream>
void BasicSession<Stream>::FinishResponse() {
  // HEAD responses and 204/304 may carry the handler's own Content-Length
  // without a body; everything else gets the exact body size. 204 keeps an
  // explicit "Content-Length: 0" as the service sends it.
  const bool body_empty = response_.body().empty();
  const bool head = request_.method() == bhttp::verb::head;
  if (body_empty && head && response_.has_content_length()) {
    framing_.content_length.reset();
  } else {
    framing_.content_length = response_.body().size();
  }
  // The listener-wide flag is read too: a stop posted to our executor cannot
  // run while the handler runs, but the response must already say "close".
  const bool stopping = env_.stopping != nullptr && env_.stopping->load(std::memory_order_relaxed);
  framing_.keep_alive = !close_after_write_ && !shutting_down_ && !stopping && request_.keep_alive();
  framing_in_fields_ = false;
}

template <class Stream>
void BasicSession<Stream>::ApplyFramingToFields() {
  if (framing_.content_length) response_.content_length(*framing_.content_length);
  response_.keep_alive(framing_.keep_alive);
  framing_in_fields_ = true;
}

template <class Stream>
size_t BasicSession<Stream>::SerializeHead() {
  head_.clear();
  if (!framing_in_fields_) {
    const size_t fields = SerializeResponseHead(response_, framing_, &head_);
    if (fields != kHeadNeedsBeastFraming) return fields;
    ApplyFramingToFields();
  }
  return SerializeResponseHead(response_, &head_);
}

template <class Stream>
void BasicSession<Stream>::DoWrite() {
  state_ = State::kWriting;
  // Defence in depth: whatever put a CR, LF or NUL into a header (a stored
  // CORS rule could), it never reaches the wire, where it would end
  // the header early and let the value inject headers or a whole response.
  auto drop_unsafe = [this] {
    if (const size_t dropped = DropUnsafeHeaderFields(&response_); dropped > 0) {
      static std::atomic<bool> logged{false};
      if (!logged.exchange(true, std::memory_order_relaxed)) {
        env_.log->warn("dropped {} response header field(s) holding CR, LF or NUL (logged once)", dropped);
      }
    }
  };
  // Head and body in one gather write (one sendmsg for a small response).
  const size_t fields = SerializeHead();
  // Only a response with a Transfer-Encoding field can still be chunked once framed (SerializeHead
  // put the framing into its fields then).
  if (framing_in_fields_ && response_.chunked()) {
    drop_unsafe();  // never set by FinishResponse's callers today; Beast knows the framing
    Tcp().expires_after(env_.options->read_timeout);
    bhttp::async_write(stream_, response_, beast::bind_front_handler(&BasicSession::OnWrite, this->shared_from_this()));
    return;
  }
  if (!HeadHasOnlyItsOwnLineBreaks(head_, fields)) {
    drop_unsafe();
    if (beast::string_view reason = response_.reason(); !reason.empty() && HasLineBreak(reason)) {
      response_.reason({});  // the standard phrase instead
    }
    SerializeHead();
  }
  std::array<net::const_buffer, 2> buffers{net::buffer(head_), net::buffer(response_.body())};
  size_t total = head_.size() + response_.body().size();
  if constexpr (kIsTls) {
    if (!SealForWrite(buffers, total)) return;
  }
  // Fast path: try the send right here on the non-blocking socket. Nearly
  // every response fits the socket buffer at once, and then there is no
  // asynchronous operation, no write deadline timer to arm and cancel and no
  // completion to post.
  beast::error_code ec;
  size_t sent = Tcp().socket().write_some(buffers, ec);
  if (ec == net::error::would_block || ec == net::error::try_again) {
    ec = {};
    sent = 0;
  }
  if constexpr (kIsTls) KeepUnsentRecords(ec, buffers, total, sent);
  if (ec || sent == total) {
    // The continuation (and with it the next read) is posted, behind the
    // handlers this turn already has ready (other connections' requests).
    // Started here, asio's first, speculative recvmsg would nearly always come
    // before the client has read this answer and sent its next request: an
    // EAGAIN, then the wait for epoll, two recvmsg per request instead of one
    // (docs/benchmarks.md, "GET against the floor"). Posting also keeps the
    // stack flat when pipelined requests are already buffered.
    PostHere([self = this->shared_from_this(), ec, sent] { self->OnWrite(ec, sent); });
    return;
  }
  // The rest waits for the socket, under the write deadline.
  for (net::const_buffer& b : buffers) {
    const size_t skip = std::min(sent, b.size());
    b += skip;
    sent -= skip;
  }
  const size_t already = total - net::buffer_size(buffers);
  Tcp().expires_after(env_.options->read_timeout);
  // On the TCP stream for both: a TLS response is already records.
  net::async_write(Tcp(), buffers, [self = this->shared_from_this(), already](beast::error_code e, size_t n) {
    self->OnWrite(e, already + n);
  });
}

template <class Stream>
template <class Work>
void BasicSession<Stream>::PostHere(Work&& work) {
  auto executor = stream_.get_executor();
  if (const auto* io = executor.template target<net::io_context::executor_type>()) {
    return net::post(*io, std::forward<Work>(work));
  }
  net::post(executor, std::forward<Work>(work));
}

template <class Stream>
void BasicSession<Stream>::OnWrite(beast::error_code ec, size_t bytes) {
  // TLS: the counters and the access log count the HTTP message, as for plain HTTP, not its
  // records; a response cut short by an error counts nothing.
  if constexpr (kIsTls) bytes = ec ? 0 : message_bytes_;
  if (env_.counters != nullptr) env_.counters->Add(env_.counters->bytes_out, bytes);
  LogAccess(bytes);
  if (ec) return CloseNow();
  // After a transport error the peer may still be sending the request we
  // refused: linger so our response is not destroyed by a RST. Otherwise the
  // peer has nothing more to send and we close at once.
  if (close_after_write_) return DoLingeringClose();
  if (!framing_.keep_alive || shutting_down_) return CloseNow();
  // Give back large bodies before waiting for the next request.
  if (request_.body().capacity() > kKeepCapacity) request_ = Request{};
  if (response_.body().capacity() > kKeepCapacity) response_ = Response{};
  if (head_.capacity() > kKeepCapacity) head_ = std::string();
  if (sealed_.capacity() > kKeepCapacity) sealed_ = std::string();
  DoReadIdle();
}

template <class Stream>
void BasicSession<Stream>::DoLingeringClose() {
  // After a response that closes the connection we stop sending and read
  // (and drop) what the peer still sends before closing (HttpOptions::
  // linger_time): closing with unread bytes makes the kernel send RST, which
  // destroys the response (typically a 413) before the client has read it,
  // and a client still writing its body meets EPIPE instead of the status.
  state_ = State::kClosing;
  beast::error_code ec;
  Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (ec) return CloseNow();
  buffer_.clear();
  lingered_bytes_ = 0;
  // After malformed framing the client is no SDK still sending a body it
  // believes valid: a short linger, enough for the answer to get through.
  linger_max_bytes_ = linger_short_ ? std::min<uint64_t>(kShortLingerBytes, env_.options->linger_max_bytes)
                                    : env_.options->linger_max_bytes;
  linger_deadline_ = std::chrono::steady_clock::now() +
                     std::min<std::chrono::milliseconds>(env_.options->linger_time, env_.options->read_timeout);
  OnLinger({}, 0);
}

template <class Stream>
void BasicSession<Stream>::OnLinger(beast::error_code ec, size_t bytes) {
  lingered_bytes_ += bytes;
  if (ec || lingered_bytes_ >= linger_max_bytes_) return CloseNow();
  const auto now = std::chrono::steady_clock::now();
  if (now >= linger_deadline_) return CloseNow();
  Tcp().expires_at(std::min(linger_deadline_, now + env_.options->linger_gap));
  // The raw TCP stream, into the same scratch space each time (prepare()
  // without commit): lingering only drops bytes (for TLS, records never
  // decrypted, or the rest of a plain request sent to the HTTPS port).
  Tcp().async_read_some(buffer_.prepare(kIdleReadBytes),
                        beast::bind_front_handler(&BasicSession::OnLinger, this->shared_from_this()));
}

template <class Stream>
void BasicSession<Stream>::CloseNow() {
  beast::error_code ec;
  if constexpr (kIsTls) SendCloseNotify();
  state_ = State::kClosed;
  idle_timer_.cancel();
  Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  Tcp().close();
}

template <class Stream>
void BasicSession<Stream>::CountBytesIn(size_t bytes) {
  if (env_.counters != nullptr && bytes > 0) env_.counters->Add(env_.counters->bytes_in, bytes);
}

template <class Stream>
void BasicSession<Stream>::LogAccess(size_t bytes) {
  if (!env_.access_log) return;
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - context_.start)
          .count();
  std::string_view method = request_.method_string();
  std::string_view target = request_.target();
  const std::string shown = env_.handler != nullptr ? env_.handler->LogSafeTarget(target) : std::string(target);
  if (env_.options->access_line != nullptr) {
    auto header = [this](std::string_view name) {
      const auto it = response_.find(beast::string_view(name.data(), name.size()));
      return it == response_.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
    };
    AccessRecord record{.peer = context_.remote_ip,
                        .method = method,
                        .target = shown,
                        .status = response_.result_int(),
                        .error_code = header("x-ms-error-code"),
                        .request_id = header("x-ms-request-id"),
                        .account = context_.access_note.account,
                        .operation = context_.access_note.operation,
                        .bytes = bytes,
                        .micros = micros};
    env_.access_log->info("{}", env_.options->access_line(record));
    return;
  }
  env_.access_log->info("{} \"{} {}\" {} {} {}us", context_.remote_ip, method.empty() ? "-" : method,
                        shown.empty() ? std::string_view("-") : std::string_view(shown), response_.result_int(), bytes,
                        micros);
}

template class BasicSession<beast::tcp_stream>;
template class BasicSession<beast::ssl_stream<beast::tcp_stream>>;

}  // namespace tablestone::http
