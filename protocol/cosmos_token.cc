#include "protocol/cosmos_token.h"

#include <nlohmann/json.hpp>

#include "protocol/base64.h"

namespace tablestone::protocol {
namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t Mix(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

void PutBe(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBe(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

bool HasHash(CosmosTokenKind kind) { return kind != CosmosTokenKind::kKeyOrderEntities; }

}  // namespace

uint64_t ShuffleKey(uint64_t seed, std::string_view a, std::string_view b) {
  uint64_t h = Mix(kFnvOffset ^ seed, a);
  h = Mix(h, std::string_view("\0", 1));
  h = Mix(h, b);
  // SplitMix64's finaliser.
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::string EncodeCosmosToken(CosmosTokenKind kind, const CosmosResume& resume) {
  std::string raw(1, static_cast<char>(kind));
  if (HasHash(kind)) PutBe(&raw, resume.hash, 8);
  PutBe(&raw, resume.first.size(), 4);
  raw += resume.first;
  raw += resume.second;
  nlohmann::json token = {{"token", Base64Encode(raw)}, {"range", {{"min", ""}, {"max", "FF"}}}};
  return token.dump();
}

ApiResult<CosmosResume> DecodeCosmosToken(std::string_view header_value, CosmosTokenKind kind) {
  if (header_value.size() > kMaxCosmosTokenBytes) return ApiError::InvalidInput();
  auto json = nlohmann::json::parse(header_value, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return ApiError::InvalidInput();
  auto token = json.find("token");
  if (token == json.end() || !token->is_string()) return ApiError::InvalidInput();
  auto raw = Base64Decode(token->get_ref<const std::string&>());
  if (!raw || raw->empty() || (*raw)[0] != static_cast<char>(kind)) return ApiError::InvalidInput();
  std::string_view rest = std::string_view(*raw).substr(1);
  CosmosResume resume;
  if (HasHash(kind)) {
    if (rest.size() < 8) return ApiError::InvalidInput();
    resume.hash = GetBe(rest, 8);
    rest.remove_prefix(8);
  }
  if (rest.size() < 4) return ApiError::InvalidInput();
  const uint64_t first_size = GetBe(rest, 4);
  rest.remove_prefix(4);
  if (first_size > rest.size()) return ApiError::InvalidInput();
  resume.first = std::string(rest.substr(0, first_size));
  resume.second = std::string(rest.substr(first_size));
  if (kind == CosmosTokenKind::kTables && !resume.second.empty()) return ApiError::InvalidInput();
  return resume;
}

}  // namespace tablestone::protocol
