// HMAC-SHA256 (RFC 2104) by OpenSSL's libcrypto, and a constant-time
// comparison for signatures. Thread-safe: pure functions, and HmacKey is
// read-only after construction.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <openssl/types.h>

namespace tablestone::protocol::auth {

// Raw 32-byte MAC of `message` under `key` (raw key bytes, any length).
std::string HmacSha256(std::string_view key, std::string_view message);

// base64(HMAC-SHA256(key, message)): the signature form used by SharedKey and
// SAS (the key is the base64-DECODED account key).
std::string SignBase64(std::string_view key, std::string_view message);

// A key prepared once: libcrypto's HMAC state after absorbing the key, so a
// signature costs the message's blocks and one outer block, not the key's
// two extra compressions (the server signs on every request). Copies share
// the prepared state; each signature works on a duplicate of it.
class HmacKey {
 public:
  explicit HmacKey(std::string_view key);
  std::string Mac(std::string_view message) const;          // as HmacSha256
  std::string SignBase64(std::string_view message) const;   // as SignBase64 above

 private:
  std::shared_ptr<const EVP_MAC_CTX> keyed_;
};

// Compares without an early exit on the first differing byte, so response
// timing does not leak how much of a forged signature was right. Different
// lengths compare unequal (length is not secret: every signature is 44 chars).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tablestone::protocol::auth
