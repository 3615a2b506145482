// Shared Key maths for the Table service (Learn: authorize-with-shared-key): the Authorization
// header grammar, the Table-flavour string-to-sign and the canonicalised
// resource, plus the path variants a verifier should try because SDKs derive
// the signed path from their own URL objects. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tablestone::protocol::auth {

enum class SharedKeyScheme { kSharedKey, kSharedKeyLite };

// "SharedKey account:signature" / "SharedKeyLite account:signature".
struct SharedKeyAuthorization {
  SharedKeyScheme scheme = SharedKeyScheme::kSharedKey;
  std::string account;
  std::string signature;  // base64 as sent
};

// The scheme word of an Authorization header ("SharedKey", "Bearer", ...);
// empty for an empty header.
std::string_view AuthorizationScheme(std::string_view header_value);

// Parses a SharedKey or SharedKeyLite header. The scheme is matched exactly
// (the service is case-sensitive here); whitespace around the credential is
// tolerated. nullopt when the scheme is another one or the credential lacks
// "account:signature" with both parts non-empty.
std::optional<SharedKeyAuthorization> ParseSharedKeyAuthorization(std::string_view header_value);

// "/" + account + path [+ "?comp=" + comp]. `path` is used as given (callers
// pass one of CandidatePaths()); an empty path is treated as "/" as Java and
// .NET do for the service root.
std::string CanonicalizedResource(std::string_view account, std::string_view path,
                                  std::optional<std::string_view> comp);

// VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource (Learn: authorize-with-shared-key).
std::string SharedKeyStringToSign(std::string_view verb, std::string_view content_md5,
                                  std::string_view content_type, std::string_view date,
                                  std::string_view canonicalized_resource);
// Date\nCanonicalizedResource (Learn: authorize-with-shared-key).
std::string SharedKeyLiteStringToSign(std::string_view date, std::string_view canonicalized_resource);

// The paths worth verifying, best first, without duplicates (Learn: authorize-with-shared-key
// recommendation): the raw wire path; the decoded path re-encoded the way
// WHATWG URL.pathname does (JS); the decoded path re-encoded with
// encodeURIComponent rules keeping '/', '$', '\'', '(' and ')'; the fully
// percent-decoded path. When `secondary_account` is non-empty and the first
// segment is "<secondary_account>-secondary", each variant is also offered
// with that segment replaced by "<secondary_account>" (Azurite accepts both,
// docs/compatibility-notes/batch-auth.md) and with that segment removed (Python signs the primary
// URL of get_service_stats but sends /<acct>-secondary/<acct>/).
std::vector<std::string> CandidatePaths(std::string_view raw_path, std::string_view secondary_account = {});

// Percent-decoding of a path ('+' stays '+'). Invalid escapes are kept as is.
std::string PercentDecodePath(std::string_view path);

}  // namespace tablestone::protocol::auth
