// The one interface server/http knows above itself: something that turns a
// parsed HTTP request into a response. server/api implements it; server/app
// hands an instance to the Listener.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <string>

namespace tablestone::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

// Facts about the connection a request arrived on.
struct RequestContext {
  std::string remote_ip;  // textual address of the peer, e.g. "127.0.0.1"
  bool is_tls = false;
  std::chrono::steady_clock::time_point start;  // when the request headers were read
};

// Errors the transport itself detects before a handler runs. The handler
// renders them so that every error body has the service's shape.
enum class TransportError {
  kBodyTooLarge,    // 413 RequestBodyTooLarge
  kHeaderTooLarge,  // 400/431 (headers over the limit)
  kBadRequest,      // 400 malformed HTTP
  // Added after the first version (append-only): the handler threw from
  // Handle(). Render 500 InternalError. If the handler leaves the status at
  // 200 for a value it does not know, the session forces a bare 500.
  kInternalError,
};

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // Called on an I/O thread; must not throw (the session still guards it).
  // Sets status, headers and body of `response`; keep-alive and Content-Length
  // are settled by the session afterwards.
  virtual void Handle(Request& request, const RequestContext& context, Response& response) = 0;
  // Builds the response for a transport-level failure.
  virtual void RenderTransportError(TransportError error, const Request& partial_request,
                                    Response& response) = 0;

  // Group commit (added after the first version; the defaults mean "every
  // response may be sent at once"). Storage may acknowledge a write before it
  // is durable (a buffered write-ahead log); a response that may reflect such
  // a write must wait. Right after Handle() the session takes
  // DurabilityTicket(); if !IsDurable(ticket) it holds the response, and once
  // per batch of held responses on an I/O thread (after the other ready work
  // of that thread, so one call covers many requests) it calls MakeDurable().
  // True: send them. False: the writes may be lost in a crash; the session
  // answers each held request with RenderTransportError(kInternalError).
  // All three may be called concurrently from any I/O thread.
  virtual uint64_t DurabilityTicket() { return 0; }
  virtual bool IsDurable(uint64_t ticket) { return true; }
  virtual bool MakeDurable() { return true; }
};

}  // namespace tablestone::http
