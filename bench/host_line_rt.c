/* host_line_rt.c - the host's cross-core cache-line round trip, the figure that sets the cost of every message
 * between two ranks on different cores (a shared-memory message crosses as one or two lines).
 *
 * Why: this project's 2-vCPU machine switches, for minutes at a time, between two states: a line bounced between
 * its two processors takes ~90 ns there and back in one and ~400 ns in the other (the hypervisor places the two
 * virtual processors close together or far apart), and every shared-memory figure moves with it (8 B ping-pong
 * 0.15 against 0.43 us). A benchmark run that prints this figure at its start and end says which state it saw
 * (doc/performance.md, "The host's two speeds are the cross-core line").
 *
 * Usage: cc -O2 -pthread -o /tmp/host_line_rt bench/host_line_rt.c && /tmp/host_line_rt [ROUND_TRIPS]
 * Two threads pinned to the first two processors of the process's mask pass one cache line back and forth
 * ROUND_TRIPS times (default 1,000,000); prints the mean round trip in ns. Exit status 1 with fewer than two
 * processors or on a bad argument.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) _Atomic long line;
static long round_trips = 1000000;

static int pin(int cpu)
{
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

/* The other side: answers each odd value with the next even one. */
static void *answer(void *arg)
{
  if (pin(*(int *)arg) != 0)
    return NULL;
  for (long v = 1; v < 2 * round_trips; v += 2) {
    while (atomic_load_explicit(&line, memory_order_acquire) != v)
      ;
    atomic_store_explicit(&line, v + 1, memory_order_release);
  }
  return NULL;
}

int main(int argc, char **argv)
{
  if (argc > 1 && (round_trips = strtol(argv[1], NULL, 10)) <= 0) {
    fprintf(stderr, "usage: %s [ROUND_TRIPS > 0]\n", argv[0]);
    return 1;
  }
  cpu_set_t mask;
  int cpus[2], n = 0;
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0)
    return 1;
  for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
    if (CPU_ISSET(c, &mask))
      cpus[n++] = c;
  if (n < 2) {
    fprintf(stderr, "%s: needs two processors\n", argv[0]);
    return 1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, answer, &cpus[1]) != 0 || pin(cpus[0]) != 0)
    return 1;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long v = 0; v < 2 * round_trips; v += 2) {
    atomic_store_explicit(&line, v + 1, memory_order_release);
    while (atomic_load_explicit(&line, memory_order_acquire) != v + 2)
      ;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  pthread_join(t, NULL);
  double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)round_trips;
  printf("%.1f\n", ns);
  return 0;
}
