#include "protocol/auth/hmac.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <new>

#include "protocol/base64.h"

namespace tablestone::protocol::auth {
namespace {

struct MacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};
using MacCtx = std::unique_ptr<EVP_MAC_CTX, MacCtxFree>;

// libcrypto fails below only when out of memory.
[[noreturn]] void Fail() { throw std::bad_alloc(); }

}  // namespace

HmacKey::HmacKey(std::string_view key) {
  // Fetched once: an implicit fetch looks the algorithm up on every call.
  static EVP_MAC* const kHmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (kHmac == nullptr) Fail();
  MacCtx ctx(EVP_MAC_CTX_new(kHmac));
  if (!ctx) Fail();
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  // A null key pointer means "keep the previous key" to EVP_MAC_init: an
  // empty key is passed as a valid pointer and a length of 0.
  static constexpr unsigned char kEmpty[1] = {0};
  const auto* bytes = key.empty() ? kEmpty : reinterpret_cast<const unsigned char*>(key.data());
  if (EVP_MAC_init(ctx.get(), bytes, key.size(), params) != 1) Fail();
  keyed_ = std::shared_ptr<const EVP_MAC_CTX>(ctx.release(), MacCtxFree());
}

std::string HmacKey::Mac(std::string_view message) const {
  MacCtx ctx(EVP_MAC_CTX_dup(keyed_.get()));
  unsigned char mac[EVP_MAX_MD_SIZE];
  size_t size = 0;
  if (!ctx || EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      EVP_MAC_final(ctx.get(), mac, &size, sizeof mac) != 1) {
    Fail();
  }
  return std::string(reinterpret_cast<const char*>(mac), size);
}

std::string HmacKey::SignBase64(std::string_view message) const { return Base64Encode(Mac(message)); }

std::string HmacSha256(std::string_view key, std::string_view message) { return HmacKey(key).Mac(message); }

std::string SignBase64(std::string_view key, std::string_view message) {
  return Base64Encode(HmacSha256(key, message));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tablestone::protocol::auth
