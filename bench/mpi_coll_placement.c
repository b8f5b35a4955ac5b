/**
 * @file mpi_coll_placement.c
 * @brief Where the ranks run while a collective repeats, and how fast it is in each placement: the stacks of
 * ranks on one core that blocking waits leave on an oversubscribed host (doc/performance.md, "Ranks stacked on
 * one core by wake-ups"). Built unchanged with nmad's mpicc and Open MPI's.
 *
 * Usage: mpirun -n N mpi_coll_placement [--count CALLS] [--size BYTES] [--coll allgather|barrier]
 *   --count  calls timed back to back (default 6000)
 *   --size   bytes per rank for the allgather (default 16384)
 *   --coll   allgather (default) or barrier
 * Before each call every rank notes its processor (sched_getcpu()); rank 0 times its calls. Output (rank 0): one
 * line per run of consecutive calls in the same placement, "t=START_ms PLACEMENT xCALLS med MEDIAN_us", where
 * PLACEMENT gives each rank's processor number (rank 0 first; processors above 9 as letters), START_ms the sum of
 * rank 0's call times before the run; then "total T ms" and "stacked S of CALLS calls", S counting the calls made
 * while some processor held more than ceil(N / P) ranks, P the processors of rank 0's affinity mask at start or
 * the processors seen in the run if more. Wall-clock time is only reported.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include "mpi_bench_clock.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char cpu_char(int c) { return c < 0 ? '?' : c < 10 ? (char)('0' + c) : c < 36 ? (char)('a' + c - 10) : '+'; }

/* The processors of call i, one character per rank (cpus holds rank r's call i at [r * count + i]). */
static void placement(const int *cpus, long count, int p, long i, char *out)
{
  for (int r = 0; r < p; r++)
    out[r] = cpu_char(cpus[(long)r * count + i]);
  out[p] = 0;
}

/* Does a processor hold more than ceil(p / processors in use over the run) ranks in this placement? */
static int stacked(const char *key, int p, int n_cpus)
{
  int most = 0;
  for (int r = 0; r < p; r++) {
    int same = 0;
    for (int q = 0; q < p; q++)
      same += key[q] == key[r];
    if (same > most)
      most = same;
  }
  return most > (p + n_cpus - 1) / n_cpus;
}

int main(int argc, char **argv)
{
  long count = 6000;
  int size = 16384, barrier = 0, rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--count") == 0)
      count = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--size") == 0)
      size = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--coll") == 0)
      barrier = strcmp(argv[i + 1], "barrier") == 0;
  }
  if (count < 1 || size < 1 || p > 4096) {
    if (rank == 0)
      fprintf(stderr, "usage: %s [--count CALLS>0] [--size BYTES>0] [--coll allgather|barrier]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char *sbuf = calloc((size_t)size, 1), *rbuf = malloc((size_t)size * (size_t)p);
  double *t = malloc((size_t)count * sizeof(double));
  int *cpu = malloc((size_t)count * sizeof(int));
  int *all = rank == 0 ? malloc((size_t)count * (size_t)p * sizeof(int)) : NULL;
  if (!sbuf || !rbuf || !t || !cpu || (rank == 0 && !all))
    MPI_Abort(MPI_COMM_WORLD, 1);
  cpu_set_t mask0;
  if (sched_getaffinity(0, sizeof(mask0), &mask0) != 0)
    CPU_ZERO(&mask0);
  for (int i = 0; i < 20; i++) /* warm-up */
    barrier ? MPI_Barrier(MPI_COMM_WORLD)
            : MPI_Allgather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
  double t_start = now_us();
  for (long i = 0; i < count; i++) {
    cpu[i] = sched_getcpu();
    double t0 = now_us();
    barrier ? MPI_Barrier(MPI_COMM_WORLD)
            : MPI_Allgather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
    t[i] = now_us() - t0;
  }
  double total = now_us() - t_start;
  MPI_Gather(cpu, (int)count, MPI_INT, all, (int)count, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    char seen[256] = {0}, key[4097], next[4097];
    int n_seen = 0, n_cpus = CPU_COUNT(&mask0);
    for (long k = 0; k < count * p; k++) {
      unsigned char c = (unsigned char)cpu_char(all[k]);
      n_seen += !seen[c];
      seen[c] = 1;
    }
    if (n_seen > n_cpus)
      n_cpus = n_seen;
    double *sorted = malloc((size_t)count * sizeof(double)), start = 0;
    long n_stacked = 0;
    for (long i = 0; i < count;) {
      long j = i + 1;
      placement(all, count, p, i, key);
      for (; j < count; j++) {
        placement(all, count, p, j, next);
        if (strcmp(key, next) != 0)
          break;
      }
      memcpy(sorted, t + i, (size_t)(j - i) * sizeof(double));
      qsort(sorted, (size_t)(j - i), sizeof(double), cmp_double);
      printf("t=%.0fms %s x%ld med %.1f\n", start / 1000, key, j - i, sorted[(j - i) / 2]);
      if (stacked(key, p, n_cpus))
        n_stacked += j - i;
      for (long k = i; k < j; k++)
        start += t[k];
      i = j;
    }
    printf("total %.0f ms\nstacked %ld of %ld calls\n", total / 1000, n_stacked, count);
    free(sorted);
  }
  free(sbuf);
  free(rbuf);
  free(t);
  free(cpu);
  free(all);
  MPI_Finalize();
  return 0;
}
