/* A dynamic broadcast's forwarder dies mid-transfer (issue 14, part 5). Rank 0 broadcasts BIG bytes to ranks
 * 1, 2, 3 along a chain (0 -> 1 -> 2 -> 3), NBCAST times; rank 1 takes part in the first two, then posts its
 * receive of the third and kills itself 200 us later, while the data flows (or before it came: both happen). Ranks 2 and 3 must see the
 * third broadcast end, with the data or with an error (lost above them: SKIP), within a hang guard (no timing
 * is asserted; the time is printed), and then receive the root's next point-to-point message on the same
 * (gate, tag) and talk to each other: the stream behind the lost broadcast is not stalled. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_mcast.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
#include "it_common.h"

#define BIG (16u << 20)
#define TAG 31
#define NBCAST 3
#define HANG_GUARD_NS (60ULL * 1000000000ULL)

static void root(nm_session_t s, nm_mcast_service_t mc, nm_launcher_t l, uint8_t *buf)
{
  int dests[3] = {1, 2, 3};
  for (int b = 0; b < NBCAST; b++) {
    fill(buf, BIG, (uint64_t)b);
    nm_mcast_req_t req;
    CHECK_RC(nm_mcast_isend(mc, dests, NULL, 3, TAG, buf, BIG, NM_MCAST_TREE_CHAIN, &req), "nm_mcast_isend");
    int rc = nm_mcast_wait(mc, &req);
    printf("rank 0: broadcast %d ended with '%s'\n", b, nm_strerror(rc));
    CHECK(rc == 0 || (b == NBCAST - 1 && rc == -NM_ECLOSED), "broadcast %d: %s", b, nm_strerror(rc));
  }
  for (int d = 2; d <= 3; d++) { /* the next message on the same streams */
    nm_gate_t g;
    nm_launcher_get_gate(l, d, &g);
    int v = 1000 + d;
    nm_sr_request_t r;
    CHECK_RC(nm_sr_isend(s, g, TAG, &v, sizeof(v), &r), "send after the broadcast");
    CHECK_RC(nm_sr_wait_deadline(s, &r, nm_core_time_ns(nm_session_get_core(s)) + HANG_GUARD_NS), "send wait");
  }
  for (int d = 2; d <= 3; d++) { /* stay until both are done: a root that leaves fails their receives from it */
    nm_gate_t g;
    nm_launcher_get_gate(l, d, &g);
    int done = 0;
    nm_sr_request_t r;
    CHECK_RC(nm_sr_irecv(s, g, TAG + 2, &done, sizeof(done), &r), "irecv done");
    CHECK_RC(nm_sr_wait_deadline(s, &r, nm_core_time_ns(nm_session_get_core(s)) + HANG_GUARD_NS), "done");
  }
}

static void receiver(nm_session_t s, nm_launcher_t l, uint8_t *buf)
{
  nm_core_t core = nm_session_get_core(s);
  nm_gate_t g0;
  nm_launcher_get_gate(l, 0, &g0);
  for (int b = 0; b < NBCAST; b++) {
    nm_sr_request_t r;
    CHECK_RC(nm_sr_irecv(s, g0, TAG, buf, BIG, &r), "irecv");
    if (rank == 1 && b == NBCAST - 1) {
      nm_sr_wait_deadline(s, &r, nm_core_time_ns(core) + 200000ULL); /* let the transfer start */
      raise(SIGKILL);
    }
    uint64_t t0 = nm_core_time_ns(core);
    int rc = nm_sr_wait_deadline(s, &r, t0 + HANG_GUARD_NS);
    CHECK(rc != -NM_ETIMEDOUT, "broadcast %d never ended: the stream is stalled", b);
    if (b < NBCAST - 1 || rc == 0) {
      CHECK_RC(rc, "broadcast");
      CHECK(verify(buf, BIG, (uint64_t)b) < 0, "broadcast %d: wrong data", b);
    } else {
      CHECK(rc == -NM_ECLOSED, "broadcast %d: '%s', expected the data or peer-gone", b, nm_strerror(rc));
    }
    if (b == NBCAST - 1)
      printf("rank %d: broadcast %d through the dead forwarder ended with '%s' after %.3f s\n", rank, b,
             nm_strerror(rc), (nm_core_time_ns(core) - t0) / 1e9);
  }
  int v = 0;
  nm_sr_request_t r;
  CHECK_RC(nm_sr_irecv(s, g0, TAG, &v, sizeof(v), &r), "irecv after");
  CHECK_RC(nm_sr_wait_deadline(s, &r, nm_core_time_ns(core) + HANG_GUARD_NS), "the root's next message");
  CHECK(v == 1000 + rank, "next message: %d", v);
  nm_gate_t peer; /* ranks 2 and 3 still talk */
  nm_launcher_get_gate(l, rank == 2 ? 3 : 2, &peer);
  int mine = rank, theirs = -1;
  nm_sr_request_t rs, rr;
  CHECK_RC(nm_sr_isend(s, peer, TAG + 1, &mine, sizeof(mine), &rs), "isend peer");
  CHECK_RC(nm_sr_irecv(s, peer, TAG + 1, &theirs, sizeof(theirs), &rr), "irecv peer");
  CHECK_RC(nm_sr_wait_deadline(s, &rr, nm_core_time_ns(core) + HANG_GUARD_NS), "peer recv");
  CHECK_RC(nm_sr_wait_deadline(s, &rs, nm_core_time_ns(core) + HANG_GUARD_NS), "peer send");
  CHECK(theirs == (rank == 2 ? 3 : 2), "peer sent %d", theirs);
  CHECK_RC(nm_sr_isend(s, g0, TAG + 2, &mine, sizeof(mine), &rs), "isend done");
  CHECK_RC(nm_sr_wait_deadline(s, &rs, nm_core_time_ns(core) + HANG_GUARD_NS), "done");
}

int main(int argc, char **argv)
{
  nm_launcher_t l;
  int size;
  if (nm_launcher_init(&l, &argc, &argv) != 0)
    return 1;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  CHECK(size == 4, "run with 4 ranks");
  nm_session_t s;
  CHECK_RC(nm_session_open(nm_launcher_get_core(l), "it_mcast_kill", &s), "session");
  nm_mcast_service_t mc;
  CHECK_RC(nm_mcast_init(s, &mc), "nm_mcast_init");
  uint8_t *buf = malloc(BIG);
  CHECK(buf, "out of memory");
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  if (rank == 0)
    root(s, mc, l, buf);
  else
    receiver(s, l, buf);
  printf("PASS survivor %d\n", rank);
  fflush(stdout);
  free(buf);
  /* No nm_mcast_finalize() nor barrier: rank 1 is gone. nmad-run reports it and ends the job after the grace. */
  return 0;
}
