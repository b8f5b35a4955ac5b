/* nm_launcher_abort() ends the whole job: the native counterpart of tests/mpi/t_abort.c, driven by
 * tests/abort-run.sh.
 *   it_abort CODE   every rank prints "rank R pid P"; rank 1 (rank 0 when alone) calls nm_launcher_abort(l, CODE)
 *                   while rank 3 waits in nm_launcher_barrier() and the others in a receive from the aborting
 *                   rank; just before the call it prints "abort at NS" (CLOCK_REALTIME, as `date +%s%N` in
 *                   the script when the launcher has exited). A rank whose wait returns prints FAIL. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
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

/* What the non-aborting ranks do: block until the launcher terminates them. */
static void wait_forever(nm_launcher_t l, nm_session_t s, int rank, int aborter)
{
  if (rank == 3) {
    int rc = nm_launcher_barrier(l);
    printf("FAIL rank %d: the barrier returned (%s) instead of the job ending\n", rank, nm_strerror(rc));
    return;
  }
  nm_gate_t g;
  nm_sr_request_t r;
  int x = 0;
  nm_launcher_get_gate(l, aborter, &g);
  nm_sr_irecv(s, g, 1, &x, sizeof(x), &r);
  int rc = nm_sr_rwait(s, &r);
  printf("FAIL rank %d: the receive from rank %d returned (%s) instead of the job ending\n", rank, aborter,
         nm_strerror(rc));
}

int main(int argc, char **argv)
{
  int code = argc > 1 ? atoi(argv[1]) : 7;
  nm_launcher_t l;
  int rank, size;
  if (nm_launcher_init(&l, &argc, &argv) != 0)
    return 1;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  nm_session_t s;
  nm_session_open(nm_launcher_get_core(l), "it_abort", &s);
  int aborter = size > 1 ? 1 : 0;
  printf("rank %d pid %ld\n", rank, (long)getpid());
  fflush(stdout);
  if (nm_launcher_barrier(l) != 0)
    return 1;
  if (rank == aborter) {
    struct timespec settle = { 0, SETTLE_NS };
    nanosleep(&settle, NULL);
    printf("abort at %lld\n", now_ns());
    nm_launcher_abort(l, code);
  }
  wait_forever(l, s, rank, aborter);
  fflush(stdout);
  return 1;
}
