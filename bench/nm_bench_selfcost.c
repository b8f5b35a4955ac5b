/**
 * @file nm_bench_selfcost.c
 * @brief CPU cost of the sendrecv path (interface + core), measured in one process on the gate to itself.
 *
 * Why: the ping-pong and message-rate benchmarks between two processes move by +-50% on a loaded 2-core host
 * (scheduling dominates), far more than a function call of the interface layer costs. This one counts the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: time spent descheduled is not counted), so two builds can be
 * compared on a busy machine (issue 15, part 6: "no performance loss on the hot path").
 * Run alone (singleton bootstrap): `LD_LIBRARY_PATH=BUILD/.libs ./nm_bench_selfcost [blocks] [iters] [size]`;
 * bench/nm_bench_selfcost.sh builds it against two build trees and alternates them.
 * One iteration: nm_sr_irecv + nm_sr_isend (self gate, size bytes, default 8) + nm_sr_swait + nm_sr_rwait.
 * Output: ns per iteration, minimum and median over the blocks (each block: iters iterations, default 20000).
 * Exit status: 0, or 1 if an nmad call failed.
 */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
  int blocks = argc > 1 ? atoi(argv[1]) : 30, iters = argc > 2 ? atoi(argv[2]) : 20000;
  size_t size = argc > 3 ? (size_t)atol(argv[3]) : 8;
  nm_launcher_t l;
  nm_session_t s;
  nm_gate_t self;
  int rank, err;
  if ((err = nm_launcher_init(&l, &argc, &argv)) || (err = nm_launcher_get_rank(l, &rank)) ||
      (err = nm_launcher_get_gate(l, rank, &self)) ||
      (err = nm_session_open(nm_launcher_get_core(l), "selfcost", &s))) {
    fprintf(stderr, "nm_bench_selfcost: set-up failed: %s\n", nm_strerror(err));
    return 1;
  }
  char *sbuf = calloc(1, size ? size : 1), *rbuf = calloc(1, size ? size : 1);
  double *ns = malloc(sizeof(double) * (size_t)blocks);
  nm_sr_request_t sr, rr;
  for (int b = -1; b < blocks; b++) { /* block -1 warms up */
    double t0 = cpu_ns();
    for (int i = 0; i < iters; i++) {
      if ((err = nm_sr_irecv(s, self, 1, rbuf, size, &rr)) || (err = nm_sr_isend(s, self, 1, sbuf, size, &sr)) ||
          (err = nm_sr_swait(s, &sr)) || (err = nm_sr_rwait(s, &rr))) {
        fprintf(stderr, "nm_bench_selfcost: %s\n", nm_strerror(err));
        return 1;
      }
    }
    if (b >= 0)
      ns[b] = (cpu_ns() - t0) / iters;
  }
  qsort(ns, (size_t)blocks, sizeof(double), cmp);
  printf("size,iters,blocks,ns_min,ns_median\n%zu,%d,%d,%.1f,%.1f\n", size, iters, blocks, ns[0], ns[blocks / 2]);
  nm_session_close(s);
  free(ns);
  free(sbuf);
  free(rbuf);
  return nm_launcher_exit(l) ? 1 : 0;
}
