// The TLS session's records, sealed and opened by OpenSSL on buffers the
// session owns, so that a TLS connection reads and writes its socket as a plain
// one does.
//
// Writes: the whole response is sealed into records in one buffer, which the
// session sends as it sends a plain response (one send for nearly every
// response, synchronously when the socket takes it). Reads: the session reads
// the socket itself and has the records it got opened in one call. Through
// asio's ssl::stream, every record passed a BIO pair of about one record, each
// response took an asynchronous write of its own (a deadline timer armed, a
// completion posted; a 1,000-entity page one per 16 KiB record) and each read
// a failed SSL_read before the socket read (docs/benchmarks.md, "HTTPS").
//
// Contract: every call runs on the connection's executor while no operation
// of the stream (handshake, read, write, shutdown) is in progress on the same
// SSL object, and after its handshake. It lends the SSL object the BIOs of
// this class for its duration and gives the stream's BIO back before
// returning, so the stream's operations see the SSL object as they left it.
// Open() must see every byte the connection receives after the stream last
// read: once the stream has read again, records may wait in its own buffers,
// and only the stream may read on (see BasicSession::DoReadIdle).
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tablestone::http {

// TLS's largest record payload (RFC 8446, section 5.1).
inline constexpr size_t kTlsMaxRecordPayload = 16384;

class TlsRecords {
 public:
  TlsRecords();
  ~TlsRecords();
  TlsRecords(const TlsRecords&) = delete;
  TlsRecords& operator=(const TlsRecords&) = delete;

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

  enum class Opened {
    kOk,      // every byte taken; the plain text of each whole record handed out
    kClosed,  // the client sent close_notify
    kFailed,  // a record did not open (or the handshake is not done): close the connection
  };
  // The room Open needs for the plain text of `records_size` new bytes: a
  // record begun in an earlier read may end in them.
  static size_t OpenCapacity(size_t records_size) { return records_size + kTlsMaxRecordPayload + 256; }
  // Opens `records` (the bytes just read from the socket) into `plain`, which
  // has room for OpenCapacity(records.size()) bytes; `*plain_size` is set to the
  // bytes written (0 when no record is whole yet: its start stays inside
  // OpenSSL). Records OpenSSL writes meanwhile (an alert, a key update) are
  // appended to `*reply`, which the caller sends before anything else.
  Opened Open(SSL* ssl, std::string_view records, char* plain, size_t* plain_size, std::string* reply);
  // True if `ssl` holds received bytes that no read has handed out yet, in its
  // own buffers or in the stream's BIO (the handshake read past its end).
  static bool HasInput(SSL* ssl);
  // As Open, for what `ssl` already holds (HasInput) instead of new bytes.
  Opened OpenHeld(SSL* ssl, char* plain, size_t capacity, size_t* plain_size, std::string* reply);

 private:
  // Runs `work` (OpenSSL calls) with our BIOs in place of the stream's: writes
  // append to `*out`; reads take from `*in` (when given).
  template <class Work>
  auto Lend(SSL* ssl, std::string_view* in, std::string* out, Work&& work);
  Opened ReadAll(SSL* ssl, const std::string_view* in, char* plain, size_t capacity, size_t* plain_size);

  BIO* out_bio_;  // appends to the std::string set with BIO_set_data
  BIO* in_bio_;   // hands out the std::string_view set with BIO_set_data
};

// Seals a response (its serialized head and its body) into `*out` (cleared
// first) in full-size records: the body's first bytes join the head in
// `*head` (modified) up to one record, the rest is sealed in place, so a small
// response is one record and a large one carries no short record but its
// last. False as TlsRecords::Seal.
bool SealResponse(TlsRecords& sealer, SSL* ssl, std::string* head, std::string_view body, std::string* out);

}  // namespace tablestone::http
