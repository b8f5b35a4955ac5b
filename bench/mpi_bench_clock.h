/**
 * @file mpi_bench_clock.h
 * @brief The clock and the median's sort for the MPI programs of bench/ that are built by hand, alone, with either
 * library's mpicc (mpi_coll_timeline.c, mpi_coll_placement.c, mpi_coll_ranks.c): header-only, found next to them.
 */
#ifndef MPI_BENCH_CLOCK_H
#define MPI_BENCH_CLOCK_H
#include <time.h>

/** @return the monotonic clock in microseconds. Thread-safe. */
static inline double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/** qsort() comparison of two doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
#endif
