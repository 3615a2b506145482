#include "protocol/auth/bearer.h"

#include <array>
#include <nlohmann/json.hpp>

#include "protocol/base64.h"

namespace tablestone::protocol::auth {
namespace {

constexpr int64_t kSkewSeconds = 300;

// Why a token was refused, worded as the service words the check that failed
// in its AuthenticationErrorDetail ("Audience validation failed. Audience did
// not match." is quoted from the service in Azure/AzureStor#119). A token
// that is not a JWT at all fails before any claim: its signature part cannot
// even be located.
constexpr const char* kMalformed = "Signature validation failed. The token is not a well-formed JWT.";

enum class AudienceMatch { kNo, kYes, kSovereign };

// The storage resource, its application id, and the account's table endpoint
// (trailing '/' allowed); kSovereign for the account's table endpoint in a
// sovereign cloud, the further forms Azurite's basic mode accepts
// (VALID_TABLE_AUDIENCES in Azurite's src/table/utils/constants.ts).
AudienceMatch MatchAudience(std::string_view aud, std::string_view account) {
  if (!aud.empty() && aud.back() == '/') aud.remove_suffix(1);
  static constexpr std::array<std::string_view, 2> kStorage = {"https://storage.azure.com",
                                                               "e406a681-f3d4-42a8-90b6-c2b029497af1"};
  for (std::string_view a : kStorage) {
    if (aud == a) return AudienceMatch::kYes;
  }
  const std::string endpoint = "https://" + std::string(account) + ".table.core.";
  if (aud.size() <= endpoint.size() || aud.substr(0, endpoint.size()) != endpoint) return AudienceMatch::kNo;
  const std::string_view cloud = aud.substr(endpoint.size());
  if (cloud == "windows.net") return AudienceMatch::kYes;
  for (std::string_view sovereign : {"chinacloudapi.cn", "usgovcloudapi.net", "cloudapi.de"}) {
    if (cloud == sovereign) return AudienceMatch::kSovereign;
  }
  return AudienceMatch::kNo;
}

// Entra ID issuers of the public and sovereign clouds, v1 and v2 tokens.
bool IssuerAccepted(std::string_view iss) {
  static constexpr std::array<std::string_view, 9> kPrefixes = {
      "https://sts.windows.net/",         "https://sts.chinacloudapi.cn/",   "https://sts.microsoftonline.de/",
      "https://sts.windows-ppe.net/",     "https://login.microsoftonline.com/", "https://login.chinacloudapi.cn/",
      "https://login.microsoftonline.us/", "https://login.microsoftonline.de/", "https://login.windows-ppe.net/"};
  for (std::string_view p : kPrefixes) {
    if (iss.size() > p.size() && iss.substr(0, p.size()) == p) return true;
  }
  return false;
}

std::optional<nlohmann::json> DecodeSegment(std::string_view segment) {
  std::string text(segment);
  for (char& c : text) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (text.size() % 4 != 0) text.push_back('=');
  auto bytes = Base64Decode(text);
  if (!bytes) return std::nullopt;
  nlohmann::json json = nlohmann::json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  return json;
}

std::optional<int64_t> NumericClaim(const nlohmann::json& payload, const char* name) {
  auto it = payload.find(name);
  if (it == payload.end() || !it->is_number()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

std::optional<BearerClaims> CheckBearerToken(std::string_view token, std::string_view account,
                                             int64_t now_unix_seconds, std::string* detail, std::string* tenant,
                                             bool sovereign_audiences) {
  *tenant = "common";
  const size_t first = token.find('.');
  const size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    *detail = kMalformed;
    return std::nullopt;
  }
  auto header = DecodeSegment(token.substr(0, first));
  auto payload = DecodeSegment(token.substr(first + 1, second - first - 1));
  if (!header || !payload) {
    *detail = kMalformed;
    return std::nullopt;
  }
  BearerClaims claims;
  if (auto tid = payload->find("tid"); tid != payload->end() && tid->is_string()) {
    claims.tenant = tid->get<std::string>();
    *tenant = claims.tenant;
  } else {
    claims.tenant = "common";
  }
  const auto aud = payload->find("aud");
  const auto iss = payload->find("iss");
  const auto nbf = NumericClaim(*payload, "nbf");
  const auto exp = NumericClaim(*payload, "exp");
  if (aud == payload->end() || !aud->is_string() || iss == payload->end() || !iss->is_string() || !exp) {
    *detail = "The token lacks aud, iss or exp.";
    return std::nullopt;
  }
  claims.audience = aud->get<std::string>();
  claims.issuer = iss->get<std::string>();
  const AudienceMatch audience = MatchAudience(claims.audience, account);
  if (audience == AudienceMatch::kNo || (audience == AudienceMatch::kSovereign && !sovereign_audiences)) {
    *detail = "Audience validation failed. Audience did not match.";
    return std::nullopt;
  }
  claims.sovereign_audience = audience == AudienceMatch::kSovereign;
  if (!IssuerAccepted(claims.issuer)) {
    *detail = "Issuer validation failed. Issuer did not match.";
    return std::nullopt;
  }
  if (nbf && *nbf > now_unix_seconds + kSkewSeconds) {
    *detail = "Lifetime validation failed. The token is not yet valid.";
    return std::nullopt;
  }
  if (*exp <= now_unix_seconds - kSkewSeconds) {
    *detail = "Lifetime validation failed. The token is expired.";
    return std::nullopt;
  }
  return claims;
}

std::string BearerChallenge(std::string_view tenant) {
  return "Bearer authorization_uri=https://login.microsoftonline.com/" + std::string(tenant) +
         "/oauth2/authorize resource_id=https://storage.azure.com";
}

}  // namespace tablestone::protocol::auth
