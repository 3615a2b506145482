#include "server/api/leniency.h"

#include <array>
#include <atomic>
#include <cstddef>

#include <spdlog/spdlog.h>

namespace tablestone::api {

void WarnLeniency(Leniency kind) {
  constexpr size_t kKinds = static_cast<size_t>(Leniency::kCount);
  static std::array<std::atomic<bool>, kKinds> warned{};
  static constexpr std::array<const char*, kKinds> kWhat = {
      "a SharedKey request with neither Date nor x-ms-date",
      "a service SAS repeating a field of its stored access policy",
      "an upsert through a SAS granting 'u' without 'a'",
      "a request whose Authorization header failed, on the strength of its valid SAS",
      "a $batch whose Content-Type is not multipart/mixed, on the boundary its body opens with",
      "a bearer token whose audience is a sovereign cloud's table endpoint"};
  const size_t i = static_cast<size_t>(kind);
  if (i >= kKinds || warned[i].exchange(true, std::memory_order_relaxed)) return;
  spdlog::warn("--loose: accepted {} (the service refuses it; further ones are not logged)", kWhat[i]);
}

}  // namespace tablestone::api
