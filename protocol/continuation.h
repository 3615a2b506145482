// Continuation tokens for paged queries (Learn: query-tables, query-timeout-and-pagination).
//
// Format (the real service's shape, made URL-safe):
//   1!<n>!<base64 of the UTF-8 value, '='->'-', '+'->'*', '/'->'_'>
// where n is the length of the encoded base64 text. Only [A-Za-z0-9!*_-] are
// used, so the token survives any client's query-string encoding and never
// contains a space (the .NET SDK joins two tokens with one).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/api_error.h"

namespace tablestone::protocol {

std::string EncodeContinuation(std::string_view value);
// Strict: a token that is not exactly what EncodeContinuation produces
// (wrong version, length mismatch, bad alphabet) -> 400 InvalidInput.
ApiResult<std::string> DecodeContinuation(std::string_view token);

}  // namespace tablestone::protocol
