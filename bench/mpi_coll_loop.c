/**
 * @file mpi_coll_loop.c
 * @brief One small blocking collective back to back, with no barrier between two calls: wall time, CPU time and
 * context switches per call on each rank. Written once in plain MPI, built with nmad's mpicc and Open MPI's, so
 * that the two libraries' waiting can be compared call for call on an oversubscribed host (issue 18;
 * doc/performance.md, "Where the oversubscribed barrier's time goes").
 *
 * Usage: mpi_coll_loop [barrier|alltoall|gather|reduce] [N]   (default: barrier, 20000 calls after 1000 untimed
 * barriers)
 * Prints, per rank: "rank R WHAT: wall W us/op, user U, sys S us/op, minflt F, vcsw V, ivcsw I per op". user and
 * sys come from getrusage(), which the kernel samples by ticks: read them over many calls, and prefer the wall
 * time and the switch counts. The all-to-all moves 8 B per peer (up to 32 ranks); the gather 1 KiB per rank to rank
 * 0, the reduce 256 ints (1 KiB) summed at rank 0.
 *
 * Build: nmad/mpi/mpicc -O2 -o loop_nmad bench/mpi_coll_loop.c; mpicc.openmpi -O2 -o loop_ompi bench/mpi_coll_loop.c
 * Exit status: 0, 2 on bad usage (or what MPI_Abort gives).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_RANKS 32
#define WARMUP 1000

static double us_between(const struct timeval *a, const struct timeval *b)
{
  return (double)(b->tv_sec - a->tv_sec) * 1e6 + (double)(b->tv_usec - a->tv_usec);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *what = argc > 1 ? argv[1] : "barrier";
  int n = argc > 2 ? atoi(argv[2]) : 20000;
  int alltoall = strcmp(what, "alltoall") == 0, gather = strcmp(what, "gather") == 0;
  int reduce = strcmp(what, "reduce") == 0;
  if ((!alltoall && !gather && !reduce && strcmp(what, "barrier") != 0) || n <= 0 ||
      ((alltoall || gather) && size > MAX_RANKS)) {
    if (rank == 0)
      fprintf(stderr, "usage: %s [barrier|alltoall|gather|reduce] [N > 0] (alltoall, gather: at most %d ranks)\n",
              argv[0], MAX_RANKS);
    MPI_Finalize();
    return 2;
  }
  static char in[1024 * MAX_RANKS], out[1024 * MAX_RANKS];
  for (int i = 0; i < WARMUP; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  struct rusage u0, u1;
  struct timespec t0, t1;
  getrusage(RUSAGE_SELF, &u0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) {
    if (alltoall)
      MPI_Alltoall(in, 8, MPI_BYTE, out, 8, MPI_BYTE, MPI_COMM_WORLD);
    else if (gather)
      MPI_Gather(in, 1024, MPI_BYTE, out, 1024, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (reduce)
      MPI_Reduce(in, out, 256, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    else
      MPI_Barrier(MPI_COMM_WORLD);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  getrusage(RUSAGE_SELF, &u1);
  double wall = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
  printf("rank %d %s: wall %.2f us/op, user %.2f, sys %.2f us/op, minflt %ld, vcsw %.2f, ivcsw %.2f per op\n", rank,
         what, wall / n, us_between(&u0.ru_utime, &u1.ru_utime) / n, us_between(&u0.ru_stime, &u1.ru_stime) / n,
         u1.ru_minflt - u0.ru_minflt, (double)(u1.ru_nvcsw - u0.ru_nvcsw) / n,
         (double)(u1.ru_nivcsw - u0.ru_nivcsw) / n);
  MPI_Finalize();
  return 0;
}
