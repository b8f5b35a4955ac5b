/**
 * @file sched_wait_latency.c
 * @brief How long a waiting process takes to see a flag set by a busy one, on a host with more processes than
 * cores, for four ways of waiting: why nmad's yield phase is short on an oversubscribed host
 * (doc/performance.md, "Waiting on an oversubscribed host: block after 1 ms"). Needs no nmad.
 *
 * Three processes: two spin without pause (one of them sets the flag every 2-5 ms of its own spinning), the
 * third waits for the flag by one of:
 *   yield  - sched_yield() in a loop (nmad's yield phase, Open MPI's mpi_yield_when_idle)
 *   spin   - a bare loop
 *   sleep  - nanosleep() of 1 us in a loop
 *   futex  - FUTEX_WAIT, woken by the setter's FUTEX_WAKE
 *   pipe   - ppoll() on a pipe with a 100 ms timeout, woken by the setter's one-byte write (a blocked nmad rank
 *            woken through sm's pipe: nm_core_block(), nm_sm_wake())
 * and reports the time from the store to the waiter's load (CLOCK_MONOTONIC of one host): min, median, 90th
 * percentile, max, in us. On a host with at least three free cores every mode is near 0.
 *
 * Build and run: cc -O2 -o sched_wait_latency bench/sched_wait_latency.c && ./sched_wait_latency yield 200
 * Exit status: 0, or 2 on bad usage.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SWL_MAX 10000

enum swl_mode { SWL_YIELD, SWL_SPIN, SWL_SLEEP, SWL_FUTEX, SWL_PIPE, SWL_NMODES };

struct swl_shared {
  _Atomic uint64_t set_at; /* when the flag was set, ns */
  _Atomic int flag;        /* a futex word: 32 bits */
  _Atomic int ack;
  _Atomic int stop;
  double lat_us[SWL_MAX];
};

static uint64_t swl_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int swl_cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int swl_pipe[2]; /* SWL_PIPE: the setter writes [1], the waiter polls [0] */

static void swl_waiter(struct swl_shared *s, enum swl_mode mode, int n)
{
  for (int i = 0; i < n; i++) {
    while (!atomic_load(&s->flag)) {
      if (mode == SWL_YIELD) {
        sched_yield();
      } else if (mode == SWL_SLEEP) {
        struct timespec ts = {0, 1000};
        nanosleep(&ts, NULL);
      } else if (mode == SWL_FUTEX) {
        syscall(SYS_futex, &s->flag, FUTEX_WAIT, 0, NULL, NULL, 0);
      } else if (mode == SWL_PIPE) {
        struct pollfd p = {swl_pipe[0], POLLIN, 0};
        struct timespec ts = {0, 100000000};
        char b;
        if (ppoll(&p, 1, &ts, NULL) > 0 && read(swl_pipe[0], &b, 1) < 0)
          break;
      }
    }
    s->lat_us[i] = (double)(swl_now() - atomic_load(&s->set_at)) / 1e3;
    atomic_store(&s->flag, 0);
    atomic_store(&s->ack, 1);
  }
}

static void swl_setter(struct swl_shared *s, enum swl_mode mode, int n)
{
  unsigned seed = 1;
  for (int i = 0; i < n; i++) {
    uint64_t until = swl_now() + 2000000 + (uint64_t)(rand_r(&seed) % 3000000);
    while (swl_now() < until)
      ;
    atomic_store(&s->set_at, swl_now());
    atomic_store(&s->flag, 1);
    if (mode == SWL_FUTEX)
      syscall(SYS_futex, &s->flag, FUTEX_WAKE, 1, NULL, NULL, 0);
    if (mode == SWL_PIPE && write(swl_pipe[1], "", 1) < 0)
      break;
    while (!atomic_load(&s->ack))
      ;
    atomic_store(&s->ack, 0);
  }
  atomic_store(&s->stop, 1);
}

int main(int argc, char **argv)
{
  static const char *const names[SWL_NMODES] = {"yield", "spin", "sleep", "futex", "pipe"};
  int mode = -1, n = argc > 2 ? atoi(argv[2]) : 0;
  for (int m = 0; argc > 1 && m < SWL_NMODES; m++)
    if (strcmp(argv[1], names[m]) == 0)
      mode = m;
  if (mode < 0 || n < 1 || n > SWL_MAX) {
    fprintf(stderr, "usage: %s yield|spin|sleep|futex|pipe COUNT (1..%d)\n", argv[0], SWL_MAX);
    return 2;
  }
  struct swl_shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED)
    return 1;
  memset(s, 0, sizeof(*s));
  if (pipe(swl_pipe) != 0)
    return 1;
  pid_t pid[3];
  for (int r = 0; r < 3; r++) {
    pid[r] = fork();
    if (pid[r] < 0)
      return 1;
    if (pid[r] == 0) {
      if (r == 0)
        swl_setter(s, (enum swl_mode)mode, n);
      else if (r == 1)
        swl_waiter(s, (enum swl_mode)mode, n);
      else
        while (!atomic_load(&s->stop)) /* the second busy process */
          ;
      _exit(0);
    }
  }
  for (int r = 0; r < 3; r++)
    waitpid(pid[r], NULL, 0);
  qsort(s->lat_us, (size_t)n, sizeof(double), swl_cmp);
  printf("%s: min %.1f median %.1f p90 %.1f max %.1f us (%d wake-ups)\n", names[mode], s->lat_us[0],
         s->lat_us[n / 2], s->lat_us[n * 9 / 10], s->lat_us[n - 1], n);
  return 0;
}
