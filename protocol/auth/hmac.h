// HMAC-SHA256 (RFC 2104) and a constant-time comparison for signatures.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "protocol/auth/sha256.h"

namespace tablestone::protocol::auth {

// Raw 32-byte MAC of `message` under `key` (raw key bytes, any length).
std::string HmacSha256(std::string_view key, std::string_view message);

// base64(HMAC-SHA256(key, message)): the signature form used by SharedKey and
// SAS (the key is the base64-DECODED account key).
std::string SignBase64(std::string_view key, std::string_view message);

// A key prepared once: the SHA-256 states after absorbing key^ipad and
// key^opad. Signing then costs the message blocks plus one outer block, not
// two extra compressions per signature (the server signs on every request).
// Thread-safe after construction (signing copies the states).
class HmacKey {
 public:
  explicit HmacKey(std::string_view key);
  std::string Mac(std::string_view message) const;          // as HmacSha256
  std::string SignBase64(std::string_view message) const;   // as SignBase64 above

 private:
  Sha256 inner_;
  Sha256 outer_;
};

// Compares without an early exit on the first differing byte, so response
// timing does not leak how much of a forged signature was right. Different
// lengths compare unequal (length is not secret: every signature is 44 chars).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tablestone::protocol::auth
