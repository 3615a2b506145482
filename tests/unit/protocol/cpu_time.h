// CPU time of the calling thread, for the tests that bound what a parse
// costs: wall time would measure the (shared, busy) machine instead.
#pragma once

#include <time.h>

#include <utility>

namespace tablestone::test_timing {

// A CPU budget in seconds for an uninstrumented build, widened for the
// sanitizer builds (scripts/test.sh stages asan, fuzz and tsan), whose
// instrumentation makes the same linear parse several times slower. The
// quadratic parses these budgets catch cost tens of seconds either way.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr double kSanitizerSlowdown = 8.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr double kSanitizerSlowdown = 8.0;
#else
inline constexpr double kSanitizerSlowdown = 1.0;
#endif
#else
inline constexpr double kSanitizerSlowdown = 1.0;
#endif
constexpr double Budget(double seconds) { return seconds * kSanitizerSlowdown; }

// f()'s result, and the CPU seconds the calling thread spent in it.
template <class F>
auto WithThreadCpuSeconds(F&& f) {
  auto now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  };
  const double start = now();
  auto result = std::forward<F>(f)();
  const double seconds = now() - start;
  return std::make_pair(std::move(result), seconds);
}

}  // namespace tablestone::test_timing
