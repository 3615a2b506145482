#include "storage/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace tablestone::storage {

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

}  // namespace tablestone::storage
