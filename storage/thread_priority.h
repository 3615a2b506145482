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

#include <chrono>

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

// Point requests against scans, without an absolute nice. The query threads
// run at the I/O threads' priority, so on a machine kept busy by other
// processes a scan gets the CPU share of any default-priority process (at
// nice +4 it lost to every one of them). Among tablestone's own threads the
// scans still give way to point requests, by cooperation: the I/O threads
// note each request they answer themselves (NoteForegroundWork), and a scan
// that ends a CPU burst while such requests are being answered and its core
// was contended (it waited during the burst) sleeps for a while instead of
// only offering the CPU (EndScanBurst). The sleep is what a thread at
// `storage.scanNice` would leave a nice-0 thread: CFS gives nice n the weight
// w(n) against 1024 for nice 0, so after a burst B the scan sleeps
// B * 1024 / w(n) (ScanGiveWay), and runs B / (B + sleep) = w(n) / (w(n) +
// 1024) of the time, as the nice would, but only while point requests wait.

// Called by an I/O thread for each request it places on itself or the short
// lane (a point read or write): one relaxed store of the steady clock.
void NoteForegroundWork();
// When NoteForegroundWork() was last called (the clock's epoch if never).
std::chrono::steady_clock::time_point LastForegroundWork();

// The sleep after a burst of `burst` CPU time that leaves a scan the share of
// a thread at nice `nice` beside one at nice 0; zero for nice <= 0.
std::chrono::nanoseconds ScanGiveWay(std::chrono::nanoseconds burst, int nice);

// What a scan does at the end of a CPU burst that took `cpu` of CPU time in
// `wall` of wall-clock time: if `give_way` > 0, a request was noted within
// the last 2 ms, and the burst waited for its core (wall > 5/4 * cpu), sleeps
// `give_way`; otherwise offers the CPU (sched_yield). Returns whether it slept.
bool EndScanBurst(std::chrono::nanoseconds cpu, std::chrono::nanoseconds wall, std::chrono::nanoseconds give_way);

}  // namespace tablestone::storage
