// A strict parser for the one JSON shape every Table entity body has: a flat
// object of scalar members (RFC 8259). The entity rules on top of it are in
// protocol/odata_json.h. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"

namespace tablestone::protocol {

// One scalar member value of a flat JSON object, as JSON typed it. Integers
// follow JSON text: within int64 -> kInt, above int64 but within uint64 ->
// kUInt, beyond either (or with a fraction/exponent) -> kFloat (strtod).
struct JsonScalar {
  enum class Kind { kNull, kBool, kInt, kUInt, kFloat, kString };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // kString: decoded UTF-8 (may contain NUL from \u0000)
};

struct JsonMember {
  std::string name;  // decoded
  JsonScalar value;
};

// What the parser checks beyond JSON itself.
enum class FlatJsonLimits {
  kNone,
  // Stop with TooManyProperties as soon as the members read so far cannot be
  // one entity (protocol/entity_members.h), so that a hostile body costs
  // microseconds, not the parse of all of it.
  kEntity,
};

// Strict RFC 8259 parser for exactly one flat JSON object, members in document
// order. Accepts what nlohmann::json's strict SAX parse accepts for such input:
// an optional UTF-8 BOM, whitespace ' ' \t \n \r, validated UTF-8 and escapes
// (surrogate pairs), numbers as described at JsonScalar, and end of input at
// the first NUL byte after the object. Errors, the first one met in document
// order: a repeated member name -> DuplicatePropertiesSpecified; with kEntity,
// too many members -> TooManyProperties; anything else (syntax, nested object
// or array, not an object, non-finite number) -> InvalidInput.
ApiResult<std::vector<JsonMember>> ParseFlatJsonObject(std::string_view body,
                                                       FlatJsonLimits limits = FlatJsonLimits::kNone);

}  // namespace tablestone::protocol
