// The one interface server/http knows above itself: something that turns a
// parsed HTTP request into a response. server/api implements it; server/app
// hands an instance to the Listener.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace tablestone::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

// What a handler tells the access log about a request it answered, beyond
// what the transport sees. Views of strings that outlive every session of the
// handler (configured names, static tables); empty = not known.
struct AccessNote {
  std::string_view account;    // the configured account the request addressed
  std::string_view operation;  // the REST operation (protocol/operation.h), once routed
};

// Facts about the connection a request arrived on.
struct RequestContext {
  std::string remote_ip;  // textual address of the peer, e.g. "127.0.0.1"
  bool is_tls = false;
  std::chrono::steady_clock::time_point start;  // when the request headers were read
  // The one member a handler writes through its const reference: set before
  // it answers the request (Completion or AdmitHeaders' refusal), from any
  // thread; the session reads it for the access line after the answer and
  // clears it before the next request.
  mutable AccessNote access_note;
};

// One access-log line's facts (HttpOptions::access_line formats them).
struct AccessRecord {
  std::string_view peer;        // RequestContext::remote_ip
  std::string_view method;      // as sent; empty when the request line was unreadable
  std::string_view target;      // RequestHandler::LogSafeTarget of the request target
  unsigned status = 0;
  std::string_view error_code;  // x-ms-error-code of the answer; empty when none
  std::string_view request_id;  // x-ms-request-id of the answer; empty when none
  std::string_view account;     // AccessNote
  std::string_view operation;   // AccessNote
  uint64_t bytes = 0;           // response bytes written
  int64_t micros = 0;           // headers read -> answer written
};

// Errors the transport itself detects before a handler runs. The handler
// renders them so that every error body has the service's shape.
enum class TransportError {
  kBodyTooLarge,    // 413 RequestBodyTooLarge
  kHeaderTooLarge,  // 400/431 (headers over the limit)
  kBadRequest,      // 400 malformed HTTP
  // Added after the first version (append-only): the handler threw from
  // Handle() or dropped its Completion. Render 500 InternalError. If the
  // handler leaves the status at 200 for a value it does not know, the
  // session forces a bare 500.
  kInternalError,
};

// How the session puts a response on the wire. Anything but kSend exists for
// fault injection (server/faults, docs/testing-with-faults.md): the client
// must meet a connection that dies, as it would behind a real load balancer.
enum class Delivery {
  kSend,                  // the whole response (the normal case)
  kCloseWithoutResponse,  // close the connection; no byte of the response is sent
  kResetMidBody,          // send the head and half the body, then reset the connection (RST)
};

// Where a handler delivers its response. Implemented by the session; tests
// and tools may implement it to run a handler without a socket.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // Receives the response of the request handed to Handle(). Called exactly
  // once, from any thread.
  virtual void Complete(Response&& response) = 0;
  // Complete() with a delivery other than kSend. A sink without a
  // connection (tests, tools) keeps this default: the whole response.
  virtual void CompleteWith(Response&& response, Delivery delivery) { Complete(std::move(response)); }
  // True once the client has gone away (its connection closed while the
  // request waited): work not started yet may be skipped. The response is
  // then dropped, but Complete() must still be called.
  virtual bool Cancelled() const { return false; }
  // The request's work is done and only its answer is pending (say, behind a
  // log write): a client leaving now would save nothing, so the sink need not
  // watch for that. Optional; from any thread, before Complete().
  virtual void WorkDone() {}
  // True when called on the thread that serves this connection during
  // Handle(): AfterTurn then takes work. False on any other thread, and for a
  // sink without an event loop (tests, tools: the default).
  virtual bool InTurn() const { return false; }
  // When InTurn(): runs `work` later on this connection's thread, after the
  // work already ready there (the rest of its event-loop turn: the requests
  // of other connections read in the same turn), and returns true. Otherwise
  // returns false and drops `work`. Lets a handler gather what a turn's
  // requests share (one log write for the writes of a turn) before handing it
  // to another thread.
  virtual bool AfterTurn(std::function<void()> work) { return false; }
  // The handler dropped its Completion without calling it. Default: a bare 500.
  virtual void Abandoned() {
    Response response;
    response.result(500);
    Complete(std::move(response));
  }
};

// A handler's promise to answer one request: call it exactly once with the
// response, from any thread, now or later. Cheap to move; copying is refused
// so that "exactly once" stays visible in the code.
class Completion {
 public:
  Completion() = default;
  explicit Completion(std::shared_ptr<ResponseSink> sink) : sink_(std::move(sink)) {}
  Completion(Completion&&) noexcept = default;
  Completion& operator=(Completion&& other) noexcept {
    if (this != &other) {
      Abandon();
      sink_ = std::move(other.sink_);
    }
    return *this;
  }
  // A completion dropped without being called (a handler that threw, or a
  // bug) still answers its request: the sink's Abandoned() (500).
  ~Completion() { Abandon(); }
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  void operator()(Response&& response) {
    std::shared_ptr<ResponseSink> sink = std::move(sink_);
    if (sink) sink->Complete(std::move(response));
  }
  // The same, delivered as `delivery` says (fault injection only).
  void operator()(Response&& response, Delivery delivery) {
    std::shared_ptr<ResponseSink> sink = std::move(sink_);
    if (sink) sink->CompleteWith(std::move(response), delivery);
  }
  bool Cancelled() const { return sink_ != nullptr && sink_->Cancelled(); }
  // See ResponseSink::WorkDone.
  void WorkDone() {
    if (sink_) sink_->WorkDone();
  }
  // See ResponseSink::InTurn and AfterTurn; false once called.
  bool InTurn() const { return sink_ != nullptr && sink_->InTurn(); }
  bool AfterTurn(std::function<void()> work) { return sink_ != nullptr && sink_->AfterTurn(std::move(work)); }
  // False once called (or when default-constructed).
  explicit operator bool() const { return sink_ != nullptr; }

 private:
  void Abandon() {
    std::shared_ptr<ResponseSink> sink = std::move(sink_);
    if (sink) sink->Abandoned();
  }

  std::shared_ptr<ResponseSink> sink_;
};

// How the transport reads the body of a request AdmitHeaders admitted.
struct BodyAdmission {
  // The most body bytes read for this request; more is answered as
  // TransportError::kBodyTooLarge (413) and the connection closes (after a
  // lingering close). Never above HttpOptions::body_limit.
  uint64_t limit = UINT64_MAX;
  // Whether "Expect: 100-continue" is answered with "100 Continue". False for
  // a request nobody has authenticated yet: the interim response invites the
  // body, and RFC 9110 section 10.1.1 lets a server omit it (the client then
  // sends the body after a wait of its own).
  bool send_continue = true;
};

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // Called on the connection's I/O thread, which it must not block for long:
  // work that may (storage scans, writes, log syncs) goes elsewhere and `done`
  // is called from there. `request` and `context` stay valid, unchanged, until
  // `done` is called. `done` may also be called before Handle() returns, on
  // its thread (an answer from memory): the session then sends it at once,
  // without a hop through its executor, so its write may start before
  // Handle() returns. Sets status, headers and body; keep-alive and
  // Content-Length are settled by the session afterwards. Must not throw once
  // it has called or handed off `done`; if it throws before, the session
  // answers with RenderTransportError(kInternalError).
  virtual void Handle(const Request& request, const RequestContext& context, Completion done) = 0;
  // Called when a request's headers have arrived but its body has not (all):
  // whether the body is worth reading. False: `refusal` is the answer, sent
  // with "Connection: close" without reading the body (and without "100
  // Continue"), so an unauthenticated client cannot make the server buffer
  // bodies. Synchronous, on the I/O thread; `header` has an empty body. A
  // request that is admitted (or arrived whole) still goes to Handle().
  virtual bool AdmitHeaders(const Request& header, const RequestContext& context, Response& refusal) {
    return true;
  }
  // The request target as the access log may show it: the handler knows
  // which parts are secrets (a SAS signature) and replaces them. Any thread.
  virtual std::string LogSafeTarget(std::string_view target) const { return std::string(target); }
  // The same, for a handler that admits a request it has NOT authenticated
  // on its headers (a route that authenticates in Handle()): it narrows
  // `body` so that the transport reads little for it and sends no "100
  // Continue" (docs/reliability.md, "Memory bounds"). The default calls the
  // three-argument form and leaves `body` as it is.
  virtual bool AdmitHeaders(const Request& header, const RequestContext& context, Response& refusal,
                            BodyAdmission& body) {
    return AdmitHeaders(header, context, refusal);
  }
  // Builds the response for a transport-level failure. Synchronous.
  virtual void RenderTransportError(TransportError error, const Request& partial_request,
                                    Response& response) = 0;
};

// Runs `handler` on `request` and blocks until it completes (tests and tools;
// never on an I/O thread).
Response HandleAndWait(RequestHandler& handler, const Request& request, const RequestContext& context);

}  // namespace tablestone::http
