// Bearer tokens (--oauth basic), checked the way Azurite's basic OAuth mode
// checks them: a well-formed JWT whose audience is a storage audience or the
// account's table endpoint, whose issuer is a known Entra ID issuer, and whose
// nbf/exp hold with five minutes of clock skew. THE SIGNATURE IS NOT CHECKED:
// without the identity provider's keys it cannot be, so any caller can mint
// an accepted token. Pure (no clock: the caller passes the time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tablestone::protocol::auth {

struct BearerClaims {
  std::string audience;
  std::string issuer;
  std::string tenant;  // "tid", or "common" when absent (used in the challenge)
  // The audience is the account's table endpoint in a sovereign cloud
  // (accepted only when CheckBearerToken was asked to).
  bool sovereign_audience = false;
};

// Ok: the claims. Error: *detail names the check that failed, in the
// service's AuthenticationErrorDetail words ("Audience validation failed. ...",
// "Issuer validation failed. ...", "Lifetime validation failed. ...",
// "Signature validation failed. ..." for a token that is not a JWT), for the
// error message and the debug log; *tenant the token's tenant when it could be read.
// Audiences: https://storage.azure.com, its application id, and
// https://<account>.table.core.windows.net; with `sovereign_audiences`
// (--loose) also https://<account>.table.core.{chinacloudapi.cn,
// usgovcloudapi.net,cloudapi.de}, as Azurite accepts. A trailing '/' is allowed.
std::optional<BearerClaims> CheckBearerToken(std::string_view token, std::string_view account,
                                             int64_t now_unix_seconds, std::string* detail, std::string* tenant,
                                             bool sovereign_audiences = false);

// The service's challenge for a refused bearer request (WWW-Authenticate).
std::string BearerChallenge(std::string_view tenant);

}  // namespace tablestone::protocol::auth
