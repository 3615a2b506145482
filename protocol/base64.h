// Standard base64 (RFC 4648, with padding) used by Edm.Binary and signatures.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tablestone::protocol {

std::string Base64Encode(std::string_view bytes);
// Strict decode: standard alphabet, padding required to a multiple of 4
// characters; whitespace is not allowed. nullopt on any violation.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace tablestone::protocol
