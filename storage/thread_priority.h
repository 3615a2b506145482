// The CPU priorities of tablestone's own threads, in one place: every thread
// that changes its scheduling does it through these calls, so the rules below
// (docs/architecture.md, "Threads and priorities") have one owner.
//
// Linux applies nice values and scheduling policies per thread (the `tid`
// of setpriority(PRIO_PROCESS) and sched_setscheduler). A thread may always
// lower its own priority (a higher nice); raising it again (a lower nice)
// needs CAP_SYS_NICE or an RLIMIT_NICE that allows it, which an unprivileged
// server or a default container does not have. So nothing here relies on
// raising a priority: a refused change leaves the thread as it was, and
// callers that care read the priority back (ThreadNice).
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <sys/types.h>

namespace tablestone::storage {

// The calling thread's kernel thread id.
pid_t CurrentThreadId();

// The nice value of thread `tid` (-20..19); 0 if it cannot be read.
int ThreadNice(pid_t tid);

// Sets thread `tid`'s nice value (clamped to -20..19); returns whether the
// kernel took it (a lower value than the current one may be refused).
bool SetThreadNice(pid_t tid, int nice);

// Adds `delta` (ignored unless > 0) to the calling thread's nice value, up to
// 19. Failure only costs the scheduling preference.
void LowerCurrentThreadPriority(int delta);

// Puts the calling thread under SCHED_BATCH: the same CPU share as
// SCHED_OTHER at the same nice, but a woken thread does not preempt the one
// running (the thread that woke it finishes its turn first). Failure leaves
// the thread as it was.
void UseBatchScheduling();

}  // namespace tablestone::storage
