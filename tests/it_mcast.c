/* Integration test of dynamic broadcasts (nm_mcast.h) with real processes (run with 4 and 8 ranks; works with
 * any N >= 3). Every rank computes the same schedule from fixed seeds, so receivers know which broadcasts reach
 * them, from which root, with which tag, length and contents, and post plain nm_sr_irecv() on the root's gate.
 * Every receive carries a monitor: a receive that got a broadcast must see NM_EVENT_RECV_DATA (data already
 * checked at that moment), then NM_EVENT_FINALIZED and NM_EVENT_RECV_COMPLETED; one that got a point-to-point
 * message only NM_EVENT_RECV_COMPLETED. Phases:
 * Even ranks send subtree lists in a message of their own ahead of the data (max_inline 0), odd ranks in the
 * header, so every phase covers both forms (doc/mcast.md, "Large destination lists").
 *  - early:      broadcast to a rank that calls nm_mcast_init() only later (the message must be kept);
 *  - bad:        bad destination lists at the root (duplicate, root itself, out of range, n < 0) -> -NM_EINVAL
 *                and nothing sent (receivers get the point-to-point marker sent next on that tag);
 *  - main:       every root in turn, several rounds, random destination subsets (unsorted), every tree kind,
 *                with and without priorities, random lengths, several broadcasts per (root, tag) in flight; half
 *                of the receives posted after the data arrived;
 *  - slow:       one destination posts its receive only after every other destination completed (its subtree
 *                must not wait for it), for every tree kind; with priorities it is the first hop;
 *  - interleave: point-to-point and broadcast on one (root, tag): P B P, B P B, B B P, in send order;
 *  - concurrent: every rank broadcasts on the same tag at once; receivers tell them apart by root gate;
 *  - big:        0 B and 16 MiB from every root;
 *  - busy:       nm_mcast_finalize() -> -NM_EBUSY at a node whose forwarding waits for a child in a barrier;
 *  - short:      a destination (the first hop) whose receive buffer is shorter than the data: -NM_ETRUNCATED
 *                with the first bytes, like a point-to-point message; its subtree still gets all the data;
 *  - leftovers:  a wildcard receive posted at the end gets nothing (no duplicate delivery).
 * Options: --quick (smaller sizes, fewer rounds; for 8 ranks on 2 cores). Prints "PASS" lines; exits non-zero on
 * the first failure (a 120 s deadline guards every wait). */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_mcast.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TEST_DEADLINE_NS (120ULL * 1000000000ULL)
#define MS (1000000ULL)
#define MIB ((size_t)1 << 20)
#define MAXN 256
#define GUARD 16
#define GUARD_BYTE 0xA5

static int rank, size, quick;
static nm_launcher_t launcher;
static nm_core_t core;
static nm_session_t sess;
static nm_mcast_service_t mc;


static uint64_t rnd(uint64_t *s)
{
  *s = mix(*s + 0x9e3779b97f4a7c15ULL);
  return *s;
}

static nm_gate_t gate_of(int r)
{
  nm_gate_t g;
  CHECK_RC(nm_launcher_get_gate(launcher, r, &g), "nm_launcher_get_gate");
  return g;
}

static uint64_t deadline_in(uint64_t ns) { return nm_core_time_ns(core) + ns; }

static void progress_for(unsigned ms)
{
  uint64_t end = deadline_in(ms * MS);
  while (nm_core_time_ns(core) < end) {
    nm_core_progress(core);
    nm_core_wait(core, end);
  }
}

/* ---- broadcasts (root side) ---- */

static const char *tree_name[4] = {"binomial", "flat", "chain", "binary"};

struct bc {
  int id, root, n, use_prio, tree;
  int dests[MAXN], prios[MAXN];
  nm_tag_t tag;
  size_t len;
  uint64_t seed;
  nm_mcast_req_t req; /* root */
  uint8_t *data;      /* root */
};

static size_t rand_len(uint64_t *s, size_t maxlen)
{
  unsigned r = (unsigned)(rnd(s) % 20);
  if (r < 2)
    return 0;
  if (r < 8)
    return 1 + rnd(s) % 100;
  if (r < 12)
    return 100 + rnd(s) % 32768;
  if (r < 19)
    return 32768 + rnd(s) % (quick ? 256 * 1024 : MIB);
  return maxlen;
}

/* A broadcast from @p root to @p n (-1: random 1..size-1) other ranks in random order, derived from @p key only:
 * every rank builds the same one. */
static void make_bc(struct bc *b, uint64_t key, int root, int n, int tree, int use_prio, nm_tag_t tag, size_t len)
{
  uint64_t s = mix(key * 7919 + 17);
  memset(b, 0, sizeof(*b));
  b->id = (int)(key & 0x7fffffff);
  b->root = root;
  b->tree = tree;
  b->use_prio = use_prio;
  b->tag = tag;
  b->len = len;
  b->seed = mix(key ^ 0xabcdef12345ULL) ^ ((uint64_t)root << 56);
  int others[MAXN], m = 0;
  for (int r = 0; r < size; r++)
    if (r != root)
      others[m++] = r;
  for (int i = m - 1; i > 0; i--) {
    int j = (int)(rnd(&s) % (uint64_t)(i + 1)), t = others[i];
    others[i] = others[j];
    others[j] = t;
  }
  if (n < 0)
    n = 1 + (int)(rnd(&s) % (uint64_t)m);
  b->n = n;
  for (int i = 0; i < n; i++) {
    b->dests[i] = others[i];
    b->prios[i] = (int)(rnd(&s) % 13) - 3; /* duplicates and negative values included */
  }
}

static int bc_index_of(const struct bc *b, int r)
{
  for (int i = 0; i < b->n; i++)
    if (b->dests[i] == r)
      return i;
  return -1;
}

static void bc_post_root(struct bc *b)
{
  b->data = malloc(b->len ? b->len : 1);
  CHECK(b->data, "out of memory");
  fill(b->data, b->len, b->seed);
  memset(&b->req, 0, sizeof(b->req));
  int rc = nm_mcast_isend(mc, b->dests, b->use_prio ? b->prios : NULL, b->n, b->tag, b->data, b->len,
                          (enum nm_mcast_tree_e)b->tree, &b->req);
  CHECK(rc == 0, "nm_mcast_isend (%s, %d dests, %zu B%s): %d (%s)", tree_name[b->tree], b->n, b->len,
        b->use_prio ? ", priorities" : "", rc, nm_strerror(rc));
}

static void bc_wait_root(struct bc *b, uint64_t deadline)
{
  for (;;) {
    int rc = nm_mcast_test(mc, &b->req);
    if (rc != -NM_EAGAIN) {
      CHECK(rc == 0, "broadcast %d (%s, %d dests, %zu B): root status %d (%s)", b->id, tree_name[b->tree], b->n,
            b->len, rc, nm_strerror(rc));
      break;
    }
    uint64_t now = nm_core_time_ns(core);
    CHECK(now < deadline, "timeout: broadcast %d (%s, %d dests, %zu B%s, tag %#llx) not complete at its root",
          b->id, tree_name[b->tree], b->n, b->len, b->use_prio ? ", priorities" : "", (unsigned long long)b->tag);
    nm_core_wait(core, now + 20 * MS < deadline ? now + 20 * MS : deadline);
  }
  memset(b->data, 0xEE, b->len); /* complete means reusable: a late reader would forward garbage */
  free(b->data);
  b->data = NULL;
}

/* ---- receives ---- */

struct rrec {
  nm_sr_request_t req;
  int root, is_bcast;
  nm_tag_t tag;
  size_t len;
  uint64_t seed;
  uint8_t *buf;
  unsigned ev[8];
  int nev;
  int checked_at_data; /* 1: verified at NM_EVENT_RECV_DATA */
  long bad_at_data;
  const char *what;
};

static void recv_notifier(struct nm_req_s *req, unsigned event, void *ref)
{
  struct rrec *r = ref;
  CHECK(req == &r->req, "monitor called with another request");
  CHECK(r->nev < 8, "%s: more than 8 monitor events", r->what);
  r->ev[r->nev++] = event;
  if (event & NM_EVENT_RECV_DATA) {
    r->checked_at_data = 1;
    r->bad_at_data = verify(r->buf, r->len, r->seed);
  }
}

#define EV_ALL (NM_EVENT_RECV_DATA | NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED)

/* Post a receive on (root gate, tag) expecting len bytes of fill(seed), delivered by a broadcast or not. */
static void rr_post(struct rrec *r, int root, nm_tag_t tag, size_t len, uint64_t seed, int is_bcast,
                    const char *what)
{
  memset(r, 0, sizeof(*r));
  r->root = root;
  r->tag = tag;
  r->len = len;
  r->seed = seed;
  r->is_bcast = is_bcast;
  r->what = what;
  r->buf = malloc(len + GUARD);
  CHECK(r->buf, "out of memory");
  memset(r->buf, 0, len);
  memset(r->buf + len, GUARD_BYTE, GUARD);
  nm_sr_recv_init(sess, &r->req);
  CHECK_RC(nm_sr_request_set_monitor(sess, &r->req, EV_ALL, recv_notifier, r), "nm_sr_request_set_monitor");
  CHECK_RC(nm_sr_recv_irecv(sess, &r->req, gate_of(root), tag, NM_TAG_MASK_FULL, r->buf, len), "nm_sr_recv_irecv");
}

static void rr_post_bc(struct rrec *r, const struct bc *b, const char *what)
{
  rr_post(r, b->root, b->tag, b->len, b->seed, 1, what);
}

static const char *events_str(const struct rrec *r, char *out, size_t outlen)
{
  size_t o = 0;
  out[0] = 0;
  for (int i = 0; i < r->nev && o < outlen; i++)
    o += (size_t)snprintf(out + o, outlen - o, "%s%s%s%s%s", i ? "," : "",
                          r->ev[i] & NM_EVENT_RECV_DATA ? "DATA" : "",
                          r->ev[i] & NM_EVENT_FINALIZED ? "+FIN" : "",
                          r->ev[i] & NM_EVENT_RECV_COMPLETED ? "+COMPLETED" : "",
                          r->ev[i] & ~(unsigned)EV_ALL ? "+OTHER" : "");
  return out;
}

static void rr_wait_check(struct rrec *r, uint64_t deadline)
{
  int rc = nm_sr_wait_deadline(sess, &r->req, deadline);
  CHECK(rc == 0, "%s: receive from root %d (tag %#llx, %zu B, %s): %d (%s)", r->what, r->root,
        (unsigned long long)r->tag, r->len, r->is_bcast ? "broadcast" : "p2p", rc, nm_strerror(rc));
  nm_len_t got = 0;
  nm_gate_t src = NULL;
  nm_tag_t tag = 0;
  CHECK_RC(nm_sr_get_size(sess, &r->req, &got), "nm_sr_get_size");
  CHECK_RC(nm_sr_recv_source(sess, &r->req, &src), "nm_sr_recv_source");
  CHECK_RC(nm_sr_recv_get_tag(sess, &r->req, &tag), "nm_sr_recv_get_tag");
  CHECK(got == r->len && src == gate_of(r->root) && tag == r->tag,
        "%s: from root %d got %llu B (want %zu), source ok %d, tag %#llx (want %#llx): wrong message or order",
        r->what, r->root, (unsigned long long)got, r->len, src == gate_of(r->root), (unsigned long long)tag,
        (unsigned long long)r->tag);
  long bad = verify(r->buf, r->len, r->seed);
  CHECK(bad < 0, "%s: from root %d (%zu B, %s): wrong byte at offset %ld (wrong message, order or data)", r->what,
        r->root, r->len, r->is_bcast ? "broadcast" : "p2p", bad);
  for (int i = 0; i < GUARD; i++)
    CHECK(r->buf[r->len + i] == GUARD_BYTE, "%s: bytes written past the %zu-byte buffer", r->what, r->len);
  int cnt_data = 0, cnt_fin = 0, cnt_comp = 0, pos_data = -1, pos_fin = -1, pos_comp = -1, other = 0;
  for (int i = 0; i < r->nev; i++) {
    if (r->ev[i] & NM_EVENT_RECV_DATA)
      cnt_data++, pos_data = i;
    if (r->ev[i] & NM_EVENT_FINALIZED)
      cnt_fin++, pos_fin = i;
    if (r->ev[i] & NM_EVENT_RECV_COMPLETED)
      cnt_comp++, pos_comp = i;
    if (r->ev[i] & ~(unsigned)EV_ALL)
      other++;
  }
  char es[200];
  if (r->is_bcast) {
    CHECK(cnt_data == 1 && cnt_fin == 1 && cnt_comp == 1 && !other && pos_data <= pos_fin && pos_data <= pos_comp,
          "%s: receive that got a broadcast saw events [%s], want DATA then FINALIZED and RECV_COMPLETED", r->what,
          events_str(r, es, sizeof(es)));
    CHECK(r->checked_at_data && r->bad_at_data < 0,
          "%s: at NM_EVENT_RECV_DATA the buffer was not complete (first wrong byte at %ld of %zu)", r->what,
          r->bad_at_data, r->len);
  } else {
    CHECK(cnt_data == 0 && cnt_fin == 0 && cnt_comp == 1 && !other,
          "%s: receive that got a point-to-point message saw events [%s], want RECV_COMPLETED only", r->what,
          events_str(r, es, sizeof(es)));
  }
  (void)pos_comp;
  memset(r->buf, 0xDD, r->len); /* FINALIZED means forwarding no longer reads it: poison before reuse */
  free(r->buf);
  r->buf = NULL;
}

/* ---- phases ---- */

#define T_EARLY 0x100
#define T_BAD 0x200
#define T_MAIN 0x300 /* +0..2 */
#define T_SLOW 0x400
#define T_NOTE 0x401
#define T_IL 0x500
#define T_CC 0x600
#define T_BIG 0x700
#define T_BUSY 0x800
#define T_SHORT 0x900

/* Even ranks send every non-empty subtree list in a LIST message of its own ahead of the data (max_inline 0),
 * odd ranks inside the header (the default): every phase then sees both forms, from roots and forwarders. */
static void mcast_start(void)
{
  struct nm_mcast_params_s p = {.field_mask = NM_MCAST_PARAM_MAX_INLINE, .max_inline = 0};
  CHECK_RC(nm_mcast_init_params(sess, rank % 2 ? NULL : &p, &mc), "nm_mcast_init_params");
}

/* Rank 1 calls nm_mcast_init() only after the broadcast reached it: it must be kept and handled then. */
static void phase_early(void)
{
  struct bc b[2];
  make_bc(&b[0], 1001, 0, size - 1, NM_MCAST_TREE_BINOMIAL, 0, T_EARLY, 100);
  make_bc(&b[1], 1002, 0, size - 1, NM_MCAST_TREE_CHAIN, 0, T_EARLY, MIB);
  if (rank != 1)
    mcast_start();
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  if (rank == 0) {
    bc_post_root(&b[0]);
    bc_post_root(&b[1]);
    bc_wait_root(&b[0], deadline);
    bc_wait_root(&b[1], deadline);
  } else {
    if (rank == 1) {
      progress_for(200); /* the broadcasts arrive (and wait) before the service exists here */
      mcast_start();
    }
    struct rrec r[2];
    rr_post_bc(&r[0], &b[0], "early 100 B");
    rr_post_bc(&r[1], &b[1], "early 1 MiB");
    rr_wait_check(&r[0], deadline);
    rr_wait_check(&r[1], deadline);
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  printf("PASS rank %d early: broadcast reaching a rank before its nm_mcast_init\n", rank);
}

/* Bad destination lists: -NM_EINVAL, nothing sent. Every rank is a root; the marker that follows on the same tag
 * must be the first thing each receiver gets from it. */
static void phase_bad(void)
{
  int ok = (rank + 1) % size, ok2 = (rank + 2) % size;
  uint8_t data[64];
  fill(data, sizeof(data), 5);
  struct {
    const char *what;
    int dests[3], n;
  } bad[] = {
      {"duplicate", {ok, ok2, ok}, 3}, {"root itself", {ok, rank}, 2}, {"rank == size", {ok, size}, 2},
      {"negative rank", {-1, ok}, 2},  {"n < 0", {ok, ok2}, -1},        {"n < 0 (-5)", {ok}, -5},
  };
  int prios[3] = {1, 2, 3};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    for (int tree = 0; tree < 4; tree++)
      for (int p = 0; p < 2; p++) {
        nm_mcast_req_t req;
        memset(&req, 0, sizeof(req));
        int rc = nm_mcast_isend(mc, bad[i].dests, p ? prios : NULL, bad[i].n, T_BAD, data, sizeof(data),
                                (enum nm_mcast_tree_e)tree, &req);
        CHECK(rc == -NM_EINVAL, "nm_mcast_isend with a bad destination list (%s, %s%s): %d, want -NM_EINVAL",
              bad[i].what, tree_name[tree], p ? ", priorities" : "", rc);
      }
  /* n == 0 is a valid, empty broadcast */
  nm_mcast_req_t req;
  memset(&req, 0, sizeof(req));
  int none[1] = {ok};
  CHECK_RC(nm_mcast_isend(mc, none, NULL, 0, T_BAD, data, sizeof(data), NM_MCAST_TREE_BINOMIAL, &req),
           "nm_mcast_isend with n == 0");
  CHECK_RC(nm_mcast_wait(mc, &req), "nm_mcast_wait (n == 0)");
  /* the marker */
  nm_sr_request_t *s = calloc((size_t)size, sizeof(*s));
  struct rrec *r = calloc((size_t)size, sizeof(*r));
  uint8_t marker[40];
  for (int d = 0; d < size; d++)
    if (d != rank) {
      fill(marker, sizeof(marker), 4242 + (uint64_t)rank);
      static uint8_t m[MAXN][40];
      memcpy(m[d], marker, sizeof(marker));
      CHECK_RC(nm_sr_isend(sess, gate_of(d), T_BAD, m[d], sizeof(marker), &s[d]), "isend marker");
    }
  for (int root = 0; root < size; root++)
    if (root != rank)
      rr_post(&r[root], root, T_BAD, sizeof(marker), 4242 + (uint64_t)root, 0, "marker after bad broadcasts");
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  for (int root = 0; root < size; root++)
    if (root != rank) {
      rr_wait_check(&r[root], deadline);
      CHECK_RC(nm_sr_wait_deadline(sess, &s[root], deadline), "marker send");
    }
  free(s);
  free(r);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  printf("PASS rank %d bad destination lists -> -NM_EINVAL, nothing sent; n == 0 accepted\n", rank);
}

/* Every root in turn, rounds of 8 broadcasts (4 trees x with/without priorities) on 3 tags. */
static void phase_main(void)
{
  const int rounds = quick ? 2 : 3;
  const size_t maxlen = quick ? MIB : 4 * MIB;
  int nbc = 0, nrecv = 0;
  for (int root = 0; root < size; root++) {
    for (int round = 0; round < rounds; round++) {
      struct bc b[8];
      struct rrec r[8];
      int mine[8], nmine = 0;
      for (int j = 0; j < 8; j++) {
        uint64_t key = 100000 + (uint64_t)root * 1000 + (uint64_t)round * 10 + (uint64_t)j;
        uint64_t s = mix(key);
        int n = (round == 0 && j == 5) ? 0 : -1; /* an empty one now and then */
        make_bc(&b[j], key, root, n, j % 4, j / 4, T_MAIN + (nm_tag_t)(j % 3), rand_len(&s, maxlen));
        if (bc_index_of(&b[j], rank) >= 0)
          mine[nmine++] = j;
      }
      uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
      if (rank == root) {
        for (int j = 0; j < 8; j++)
          bc_post_root(&b[j]);
        for (int j = 0; j < 8; j++)
          bc_wait_root(&b[j], deadline);
        nbc += 8;
      } else {
        /* odd rounds: all receives at once; even rounds: the second half only after the first completed (their
         * data has then arrived already, most likely) */
        int first = (round % 2) ? nmine : (nmine + 1) / 2;
        for (int k = 0; k < first; k++)
          rr_post_bc(&r[k], &b[mine[k]], "main");
        for (int k = 0; k < first; k++)
          rr_wait_check(&r[k], deadline);
        if (first < nmine) {
          progress_for(3);
          for (int k = first; k < nmine; k++)
            rr_post_bc(&r[k], &b[mine[k]], "main (posted late)");
          for (int k = first; k < nmine; k++)
            rr_wait_check(&r[k], deadline);
        }
        nrecv += nmine;
      }
    }
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  }
  printf("PASS rank %d main: %d broadcasts as root, %d received (all trees, with/without priorities, random "
         "subsets, late receives)\n",
         rank, nbc, nrecv);
}

/* One destination (L) posts its receive only after every other destination completed: with priorities L is the
 * first hop (highest priority), so everybody else's data goes through it. */
static void phase_slow(void)
{
  static const struct {
    int prio;
    size_t len;
  } var[3] = {{0, MIB}, {1, 100}, {1, 4 * MIB}};
  int steps = 0;
  for (int tree = 0; tree < 4; tree++)
    for (int v = 0; v < 3; v++, steps++) {
      int root = steps % size;
      struct bc b;
      make_bc(&b, 200000 + (uint64_t)steps, root, size - 1, tree, var[v].prio, T_SLOW,
              quick && var[v].len > MIB ? MIB : var[v].len);
      int L = b.dests[0];
      if (var[v].prio)
        b.prios[0] = 100;
      nm_tag_t note = T_NOTE;
      uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
      if (rank == root) {
        bc_post_root(&b);
        bc_wait_root(&b, deadline);
      } else if (rank == L) {
        int nn = b.n - 1, v2[MAXN];
        nm_sr_request_t *nr = calloc((size_t)size, sizeof(*nr));
        for (int k = 0; k < nn; k++)
          CHECK_RC(nm_sr_irecv(sess, NM_ANY_GATE, note, &v2[k], sizeof(int), &nr[k]), "irecv note");
        for (int k = 0; k < nn; k++) {
          int rc = nm_sr_wait_deadline(sess, &nr[k], deadline);
          CHECK(rc == 0,
                "slow receiver (%s, %s, %zu B): only %d of the %d other destinations completed while this rank "
                "had not posted its receive: a slow receiver delays its subtree (%d: %s)",
                tree_name[tree], var[v].prio ? "first hop by priority" : "first in the list", b.len, k, nn, rc,
                nm_strerror(rc));
        }
        free(nr);
        progress_for(2);
        struct rrec r;
        rr_post_bc(&r, &b, "slow receiver (posted last)");
        rr_wait_check(&r, deadline);
      } else {
        struct rrec r;
        rr_post_bc(&r, &b, "subtree of a slow receiver");
        rr_wait_check(&r, deadline);
        nm_sr_request_t s;
        CHECK_RC(nm_sr_isend(sess, gate_of(L), note, &rank, sizeof(int), &s), "isend note");
        CHECK_RC(nm_sr_wait_deadline(sess, &s, deadline), "note send");
      }
      CHECK_RC(nm_launcher_barrier(launcher), "barrier");
    }
  printf("PASS rank %d slow receiver never delays its subtree (%d cases)\n", rank, steps);
}

/* p2p and broadcast on one (root, tag), delivered in the root's send order. */
static void phase_interleave(void)
{
  static const char *pattern[3] = {"PBP", "BPB", "BBP"};
  static const size_t sizes[4][3] = {{100, 16384, 100}, {MIB, 100, 0}, {0, 4 * MIB, MIB}, {65536, 0, 65536}};
  int step = 0;
  for (int tree = 0; tree < 4; tree++)
    for (int pat = 0; pat < 3; pat++)
      for (int late = 0; late < 2; late++, step++) {
        int root = step % size;
        int target = (root + 1 + step / size) % size;
        if (target == root)
          target = (target + 1) % size;
        int use_prio = step & 1;
        const size_t *sz = sizes[step % 4];
        struct bc b[3];
        int isb[3];
        for (int k = 0; k < 3; k++) {
          isb[k] = pattern[pat][k] == 'B';
          size_t len = quick && sz[k] > MIB ? MIB : sz[k];
          make_bc(&b[k], 300000 + (uint64_t)step * 10 + (uint64_t)k, root, size - 1, tree, use_prio, T_IL, len);
          if (isb[k]) { /* the target far from the root: last in the list, lowest priority */
            int i = bc_index_of(&b[k], target);
            b[k].dests[i] = b[k].dests[b[k].n - 1];
            b[k].dests[b[k].n - 1] = target;
            b[k].prios[b[k].n - 1] = -10;
          }
        }
        uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
        if (rank == root) {
          nm_sr_request_t s[3];
          for (int k = 0; k < 3; k++) {
            if (isb[k]) {
              bc_post_root(&b[k]);
            } else {
              b[k].data = malloc(b[k].len + 1);
              fill(b[k].data, b[k].len, b[k].seed);
              CHECK_RC(nm_sr_isend(sess, gate_of(target), T_IL, b[k].data, b[k].len, &s[k]), "isend");
            }
          }
          for (int k = 0; k < 3; k++) {
            if (isb[k]) {
              bc_wait_root(&b[k], deadline);
            } else {
              CHECK_RC(nm_sr_wait_deadline(sess, &s[k], deadline), "p2p send");
              memset(b[k].data, 0xEE, b[k].len);
              free(b[k].data);
            }
          }
        } else {
          struct rrec r[3];
          int nr = 0;
          if (rank == target && late)
            progress_for(5);
          for (int k = 0; k < 3; k++)
            if (rank == target || isb[k])
              rr_post(&r[nr++], root, T_IL, b[k].len, b[k].seed, isb[k],
                      rank == target ? "interleave (target)" : "interleave (other)");
          for (int k = 0; k < nr; k++)
            rr_wait_check(&r[k], deadline);
        }
        if (step % size == size - 1)
          CHECK_RC(nm_launcher_barrier(launcher), "barrier");
      }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  printf("PASS rank %d interleave: p2p and broadcasts on one (root, tag) in send order (%d cases)\n", rank, step);
}

/* Every rank broadcasts at once on one tag. */
static void phase_concurrent(void)
{
  enum { K = 4 };
  struct bc *b = calloc((size_t)size * K, sizeof(*b));
  struct rrec *r = calloc((size_t)size * K, sizeof(*r));
  for (int round = 0; round < 2; round++) {
    for (int root = 0; root < size; root++)
      for (int k = 0; k < K; k++) {
        uint64_t key = 400000 + (uint64_t)round * 10000 + (uint64_t)root * 100 + (uint64_t)k;
        uint64_t s = mix(key);
        make_bc(&b[root * K + k], key, root, -1, (int)(rnd(&s) % 4), (int)(rnd(&s) % 2), T_CC,
                rand_len(&s, quick ? 512 * 1024 : 2 * MIB));
      }
    for (int k = 0; k < K; k++)
      bc_post_root(&b[rank * K + k]);
    if (round == 1)
      progress_for(5);
    int nr = 0;
    /* receives interleaved across roots (round 1: roots in reverse order), in order per root */
    for (int k = 0; k < K; k++)
      for (int i = 0; i < size; i++) {
        int root = round ? size - 1 - i : i;
        struct bc *x = &b[root * K + k];
        if (root != rank && bc_index_of(x, rank) >= 0)
          rr_post_bc(&r[nr++], x, "concurrent roots");
      }
    uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
    for (int k = 0; k < nr; k++)
      rr_wait_check(&r[k], deadline);
    for (int k = 0; k < K; k++)
      bc_wait_root(&b[rank * K + k], deadline);
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  }
  free(b);
  free(r);
  printf("PASS rank %d concurrent broadcasts from all roots on one tag\n", rank);
}

/* 0 B and 16 MiB from every root (--quick: 16 MiB from two roots). */
static void phase_big(void)
{
  for (int root = 0; root < size; root++) {
    int nb = 0;
    struct bc b[3];
    make_bc(&b[nb++], 500000 + (uint64_t)root * 10, root, size - 1, root % 4, root & 1, T_BIG, 0);
    if (!quick || root < 2)
      make_bc(&b[nb++], 500001 + (uint64_t)root * 10, root, size - 1, (root + 2) % 4, 0, T_BIG, 16 * MIB);
    if (!quick && root == 0)
      make_bc(&b[nb++], 500002, root, -1, NM_MCAST_TREE_BINARY, 1, T_BIG, 16 * MIB);
    uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
    if (rank == root) {
      for (int k = 0; k < nb; k++)
        bc_post_root(&b[k]);
      for (int k = 0; k < nb; k++) {
        CHECK_RC(nm_mcast_wait(mc, &b[k].req), "nm_mcast_wait");
        memset(b[k].data, 0xEE, b[k].len);
        free(b[k].data);
      }
    } else {
      struct rrec r[3];
      int nr = 0;
      for (int k = 0; k < nb; k++)
        if (bc_index_of(&b[k], rank) >= 0)
          rr_post_bc(&r[nr++], &b[k], b[k].len ? "16 MiB" : "0 B");
      for (int k = 0; k < nr; k++)
        rr_wait_check(&r[k], deadline);
    }
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  }
  printf("PASS rank %d big: 0 B and 16 MiB broadcasts\n", rank);
}

/* Chain 0 -> 1 -> 2 of 16 MiB while rank 2 sits in a barrier: rank 1 has the data (RECV_DATA) but cannot finish
 * forwarding, so nm_mcast_finalize() must say -NM_EBUSY there. */
static void phase_busy(void)
{
  struct bc b;
  make_bc(&b, 600000, 0, 0, NM_MCAST_TREE_CHAIN, 1, T_BUSY, 16 * MIB);
  b.n = 2;
  b.dests[0] = 1;
  b.prios[0] = 10;
  b.dests[1] = 2;
  b.prios[1] = 0;
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  const char *note = "";
  if (rank == 0) {
    bc_post_root(&b);
    bc_wait_root(&b, deadline);
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  } else if (rank == 1) {
    struct rrec r;
    rr_post_bc(&r, &b, "busy (forwarder)");
    uint64_t dl = deadline_in(60000 * MS);
    int data = 0, fin = 0;
    while (!data) {
      for (int i = 0; i < r.nev; i++) {
        data |= !!(r.ev[i] & NM_EVENT_RECV_DATA);
        fin |= !!(r.ev[i] & NM_EVENT_FINALIZED);
      }
      if (data)
        break;
      CHECK(nm_core_time_ns(core) < dl,
            "chain forwarder: no NM_EVENT_RECV_DATA while its child (in a barrier) cannot take the data yet: the "
            "data should be usable before forwarding ends");
      nm_core_wait(core, deadline_in(20 * MS));
    }
    if (!fin) {
      int rc = nm_mcast_finalize(mc);
      CHECK(rc == -NM_EBUSY, "nm_mcast_finalize while forwarding 16 MiB to a child: %d, want -NM_EBUSY", rc);
      note = ", finalize -> EBUSY while forwarding";
    } else {
      note = " (forwarding ended without the child's progress: EBUSY not checked)";
    }
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
    rr_wait_check(&r, deadline);
  } else if (rank == 2) {
    CHECK_RC(nm_launcher_barrier_noprogress(launcher), "barrier"); /* rank 1 cannot finish forwarding */
    struct rrec r;
    rr_post_bc(&r, &b, "busy (end of chain)");
    rr_wait_check(&r, deadline);
  } else {
    CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  printf("PASS rank %d busy: data usable before forwarding ends%s\n", rank, note);
}

/* A destination whose buffer is shorter than the broadcast: like a point-to-point message, its receive completes
 * with -NM_ETRUNCATED holding the first bytes, nothing is written past it, and its subtree still gets everything
 * (with priorities it is the first hop). */
static void phase_short(void)
{
  static const size_t lens[2] = {100, MIB};
  int step = 0;
  for (int tree = 0; tree < 4; tree += 2) /* binomial, chain */
    for (int l = 0; l < 2; l++)
      for (int late = 0; late < 2; late++, step++) {
        int root = step % size;
        struct bc b;
        make_bc(&b, 700000 + (uint64_t)step, root, size - 1, tree, 1, T_SHORT, lens[l]);
        b.prios[0] = 100;
        int S = b.dests[0];
        uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
        if (rank == root) {
          bc_post_root(&b);
          bc_wait_root(&b, deadline);
        } else if (rank == S) {
          size_t blen = b.len / 2;
          uint8_t *buf = malloc(b.len + GUARD);
          memset(buf, GUARD_BYTE, b.len + GUARD);
          nm_sr_request_t r;
          if (late)
            progress_for(5);
          CHECK_RC(nm_sr_irecv(sess, gate_of(root), T_SHORT, buf, blen, &r), "irecv");
          int rc = nm_sr_wait_deadline(sess, &r, deadline);
          CHECK(rc == -NM_ETRUNCATED, "broadcast of %zu B (%s) into a %zu-byte buffer: status %d (%s), want "
                "-NM_ETRUNCATED", b.len, tree_name[tree], blen, rc, nm_strerror(rc));
          nm_len_t got = 0;
          nm_sr_get_size(sess, &r, &got);
          CHECK(got == blen, "truncated broadcast: nm_sr_get_size %llu, want %zu", (unsigned long long)got, blen);
          long bad = verify(buf, blen, b.seed);
          CHECK(bad < 0, "truncated broadcast: wrong byte at %ld", bad);
          for (size_t i = blen; i < b.len + GUARD; i++)
            CHECK(buf[i] == GUARD_BYTE, "truncated broadcast: byte %zu written past the %zu-byte buffer", i, blen);
          free(buf);
        } else {
          struct rrec r;
          rr_post_bc(&r, &b, "subtree of a truncated receive");
          rr_wait_check(&r, deadline);
        }
        CHECK_RC(nm_launcher_barrier(launcher), "barrier");
      }
  printf("PASS rank %d short buffer: truncated broadcast receive (-NM_ETRUNCATED), subtree intact\n", rank);
}

/* Nothing left: a wildcard receive gets no stray or duplicate message. */
static void phase_leftovers(void)
{
  uint8_t buf[64];
  nm_sr_request_t r;
  progress_for(50);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_sr_irecv_mask(sess, NM_ANY_GATE, 0, NM_TAG_MASK_NONE, buf, sizeof(buf), &r), "irecv wildcard");
  progress_for(50);
  int rc = nm_sr_rtest(sess, &r);
  if (rc != -NM_EAGAIN) {
    nm_gate_t g = NULL;
    nm_tag_t tag = 0;
    nm_len_t len = 0;
    int from = -1;
    nm_sr_recv_source(sess, &r, &g);
    nm_sr_recv_get_tag(sess, &r, &tag);
    nm_sr_get_size(sess, &r, &len);
    if (g)
      nm_launcher_get_rank_of_gate(launcher, g, &from);
    CHECK(0, "a stray message (duplicate delivery?) from rank %d, tag %#llx, %llu B, status %d", from,
          (unsigned long long)tag, (unsigned long long)len, rc);
  }
  CHECK_RC(nm_sr_rcancel(sess, &r), "rcancel");
  CHECK(nm_sr_rwait(sess, &r) == -NM_ECANCELED, "cancelled wildcard receive");
  printf("PASS rank %d no stray or duplicate messages\n", rank);
}

int main(int argc, char **argv)
{
  quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  CHECK(size >= 3 && size <= MAXN, "run with 3..%d ranks", MAXN);
  core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_session_open(core, "it_mcast", &sess), "session");
  phase_early();
  phase_bad();
  phase_main();
  phase_slow();
  phase_interleave();
  phase_concurrent();
  phase_big();
  phase_busy();
  phase_short();
  phase_leftovers();
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  CHECK_RC(nm_mcast_finalize(mc), "nm_mcast_finalize");
  CHECK_RC(nm_session_close(sess), "session close");
  const char *bootstrap = nm_launcher_get_bootstrap(launcher);
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  printf("PASS rank %d all (%d ranks, bootstrap %s%s)\n", rank, size, bootstrap, quick ? ", quick" : "");
  return 0;
}
