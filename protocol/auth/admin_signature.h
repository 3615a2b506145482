// The signature of tablestone's admin routes (/_tablestone/..., docs/admin-api.md,
// "Authentication"): Shared Key's HMAC-SHA256 over a string-to-sign that,
// unlike the Table service's, covers the whole query string and a hash of the
// body, so a signed request cannot be replayed with another query or body.
// Used by the server (api::Authenticator) and by the tools that call the
// routes (tools/remote_store.cc). Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "protocol/url.h"

namespace tablestone::protocol::auth {

// Header carrying base64(SHA-256(body)) of every admin request (the empty
// body's hash when there is none), as Azure Communication Services' HMAC
// scheme names it.
inline constexpr std::string_view kContentSha256Header = "x-ms-content-sha256";

// The signer name of the server's --adminKey in "SharedKey <name>:<sig>". A
// hyphen cannot appear in an account name, so it names no account.
inline constexpr std::string_view kAdminKeySigner = "tablestone-admin";

// base64(SHA-256(body)).
std::string ContentSha256Base64(std::string_view body);

// "/" + signer + path, then one line per query parameter in the order of
// their lower-cased names: "\n" + lower-cased name + ":" + its values (in
// byte order, joined with ','), names and values percent-decoded — the
// canonicalized resource of the Blob service's Shared Key (Learn:
// authorize-with-shared-key, "Constructing the canonicalized resource
// string").
std::string AdminCanonicalizedResource(std::string_view signer, std::string_view path, const QueryParams& query);

// VERB\nContent-Type\nx-ms-date\nx-ms-content-sha256\nCanonicalizedResource.
std::string AdminStringToSign(std::string_view verb, std::string_view content_type, std::string_view date,
                              std::string_view content_sha256, std::string_view canonicalized_resource);

}  // namespace tablestone::protocol::auth
