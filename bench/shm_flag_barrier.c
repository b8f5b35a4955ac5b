/**
 * @file shm_flag_barrier.c
 * @brief The floor of a barrier on one host without messages: P processes meet at a sense-reversing counter in
 * shared memory (the last to arrive flips the sense) and wait by sched_yield(), as nmad's and Open MPI's ranks do
 * on an oversubscribed host. What a shared-memory collective (Open MPI's coll/sm, off by default there) could give
 * against the message-based barriers (issue 18; doc/performance.md, "Where the oversubscribed barrier's time goes").
 * Needs no nmad and no MPI.
 *
 * Usage: shm_flag_barrier [P] [N] [bind]   (default 4 processes, 200000 barriers after 1000 untimed ones; with a
 * third argument, process i is bound to CPU i mod 2, the placement of `nmad-run --bind-to core` on 2 cores).
 * Prints the wall time per barrier seen by process 0.
 *
 * Build and run: cc -O2 -o shm_flag_barrier bench/shm_flag_barrier.c && ./shm_flag_barrier 4 200000 bind
 * Exit status: 0, 1 if the shared page or a process could not be made, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 1000

struct shared {
  _Alignas(64) atomic_int count; /* arrivals in this round */
  _Alignas(64) atomic_int sense; /* flipped by the last arrival of a round */
};

int main(int argc, char **argv)
{
  int p = argc > 1 ? atoi(argv[1]) : 4, n = argc > 2 ? atoi(argv[2]) : 200000, bind = argc > 3;
  if (p < 2 || p > 1024 || n < 1) {
    fprintf(stderr, "usage: %s [P: 2-1024] [N >= 1] [bind]\n", argv[0]);
    return 2;
  }
  struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED)
    return 1;
  atomic_init(&s->count, 0);
  atomic_init(&s->sense, 0);
  int me = 0;
  for (int i = 1; i < p && me == 0; i++) {
    pid_t c = fork();
    if (c < 0)
      return 1;
    if (c == 0)
      me = i;
  }
  if (bind) {
    cpu_set_t cpu;
    CPU_ZERO(&cpu);
    CPU_SET(me % 2, &cpu);
    sched_setaffinity(0, sizeof(cpu), &cpu);
  }
  int local = 0;
  struct timespec t0 = {0}, t1;
  for (int it = 0; it < n + WARMUP; it++) {
    if (it == WARMUP)
      clock_gettime(CLOCK_MONOTONIC, &t0);
    local = !local;
    if (atomic_fetch_add(&s->count, 1) == p - 1) {
      atomic_store(&s->count, 0);
      atomic_store(&s->sense, local);
    } else {
      while (atomic_load(&s->sense) != local)
        sched_yield();
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (me != 0)
    return 0;
  int failed = 0, status;
  while (wait(&status) > 0)
    failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  printf("P=%d %s: %.3f us per barrier\n", p, bind ? "bound" : "unbound",
         ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n);
  return failed;
}
