#include "protocol/auth/hmac.h"

#include "protocol/auth/sha256.h"
#include "protocol/base64.h"

namespace tablestone::protocol::auth {

HmacKey::HmacKey(std::string_view key) {
  std::string block_key(Sha256::kBlockSize, '\0');
  if (key.size() > Sha256::kBlockSize) {
    std::string hashed = Sha256Digest(key);
    block_key.replace(0, hashed.size(), hashed);
  } else {
    block_key.replace(0, key.size(), key);
  }
  std::string ipad(Sha256::kBlockSize, '\0');
  std::string opad(Sha256::kBlockSize, '\0');
  for (size_t i = 0; i < Sha256::kBlockSize; ++i) {
    ipad[i] = static_cast<char>(block_key[i] ^ 0x36);
    opad[i] = static_cast<char>(block_key[i] ^ 0x5c);
  }
  inner_.Update(ipad);
  outer_.Update(opad);
}

std::string HmacKey::Mac(std::string_view message) const {
  Sha256 inner = inner_;
  inner.Update(message);
  auto inner_digest = inner.Final();
  Sha256 outer = outer_;
  outer.Update(std::string_view(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size()));
  auto d = outer.Final();
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string HmacKey::SignBase64(std::string_view message) const { return Base64Encode(Mac(message)); }

std::string HmacSha256(std::string_view key, std::string_view message) { return HmacKey(key).Mac(message); }

std::string SignBase64(std::string_view key, std::string_view message) {
  return Base64Encode(HmacSha256(key, message));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  // volatile read keeps the compiler from turning the loop into memcmp.
  volatile unsigned char result = diff;
  return result == 0;
}

}  // namespace tablestone::protocol::auth
