#include "server/http/tls_records.h"

#include <openssl/bio.h>
#include <openssl/err.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace tablestone::http {
namespace {

// The write BIO: appends whatever OpenSSL writes to the std::string set as
// the BIO's data; never blocks, never fails but for memory.
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

// The read BIO: hands out the std::string_view set as the BIO's data, then
// asks to be retried (OpenSSL keeps a record's start until the rest comes).
int TakeRead(BIO* bio, char* data, int length) {
  BIO_clear_retry_flags(bio);
  auto* in = static_cast<std::string_view*>(BIO_get_data(bio));
  if (in == nullptr || length < 0) return -1;
  if (in->empty()) {
    BIO_set_retry_read(bio);
    return -1;
  }
  const size_t n = std::min(in->size(), static_cast<size_t>(length));
  std::memcpy(data, in->data(), n);
  in->remove_prefix(n);
  return static_cast<int>(n);
}

long AppendCtrl(BIO*, int command, long, void*) {
  // Flushing has nothing to do; every other query (pending bytes, kernel TLS,
  // datagram controls) answers "no".
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

long TakeCtrl(BIO* bio, int command, long, void*) {
  auto* in = static_cast<std::string_view*>(BIO_get_data(bio));
  if (command == BIO_CTRL_PENDING) return in != nullptr ? static_cast<long>(in->size()) : 0;
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int Create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* MakeMethod(const char* name, int (*write)(BIO*, const char*, int), int (*read)(BIO*, char*, int),
                             long (*ctrl)(BIO*, int, long, void*)) {
  BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, name);
  if (m == nullptr) return nullptr;
  if (write != nullptr) BIO_meth_set_write(m, write);
  if (read != nullptr) BIO_meth_set_read(m, read);
  BIO_meth_set_ctrl(m, ctrl);
  BIO_meth_set_create(m, Create);
  return m;
}

BIO* NewBio(bool reads) {
  static const BIO_METHOD* const out = MakeMethod("tablestone TLS out", AppendWrite, nullptr, AppendCtrl);
  static const BIO_METHOD* const in = MakeMethod("tablestone TLS in", nullptr, TakeRead, TakeCtrl);
  const BIO_METHOD* method = reads ? in : out;
  BIO* bio = method != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) throw std::bad_alloc();
  return bio;
}

// Bytes a TLS 1.2 or 1.3 AEAD record adds to its payload at most (header,
// explicit nonce or content type, tag), rounded up.
constexpr size_t kRecordOverhead = 32;

}  // namespace

TlsRecords::TlsRecords() : out_bio_(NewBio(false)), in_bio_(NewBio(true)) {}

TlsRecords::~TlsRecords() {
  BIO_free(out_bio_);
  BIO_free(in_bio_);
}

template <class Work>
auto TlsRecords::Lend(SSL* ssl, std::string_view* in, std::string* out, Work&& work) {
  // SSL_set0_rbio/SSL_set0_wbio release one reference of the BIO they replace
  // and take one of the new: the stream's BIO (one reference, shared by both
  // sides, from SSL_set_bio) gets one back for each side we replace, ours keep
  // the one BIO_new gave.
  BIO* stream_wbio = SSL_get_wbio(ssl);
  BIO* stream_rbio = SSL_get_rbio(ssl);
  BIO_up_ref(stream_wbio);
  BIO_up_ref(out_bio_);
  BIO_set_data(out_bio_, out);
  SSL_set0_wbio(ssl, out_bio_);
  if (in != nullptr) {
    BIO_up_ref(stream_rbio);
    BIO_up_ref(in_bio_);
    BIO_set_data(in_bio_, in);
    SSL_set0_rbio(ssl, in_bio_);
  }
  auto result = work();
  if (in != nullptr) {
    SSL_set0_rbio(ssl, stream_rbio);
    BIO_set_data(in_bio_, nullptr);
  }
  SSL_set0_wbio(ssl, stream_wbio);
  BIO_set_data(out_bio_, nullptr);
  return result;
}

bool TlsRecords::Seal(SSL* ssl, std::initializer_list<std::string_view> pieces, std::string* out) {
  if (!SSL_is_init_finished(ssl)) return false;
  size_t payload = 0;
  for (std::string_view piece : pieces) payload += piece.size();
  out->reserve(out->size() + payload + (payload / kTlsMaxRecordPayload + pieces.size()) * kRecordOverhead);
  const bool ok = Lend(ssl, nullptr, out, [ssl, pieces] {
    for (std::string_view piece : pieces) {
      while (!piece.empty()) {
        size_t written = 0;
        if (SSL_write_ex(ssl, piece.data(), piece.size(), &written) != 1) return false;
        piece.remove_prefix(written);
      }
    }
    return true;
  });
  if (!ok) ERR_clear_error();
  return ok;
}

bool TlsRecords::SealCloseNotify(SSL* ssl, std::string* out) {
  if (!SSL_is_init_finished(ssl)) return false;
  // SSL_shutdown returns 0 once it has written close_notify and has not yet received the peer's,
  // which the session never waits for.
  const bool ok = Lend(ssl, nullptr, out, [ssl] { return SSL_shutdown(ssl) >= 0; });
  if (!ok) ERR_clear_error();
  return ok;
}

TlsRecords::Opened TlsRecords::ReadAll(SSL* ssl, const std::string_view* in, char* plain, size_t capacity,
                                       size_t* plain_size) {
  *plain_size = 0;
  for (;;) {
    // Our BIO drained and nothing left inside OpenSSL, neither opened bytes nor
    // records it read ahead: the next SSL_read could only fail for want of
    // input, so stop without it.
    if (in != nullptr && in->empty() && SSL_has_pending(ssl) == 0 && *plain_size > 0) return Opened::kOk;
    if (*plain_size == capacity) return Opened::kFailed;  // more than OpenCapacity promised
    size_t n = 0;
    if (SSL_read_ex(ssl, plain + *plain_size, capacity - *plain_size, &n) == 1) {
      *plain_size += n;
      continue;
    }
    // Classified on an empty error queue (a stale entry would turn "want more
    // input" into a failure); a real failure then reads as SSL_ERROR_SYSCALL.
    ERR_clear_error();
    switch (SSL_get_error(ssl, 0)) {
      case SSL_ERROR_WANT_READ:
        return Opened::kOk;
      case SSL_ERROR_ZERO_RETURN:
        return Opened::kClosed;
      default:
        return Opened::kFailed;
    }
  }
}

TlsRecords::Opened TlsRecords::Open(SSL* ssl, std::string_view records, char* plain, size_t* plain_size,
                                    std::string* reply) {
  *plain_size = 0;
  if (!SSL_is_init_finished(ssl)) return Opened::kFailed;
  const size_t capacity = OpenCapacity(records.size());
  return Lend(ssl, &records, reply, [&] { return ReadAll(ssl, &records, plain, capacity, plain_size); });
}

bool TlsRecords::HasInput(SSL* ssl) {
  BIO* rbio = SSL_get_rbio(ssl);
  return SSL_has_pending(ssl) == 1 || (rbio != nullptr && BIO_ctrl_pending(rbio) > 0);
}

TlsRecords::Opened TlsRecords::OpenHeld(SSL* ssl, char* plain, size_t capacity, size_t* plain_size,
                                        std::string* reply) {
  *plain_size = 0;
  if (!SSL_is_init_finished(ssl)) return Opened::kFailed;
  return Lend(ssl, nullptr, reply, [&] { return ReadAll(ssl, nullptr, plain, capacity, plain_size); });
}

bool SealResponse(TlsRecords& sealer, SSL* ssl, std::string* head, std::string_view body, std::string* out) {
  out->clear();
  size_t joined = 0;
  if (head->size() < kTlsMaxRecordPayload) {
    joined = std::min(body.size(), kTlsMaxRecordPayload - head->size());
    head->append(body.data(), joined);
  }
  return sealer.Seal(ssl, {*head, body.substr(joined)}, out);
}

}  // namespace tablestone::http
