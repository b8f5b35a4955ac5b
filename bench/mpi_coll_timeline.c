/**
 * @file mpi_coll_timeline.c
 * @brief MPI_Barrier over time: how fast a barrier is during each slice of a run, to see the levels a shared host
 * switches between (doc/performance.md, "the host's two speeds"). Built unchanged with nmad's mpicc and Open MPI's.
 *
 * Usage: mpirun -n N mpi_coll_timeline [--count BARRIERS] [--bin-ms MS]
 *   --count   barriers timed back to back (default 120000)
 *   --bin-ms  width of a time slice in ms (default 25)
 * Output (rank 0): one line "start_ms:median_us ..." per run, the median of rank 0's barrier times in each slice
 * that holds at least one barrier, slices counted from the first barrier. Wall-clock time is only reported.
 */
#include <mpi.h>
#include "mpi_bench_clock.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
  long count = 120000;
  double bin_ms = 25;
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--count") == 0)
      count = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--bin-ms") == 0)
      bin_ms = atof(argv[i + 1]);
  }
  if (count < 1 || bin_ms <= 0) {
    if (rank == 0)
      fprintf(stderr, "usage: %s [--count BARRIERS > 0] [--bin-ms MS > 0]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  double *t = malloc(sizeof(double) * (size_t)count), *start = malloc(sizeof(double) * (size_t)count);
  if (!t || !start)
    MPI_Abort(MPI_COMM_WORLD, 1);
  double t0 = now_us();
  for (long i = 0; i < count; i++) {
    double a = now_us();
    MPI_Barrier(MPI_COMM_WORLD);
    t[i] = now_us() - a;
    start[i] = a - t0;
  }
  if (rank == 0) {
    long b0 = 0;
    for (long bin = 0; b0 < count; bin++) {
      long b1 = b0;
      while (b1 < count && start[b1] < (double)(bin + 1) * bin_ms * 1000.0)
        b1++;
      if (b1 > b0) {
        qsort(t + b0, (size_t)(b1 - b0), sizeof(double), cmp_double);
        printf("%.0f:%.2f ", (double)bin * bin_ms, t[b0 + (b1 - b0) / 2]);
      }
      b0 = b1;
    }
    printf("\n");
  }
  free(t);
  free(start);
  MPI_Finalize();
  return 0;
}
