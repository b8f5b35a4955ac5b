/* Integration test with real processes (nmad-run or mpirun): every rank exchanges messages of random sizes
 * (0 B .. 16 MiB, across the rendezvous threshold) and tags with every rank including itself; contents derive
 * from (source, destination, tag, index) so a reordering or corruption is detected; half of the receives are
 * posted only after a barrier (unexpected messages). Then any-source, truncation, synchronous send, probe and
 * cancel. Prints "PASS <phase>" lines; exits non-zero on the first failure. --quick: smaller sizes. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define NTAGS 3
#define TEST_DEADLINE_NS (120ULL * 1000000000ULL)

static int rank, size;
static nm_launcher_t launcher;
static nm_session_t sess;


static uint64_t msg_seed(int src, int dst, int tag, int idx)
{
  return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ ((uint64_t)tag << 16) ^ (uint64_t)idx;
}

/* The schedule both sides derive: message idx from src to dst has this tag and size. */
static void schedule(int src, int dst, int idx, int quick, int *tag, size_t *len)
{
  uint64_t r = mix(msg_seed(src, dst, 99, idx) + 7);
  *tag = (int)(r % NTAGS);
  unsigned maxlog = quick ? 20 : 24; /* 1 MiB or 16 MiB */
  unsigned lg = (unsigned)((r >> 8) % (maxlog + 1));
  *len = lg == 0 ? 0 : ((size_t)1 << (lg - 1)) + (size_t)((r >> 20) % ((size_t)1 << (lg - 1)));
  if (idx % 5 == 4)
    *len = 0; /* zero-byte messages, regularly */
}

static void phase_random(int quick)
{
  const int nmsg = quick ? 8 : 12;
  int total = size * nmsg;
  nm_sr_request_t *sreq = calloc((size_t)total, sizeof(*sreq));
  nm_sr_request_t *rreq = calloc((size_t)total, sizeof(*rreq));
  uint8_t **sbuf = calloc((size_t)total, sizeof(*sbuf));
  uint8_t **rbuf = calloc((size_t)total, sizeof(*rbuf));
  nm_gate_t gate;
  /* receives for tags 0..NTAGS-2 now, the last tag after the barrier (its data is then unexpected) */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) {
      for (int dst = 0; dst < size; dst++) {
        nm_launcher_get_gate(launcher, dst, &gate);
        for (int i = 0; i < nmsg; i++) {
          int tag;
          size_t len;
          schedule(rank, dst, i, quick, &tag, &len);
          int k = dst * nmsg + i;
          sbuf[k] = malloc(len ? len : 1);
          fill(sbuf[k], len, msg_seed(rank, dst, tag, i));
          CHECK_RC(nm_sr_isend(sess, gate, (nm_tag_t)tag, sbuf[k], len, &sreq[k]), "isend");
        }
      }
    }
    for (int src = 0; src < size; src++) {
      nm_launcher_get_gate(launcher, src, &gate);
      for (int i = 0; i < nmsg; i++) {
        /* Receives of one (src, tag) must be posted in send order: split the passes by tag, so tag 2 is
         * always received as unexpected messages. */
        int tag;
        size_t len;
        schedule(src, rank, i, quick, &tag, &len);
        if ((tag == NTAGS - 1) != pass)
          continue;
        int k = src * nmsg + i;
        rbuf[k] = malloc(len ? len : 1);
        CHECK_RC(nm_sr_irecv(sess, gate, (nm_tag_t)tag, rbuf[k], len, &rreq[k]), "irecv");
      }
    }
    if (pass == 0)
      CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  }
  uint64_t deadline = nm_core_time_ns(nm_launcher_get_core(launcher)) + TEST_DEADLINE_NS;
  for (int k = 0; k < total; k++) {
    CHECK_RC(nm_sr_wait_deadline(sess, &sreq[k], deadline), "send wait");
  }
  for (int k = 0; k < total; k++) {
    int src = k / nmsg, i = k % nmsg, tag;
    size_t len;
    schedule(src, rank, i, quick, &tag, &len);
    CHECK_RC(nm_sr_wait_deadline(sess, &rreq[k], deadline), "recv wait");
    nm_len_t got;
    nm_gate_t from;
    nm_sr_get_size(sess, &rreq[k], &got);
    nm_sr_recv_source(sess, &rreq[k], &from);
    nm_gate_t want;
    nm_launcher_get_gate(launcher, src, &want);
    CHECK(got == len && from == want, "message %d from %d: size %llu (want %zu)", i, src, (unsigned long long)got,
          len);
    uint8_t *expect = malloc(len ? len : 1);
    fill(expect, len, msg_seed(src, rank, tag, i));
    CHECK(memcmp(expect, rbuf[k], len) == 0, "message %d from %d (tag %d, %zu B): wrong contents or order", i, src,
          tag, len);
    free(expect);
    free(rbuf[k]);
    free(sbuf[k]);
  }
  free(sreq);
  free(rreq);
  free(sbuf);
  free(rbuf);
  printf("PASS rank %d random sizes/tags/order/unexpected/self (%d messages)\n", rank, total);
}

/* Many small messages on one tag, half of them posted before the data arrives: strict order check. */
static void phase_order(void)
{
  enum { N = 200 };
  int peer = (rank + 1) % size, from = (rank + size - 1) % size;
  nm_gate_t gp, gf;
  nm_launcher_get_gate(launcher, peer, &gp);
  nm_launcher_get_gate(launcher, from, &gf);
  static uint32_t out[N], in[N];
  nm_sr_request_t s[N], r[N];
  for (int i = 0; i < N / 2; i++)
    CHECK_RC(nm_sr_irecv(sess, gf, 77, &in[i], sizeof(in[i]), &r[i]), "irecv");
  for (int i = 0; i < N; i++) {
    out[i] = (uint32_t)i;
    CHECK_RC(nm_sr_isend(sess, gp, 77, &out[i], sizeof(out[i]), &s[i]), "isend");
  }
  for (int i = N / 2; i < N; i++)
    CHECK_RC(nm_sr_irecv(sess, gf, 77, &in[i], sizeof(in[i]), &r[i]), "irecv");
  for (int i = 0; i < N; i++) {
    CHECK_RC(nm_sr_swait(sess, &s[i]), "swait");
    CHECK_RC(nm_sr_rwait(sess, &r[i]), "rwait");
    CHECK(in[i] == (uint32_t)i, "order: got %u at %d", in[i], i);
  }
  printf("PASS rank %d per-(gate,tag) order\n", rank);
}

static void phase_any_source(void)
{
  nm_gate_t g0;
  nm_launcher_get_gate(launcher, 0, &g0);
  if (rank != 0) {
    nm_sr_request_t s;
    int me = rank;
    CHECK_RC(nm_sr_isend(sess, g0, 50, &me, sizeof(me), &s), "isend");
    CHECK_RC(nm_sr_swait(sess, &s), "swait");
    return;
  }
  int *seen = calloc((size_t)size, sizeof(int));
  for (int n = 1; n < size; n++) {
    int who = -1;
    nm_sr_request_t r;
    nm_gate_t src;
    CHECK_RC(nm_sr_irecv(sess, NM_ANY_GATE, 50, &who, sizeof(who), &r), "irecv any");
    CHECK_RC(nm_sr_rwait(sess, &r), "rwait any");
    CHECK_RC(nm_sr_recv_source(sess, &r, &src), "source");
    int src_rank;
    nm_launcher_get_rank_of_gate(launcher, src, &src_rank);
    CHECK(who == src_rank && who > 0 && who < size && !seen[who], "any-source: content %d from rank %d", who,
          src_rank);
    seen[who] = 1;
  }
  free(seen);
  printf("PASS rank 0 any-source\n");
}

static void phase_truncation(void)
{
  if (size < 2 || rank > 1)
    return;
  nm_gate_t other;
  nm_launcher_get_gate(launcher, 1 - rank, &other);
  const size_t small = 1000, large = 1 << 20;
  uint8_t *a = malloc(large), *b = malloc(large);
  if (rank == 1) {
    fill(a, small, 1);
    fill(b, large, 2);
    nm_sr_request_t s1, s2;
    CHECK_RC(nm_sr_isend(sess, other, 60, a, small, &s1), "isend");
    CHECK_RC(nm_sr_isend(sess, other, 61, b, large, &s2), "isend");
    CHECK_RC(nm_sr_swait(sess, &s1), "swait");
    CHECK_RC(nm_sr_swait(sess, &s2), "swait");
  } else {
    uint8_t *ea = malloc(small), *eb = malloc(large);
    fill(ea, small, 1);
    fill(eb, large, 2);
    memset(a, 0xee, large);
    memset(b, 0xee, large);
    nm_sr_request_t r1, r2;
    CHECK_RC(nm_sr_irecv(sess, other, 60, a, 100, &r1), "irecv");
    CHECK_RC(nm_sr_irecv(sess, other, 61, b, 65536, &r2), "irecv");
    CHECK(nm_sr_rwait(sess, &r1) == -NM_ETRUNCATED, "eager truncation not reported");
    CHECK(nm_sr_rwait(sess, &r2) == -NM_ETRUNCATED, "rendezvous truncation not reported");
    CHECK(memcmp(a, ea, 100) == 0 && a[100] == 0xee, "eager truncation: wrong bytes or overflow");
    CHECK(memcmp(b, eb, 65536) == 0 && b[65536] == 0xee, "rendezvous truncation: wrong bytes or overflow");
    free(ea);
    free(eb);
    printf("PASS rank 0 truncation (eager and rendezvous)\n");
  }
  free(a);
  free(b);
}

static void phase_ssend_probe_cancel(void)
{
  if (size < 2 || rank > 1)
    return;
  nm_gate_t other;
  nm_launcher_get_gate(launcher, 1 - rank, &other);
  char msg[12345];
  if (rank == 0) {
    nm_sr_request_t s;
    fill((uint8_t *)msg, sizeof(msg), 3);
    CHECK_RC(nm_sr_issend(sess, other, 70, msg, sizeof(msg), &s), "issend");
    CHECK_RC(nm_sr_swait(sess, &s), "ssend wait");
    CHECK_RC(nm_sr_issend(sess, other, 71, msg, 16, &s), "issend small");
    CHECK_RC(nm_sr_swait(sess, &s), "ssend small wait");
    printf("PASS rank 0 synchronous send\n");
  } else {
    nm_gate_t g;
    nm_tag_t tag;
    nm_len_t len;
    CHECK_RC(nm_sr_probe(sess, NM_ANY_GATE, 70, NM_TAG_MASK_FULL, &g, &tag, &len), "probe");
    CHECK(g == other && tag == 70 && len == sizeof(msg), "probe: len %llu", (unsigned long long)len);
    char got[12345], want[12345];
    nm_sr_request_t r;
    CHECK_RC(nm_sr_irecv(sess, g, tag, got, len, &r), "irecv");
    CHECK_RC(nm_sr_rwait(sess, &r), "rwait");
    fill((uint8_t *)want, sizeof(want), 3);
    CHECK(memcmp(got, want, sizeof(got)) == 0, "probe/ssend data");
    CHECK_RC(nm_sr_irecv(sess, other, 71, got, 16, &r), "irecv");
    CHECK_RC(nm_sr_rwait(sess, &r), "rwait");
    nm_sr_request_t never;
    CHECK_RC(nm_sr_irecv(sess, other, 999, got, 16, &never), "irecv");
    CHECK_RC(nm_sr_rcancel(sess, &never), "rcancel");
    CHECK(nm_sr_rwait(sess, &never) == -NM_ECANCELED, "cancelled receive status");
    printf("PASS rank 1 probe, synchronous receive, cancel\n");
  }
}

/* nm_launcher_barrier() progresses the core while it waits: rank 1 posts the receive of a rendezvous message and
 * goes straight into the barrier; rank 0 waits for its send before it enters. The send needs rank 1's answer (RTR),
 * which only rank 1's progress gives: a barrier that blocked without progress would hang here. */
static void phase_barrier_progress(void)
{
  enum { LEN = 1 << 20 };
  if (size < 2)
    return;
  uint8_t *buf = rank < 2 ? malloc(LEN) : NULL;
  CHECK(rank >= 2 || buf, "malloc");
  nm_sr_request_t req;
  nm_gate_t g = NULL;
  if (rank < 2)
    nm_launcher_get_gate(launcher, 1 - rank, &g);
  if (rank == 0) {
    for (size_t i = 0; i < LEN; i++)
      buf[i] = (uint8_t)(i * 7 + 1);
    CHECK_RC(nm_sr_isend(sess, g, 91, buf, LEN, &req), "isend");
    CHECK_RC(nm_sr_swait(sess, &req), "swait before the barrier");
  } else if (rank == 1) {
    memset(buf, 0, LEN);
    CHECK_RC(nm_sr_irecv(sess, g, 91, buf, LEN, &req), "irecv");
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  if (rank == 1) {
    CHECK_RC(nm_sr_rwait(sess, &req), "rwait");
    for (size_t i = 0; i < LEN; i++)
      CHECK(buf[i] == (uint8_t)(i * 7 + 1), "byte %zu", i);
  }
  free(buf);
  printf("PASS rank %d barrier progresses\n", rank);
}

int main(int argc, char **argv)
{
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  CHECK_RC(nm_session_open(nm_launcher_get_core(launcher), "it_sendrecv", &sess), "session");
  phase_random(quick);
  phase_order();
  phase_any_source();
  phase_truncation();
  phase_ssend_probe_cancel();
  phase_barrier_progress();
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_session_close(sess), "session close");
  const char *bootstrap = nm_launcher_get_bootstrap(launcher); /* a static string */
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  printf("PASS rank %d all (%d ranks, bootstrap %s)\n", rank, size, bootstrap);
  return 0;
}
