/* Integration test of pipelined dynamic broadcasts (nm_mcast_isend_seg(); issue 17, deliverable 5) with real
 * processes, any N >= 2. Every rank derives the same schedule from fixed seeds. For every tree kind, every
 * (length, segment size) of the table below, receives posted before or after the broadcast arrived, with and
 * without priorities, the root sends on one (root, tag), to every other rank in a shuffled order:
 *   P1 (7 bytes, point-to-point)  B (the broadcast)  P2 (7 bytes, point-to-point)
 * and every receiver posts one plain nm_sr_irecv() per message and checks that P1, B, P2 come in that order
 * (the broadcast keeps its place among point-to-point messages), every byte of B, nothing written past the
 * buffer, and the events: NM_EVENT_RECV_DATA once with the data complete, then FINALIZED and RECV_COMPLETED.
 * "After": the receiver posts only once the broadcast is waiting as an unexpected message (nm_sr_iprobe() sees
 * its length): forwarding went on without the receive, segments went into the temporary buffer.
 * Even ranks send subtree lists in a LIST message ahead of the data (max_inline 0), odd ranks inline: segmented
 * broadcasts cross both forms. Prints one PASS line per tree kind; exits non-zero on the first failure (a 30 s
 * deadline guards every wait). */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_mcast.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define DEADLINE_NS (30ULL * 1000000000ULL)
#define MAXN 64
#define GUARD 16
#define GUARD_BYTE 0xA5
#define PLEN 7 /* point-to-point markers: never the length of a broadcast below */
#define S ((size_t)32 * 1024)

static int rank, size;
static nm_launcher_t launcher;
static nm_core_t core;
static nm_session_t sess;
static nm_mcast_service_t mc;

/* (length, segment size): one segment (no cut), segment + 1, a segment size that does not divide the length,
 * 1-byte segments on a small message, rendezvous-size segments, 0 bytes. */
static const struct {
  size_t len, seg;
} cfg[] = {{S - 1, S}, {S + 1, S}, {3 * S + 1234, S}, {37, 1}, {(1u << 20) + 3, 128 * 1024}, {0, 64}};
#define NCFG ((int)(sizeof(cfg) / sizeof(cfg[0])))

static const char *tree_name[4] = {"binomial", "flat", "chain", "binary"};

static nm_gate_t gate_of(int r)
{
  nm_gate_t g;
  CHECK_RC(nm_launcher_get_gate(launcher, r, &g), "nm_launcher_get_gate");
  return g;
}

struct rrec {
  nm_sr_request_t req;
  uint8_t *buf;
  size_t len;
  uint64_t seed;
  unsigned ev[8];
  int nev;
  long bad_at_data;
};

static void notifier(struct nm_req_s *req, unsigned event, void *ref)
{
  struct rrec *r = ref;
  CHECK(r->nev < 8, "more than 8 monitor events");
  r->ev[r->nev++] = event;
  if (event & NM_EVENT_RECV_DATA)
    r->bad_at_data = verify(r->buf, r->len, r->seed);
}

static void post(struct rrec *r, int root, nm_tag_t tag, size_t len, uint64_t seed)
{
  memset(r, 0, sizeof(*r));
  r->len = len;
  r->seed = seed;
  r->bad_at_data = -2;
  r->buf = malloc(len + GUARD);
  CHECK(r->buf, "out of memory");
  memset(r->buf, 0, len);
  memset(r->buf + len, GUARD_BYTE, GUARD);
  nm_sr_recv_init(sess, &r->req);
  CHECK_RC(nm_sr_request_set_monitor(sess, &r->req, NM_EVENT_RECV_DATA | NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED,
                                     notifier, r),
           "nm_sr_request_set_monitor");
  CHECK_RC(nm_sr_recv_irecv(sess, &r->req, gate_of(root), tag, NM_TAG_MASK_FULL, r->buf, len), "nm_sr_recv_irecv");
}

/* Wait for @p r and check its bytes; @p bcast: it got the broadcast (events DATA, then FINALIZED+COMPLETED). */
static void check(struct rrec *r, int bcast, const char *what)
{
  int rc = nm_sr_wait_deadline(sess, &r->req, nm_core_time_ns(core) + DEADLINE_NS);
  CHECK(rc == 0, "%s: receive %d (%s)", what, rc, nm_strerror(rc));
  nm_len_t got = 0;
  CHECK_RC(nm_sr_get_size(sess, &r->req, &got), "nm_sr_get_size");
  CHECK(got == r->len, "%s: got %llu bytes, want %zu (wrong message or order)", what, (unsigned long long)got,
        r->len);
  long bad = verify(r->buf, r->len, r->seed);
  CHECK(bad < 0, "%s: wrong byte at offset %ld of %zu (wrong message, order or data)", what, bad, r->len);
  for (int i = 0; i < GUARD; i++)
    CHECK(r->buf[r->len + i] == GUARD_BYTE, "%s: bytes written past the %zu-byte buffer", what, r->len);
  if (bcast) {
    CHECK(r->nev == 2 && r->ev[0] == NM_EVENT_RECV_DATA &&
              r->ev[1] == (NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED),
          "%s: events %d [%#x %#x], want RECV_DATA then FINALIZED|RECV_COMPLETED", what, r->nev, r->ev[0], r->ev[1]);
    CHECK(r->bad_at_data == -1, "%s: at NM_EVENT_RECV_DATA the data was not all in (first wrong byte %ld)", what,
          r->bad_at_data);
  } else {
    CHECK(r->nev == 1 && r->ev[0] == NM_EVENT_RECV_COMPLETED, "%s: point-to-point events %d [%#x]", what, r->nev,
          r->ev[0]);
  }
  free(r->buf);
}

/* One case: root, destinations (every other rank, shuffled), priorities or not. */
static void one_case(int id, int tree, size_t len, size_t seg, int after, int use_prio)
{
  const int root = id % size;
  const nm_tag_t tag = 0x5e90000 + (nm_tag_t)id;
  const uint64_t seed = mix(0x5e6ULL + (uint64_t)id), p1 = seed ^ 1, p2 = seed ^ 2;
  int dests[MAXN], prios[MAXN], n = 0;
  uint64_t s = mix((uint64_t)id * 7919);
  for (int r = 0; r < size; r++)
    if (r != root)
      dests[n++] = r;
  for (int i = n - 1; i > 0; i--) {
    s = mix(s + 1);
    int j = (int)(s % (uint64_t)(i + 1)), t = dests[i];
    dests[i] = dests[j];
    dests[j] = t;
  }
  for (int i = 0; i < n; i++) {
    s = mix(s + 1);
    prios[i] = (int)(s % 7) - 2;
  }
  char what[160];
  snprintf(what, sizeof(what), "%s %zu B seg %zu %s%s root %d", tree_name[tree], len, seg,
           after ? "posted after" : "posted before", use_prio ? " priorities" : "", root);
  struct rrec r[3];
  if (rank != root && !after) {
    post(&r[0], root, tag, PLEN, p1);
    post(&r[1], root, tag, len, seed);
    post(&r[2], root, tag, PLEN, p2);
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  if (rank == root) {
    uint8_t *data = malloc(len ? len : 1), m1[PLEN], m2[PLEN];
    CHECK(data, "out of memory");
    fill(data, len, seed);
    fill(m1, PLEN, p1);
    fill(m2, PLEN, p2);
    nm_sr_request_t s1[MAXN], s2[MAXN];
    nm_mcast_req_t mreq;
    for (int i = 0; i < n; i++)
      CHECK_RC(nm_sr_isend(sess, gate_of(dests[i]), tag, m1, PLEN, &s1[i]), "nm_sr_isend P1");
    int rc = nm_mcast_isend_seg(mc, dests, use_prio ? prios : NULL, n, tag, data, len,
                                (enum nm_mcast_tree_e)tree, seg, &mreq);
    CHECK(rc == 0, "%s: nm_mcast_isend_seg %d (%s)", what, rc, nm_strerror(rc));
    for (int i = 0; i < n; i++)
      CHECK_RC(nm_sr_isend(sess, gate_of(dests[i]), tag, m2, PLEN, &s2[i]), "nm_sr_isend P2");
    CHECK_RC(nm_mcast_wait(mc, &mreq), "nm_mcast_wait");
    memset(data, 0xEE, len); /* complete means reusable */
    free(data);
    for (int i = 0; i < n; i++) {
      CHECK_RC(nm_sr_swait(sess, &s1[i]), "P1 send");
      CHECK_RC(nm_sr_swait(sess, &s2[i]), "P2 send");
    }
  } else {
    if (after) {
      /* P1 first, then wait until the broadcast sits as an unexpected message (forwarded without a receive). */
      post(&r[0], root, tag, PLEN, p1);
      check(&r[0], 0, what);
      uint64_t deadline = nm_core_time_ns(core) + DEADLINE_NS;
      nm_len_t got = 0;
      while (nm_sr_iprobe(sess, gate_of(root), tag, NM_TAG_MASK_FULL, NULL, NULL, &got) != 0 || got != len) {
        CHECK(nm_core_time_ns(core) < deadline, "%s: the broadcast never arrived", what);
        nm_core_progress(core);
        nm_core_wait(core, nm_core_time_ns(core) + 1000000);
      }
      post(&r[1], root, tag, len, seed);
      post(&r[2], root, tag, PLEN, p2);
    } else {
      check(&r[0], 0, what);
    }
    check(&r[1], 1, what);
    check(&r[2], 0, what);
  }
}

int main(int argc, char **argv)
{
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  CHECK(size >= 2 && size <= MAXN, "2 to %d ranks", MAXN);
  core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_session_open(core, "it_mcast_seg", &sess), "session");
  struct nm_mcast_params_s p = {.field_mask = NM_MCAST_PARAM_MAX_INLINE, .max_inline = 0};
  CHECK_RC(nm_mcast_init_params(sess, rank % 2 ? NULL : &p, &mc), "nm_mcast_init_params");
  int id = 0;
  for (int tree = 0; tree < 4; tree++) {
    for (int c = 0; c < NCFG; c++)
      for (int after = 0; after < 2; after++)
        one_case(id++, tree, cfg[c].len, cfg[c].seg, after, (c + after) % 2);
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
    if (rank == 0)
      printf("PASS %s: %d (length, segment) x posted before/after, %d ranks\n", tree_name[tree], NCFG, size);
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_mcast_finalize(mc), "nm_mcast_finalize");
  CHECK_RC(nm_session_close(sess), "nm_session_close");
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  return 0;
}
