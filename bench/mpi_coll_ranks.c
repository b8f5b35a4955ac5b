/**
 * @file mpi_coll_ranks.c
 * @brief Each rank's own median time of one small collective (issue 18: which rank pays), plain MPI, built
 *        unchanged with nmad's mpicc and with Open MPI's.
 *
 * Usage: mpirun -n N mpi_coll_ranks [bcast|scatter|alltoall|gather|barrier|send] [ITERS]
 * Each iteration is MPI_Barrier, then the operation timed on every rank (8 B; gather 1 KiB per rank; "send" is an
 * 8 B MPI_Send from rank 0 to rank 1, the others idle), 1,000 warm-ups first. Rank 0 prints every rank's median
 * in microseconds, in rank order. mpi_coll_bench reports the median of the slowest rank per iteration; this
 * program shows how that time splits between the root and the others. Exit status: 0, 2 on a bad argument.
 */
#include <mpi.h>
#include "mpi_bench_clock.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_once(const char *what, int rank, char *buf, char *big)
{
  if (!strcmp(what, "bcast"))
    MPI_Bcast(buf, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (!strcmp(what, "scatter"))
    MPI_Scatter(big, 8, MPI_BYTE, buf, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (!strcmp(what, "alltoall"))
    MPI_Alltoall(big, 8, MPI_BYTE, big + 4096, 8, MPI_BYTE, MPI_COMM_WORLD);
  else if (!strcmp(what, "gather"))
    MPI_Gather(buf, 1024, MPI_BYTE, big, 1024, MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (!strcmp(what, "barrier"))
    MPI_Barrier(MPI_COMM_WORLD);
  else if (rank == 0)
    MPI_Send(buf, 8, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
  else if (rank == 1)
    MPI_Recv(buf, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *what = argc > 1 ? argv[1] : "bcast";
  int iters = argc > 2 ? atoi(argv[2]) : 20000;
  const char *known[] = {"bcast", "scatter", "alltoall", "gather", "barrier", "send"};
  int ok = 0;
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    ok |= !strcmp(what, known[i]);
  if (!ok || iters < 1 || size > 64 || size * 1024 > 60000 || (!strcmp(what, "send") && size < 2)) {
    if (rank == 0)
      fprintf(stderr, "usage: mpi_coll_ranks [bcast|scatter|alltoall|gather|barrier|send] [ITERS >= 1], 2-58 ranks\n");
    MPI_Finalize();
    return 2;
  }
  double *t = malloc(sizeof(double) * (size_t)iters), all[64];
  static char buf[4096], big[65536];
  for (int i = 0; i < iters + 1000; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run_once(what, rank, buf, big);
    if (i >= 1000)
      t[i - 1000] = (MPI_Wtime() - t0) * 1e6;
  }
  qsort(t, (size_t)iters, sizeof(double), cmp_double);
  double med = t[iters / 2];
  MPI_Gather(&med, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s, %d ranks, median us per rank:", what, size);
    for (int i = 0; i < size; i++)
      printf(" %.3f", all[i]);
    printf("\n");
  }
  free(t);
  MPI_Finalize();
  return 0;
}
