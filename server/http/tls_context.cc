#include "server/http/tls_context.h"

#include <openssl/err.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/context.hpp>
#include <cstdio>
#include <memory>
#include <string_view>

namespace tablestone::http {
namespace {

namespace ssl = boost::asio::ssl;

// The TLS 1.3 cipher suites, in the server's order of preference (OpenSSL's default set).
constexpr char kTls13CipherSuites[] = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

bool EndsWithIgnoreCase(std::string_view text, std::string_view suffix) {
  if (text.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    char c = text[text.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return text;
}

bool LoadPkcs12(SSL_CTX* ctx, const TlsFiles& files, std::string* error) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(files.cert.c_str(), "rb"), &std::fclose);
  if (!file) {
    *error = "cannot open --cert " + files.cert;
    return false;
  }
  std::unique_ptr<PKCS12, void (*)(PKCS12*)> bundle(d2i_PKCS12_fp(file.get(), nullptr), &PKCS12_free);
  if (!bundle) {
    *error = "--cert " + files.cert + " is not a PKCS#12 file: " + OpenSslError();
    return false;
  }
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  STACK_OF(X509)* chain = nullptr;
  if (PKCS12_parse(bundle.get(), files.password.c_str(), &key, &cert, &chain) != 1) {
    *error = "cannot open PKCS#12 " + files.cert + " (wrong --pwd?): " + OpenSslError();
    return false;
  }
  bool ok = cert != nullptr && key != nullptr && SSL_CTX_use_certificate(ctx, cert) == 1 &&
            SSL_CTX_use_PrivateKey(ctx, key) == 1;
  for (int i = 0; ok && chain != nullptr && i < sk_X509_num(chain); ++i) {
    X509* extra = sk_X509_value(chain, i);
    ok = SSL_CTX_add1_chain_cert(ctx, extra) == 1;
  }
  if (!ok) *error = "PKCS#12 " + files.cert + " holds no usable certificate and key: " + OpenSslError();
  X509_free(cert);
  EVP_PKEY_free(key);
  sk_X509_pop_free(chain, X509_free);
  return ok;
}

}  // namespace

std::shared_ptr<ssl::context> MakeTlsContext(const TlsFiles& files, std::string* error) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression |
                       ssl::context::single_dh_use);
  // No renegotiation (TLS 1.2), which OpenSSL 3 already refuses to clients by default: the
  // session's response write (tls_records.h) relies on no handshake running after the first.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
  // The server's order decides the cipher. TLS 1.3: AES-128-GCM before the AES-256-GCM that OpenSSL,
  // .NET and Node clients list first: every record pays for its cipher, and AES-128 does 10 rounds
  // to AES-256's 14, so it is the cheaper per record and per byte on both ends (same GCM
  // construction; its key schedule hashes with SHA-256 instead of SHA-384). A client that lists
  // ChaCha20-Poly1305 first (one without AES instructions) still gets it (SSL_OP_PRIORITIZE_CHACHA).
  // TLS 1.2 keeps OpenSSL's default list, in its order. Figures: docs/benchmarks.md, "HTTPS as fast
  // as HTTP"; pinned by tls_test.cc (TlsContextTest).
  SSL_CTX_set_ciphersuites(ctx, kTls13CipherSuites);
  SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);
  // One TLS 1.3 session ticket per full handshake instead of OpenSSL's two: its tickets are
  // stateless and may be reused, so a client resumes as many connections from one as from two
  // (OpenSSL's, and so Python's, Node's and .NET's on Linux, keep one session per server), and each
  // ticket costs the handshake an encryption and a record. A resumed handshake sends one either way.
  SSL_CTX_set_num_tickets(ctx, 1);
  // Read ahead: OpenSSL takes all the bytes a read offers in one BIO read instead of a record's
  // header and then its body (TlsRecords::ReadAll opens every whole record it holds).
  SSL_CTX_set_read_ahead(ctx, 1);
  const bool pkcs12 = files.key.empty() || EndsWithIgnoreCase(files.cert, ".pfx") ||
                      EndsWithIgnoreCase(files.cert, ".p12");
  if (pkcs12) {
    if (!LoadPkcs12(ctx, files, error)) return nullptr;
  } else {
    boost::system::error_code ec;
    context->set_password_callback([password = files.password](size_t, ssl::context::password_purpose) {
      return password;
    });
    context->use_certificate_chain_file(files.cert, ec);
    if (ec) {
      *error = "cannot load --cert " + files.cert + ": " + ec.message();
      return nullptr;
    }
    context->use_private_key_file(files.key, ssl::context::pem, ec);
    if (ec) {
      *error = "cannot load --key " + files.key + ": " + ec.message();
      return nullptr;
    }
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    *error = "the key does not match the certificate " + files.cert + ": " + OpenSslError();
    return nullptr;
  }
  return context;
}

}  // namespace tablestone::http
