/**
 * @file t_abort.c
 * @brief MPI_Abort ends the whole job (plain MPI: runs with nmad's shim and with Open MPI), 1..N ranks.
 *
 *   t_abort CODE   every rank prints "rank R pid P" (so that the test can check afterwards that no process is
 *                  left), then rank 1 (rank 0 when alone) calls MPI_Abort(MPI_COMM_WORLD, CODE) while rank 3
 *                  waits in MPI_Barrier and the others in an MPI_Recv from the aborting rank. Just before the
 *                  call it prints "abort at NS" (CLOCK_REALTIME, ns: the script reads the same clock with
 *                  `date +%s%N` once the launcher has exited). A rank whose wait returns prints FAIL.
 * Driven by tests/abort-run.sh.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Long enough for the other ranks to be blocked in their waits when the abort comes. */
#define SETTLE_NS 300000000L

static long long now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
  int code = argc > 1 ? atoi(argv[1]) : 7;
  int rank, size, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int aborter = size > 1 ? 1 : 0;
  printf("rank %d pid %ld\n", rank, (long)getpid());
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == aborter) {
    struct timespec settle = { 0, SETTLE_NS };
    nanosleep(&settle, NULL);
    printf("abort at %lld\n", now_ns());
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, code);
    printf("FAIL rank %d: MPI_Abort returned\n", rank);
  } else if (rank == 3) {
    MPI_Barrier(MPI_COMM_WORLD);
    printf("FAIL rank %d: the barrier completed without rank %d\n", rank, aborter);
  } else {
    MPI_Recv(&x, 1, MPI_INT, aborter, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("FAIL rank %d: received from rank %d, which never sends\n", rank, aborter);
  }
  fflush(stdout);
  return 1;
}
