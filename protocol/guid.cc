#include "protocol/guid.h"

#include <atomic>
#include <cstdint>
#include <random>

namespace tablestone::protocol {
namespace {

// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
// generators", 2014): a bijection of a counter that steps by the golden
// ratio, so no two calls of the process share a value.
uint64_t NextRandom() {
  constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
  static std::atomic<uint64_t> counter{(uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()};
  uint64_t z = counter.fetch_add(kGolden, std::memory_order_relaxed) + kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::string NewGuid() {
  uint64_t a = NextRandom();
  uint64_t b = NextRandom();
  a = (a & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;  // version 4
  b = (b & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;  // variant 1
  // Hex digits written directly: snprintf parses its format on every call.
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[36];
  char* p = buf;
  auto put = [&p](uint64_t v, int digits) {
    for (int i = digits - 1; i >= 0; --i) *p++ = kHex[(v >> (4 * i)) & 0xF];
  };
  put(a >> 32, 8);
  *p++ = '-';
  put((a >> 16) & 0xFFFF, 4);
  *p++ = '-';
  put(a & 0xFFFF, 4);
  *p++ = '-';
  put(b >> 48, 4);
  *p++ = '-';
  put(b & 0xFFFFFFFFFFFFull, 12);
  return std::string(buf, sizeof buf);
}

}  // namespace tablestone::protocol
