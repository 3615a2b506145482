// The TLS session's response write: OpenSSL seals the whole response into TLS
// records in one buffer, which the session then sends on the TCP socket as it
// sends a plain response (one send for nearly every response, synchronously
// when the socket takes it).
//
// Why not a write through the ssl_stream: asio's ssl::stream passes each
// record through a BIO pair of about one record and sends it with an
// asynchronous socket write of its own, so every response cost at least one
// asynchronous write (a deadline timer armed, a completion posted) and a
// 1,000-entity page one per 16 KiB record (docs/benchmarks.md, "HTTPS").
//
// Contract: TlsSealer::Seal runs on the connection's executor while no
// operation of the stream (handshake, read, write, shutdown) is in progress on
// the same SSL object. It lends the SSL object its own write BIO for the call
// and gives the stream's BIO back before returning, so whatever OpenSSL writes
// at any other time (handshake, alerts, replies produced while reading) still
// goes through the stream, which flushes it before its operations complete.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tablestone::http {

// TLS's largest record payload (RFC 8446, section 5.1).
inline constexpr size_t kTlsMaxRecordPayload = 16384;

class TlsSealer {
 public:
  TlsSealer();
  ~TlsSealer();
  TlsSealer(const TlsSealer&) = delete;
  TlsSealer& operator=(const TlsSealer&) = delete;

  // Encrypts `pieces`, in order, as application data of `ssl` (a connection
  // whose handshake is done) and appends the records to `*out`. Records are
  // as large as the pieces allow: a caller that wants full records joins
  // small pieces first (see SealResponse). False when OpenSSL refuses (the
  // connection is unusable then: close it); `*out` may hold part of the
  // records.
  bool Seal(SSL* ssl, std::initializer_list<std::string_view> pieces, std::string* out);

  // Appends the close_notify alert of `ssl` to `*out`: sent before the session closes a TLS
  // connection, it tells the client that the connection ended cleanly, so that its session stays
  // resumable (OpenSSL's clients drop a session whose connection ends without one). False as Seal.
  bool SealCloseNotify(SSL* ssl, std::string* out);

 private:
  // Runs `write` (OpenSSL calls that write records) with the sealer's BIO as the write BIO of
  // `ssl`, appending to `*out`; false if the handshake is not done or `write` fails.
  template <class Write>
  bool Lend(SSL* ssl, std::string* out, Write&& write);

  BIO* bio_;  // appends to the string set with BIO_set_data during Seal
};

// Seals a response (its serialized head and its body) into `*out` (cleared
// first) in full-size records: the body's first bytes join the head in
// `*head` (modified) up to one record, the rest is sealed in place, so a small
// response is one record and a large one carries no short record but its
// last. False as TlsSealer::Seal.
bool SealResponse(TlsSealer& sealer, SSL* ssl, std::string* head, std::string_view body, std::string* out);

}  // namespace tablestone::http
