/* Integration test of the rootless broadcast (nm_anycast.h; Li et al. 2018) with real processes (any N >= 2).
 * Phases, each checked at every rank:
 *  - every:  every rank originates 3 anycasts (0 B, 1,000 B, 300,000 B: rendezvous) at once, received with plain
 *            receives on nm_anycast_session() from NM_ANY_GATE; the origin is the receive's source; per origin the
 *            anycasts come in its order; data checked; each (origin, index) exactly once;
 *  - rootless: concurrent origins without any barrier between sending and receiving: every rank originates 40
 *            anycasts of 10 to 10,000 B in a tight loop on a handler-mode ring, then waits until it has seen the
 *            40 (N - 1) anycasts of the others ("all ranks eventually see it"); data checked, each exactly once;
 *  - count:  after a barrier and a quiet period (a duplicate would show now), each rank's counters: received
 *            (N - 1) x 43, lost 0; rank 0 sums the messages every rank sent: exactly N - 1 per anycast;
 *  - nopoll: (with --nopoll, under NMAD_PROGRESS=thread) rank 0 originates one anycast while the others make no
 *            nmad call at all: they only sleep and look at a flag their handler sets, so the progress thread
 *            must receive and forward it (the paper's second drawback, section 4).
 * Exits non-zero on the first failure; every wait has a 60 s deadline. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_anycast.h>
#include <nmad/nm_rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "it_common.h"

#define DEADLINE_NS (60ULL * 1000000000ULL)
#define N_EVERY 3
#define N_ROOTLESS 40
#define TAG_EVERY ((nm_tag_t)0xa1)
#define TAG_ROOTLESS ((nm_tag_t)0xa2 << 32) /* + index */
#define TAG_NOPOLL ((nm_tag_t)0xa3 << 32)
#define TAG_SUM ((nm_tag_t)0xa4)

static int rank, size;
static nm_launcher_t launcher;
static nm_core_t core;
static nm_session_t sess;

static const nm_len_t every_len[N_EVERY] = {0, 1000, 300000};

static uint64_t seed_of(int origin, int phase, int idx) { return ((uint64_t)(origin + 1) << 40) ^ ((uint64_t)phase << 32) ^ (uint64_t)idx; }
static nm_len_t rootless_len(int origin, int idx) { return 10 + mix(seed_of(origin, 2, idx)) % 9991; }

/* What the handler-mode ring saw. */
struct seen_s {
  int *count; /* [origin * N_ROOTLESS + idx] */
  int total;
  volatile int nopoll;
};

static void on_anycast(nm_anycast_t ac, int origin, nm_tag_t tag, const void *data, nm_len_t len, void *ref)
{
  struct seen_s *s = ref;
  CHECK(origin >= 0 && origin < size && origin != rank, "origin %d", origin);
  if ((tag >> 32) == (TAG_NOPOLL >> 32)) {
    CHECK(origin == 0 && len == 64 && verify(data, len, seed_of(0, 3, 0)) < 0, "nopoll anycast from %d", origin);
    s->nopoll = 1;
    return;
  }
  CHECK((tag >> 32) == (TAG_ROOTLESS >> 32), "tag %llx", (unsigned long long)tag);
  int idx = (int)(tag & 0xffffffffu);
  CHECK(idx >= 0 && idx < N_ROOTLESS, "index %d", idx);
  CHECK(len == rootless_len(origin, idx), "anycast %d of %d: %zu bytes", idx, origin, (size_t)len);
  long bad = verify(data, len, seed_of(origin, 2, idx));
  CHECK(bad < 0, "anycast %d of %d: byte %ld wrong", idx, origin, bad);
  s->count[origin * N_ROOTLESS + idx]++;
  s->total++;
}

static void phase_every(nm_anycast_t ac)
{
  nm_session_t rx = nm_anycast_session(ac);
  CHECK(rx != NULL, "no receive session");
  uint8_t *out[N_EVERY];
  nm_anycast_req_t reqs[N_EVERY];
  for (int i = 0; i < N_EVERY; i++) {
    out[i] = malloc(every_len[i] + 1);
    fill(out[i], every_len[i], seed_of(rank, 1, i));
    CHECK_RC(nm_anycast_isend(ac, TAG_EVERY, out[i], every_len[i], &reqs[i]), "nm_anycast_isend");
  }
  int *next = calloc((size_t)size, sizeof(int)); /* next index expected per origin: the origin's order */
  uint8_t *buf = malloc(every_len[N_EVERY - 1] + 64);
  for (int got = 0; got < (size - 1) * N_EVERY; got++) {
    nm_sr_request_t r;
    memset(buf, 0x5a, every_len[N_EVERY - 1] + 64);
    CHECK_RC(nm_sr_irecv(rx, NM_ANY_GATE, TAG_EVERY, buf, every_len[N_EVERY - 1] + 64, &r), "nm_sr_irecv");
    int rc = nm_sr_wait_deadline(rx, &r, nm_core_time_ns(core) + DEADLINE_NS);
    CHECK(rc == 0, "anycast %d of %d: %s", got, (size - 1) * N_EVERY, nm_strerror(rc));
    nm_gate_t g;
    nm_len_t len;
    CHECK_RC(nm_sr_recv_source(rx, &r, &g), "nm_sr_recv_source");
    CHECK_RC(nm_sr_get_size(rx, &r, &len), "nm_sr_get_size");
    int o = nm_anycast_member_of(ac, g), r_of_g = -1;
    nm_launcher_get_rank_of_gate(launcher, g, &r_of_g);
    CHECK(o >= 0 && o < size && o != rank && o == r_of_g, "origin %d (gate of rank %d)", o, r_of_g);
    int idx = next[o]++;
    CHECK(idx < N_EVERY, "more than %d anycasts from %d", N_EVERY, o);
    CHECK(len == every_len[idx], "anycast %d of %d: %zu bytes", idx, o, (size_t)len);
    long bad = verify(buf, len, seed_of(o, 1, idx));
    CHECK(bad < 0, "anycast %d of %d: byte %ld wrong", idx, o, bad);
    CHECK(buf[len] == 0x5a, "written past %zu bytes", (size_t)len);
  }
  for (int i = 0; i < N_EVERY; i++) {
    CHECK_RC(nm_anycast_wait(ac, &reqs[i]), "nm_anycast_wait");
    free(out[i]);
  }
  for (int o = 0; o < size; o++)
    CHECK(next[o] == (o == rank ? 0 : N_EVERY), "%d anycasts from %d", next[o], o);
  free(next);
  free(buf);
  printf("rank %d: PASS every origin (%d anycasts received)\n", rank, (size - 1) * N_EVERY);
}

static void phase_rootless(nm_anycast_t ac, struct seen_s *s)
{
  uint8_t *out[N_ROOTLESS];
  nm_anycast_req_t reqs[N_ROOTLESS];
  for (int i = 0; i < N_ROOTLESS; i++) { /* a tight loop, nobody told */
    nm_len_t len = rootless_len(rank, i);
    out[i] = malloc(len);
    fill(out[i], len, seed_of(rank, 2, i));
    CHECK_RC(nm_anycast_isend(ac, TAG_ROOTLESS + (nm_tag_t)i, out[i], len, &reqs[i]), "nm_anycast_isend");
  }
  uint64_t dl = nm_core_time_ns(core) + DEADLINE_NS;
  while (s->total < (size - 1) * N_ROOTLESS)
    CHECK(nm_core_wait(core, dl) == 0 || nm_core_time_ns(core) < dl, "saw %d of %d anycasts", s->total,
          (size - 1) * N_ROOTLESS);
  for (int i = 0; i < N_ROOTLESS; i++) {
    CHECK_RC(nm_anycast_wait(ac, &reqs[i]), "nm_anycast_wait");
    free(out[i]);
  }
  printf("rank %d: PASS rootless (%d anycasts from %d concurrent origins)\n", rank, s->total, size - 1);
}

static void phase_count(nm_anycast_t ac_rx, nm_anycast_t ac_h, struct seen_s *s)
{
  /* finish forwarding before the barrier (nm_anycast_flush): the barrier progresses too, but not under nmad-sim */
  CHECK_RC(nm_anycast_flush(ac_rx, nm_core_time_ns(core) + DEADLINE_NS), "nm_anycast_flush");
  CHECK_RC(nm_anycast_flush(ac_h, nm_core_time_ns(core) + DEADLINE_NS), "nm_anycast_flush");
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  uint64_t end = nm_core_time_ns(core) + 200000000ULL; /* 200 ms: a duplicate in flight would land now */
  while (nm_core_time_ns(core) < end)
    nm_core_wait(core, end);
  for (int o = 0; o < size; o++)
    for (int i = 0; i < N_ROOTLESS; i++)
      CHECK(s->count[o * N_ROOTLESS + i] == (o != rank), "anycast %d of %d seen %d times", i, o,
            s->count[o * N_ROOTLESS + i]);
  struct nm_anycast_stats_s a, b;
  CHECK_RC(nm_anycast_get_stats(ac_rx, &a), "stats");
  CHECK_RC(nm_anycast_get_stats(ac_h, &b), "stats");
  CHECK(a.received == (uint64_t)(size - 1) * N_EVERY && b.received == (uint64_t)(size - 1) * N_ROOTLESS,
        "received %llu and %llu", (unsigned long long)a.received, (unsigned long long)b.received);
  CHECK(a.lost == 0 && b.lost == 0, "lost %llu + %llu", (unsigned long long)a.lost, (unsigned long long)b.lost);
  CHECK(a.started == N_EVERY && b.started == N_ROOTLESS, "started %llu, %llu", (unsigned long long)a.started,
        (unsigned long long)b.started);
  uint64_t sent = a.sent + b.sent;
  if (rank == 0) {
    uint64_t total = sent;
    for (int r = 1; r < size; r++) {
      uint64_t v = 0;
      nm_sr_request_t q;
      CHECK_RC(nm_sr_irecv(sess, nm_launcher_gate_of(launcher, r), TAG_SUM, &v, sizeof(v), &q), "irecv count");
      CHECK_RC(nm_sr_rwait(sess, &q), "recv count");
      total += v;
    }
    uint64_t want = (uint64_t)size * (N_EVERY + N_ROOTLESS) * (uint64_t)(size - 1);
    CHECK(total == want, "%llu messages for %d anycasts, want n - 1 each: %llu", (unsigned long long)total,
          size * (N_EVERY + N_ROOTLESS), (unsigned long long)want);
    printf("rank 0: PASS count (%llu messages = (n - 1) x %d anycasts)\n", (unsigned long long)total,
           size * (N_EVERY + N_ROOTLESS));
  } else {
    nm_sr_request_t q;
    CHECK_RC(nm_sr_isend(sess, nm_launcher_gate_of(launcher, 0), TAG_SUM, &sent, sizeof(sent), &q), "isend count");
    CHECK_RC(nm_sr_swait(sess, &q), "send count");
  }
}

static void phase_nopoll(nm_anycast_t ac, struct seen_s *s)
{
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  if (rank == 0) {
    uint8_t data[64];
    fill(data, sizeof(data), seed_of(0, 3, 0));
    nm_anycast_req_t req;
    CHECK_RC(nm_anycast_isend(ac, TAG_NOPOLL, data, sizeof(data), &req), "nm_anycast_isend");
    CHECK_RC(nm_anycast_wait(ac, &req), "nm_anycast_wait");
  } else {
    /* no nmad call here: only the progress thread can receive and forward */
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 60000 && !s->nopoll; i++)
      nanosleep(&ts, NULL);
    CHECK(s->nopoll, "the anycast never came without polling");
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  printf("rank %d: PASS nopoll\n", rank);
}

/* --forge K (2 ranks): rank 1 sends rank 0 an anycast header that lies (K = 0: length not the body's; 1: sender
 * not one of rank 0's inbound channels; 2: origin = the receiver; 3: unknown version). Rank 0 must fail the gate
 * (a receive posted from rank 1 completes with -NM_EPROTO) and deliver nothing (DESIGN.md rule 5). */
static int phase_forge(nm_anycast_t ac, int kind)
{
  CHECK(size == 2, "--forge needs 2 ranks");
  if (rank == 1) {
    uint8_t h[32] = {1, 0, 2, 0}; /* version 1, flags 0, ring 2 (the handler-mode ring) */
    uint32_t origin = kind == 2 ? 0 : 1, sender = kind == 1 ? 5 : 1;
    uint64_t tag = TAG_ROOTLESS, len = kind == 0 ? 100 : 10;
    memcpy(h + 4, &origin, 4); /* little-endian hosts only: this test runs here */
    memcpy(h + 8, &sender, 4);
    memcpy(h + 16, &tag, 8);
    memcpy(h + 24, &len, 8);
    if (kind == 3)
      h[0] = 9;
    uint8_t body[10] = {0};
    nm_sr_request_t q;
    memset(&q, 0, sizeof(q));
    CHECK_RC(nm_rpc_isend(sess, nm_launcher_gate_of(launcher, 0), NM_ANYCAST_RPC_TAG | 2, h, sizeof(h), body,
                          sizeof(body), &q), "nm_rpc_isend");
    nm_sr_swait(sess, &q);
    return 0;
  }
  uint64_t v;
  nm_sr_request_t r;
  CHECK_RC(nm_sr_irecv(sess, nm_launcher_gate_of(launcher, 1), TAG_SUM, &v, sizeof(v), &r), "nm_sr_irecv");
  int rc = nm_sr_wait_deadline(sess, &r, nm_core_time_ns(core) + DEADLINE_NS);
  CHECK(rc == -NM_EPROTO, "forged header %d: receive from the liar ended with %d (%s)", kind, rc, nm_strerror(rc));
  struct nm_anycast_stats_s st;
  nm_anycast_get_stats(ac, &st);
  CHECK(st.received == 0, "a forged anycast was delivered");
  printf("rank 0: PASS forged header %d refused\n", kind);
  return 0;
}

int main(int argc, char **argv)
{
  int nopoll = argc > 1 && strcmp(argv[1], "--nopoll") == 0;
  int forge = argc > 2 && strcmp(argv[1], "--forge") == 0 ? atoi(argv[2]) : -1;
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_session_open(core, "it_anycast", &sess), "nm_session_open");
  struct nm_coll_group_s all = {size, nm_launcher_gate_of, launcher, NULL, NULL};
  struct seen_s seen = {calloc((size_t)size * N_ROOTLESS, sizeof(int)), 0, 0};
  nm_anycast_t ac_rx, ac_h;
  CHECK(nm_anycast_init(sess, &all, rank, 0x10000, NULL, &ac_rx) == -NM_EINVAL, "ring id above 16 bits");
  CHECK(nm_anycast_init(sess, &all, size, 1, NULL, &ac_rx) == -NM_EINVAL, "self out of range");
  CHECK_RC(nm_anycast_init(sess, &all, rank, 1, NULL, &ac_rx), "nm_anycast_init (receive mode)");
  CHECK(nm_anycast_init(sess, &all, rank, 1, NULL, &ac_h) == -NM_EINVAL, "two rings with one id");
  struct nm_anycast_params_s p = {.field_mask = NM_ANYCAST_PARAM_HANDLER | NM_ANYCAST_PARAM_MAX_LEN,
                                  .max_len = 10000, .handler = on_anycast, .handler_ref = &seen};
  CHECK_RC(nm_anycast_init(sess, &all, rank, 2, &p, &ac_h), "nm_anycast_init (handler mode)");
  CHECK(nm_anycast_session(ac_h) == NULL, "handler mode has no receive session");
  nm_anycast_req_t big;
  CHECK(nm_anycast_isend(ac_h, 0, &seen, 10001, &big) == -NM_EINVAL, "above max_len");
  /* no barrier: anycasts reaching a rank before its nm_anycast_init() wait on the rpc channel */
  if (forge >= 0) {
    phase_forge(ac_h, forge); /* then the usual shutdown: the launcher's barrier does not use the failed gate */
  } else if (nopoll) {
    phase_nopoll(ac_h, &seen);
  } else {
    phase_every(ac_rx);
    phase_rootless(ac_h, &seen);
    phase_count(ac_rx, ac_h, &seen);
  }
  CHECK_RC(nm_anycast_flush(ac_h, nm_core_time_ns(core) + DEADLINE_NS), "nm_anycast_flush");
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_anycast_finalize(ac_rx), "nm_anycast_finalize");
  CHECK_RC(nm_anycast_finalize(ac_h), "nm_anycast_finalize");
  free(seen.count);
  CHECK_RC(nm_session_close(sess), "nm_session_close");
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  return 0;
}
