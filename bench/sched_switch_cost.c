/**
 * @file sched_switch_cost.c
 * @brief What one context switch costs on this host when two processes share a core and hand it over with
 * sched_yield(), as the ranks of an oversubscribed MPI job do at every step of a small collective (issue 18;
 * doc/performance.md, "Where the oversubscribed barrier's time goes"). Needs no nmad.
 *
 * Two processes are bound to CPU 0; each loops PAGES times reading one line of each of PAGES distinct pages of its
 * own (the working set a rank touches between two yields), then calls sched_yield(), ITERS times. Printed: wall
 * time per iteration (both processes ran once: two switches), and per switch. PAGES = 0 gives the bare cost of
 * the switch; larger values show what the pages touched after it add (TLB and cache refills).
 *
 * Build and run: cc -O2 -o sched_switch_cost bench/sched_switch_cost.c && ./sched_switch_cost 0 32 128
 * Exit status: 0, 1 if a process could not be started or bound, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITERS 200000
#define PAGE 4096

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* One run with @p pages pages touched per slice: returns the wall time per iteration (us), or a negative value. */
static double run(long pages)
{
  pid_t child = fork();
  if (child < 0)
    return -1;
  cpu_set_t cpu;
  CPU_ZERO(&cpu);
  CPU_SET(0, &cpu);
  if (sched_setaffinity(0, sizeof(cpu), &cpu) != 0)
    _exit(1);
  /* every other page, so that neighbouring pages do not share a TLB entry of a larger page */
  size_t bytes = (size_t)(pages + 1) * 2 * PAGE;
  volatile char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED)
    _exit(1);
  long sum = 0;
  double t0 = now_us();
  for (int i = 0; i < ITERS; i++) {
    for (long k = 0; k < pages; k++)
      sum += mem[(size_t)k * 2 * PAGE];
    sched_yield();
  }
  double per = (now_us() - t0) / ITERS;
  if (child == 0) {
    _exit(sum == -1); /* sum keeps the reads */
  }
  int status;
  waitpid(child, &status, 0);
  munmap((void *)mem, bytes);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? per : -1;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s PAGES... (pages touched per time slice, e.g. 0 32 128)\n", argv[0]);
    return 2;
  }
  for (int a = 1; a < argc; a++) {
    char *end;
    long pages = strtol(argv[a], &end, 10);
    if (*end || pages < 0 || pages > 65536) {
      fprintf(stderr, "%s: PAGES '%s': expected 0 to 65536\n", argv[0], argv[a]);
      return 2;
    }
    double per = run(pages);
    if (per < 0) {
      fprintf(stderr, "%s: the run with %ld pages failed (fork, affinity or mmap)\n", argv[0], pages);
      return 1;
    }
    printf("pages %5ld: %.3f us per iteration (2 switches), %.3f us per switch\n", pages, per, per / 2);
  }
  return 0;
}
