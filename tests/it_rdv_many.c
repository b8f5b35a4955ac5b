/* Rendezvous when the driver's queues are full (-NM_EAGAIN from large_send / large_recv): rank 1 pre-posts
 * thousands of receives, rank 0 sends them all by rendezvous (NMAD_RDV_THRESHOLD set low by the scripts), then a
 * message cut into many chunks (NMAD_RDV_CHUNK). The core must post the refused transfers again at a later
 * progress pass. Before, the ofi driver progressed from inside the packet handler: over shm without CMA
 * (FI_SHM_DISABLE_CMA=1) a chunk completed inside the post of the next one and the message's record was used
 * after it was freed (this test failed so); over tcp, a loaded run of nm_bench_prio once livelocked with 4,096
 * outstanding receives (not reproduced by this test on the old code: it checks that they complete). Every byte
 * is checked.
 *
 * Usage: it_rdv_many [messages (default 4096)] [bytes each (default 16384)] [bytes of the chunked one (16 MiB)] */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>

static int rank;
#include "it_common.h"

#define TAG_MANY 31
#define TAG_BIG 32
#define HANG_GUARD_NS (120ULL * 1000000000ULL)

int main(int argc, char **argv)
{
  nm_launcher_t l;
  int size;
  if (nm_launcher_init(&l, &argc, &argv) != 0)
    return 1;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  size_t len = argc > 2 ? (size_t)atol(argv[2]) : 16384;
  size_t big = argc > 3 ? (size_t)atol(argv[3]) : 16u << 20;
  CHECK(size == 2 && n > 0 && len > 0, "run with 2 ranks, messages > 0, bytes > 0");
  nm_session_t s;
  CHECK_RC(nm_session_open(nm_launcher_get_core(l), "it_rdv_many", &s), "session");
  nm_gate_t peer;
  nm_launcher_get_gate(l, 1 - rank, &peer);
  uint8_t *bufs = malloc((size_t)n * len), *bigbuf = malloc(big ? big : 1);
  nm_sr_request_t *reqs = calloc((size_t)n, sizeof(*reqs)), bigreq;
  CHECK(bufs && bigbuf && reqs, "out of memory");
  uint64_t guard = nm_core_time_ns(nm_launcher_get_core(l)) + HANG_GUARD_NS;
  if (rank == 1) { /* every receive posted before the first RDV arrives */
    for (int i = 0; i < n; i++)
      CHECK_RC(nm_sr_irecv(s, peer, TAG_MANY, bufs + (size_t)i * len, len, &reqs[i]), "irecv");
    CHECK_RC(nm_sr_irecv(s, peer, TAG_BIG, bigbuf, big, &bigreq), "irecv big");
  }
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  if (rank == 0) {
    for (int i = 0; i < n; i++) {
      fill(bufs + (size_t)i * len, len, (uint64_t)i);
      CHECK_RC(nm_sr_isend(s, peer, TAG_MANY, bufs + (size_t)i * len, len, &reqs[i]), "isend");
    }
    fill(bigbuf, big, 0xb16);
    CHECK_RC(nm_sr_isend(s, peer, TAG_BIG, bigbuf, big, &bigreq), "isend big");
  }
  for (int i = 0; i < n; i++) {
    CHECK_RC(nm_sr_wait_deadline(s, &reqs[i], guard), "wait");
    if (rank == 1) {
      long bad = verify(bufs + (size_t)i * len, len, (uint64_t)i);
      CHECK(bad < 0, "message %d: byte %ld differs", i, bad);
    }
  }
  CHECK_RC(nm_sr_wait_deadline(s, &bigreq, guard), "wait big");
  if (rank == 1) {
    long bad = verify(bigbuf, big, 0xb16);
    CHECK(bad < 0, "chunked message: byte %ld differs", bad);
    printf("rank 1: %d messages of %zu B and one of %zu B received intact\n", n, len, big);
  }
  free(bufs);
  free(bigbuf);
  free(reqs);
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  CHECK_RC(nm_launcher_exit(l), "nm_launcher_exit");
  printf("PASS rank %d\n", rank);
  return 0;
}
