#include "protocol/auth/sha256.h"

#include <openssl/evp.h>

#include <new>

namespace tablestone::protocol::auth {

std::string Sha256Digest(std::string_view data) {
  // Fetched once: an implicit fetch (EVP_sha256()) looks the algorithm up
  // again on every call.
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (kSha256 == nullptr || EVP_Digest(data.data(), data.size(), digest, &size, kSha256, nullptr) != 1) {
    throw std::bad_alloc();  // libcrypto fails here only when out of memory
  }
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace tablestone::protocol::auth
