#include "storage/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>

namespace tablestone::storage {
namespace {

// LastForegroundWork(), in steady-clock ticks.
std::atomic<int64_t> last_foreground{0};

// How long after the last point request a scan still gives way: the scan's
// bursts are 250 us of CPU (storage.scanBurstUs), so a point request answered
// between two of them is always seen.
constexpr std::chrono::milliseconds kForegroundWindow{2};

// CFS's weight of each nice value 0..19 (the kernel's sched_prio_to_weight).
constexpr int kNiceWeight[20] = {1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
                                 110,  87,  70,  56,  45,  36,  29,  23,  18,  15};

}  // namespace

pid_t CurrentThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

int ThreadNice(pid_t tid) {
  errno = 0;  // getpriority may return -1 as a value
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  return errno == 0 ? nice : 0;
}

bool SetThreadNice(pid_t tid, int nice) {
  return setpriority(PRIO_PROCESS, static_cast<id_t>(tid), std::clamp(nice, -20, 19)) == 0;
}

void LowerCurrentThreadPriority(int delta) {
  if (delta <= 0) return;
  const pid_t tid = CurrentThreadId();
  (void)SetThreadNice(tid, std::min(19, ThreadNice(tid) + delta));
}

void UseBatchScheduling() {
  sched_param param{};
  param.sched_priority = 0;
  (void)sched_setscheduler(CurrentThreadId(), SCHED_BATCH, &param);
}

void NoteForegroundWork() {
  // Stored at most every 100 us: the I/O threads do not all write the same
  // cache line per request.
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  constexpr int64_t kStep = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::microseconds(100)).count();
  if (now - last_foreground.load(std::memory_order_relaxed) > kStep) {
    last_foreground.store(now, std::memory_order_relaxed);
  }
}

std::chrono::steady_clock::time_point LastForegroundWork() {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_foreground.load(std::memory_order_relaxed)));
}

std::chrono::nanoseconds ScanGiveWay(std::chrono::nanoseconds burst, int nice) {
  if (nice <= 0 || burst.count() <= 0) return std::chrono::nanoseconds(0);
  return burst * kNiceWeight[0] / kNiceWeight[std::min(nice, 19)];
}

bool EndScanBurst(std::chrono::nanoseconds cpu, std::chrono::nanoseconds wall, std::chrono::nanoseconds give_way) {
  const bool contended = wall * 4 > cpu * 5;
  if (give_way.count() > 0 && contended &&
      std::chrono::steady_clock::now() - LastForegroundWork() < kForegroundWindow) {
    std::this_thread::sleep_for(give_way);
    return true;
  }
  sched_yield();
  return false;
}

}  // namespace tablestone::storage
