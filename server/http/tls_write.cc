#include "server/http/tls_write.h"

#include <openssl/bio.h>
#include <openssl/err.h>

#include <algorithm>
#include <new>

namespace tablestone::http {
namespace {

// The sealer's write BIO: appends whatever OpenSSL writes to the std::string
// set as the BIO's data; never blocks, never fails but for memory.
int AppendWrite(BIO* bio, const char* data, int length) {
  auto* out = static_cast<std::string*>(BIO_get_data(bio));
  if (out == nullptr || length < 0) return -1;
  try {
    out->append(data, static_cast<size_t>(length));
  } catch (const std::bad_alloc&) {
    return -1;
  }
  return length;
}

long AppendCtrl(BIO*, int command, long, void*) {
  // Flushing has nothing to do; every other query (pending bytes, kernel TLS,
  // datagram controls) answers "no".
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int AppendCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* AppendMethod() {
  static const BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tablestone TLS sealer");
    if (m != nullptr) {
      BIO_meth_set_write(m, AppendWrite);
      BIO_meth_set_ctrl(m, AppendCtrl);
      BIO_meth_set_create(m, AppendCreate);
    }
    return m;
  }();
  return method;
}

// Bytes a TLS 1.2 or 1.3 AEAD record adds to its payload at most (header,
// explicit nonce or content type, tag), rounded up.
constexpr size_t kRecordOverhead = 32;

}  // namespace

TlsSealer::TlsSealer() {
  const BIO_METHOD* method = AppendMethod();
  bio_ = method != nullptr ? BIO_new(method) : nullptr;
  if (bio_ == nullptr) throw std::bad_alloc();
}

TlsSealer::~TlsSealer() { BIO_free(bio_); }

template <class Write>
bool TlsSealer::Lend(SSL* ssl, std::string* out, Write&& write) {
  BIO* stream_bio = SSL_get_wbio(ssl);
  if (stream_bio == nullptr || !SSL_is_init_finished(ssl)) return false;
  // SSL_set0_wbio releases one reference of the BIO it replaces: the stream's
  // BIO keeps the one its SSL_set_bio gave (read and write side share it), ours
  // the one BIO_new gave.
  BIO_up_ref(stream_bio);
  BIO_up_ref(bio_);
  BIO_set_data(bio_, out);
  SSL_set0_wbio(ssl, bio_);
  const bool ok = write();
  SSL_set0_wbio(ssl, stream_bio);
  BIO_set_data(bio_, nullptr);
  if (!ok) ERR_clear_error();
  return ok;
}

bool TlsSealer::Seal(SSL* ssl, std::initializer_list<std::string_view> pieces, std::string* out) {
  size_t payload = 0;
  for (std::string_view piece : pieces) payload += piece.size();
  out->reserve(out->size() + payload + (payload / kTlsMaxRecordPayload + pieces.size()) * kRecordOverhead);
  return Lend(ssl, out, [ssl, pieces] {
    for (std::string_view piece : pieces) {
      while (!piece.empty()) {
        size_t written = 0;
        if (SSL_write_ex(ssl, piece.data(), piece.size(), &written) != 1) return false;
        piece.remove_prefix(written);
      }
    }
    return true;
  });
}

bool TlsSealer::SealCloseNotify(SSL* ssl, std::string* out) {
  // SSL_shutdown returns 0 once it has written close_notify and has not yet received the peer's,
  // which the session never waits for.
  return Lend(ssl, out, [ssl] { return SSL_shutdown(ssl) >= 0; });
}

bool SealResponse(TlsSealer& sealer, SSL* ssl, std::string* head, std::string_view body, std::string* out) {
  out->clear();
  size_t joined = 0;
  if (head->size() < kTlsMaxRecordPayload) {
    joined = std::min(body.size(), kTlsMaxRecordPayload - head->size());
    head->append(body.data(), joined);
  }
  return sealer.Seal(ssl, {*head, body.substr(joined)}, out);
}

}  // namespace tablestone::http
