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
};

// Ok: the claims. Error: *detail says which check failed (for the log and the
// error message), *tenant the token's tenant when it could be read.
std::optional<BearerClaims> CheckBearerToken(std::string_view token, std::string_view account,
                                             int64_t now_unix_seconds, std::string* detail, std::string* tenant);

// The service's challenge for a refused bearer request (WWW-Authenticate).
std::string BearerChallenge(std::string_view tenant);

}  // namespace tablestone::protocol::auth
