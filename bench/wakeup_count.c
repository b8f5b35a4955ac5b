/**
 * @file wakeup_count.c
 * @brief LD_PRELOAD profiler of how a process waits (issue 18, deliverable 3): counts the calls to sched_yield,
 *        ppoll, poll, nanosleep / clock_nanosleep and the wall time spent inside each, and the involuntary and
 *        voluntary context switches (getrusage), and prints them on stderr at exit, one line per process.
 *
 * perf is not installed on the project's machine and strace multiplies the cost of each system call; this shim
 * adds ~40 ns per call (two clock reads), so the benchmark it watches keeps its timing. Used to find where an
 * MPI collective's time goes on an oversubscribed host (doc/performance.md, "Issue 18"):
 *
 *     gcc -O2 -shared -fPIC -o wakeup_count.so bench/wakeup_count.c -ldl
 *     nmad/mpi/mpirun -n 4 -x LD_PRELOAD=$PWD/wakeup_count.so ./mpi_coll_bench_nmad --coll allreduce --sizes 8
 *
 * Output: "wakeup_count pid P: yield N (T us) ppoll N (T us, S slept > 20 us) poll N (T us) nanosleep N (T us)
 * nvcsw N nivcsw N". The counters are per process and updated with relaxed atomics (a progress thread may call
 * these too). WAKEUP_COUNT_QUIET=1 silences it (for the launcher's own processes, e.g.); WAKEUP_COUNT_BT=N prints
 * the call stacks of the first N ppoll calls that slept more than 20 us (exported symbols only).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { W_YIELD, W_PPOLL, W_POLL, W_SLEEP, W_N };
static const char *const w_name[W_N] = {"yield", "ppoll", "poll", "nanosleep"};
/* Process-wide counters of an interposition library: the one place where a global is the point (it observes the
 * process; it is not part of nmad). */
static uint64_t w_calls[W_N], w_ns[W_N], w_long_ppoll;

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void account(int k, uint64_t t0)
{
  uint64_t d = now_ns() - t0;
  __atomic_add_fetch(&w_calls[k], 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&w_ns[k], d, __ATOMIC_RELAXED);
  if (k == W_PPOLL && d > 20000) {
    uint64_t nth = __atomic_add_fetch(&w_long_ppoll, 1, __ATOMIC_RELAXED);
    const char *bt = getenv("WAKEUP_COUNT_BT"); /* who sleeps: the call stacks of the first N long ppolls */
    if (bt && nth <= (uint64_t)atoll(bt)) {
      void *frames[16];
      int n = backtrace(frames, 16);
      fprintf(stderr, "wakeup_count pid %d: ppoll slept %.0f us, from:\n", (int)getpid(), (double)d / 1000.0);
      backtrace_symbols_fd(frames, n, 2);
    }
  }
}

int sched_yield(void)
{
  static int (*real)(void);
  if (!real)
    real = (int (*)(void))dlsym(RTLD_NEXT, "sched_yield");
  uint64_t t0 = now_ns();
  int rc = real();
  account(W_YIELD, t0);
  return rc;
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
  static int (*real)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
  if (!real)
    real = (int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))dlsym(RTLD_NEXT, "ppoll");
  uint64_t t0 = now_ns();
  int rc = real(fds, n, ts, mask);
  account(W_PPOLL, t0);
  return rc;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
  static int (*real)(struct pollfd *, nfds_t, int);
  if (!real)
    real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
  uint64_t t0 = now_ns();
  int rc = real(fds, n, timeout);
  account(W_POLL, t0);
  return rc;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
  static int (*real)(const struct timespec *, struct timespec *);
  if (!real)
    real = (int (*)(const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "nanosleep");
  uint64_t t0 = now_ns();
  int rc = real(req, rem);
  account(W_SLEEP, t0);
  return rc;
}

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
  static int (*real)(clockid_t, int, const struct timespec *, struct timespec *);
  if (!real)
    real = (int (*)(clockid_t, int, const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "clock_nanosleep");
  uint64_t t0 = now_ns();
  int rc = real(clk, flags, req, rem);
  account(W_SLEEP, t0);
  return rc;
}

__attribute__((destructor)) static void wakeup_count_report(void)
{
  const char *q = getenv("WAKEUP_COUNT_QUIET");
  if (q && *q == '1')
    return;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  char line[512];
  int len = snprintf(line, sizeof(line), "wakeup_count pid %d:", (int)getpid());
  for (int k = 0; k < W_N && len < (int)sizeof(line); k++)
    len += snprintf(line + len, sizeof(line) - (size_t)len, " %s %llu (%.0f us)", w_name[k],
                    (unsigned long long)w_calls[k], (double)w_ns[k] / 1000.0);
  if (len < (int)sizeof(line))
    len += snprintf(line + len, sizeof(line) - (size_t)len, " ppoll>20us %llu nvcsw %ld nivcsw %ld\n",
                    (unsigned long long)w_long_ppoll, ru.ru_nvcsw, ru.ru_nivcsw);
  fputs(line, stderr);
}
