/* A rank dies in the middle of a transfer: rank 0 streams NMSG rendezvous messages of 4 MiB to rank 2, which
 * receives them one by one and kills itself after the third. The survivors' requests to it must all complete
 * (a generous 30 s deadline only guards against a hang: no timing is asserted): the ones that finished before
 * the death with success, the last ones with -NM_ECLOSED; and the survivors must still talk to each other. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (4u << 20)
#define NMSG 64
#define HANG_GUARD_NS (30ULL * 1000000000ULL)

static int rank;

static void expect_closed(nm_session_t s, nm_sr_request_t *r, const char *what)
{
  uint64_t t0 = nm_core_time_ns(nm_session_get_core(s));
  int rc = nm_sr_wait_deadline(s, r, t0 + HANG_GUARD_NS);
  if (rc != -NM_ECLOSED) {
    fprintf(stderr, "FAIL rank %d: %s completed with '%s', expected peer-gone error\n", rank, what, nm_strerror(rc));
    exit(1);
  }
  printf("rank %d: %s failed with '%s' after %.2f s\n", rank, what, nm_strerror(rc), (nm_core_time_ns(nm_session_get_core(s)) - t0) / 1e9);
}

int main(int argc, char **argv)
{
  nm_launcher_t l;
  int size;
  if (nm_launcher_init(&l, &argc, &argv) != 0)
    return 1;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  if (size != 3) {
    fprintf(stderr, "FAIL: run with 3 ranks\n");
    return 1;
  }
  nm_session_t s;
  nm_session_open(nm_launcher_get_core(l), "it_kill", &s);
  nm_gate_t g0, g1, g2;
  nm_launcher_get_gate(l, 0, &g0);
  nm_launcher_get_gate(l, 1, &g1);
  nm_launcher_get_gate(l, 2, &g2);
  char *big = malloc(BIG);
  memset(big, rank, BIG);
  int small = 0;
  nm_sr_request_t r1, r2;
  if (nm_launcher_barrier(l) != 0)
    return 1;
  if (rank == 2) {
    for (int i = 0; i < 3; i++) {
      nm_sr_irecv(s, g0, 1, big, BIG, &r1);
      nm_sr_rwait(s, &r1);
    }
    nm_sr_irecv(s, g0, 1, big, BIG, &r1);
    nm_sr_wait_deadline(s, &r1, nm_core_time_ns(nm_session_get_core(s)) + 1000000ULL); /* let the 4th transfer start */
    raise(SIGKILL);
  }
  if (rank == 0) {
    static nm_sr_request_t sends[NMSG];
    for (int i = 0; i < NMSG; i++)
      nm_sr_isend(s, g2, 1, big, BIG, &sends[i]);
    nm_sr_irecv(s, g2, 2, &small, sizeof(small), &r2);
    int ok = 0;
    uint64_t t0 = nm_core_time_ns(nm_session_get_core(s));
    for (int i = 0; i < NMSG; i++) {
      int rc = nm_sr_wait_deadline(s, &sends[i], t0 + HANG_GUARD_NS);
      if (rc == 0)
        ok++;
      else if (rc != -NM_ECLOSED) {
        fprintf(stderr, "FAIL rank 0: send %d to rank 2: %s\n", i, nm_strerror(rc));
        exit(1);
      }
    }
    printf("rank 0: %d sends to rank 2 completed before its death, %d failed with 'peer gone' (%.2f s)\n", ok,
           NMSG - ok, (nm_core_time_ns(nm_session_get_core(s)) - t0) / 1e9);
    if (ok < 3 || ok == NMSG) {
      fprintf(stderr, "FAIL rank 0: rank 2 received 3 messages, then died: %d sends succeeded\n", ok);
      exit(1);
    }
    expect_closed(s, &r2, "receive from rank 2");
  } else {
    nm_sr_irecv(s, g2, 3, &small, sizeof(small), &r2);
    expect_closed(s, &r2, "receive from rank 2");
  }
  /* the survivors still work together */
  int token = 42;
  if (rank == 0) {
    nm_sr_isend(s, g1, 9, &token, sizeof(token), &r1);
    if (nm_sr_swait(s, &r1) != 0)
      return 1;
  } else {
    token = 0;
    nm_sr_irecv(s, g0, 9, &token, sizeof(token), &r1);
    if (nm_sr_wait_deadline(s, &r1, nm_core_time_ns(nm_session_get_core(s)) + HANG_GUARD_NS) != 0 || token != 42) {
      fprintf(stderr, "FAIL rank 1: survivors cannot communicate\n");
      return 1;
    }
  }
  nm_session_close(s);
  int rc = nm_launcher_exit(l); /* reports the dead rank; resources are released anyway */
  printf("PASS survivor rank %d (exit: %s)\n", rank, nm_strerror(rc));
  free(big);
  return 0;
}
