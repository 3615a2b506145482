// SHA-256 (FIPS 180-4), self-contained so the protocol layer needs no crypto
// library. Used only for request signing (HMAC-SHA256), never for secrets at
// rest. Thread-safe: no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tablestone::protocol::auth {

class Sha256 {
 public:
  static constexpr size_t kDigestSize = 32;
  static constexpr size_t kBlockSize = 64;
  using Digest = std::array<uint8_t, kDigestSize>;

  Sha256();
  void Update(std::string_view data);
  // Finishes the hash; the object must not be updated afterwards.
  Digest Final();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, kBlockSize> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// One-shot digest of `data` as 32 raw bytes.
std::string Sha256Digest(std::string_view data);
// Lower-case hex of raw bytes (test helper, logs).
std::string ToHex(std::string_view bytes);

}  // namespace tablestone::protocol::auth
