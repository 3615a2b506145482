// CPU time of the calling thread, for the tests that bound what a parse
// costs: wall time would measure the (shared, busy) machine instead.
#pragma once

#include <time.h>

#include <utility>

namespace tablestone::test_timing {

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
