/* Integration test of the topology-ID multicast (Song 2009; nm_mcast_topo.h) with real processes, 2..64 ranks.
 * The topology comes from NMAD_MCAST_TOPO (set by the scripts), the same on every rank.
 * Part 1, tree kind of the dynamic broadcast: in every round every rank is a root at once (concurrent
 *   multicasts from all roots) to a pseudo-random subset of the others, known to all from fixed seeds, with
 *   NM_MCAST_TREE_TOPO_ID, whole or in 8 KiB segments, small to rendezvous sizes. Receivers post plain
 *   nm_sr_irecv() from the root and check every byte; a guard after the buffer stays untouched; at the end no
 *   unexpected message is left (nm_sr_iprobe): every destination got its multicast exactly once.
 * Part 2, standalone nm_mcast_topo_isend(): every rank multicasts to an interval (even roots) or a list (odd
 *   roots), through the routing tables with virtual masters; the handler counts deliveries per root and checks
 *   the data; each rank must get exactly the multicasts it is a destination of, once each.
 * Prints PASS lines; exits non-zero on the first failure (a 30 s deadline guards every wait). */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_mcast.h>
#include <nmad/nm_mcast_topo.h>
#include <nmad/nm_core.h>
#include <string.h>
#include "it_common.h"

#define MAXN 64
#define GUARD 16
#define GUARD_BYTE 0x5A
#define ROUNDS 4
#define TAG_MC ((nm_tag_t)0x70700000)
#define TAG_DONE ((nm_tag_t)0x70710000)
#define DEADLINE_NS (30ULL * 1000000000ULL)

static int rank, size;
static nm_launcher_t launcher;
static nm_core_t core;
static nm_session_t sess;

static uint64_t deadline(void) { return nm_core_time_ns(core) + DEADLINE_NS; }

/* Is @p d a destination of root @p root in round @p round? Every rank computes the same answer. */
static int is_dest(int round, int root, int d)
{
  if (d == root)
    return 0;
  if (round == 0)
    return 1; /* everybody */
  return mix(((uint64_t)round << 40) ^ ((uint64_t)root << 20) ^ (uint64_t)d) % 3 != 0;
}
static size_t len_of(int round, int root)
{
  static const size_t lens[ROUNDS] = {100, 40000, 300000, 0};
  return lens[round] + (size_t)root;
}
static uint64_t seed_of(int round, int root) { return ((uint64_t)round << 32) | (uint64_t)root; }

static uint8_t *rbuf[MAXN];
static nm_sr_request_t rreq[MAXN];

static void post_receives(int round)
{
  for (int r = 0; r < size; r++) {
    if (!is_dest(round, r, rank))
      continue;
    size_t len = len_of(round, r);
    rbuf[r] = malloc(len + GUARD);
    CHECK(rbuf[r], "malloc");
    memset(rbuf[r], GUARD_BYTE, len + GUARD);
    nm_gate_t g;
    CHECK_RC(nm_launcher_get_gate(launcher, r, &g), "gate");
    CHECK_RC(nm_sr_irecv(sess, g, TAG_MC + (nm_tag_t)round, rbuf[r], len, &rreq[r]), "irecv");
  }
}

static void part_tree(nm_mcast_service_t mc)
{
  for (int round = 0; round < ROUNDS; round++) {
    nm_len_t seg = round % 2 ? 8192 : 0;
    if (round % 2 == 0) /* receives posted before the multicasts arrive; in odd rounds after (unexpected path) */
      post_receives(round);
    int dests[MAXN], n = 0;
    for (int d = size - 1; d >= 0; d--) /* reversed order: the root's sort must place them */
      if (is_dest(round, rank, d))
        dests[n++] = d;
    size_t mlen = len_of(round, rank);
    uint8_t *data = malloc(mlen + 1);
    CHECK(data, "malloc");
    fill(data, mlen, seed_of(round, rank));
    nm_mcast_req_t mreq;
    CHECK_RC(nm_mcast_isend_seg(mc, dests, NULL, n, TAG_MC + (nm_tag_t)round, data, mlen, NM_MCAST_TREE_TOPO_ID,
                                seg, &mreq), "nm_mcast_isend_seg");
    CHECK_RC(nm_mcast_wait(mc, &mreq), "nm_mcast_wait");
    free(data);
    if (round % 2)
      post_receives(round);
    for (int r = 0; r < size; r++) {
      if (!is_dest(round, r, rank))
        continue;
      size_t len = len_of(round, r);
      CHECK_RC(nm_sr_wait_deadline(sess, &rreq[r], deadline()), "receive of a multicast");
      nm_len_t got;
      CHECK_RC(nm_sr_get_size(sess, &rreq[r], &got), "size");
      CHECK(got == len, "round %d root %d: %zu bytes, expected %zu", round, r, (size_t)got, len);
      long bad = verify(rbuf[r], len, seed_of(round, r));
      CHECK(bad < 0, "round %d root %d: byte %ld wrong", round, r, bad);
      for (int k = 0; k < GUARD; k++)
        CHECK(rbuf[r][len + k] == GUARD_BYTE, "round %d root %d: written past the buffer", round, r);
      free(rbuf[r]);
    }
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
    if (rank == 0)
      printf("PASS topo tree round %d (%s, %zu+ bytes): every root at once, %d ranks\n", round,
             seg ? "8 KiB segments" : "whole", len_of(round, 0), size);
  }
  /* exactly once: nothing left over on any multicast tag */
  nm_tag_t t;
  CHECK(nm_sr_iprobe(sess, NM_ANY_GATE, TAG_MC, ~(nm_tag_t)0xff, NULL, &t, NULL) == -NM_EAGAIN,
        "a multicast arrived twice (tag %llx left unexpected)", (unsigned long long)t);
}

/* ---- part 2: standalone ---- */
struct part2_s {
  int count[MAXN]; /* deliveries per root */
  int bad;
};

static void on_mcast(int root, nm_tag_t tag, const void *data, nm_len_t len, void *ref)
{
  struct part2_s *p = ref;
  if (root < 0 || root >= MAXN || tag != TAG_MC + 100 || len != len_of(1, root) ||
      verify(data, len, seed_of(7, root)) >= 0)
    p->bad++;
  else
    p->count[root]++;
}

/* Standalone destinations of root r: [r/2, size) for even roots, every third rank for odd ones. */
static int sa_is_dest(int r, int d)
{
  if (d == r)
    return 0;
  return r % 2 == 0 ? d >= r / 2 : (d + r) % 3 == 0;
}

static void part_standalone(void)
{
  nm_mcast_topo_t topo;
  CHECK_RC(nm_mcast_topo_from_env(size, rank, &topo), "nm_mcast_topo_from_env");
  struct part2_s p = {{0}, 0};
  nm_mcast_topo_service_t svc;
  CHECK_RC(nm_mcast_topo_init(sess, topo, 1 << 20, on_mcast, &p, &svc), "nm_mcast_topo_init");
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  size_t len = len_of(1, rank);
  uint8_t *data = malloc(len);
  CHECK(data, "malloc");
  fill(data, len, seed_of(7, rank));
  int list[MAXN], n = 0;
  for (int d = 0; d < size; d++)
    if (sa_is_dest(rank, d))
      list[n++] = d;
  struct nm_mcast_topo_set_s set = rank % 2 == 0 ? (struct nm_mcast_topo_set_s){.lo = rank / 2, .hi = size}
                                                 : (struct nm_mcast_topo_set_s){.list = list, .n = n};
  nm_mcast_topo_req_t req;
  CHECK_RC(nm_mcast_topo_isend(svc, &set, TAG_MC + 100, data, len, &req), "nm_mcast_topo_isend");
  CHECK_RC(nm_mcast_topo_wait(svc, &req), "nm_mcast_topo_wait");
  int expect = 0;
  for (int r = 0; r < size; r++)
    expect += sa_is_dest(r, rank);
  uint64_t dl = deadline();
  for (;;) {
    int got = 0;
    for (int r = 0; r < size; r++)
      got += p.count[r];
    if (got >= expect)
      break;
    CHECK(nm_core_time_ns(core) < dl, "standalone: %d of %d multicasts after 30 s", got, expect);
    nm_core_wait(core, nm_core_time_ns(core) + 1000000);
  }
  /* Everybody has everything only when every rank says so; until then we may still have to relay. */
  nm_sr_request_t sreq[MAXN], rreq[MAXN];
  int one = 1, dummy[MAXN];
  for (int r = 0; r < size; r++) {
    if (r == rank)
      continue;
    nm_gate_t g;
    CHECK_RC(nm_launcher_get_gate(launcher, r, &g), "gate");
    CHECK_RC(nm_sr_irecv(sess, g, TAG_DONE, &dummy[r], sizeof(int), &rreq[r]), "irecv done");
    CHECK_RC(nm_sr_isend(sess, g, TAG_DONE, &one, sizeof(int), &sreq[r]), "isend done");
  }
  for (int r = 0; r < size; r++)
    if (r != rank) {
      CHECK_RC(nm_sr_wait_deadline(sess, &rreq[r], deadline()), "done message");
      CHECK_RC(nm_sr_wait_deadline(sess, &sreq[r], deadline()), "done send");
    }
  dl = deadline();
  while (nm_mcast_topo_pending(svc)) {
    CHECK(nm_core_time_ns(core) < dl, "standalone: relays still pending after 30 s");
    nm_core_wait(core, nm_core_time_ns(core) + 1000000);
  }
  CHECK(p.bad == 0, "standalone: %d bad deliveries", p.bad);
  for (int r = 0; r < size; r++)
    CHECK(p.count[r] == sa_is_dest(r, rank), "standalone: root %d delivered %d times here, expected %d", r,
          p.count[r], sa_is_dest(r, rank));
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_mcast_topo_finalize(svc), "nm_mcast_topo_finalize");
  nm_mcast_topo_destroy(topo);
  free(data);
  if (rank == 0)
    printf("PASS topo standalone: intervals and lists from every root, exactly once, %d ranks\n", size);
}

int main(int argc, char **argv)
{
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  CHECK(size >= 2 && size <= MAXN, "2 to %d ranks", MAXN);
  core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_session_open(core, "it_mcast_topo", &sess), "session");
  nm_mcast_service_t mc;
  CHECK_RC(nm_mcast_init(sess, &mc), "nm_mcast_init");
  part_tree(mc);
  part_standalone();
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_mcast_finalize(mc), "nm_mcast_finalize");
  CHECK_RC(nm_session_close(sess), "nm_session_close");
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  return 0;
}
