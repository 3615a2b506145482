// The TLS side of BasicSession (session.h): the first bytes and the handshake, the wait for the
// next request with the records read and opened by the session itself, a response sealed into
// records before it is sent, and the close_notify. Only TlsSession's members are defined (and
// instantiated) here; the plain session never names them but in a discarded `if constexpr`.
#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <cstring>
#include <string>
#include <string_view>

#include "server/http/session.h"
#include "server/http/tls_scratch.h"

namespace tablestone::http {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;

// Every TLS connection opens with a handshake record (content type 22); RFC 8446, section 5.1.
constexpr unsigned char kTlsHandshakeRecord = 0x16;
// The answer to plain HTTP on the HTTPS port, in the words nginx uses for the same case, so the
// caller sees why instead of a bare reset.
constexpr std::string_view kPlainHttpOnTlsPortBody =
    "The plain HTTP request was sent to HTTPS port: this port speaks HTTPS, use an https:// endpoint.\n";
constexpr std::string_view kPlainHttpOnTlsPortHead =
    "HTTP/1.1 400 Bad Request\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 97\r\n"
    "Connection: close\r\n"
    "\r\n";
static_assert(kPlainHttpOnTlsPortBody.size() == 97, "Content-Length of kPlainHttpOnTlsPortHead");

}  // namespace

template <class Stream>
void BasicSession<Stream>::OnFirstBytes(beast::error_code ec, size_t bytes) {
  buffer_.commit(bytes);
  if (ec) return CloseNow();  // gone, or silent until the read deadline
  auto first = static_cast<const unsigned char*>(buffer_.data().data());
  if (first[0] == kTlsHandshakeRecord) {
    // The handler takes the bytes used as a pack: Boost 1.81's ssl_stream checks a buffered
    // handshake's handler against void(error_code) but calls it with (error_code, size_t).
    stream_.async_handshake(net::ssl::stream_base::server, buffer_.data(),
                            [self = this->shared_from_this()](beast::error_code hec, auto... used) {
                              (self->buffer_.consume(used), ...);
                              self->OnHandshake(hec);
                            });
    return;
  }
  env_.log->debug("plain HTTP from {} on the HTTPS port: answered 400", context_.remote_ip);
  state_ = State::kWriting;
  std::array<net::const_buffer, 2> answer{net::buffer(kPlainHttpOnTlsPortHead.data(), kPlainHttpOnTlsPortHead.size()),
                                          net::buffer(kPlainHttpOnTlsPortBody.data(), kPlainHttpOnTlsPortBody.size())};
  net::async_write(Tcp(), answer,
                   [self = this->shared_from_this()](beast::error_code wec, size_t) {
                     if (wec) return self->CloseNow();
                     self->DoLingeringClose();
                   });
}

template <class Stream>
void BasicSession<Stream>::OnHandshake(beast::error_code ec) {
  if (ec) {
    // Not a TLS client after all, an untrusted certificate, a deadline: there
    // is no channel to answer on.
    env_.log->debug("TLS handshake with {} failed: {}", context_.remote_ip, ec.message());
    return CloseNow();
  }
  DoReadIdle();
}

template <class Stream>
void BasicSession<Stream>::OpenTls(const char* records, size_t size) {
  SSL* ssl = stream_.native_handle();
  // buffer_ is empty here (DoReadIdle), and DoReadIdle's read leaves room in it for
  // OpenCapacity(size): what opens fits.
  const size_t room = buffer_.max_size() - buffer_.size();
  std::string& plain = ThreadTlsScratch().plain;
  if (plain.size() < room) plain.resize(room);
  size_t opened = 0;
  tls_reply_.clear();
  const TlsRecords::Opened result =
      records != nullptr ? tls_.Open(ssl, {records, size}, plain.data(), &opened, &tls_reply_)
                         : tls_.OpenHeld(ssl, plain.data(), room, &opened, &tls_reply_);
  if (opened > 0) {
    std::memcpy(buffer_.prepare(opened).data(), plain.data(), opened);
    buffer_.commit(opened);
  }
  if (result != TlsRecords::Opened::kOk) {
    if (result == TlsRecords::Opened::kFailed) env_.log->debug("TLS records from {} did not open", context_.remote_ip);
    return CloseNow();
  }
  // What OpenSSL answered while reading (a key update) goes out before anything else.
  beast::error_code ec;
  const size_t sent = tls_reply_.empty() ? 0 : Tcp().socket().write_some(net::buffer(tls_reply_), ec);
  if (sent < tls_reply_.size() && (!ec || ec == net::error::would_block || ec == net::error::try_again)) {
    net::async_write(Tcp(), net::buffer(tls_reply_.data() + sent, tls_reply_.size() - sent),
                     [self = this->shared_from_this()](beast::error_code wec, size_t) {
                       if (wec) return self->CloseNow();
                       self->DoReadHeader();
                     });
    return;
  }
  if (ec) return CloseNow();
  DoReadHeader();
}

template <class Stream>
void BasicSession<Stream>::DoReadIdleTls(std::chrono::milliseconds timeout) {
  Tcp().expires_after(timeout);
  // The records are read and opened here (tls_records.h) until the stream has had to read
  // itself: from then on records may wait in its buffers, and only it may read on.
  if (tls_reads_own_) {
    if (TlsRecords::HasInput(stream_.native_handle())) return OpenTls(nullptr, 0);  // past the handshake
    const size_t room = buffer_.max_size() - TlsRecords::OpenCapacity(0);
    if (tls_in_.size() != room) tls_in_.resize(room);
    Tcp().async_read_some(net::buffer(tls_in_), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) return self->CloseNow();  // EOF, idle timeout, reset or a graceful stop
      self->OpenTls(self->tls_in_.data(), n);
    });
    return;
  }
  stream_.async_read_some(buffer_.prepare(kIdleReadBytes),
                          beast::bind_front_handler(&BasicSession::OnIdleRead, this->shared_from_this()));
}

template <class Stream>
bool BasicSession<Stream>::SealForWrite(std::array<net::const_buffer, 2>& buffers, size_t& total) {
  // The whole response sealed into TLS records in one buffer (tls_records.h), then sent on the
  // socket exactly as a plain response is.
  message_bytes_ = total;
  TlsScratch& scratch = ThreadTlsScratch();
  std::string& sealed = scratch.sealed;
  scratch.head.assign(head_);
  if (!SealResponse(tls_, stream_.native_handle(), &scratch.head, response_.body(), &sealed)) {
    ReleaseSealed(sealed);
    env_.log->debug("TLS write to {} failed: OpenSSL refused to seal the response", context_.remote_ip);
    LogAccess(0);
    CloseNow();
    return false;
  }
  buffers = {net::buffer(sealed), net::const_buffer()};
  total = sealed.size();
  return true;
}

template <class Stream>
void BasicSession<Stream>::KeepUnsentRecords(const beast::error_code& ec, std::array<net::const_buffer, 2>& buffers,
                                             size_t& total, size_t& sent) {
  // What the socket did not take waits in the connection's own buffer: the thread's is free
  // again when this returns.
  std::string& sealed = ThreadTlsScratch().sealed;
  if (!ec && sent < total) {
    sealed_.assign(sealed, sent);
    buffers = {net::buffer(sealed_), net::const_buffer()};
    total = sealed_.size();
    sent = 0;
  }
  ReleaseSealed(sealed);
}

template <class Stream>
void BasicSession<Stream>::SendCloseNotify() {
  // A clean end for the client (its session stays resumable), sent only if the socket takes it
  // at once: nothing waits for a client that does not read. Never while a write is in flight:
  // CloseNow runs on its completion or where none was started.
  std::string& sealed = ThreadTlsScratch().sealed;
  sealed.clear();
  if (state_ != State::kStarting && state_ != State::kClosed &&
      tls_.SealCloseNotify(stream_.native_handle(), &sealed)) {
    beast::error_code ec;
    Tcp().socket().write_some(net::buffer(sealed), ec);
  }
  ReleaseSealed(sealed);
}

template void TlsSession::OnFirstBytes(beast::error_code, size_t);
template void TlsSession::OnHandshake(beast::error_code);
template void TlsSession::DoReadIdleTls(std::chrono::milliseconds);
template void TlsSession::OpenTls(const char*, size_t);
template bool TlsSession::SealForWrite(std::array<net::const_buffer, 2>&, size_t&);
template void TlsSession::KeepUnsentRecords(const beast::error_code&, std::array<net::const_buffer, 2>&, size_t&,
                                            size_t&);
template void TlsSession::SendCloseNotify();

}  // namespace tablestone::http
