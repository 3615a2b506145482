// Redaction of secrets from text that goes to a log or the request trace:
// the one place that knows what a secret looks like on the wire. Pure,
// thread-safe.
//
// A secret is:
//   - the value of a `sig` query parameter (a SAS signature), whatever the
//     encoding of its name: any case, any percent-encoding of its letters
//     (`%73ig`, `si%67`: the service decodes names, so these are accepted as
//     the signature), after any delimiter (`?`, `&`, `&amp;` in an Atom body,
//     the start of a string, a quote, a space). The value ends at the first
//     byte that cannot be part of a base64 or percent-encoded signature, so a
//     `sig=` inside a multipart body hides nothing after it on the line;
//   - the value of a credential header (SecretHeader) written as a line
//     "Name: value" inside a text, as a `$batch` part carries it;
//   - the MAC that an AuthenticationFailed message echoes ("The MAC signature
//     found in the HTTP request '...'").
#pragma once

#include <string>
#include <string_view>

namespace tablestone::protocol {

inline constexpr std::string_view kRedacted = "REDACTED";

// True for a header whose whole value is a credential: Authorization,
// Proxy-Authorization, Cookie, Set-Cookie, x-ms-copy-source-authorization
// (case-insensitive).
bool IsSecretHeader(std::string_view name);

// `text` (a request target, a header value, a body, a log line) with every
// secret above replaced by kRedacted. Returns `text` unchanged (one scan, no
// allocation beyond the copy) when it holds none.
std::string RedactSecrets(std::string_view text);

// The value to log or trace for header `name`: kRedacted for a secret
// header, else RedactSecrets(value).
std::string RedactHeaderValue(std::string_view name, std::string_view value);

}  // namespace tablestone::protocol
