// libFuzzer target: continuation tokens (protocol/continuation.h).
//
// Decodes arbitrary (forged or corrupted) tokens (only 400 on failure), and checks the round trip
// Encode -> Decode returns the original value for any UTF-8 text, and that an
// encoded token only uses the URL-safe alphabet the header promises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/continuation.h"
#include "protocol/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tablestone::protocol;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto decoded = DecodeContinuation(text);
  if (!decoded.ok()) {
    if (decoded.error().http_status != 400) abort();
  } else {
    // An accepted token names a key that survives its own round trip. (Byte equality with
    // the canonical encoding is not required: base64 decoders ignore the unused low bits of
    // the last character, so "cGu-" and "cGs-" both name "pk"; harmless, as either names a
    // valid key.)
    auto again = DecodeContinuation(EncodeContinuation(decoded.value()));
    if (!again.ok() || again.value() != decoded.value()) abort();
  }

  std::string token = EncodeContinuation(text);
  for (char c : token) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '!' ||
              c == '*' || c == '_' || c == '-';
    if (!ok) abort();
  }
  // Keys are UTF-8, so the decoder refuses any other value: the round trip
  // holds exactly for valid UTF-8.
  auto back = DecodeContinuation(token);
  if (IsValidUtf8(text) != back.ok()) abort();
  if (back.ok() && back.value() != text) abort();
  return 0;
}
