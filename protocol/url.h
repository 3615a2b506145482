// URL pieces of a request: percent-decoding, query strings, UTF-8 checks and
// the percent-encoding the service uses when it writes URLs (Location,
// odata.id).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tablestone::protocol {

// Query parameters, ordered by name (values of one name in the order sent);
// names and values percent-decoded. std::less<> so that lookups by
// string_view or literal build no temporary string.
using QueryParams = std::multimap<std::string, std::string, std::less<>>;

// Decodes %XX escapes. In a path '+' is a literal plus (spec §1.2); in a query
// string it is a space (form encoding; Python's urlencode sends it, spec §4.1).
// Returns nullopt for a malformed escape ("%G1", a trailing "%").
std::optional<std::string> PercentDecodePath(std::string_view text);
std::optional<std::string> PercentDecodeQuery(std::string_view text);

// Splits "a=1&b=x%20y" into decoded pairs. A name without '=' gets an empty
// value; empty segments are skipped. nullopt when any escape is malformed.
std::optional<QueryParams> ParseQueryString(std::string_view query);

// First value of `name` (exact, case-sensitive, as the service's $-options), or nullptr.
const std::string* FindQueryParam(const QueryParams& params, std::string_view name);

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool IsValidUtf8(std::string_view text);
// Appends the UTF-8 encoding of a Unicode code point (< 0x110000) to *out
// (JSON \u escapes and XML character references both decode through it).
void AppendUtf8(uint32_t code_point, std::string* out);

// Percent-encodes everything except RFC 3986 unreserved characters and the
// bytes in `keep` (e.g. "'" when writing key predicates whose quotes are doubled).
std::string PercentEncode(std::string_view text, std::string_view keep = {});

// Splits "path?query" into its two parts (no decoding).
void SplitTarget(std::string_view target, std::string_view* path, std::string_view* query);

}  // namespace tablestone::protocol
