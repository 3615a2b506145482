#include "protocol/continuation.h"

#include "protocol/base64.h"
#include "protocol/url.h"

namespace tablestone::protocol {

std::string EncodeContinuation(std::string_view value) {
  std::string b64 = Base64Encode(value);
  for (char& c : b64) {
    if (c == '=') c = '-';
    else if (c == '+') c = '*';
    else if (c == '/') c = '_';
  }
  return "1!" + std::to_string(b64.size()) + "!" + b64;
}

ApiResult<std::string> DecodeContinuation(std::string_view token) {
  if (token.size() < 4 || token.substr(0, 2) != "1!") return ApiError::InvalidInput();
  std::string_view rest = token.substr(2);
  size_t bang = rest.find('!');
  if (bang == std::string_view::npos || bang == 0 || bang > 9) return ApiError::InvalidInput();
  size_t n = 0;
  for (char c : rest.substr(0, bang)) {
    if (c < '0' || c > '9') return ApiError::InvalidInput();
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  std::string b64(rest.substr(bang + 1));
  if (b64.size() != n) return ApiError::InvalidInput();
  for (char& c : b64) {
    if (c == '-') c = '=';
    else if (c == '*') c = '+';
    else if (c == '_') c = '/';
    else if (c == '=' || c == '+' || c == '/') return ApiError::InvalidInput();
  }
  auto decoded = Base64Decode(b64);
  if (!decoded || !IsValidUtf8(*decoded)) return ApiError::InvalidInput();
  return std::move(*decoded);
}

}  // namespace tablestone::protocol
