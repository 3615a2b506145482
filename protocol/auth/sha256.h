// SHA-256 by OpenSSL's libcrypto (a pure library: no sockets, no state
// between calls). Used for request signing (HMAC-SHA256, hmac.h) and the
// admin routes' body hash, never for secrets at rest. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tablestone::protocol::auth {

inline constexpr size_t kSha256DigestSize = 32;

// One-shot digest of `data` as 32 raw bytes.
std::string Sha256Digest(std::string_view data);
// Lower-case hex of raw bytes (test helper, logs).
std::string ToHex(std::string_view bytes);

}  // namespace tablestone::protocol::auth
