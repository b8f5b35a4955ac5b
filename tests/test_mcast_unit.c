/* Unit tests of dynamic broadcasts in one process (Check):
 *  - properties of the tree shapes (collectives/nm_mcast_tree.h, Denis 2020 section 3.2 and fig. 1) for every kind
 *    and every list length up to 200, checked against an independent round-by-round simulation: each level's child
 *    subtrees partition the list, degree bounds per kind, the binomial tree reaches m destinations in
 *    ceil(log2(m + 1)) steps (largest subtree first when complete), and nm_mcast_tree_arrival_order() sorts positions by
 *    the step at which they receive the data (ties: lower position first);
 *  - the public API in a singleton process (size 1): nm_mcast_isend() argument checks (-NM_EINVAL for n < 0, the
 *    root itself, out-of-range ranks, duplicates; bad nm_mcast_init_params() settings), an empty broadcast completes
 *    at once, the broadcast rpc tag is reserved, nm_mcast_finalize() then frees it. (The test in tests/test_mcast_tree.c checks fixed shapes.)
 *  - large destination lists in a job of 6,144 ranks, with a few cores of that job in this process wired by the
 *    fake driver (packets and rendezvous transfers moved by pump()): a subtree list longer than an rpc header
 *    (16 KiB) and longer than a packet travels as a LIST message then a DATA message; what a child receives is
 *    decoded from the wire by a recording rpc service and checked entry by entry (chain: 6,141 entries, 73.7 KB;
 *    binomial: 2,047 entries, and an INLINE child); a forwarder parses its 6,142-entry list, receives in place and
 *    forwards the right slice; lists that arrive before nm_mcast_init() are kept;
 *  - malformed and oversized headers from a peer fail its gate with -NM_EPROTO and leave nothing behind
 *    (nm_mcast_finalize() succeeds): a list longer than the job allows or than max_dests (nothing is pulled), a
 *    duplicate in a long list (bitmap check) or a short one (pairwise), a body of the wrong length, DATA without its
 *    LIST or not repeating it, too many open LISTs, a sender that dies between LIST and DATA. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_rpc.h>
#include <nmad/nm_mcast.h>
#include "collectives/nm_mcast_tree.h"
#include "nmad/core/nm_le.h"
#include "fake_driver.h"

#define MMAX 200

/* REQUIRE() reports every passing check to the parent process in fork mode: far too slow for the
 * millions of checks of the shape test, so only failures go to Check. */
#define REQUIRE(cond, ...)                                                                                         \
  do {                                                                                                             \
    if (!(cond))                                                                                                   \
      ck_abort_msg(__VA_ARGS__);                                                                                   \
  } while (0)

static const char *kind_name[4] = {"binomial", "flat", "chain", "binary"};

/* Independent model: every node that has the data sends to its children one per step, in the order given by
 * nm_mcast_tree_children(); simulate step by step and record when each list position (1..m) gets the data.
 * Also checks, at every node, that the child subtrees partition its slice. @return the last step. */
static int simulate(int tree, int m, int *step_of)
{
  /* per node: its slice [b+1, e] and the index of its next child to serve */
  int *b = malloc(sizeof(int) * (MMAX + 1)), *e = malloc(sizeof(int) * (MMAX + 1));
  int *nchild = malloc(sizeof(int) * (MMAX + 1)), *next = malloc(sizeof(int) * (MMAX + 1));
  int(*child)[MMAX] = malloc(sizeof(int[MMAX]) * (MMAX + 1)), (*end)[MMAX] = malloc(sizeof(int[MMAX]) * (MMAX + 1));
  int *have = calloc(MMAX + 1, sizeof(int));
  for (int p = 0; p <= m; p++)
    step_of[p] = -1;
  int nodes[MMAX + 1], nn = 0;
  b[0] = 0;
  e[0] = m;
  step_of[0] = 0;
  have[0] = 1;
  nodes[nn++] = 0;
  /* prepare a node: compute and check its children */
#define PREPARE(p)                                                                                                 \
  do {                                                                                                             \
    int len_ = e[p] - b[p];                                                                                        \
    nchild[p] = nm_mcast_tree_children((enum nm_mcast_tree_e)tree, len_, child[p], end[p]);                        \
    next[p] = 0;                                                                                                   \
    REQUIRE(nchild[p] >= 0 && nchild[p] <= len_, "%s m=%d: %d children for a list of %d", kind_name[tree],   \
                  m, nchild[p], len_);                                                                             \
    char *cov_ = calloc((size_t)len_ + 1, 1);                                                                      \
    for (int k_ = 0; k_ < nchild[p]; k_++) {                                                                       \
      REQUIRE(child[p][k_] >= 1 && child[p][k_] <= end[p][k_] && end[p][k_] <= len_,                        \
                    "%s list %d: child %d has slice [%d, %d]", kind_name[tree], len_, k_, child[p][k_],             \
                    end[p][k_]);                                                                                   \
      for (int q_ = child[p][k_]; q_ <= end[p][k_]; q_++) {                                                        \
        REQUIRE(!cov_[q_], "%s list %d: position %d in two child subtrees", kind_name[tree], len_, q_);      \
        cov_[q_] = 1;                                                                                              \
      }                                                                                                            \
    }                                                                                                              \
    for (int q_ = 1; q_ <= len_; q_++)                                                                             \
      REQUIRE(cov_[q_], "%s list %d: position %d in no child subtree", kind_name[tree], len_, q_);           \
    free(cov_);                                                                                                    \
  } while (0)
  PREPARE(0);
  int step = 0, reached = 0;
  while (reached < m) {
    step++;
    REQUIRE(step <= m, "%s m=%d: not every destination reached after %d steps", kind_name[tree], m, m);
    int cur = nn;
    for (int i = 0; i < cur; i++) { /* nodes that had the data before this step each send once */
      int p = nodes[i];
      if (next[p] >= nchild[p])
        continue;
      int k = next[p]++;
      int c = b[p] + child[p][k];
      REQUIRE(!have[c], "%s m=%d: position %d receives twice", kind_name[tree], m, c);
      have[c] = 1;
      step_of[c] = step;
      b[c] = c;
      e[c] = b[p] + end[p][k];
      PREPARE(c);
      nodes[nn++] = c;
      reached++;
    }
  }
#undef PREPARE
  free(b);
  free(e);
  free(nchild);
  free(next);
  free(child);
  free(end);
  free(have);
  return step;
}

static int ceil_log2(int x) /* smallest k with 2^k >= x */
{
  int k = 0;
  while ((1 << k) < x)
    k++;
  return k;
}

START_TEST(test_shapes_against_simulation)
{
  int step_of[MMAX + 1], order[MMAX], child[MMAX], end[MMAX];
  for (int tree = 0; tree < 4; tree++)
    for (int m = 0; m <= MMAX; m++) {
      int last = simulate(tree, m, step_of);
      int nc = nm_mcast_tree_children((enum nm_mcast_tree_e)tree, m, child, end);
      switch (tree) {
      case NM_MCAST_TREE_FLAT:
        REQUIRE(nc == m, "flat m=%d: %d children", m, nc);
        REQUIRE(last == m, "flat m=%d: %d steps", m, last);
        break;
      case NM_MCAST_TREE_CHAIN:
        REQUIRE(nc == (m ? 1 : 0), "chain m=%d: %d children", m, nc);
        for (int p = 1; p <= m; p++)
          REQUIRE(step_of[p] == p, "chain m=%d: position %d at step %d", m, p, step_of[p]);
        break;
      case NM_MCAST_TREE_BINARY:
        REQUIRE(nc <= 2, "binary m=%d: %d children", m, nc);
        REQUIRE(last <= 2 * ceil_log2(m + 1), "binary m=%d: %d steps", m, last);
        break;
      case NM_MCAST_TREE_BINOMIAL:
        REQUIRE(last == ceil_log2(m + 1), "binomial m=%d: %d steps, want ceil(log2(m+1)) = %d", m, last,
                      ceil_log2(m + 1));
        for (int k = 1; k < nc && ((m + 1) & m) == 0; k++) /* complete tree: largest subtree first */
          REQUIRE(end[k - 1] - child[k - 1] >= end[k] - child[k], "binomial m=%d: subtree %d larger than %d",
                        m, k, k - 1);
        break;
      }
      REQUIRE(nm_mcast_tree_arrival_order((enum nm_mcast_tree_e)tree, m, order) == 0, "arrival order failed");
      char seen[MMAX + 1] = {0};
      for (int i = 0; i < m; i++) {
        REQUIRE(order[i] >= 1 && order[i] <= m && !seen[order[i]], "%s m=%d: order[%d] = %d", kind_name[tree],
                      m, i, order[i]);
        seen[order[i]] = 1;
        if (i > 0) {
          int a = order[i - 1], c = order[i];
          REQUIRE(step_of[a] < step_of[c] || (step_of[a] == step_of[c] && a < c),
                        "%s m=%d: arrival order puts %d (step %d) before %d (step %d)", kind_name[tree], m, a,
                        step_of[a], c, step_of[c]);
        }
      }
    }
}
END_TEST

static int dummy_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref) { return 0; }

START_TEST(test_api_singleton)
{
  nm_launcher_t l;
  int rank = -1, size = -1;
  ck_assert_int_eq(nm_launcher_init(&l, NULL, NULL), 0);
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  ck_assert_msg(size == 1 && rank == 0, "expected a singleton (run outside nmad-run): rank %d size %d", rank, size);
  nm_session_t s;
  ck_assert_int_eq(nm_session_open(nm_launcher_get_core(l), "test_mcast_unit", &s), 0);
  nm_mcast_service_t mc;
  struct nm_mcast_params_s bad[3] = {{.field_mask = 0x80}, {.field_mask = NM_MCAST_PARAM_MAX_DESTS, .max_dests = -1},
                                     {.field_mask = NM_MCAST_PARAM_MAX_INLINE, .max_inline = -1}};
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(nm_mcast_init_params(s, &bad[i], &mc), -NM_EINVAL);
  ck_assert_int_eq(nm_mcast_init(s, &mc), 0);
  /* the broadcast rpc tag is reserved on the session's rpc channel */
  nm_rpc_service_t rs;
  ck_assert_int_eq(nm_rpc_register(s, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, 64, dummy_handler, NULL, NULL, &rs),
                   -NM_EINVAL);
  char data[32] = "x";
  int prios[3] = {0, 1, 2};
  for (int tree = 0; tree < 4; tree++)
    for (int p = 0; p < 2; p++) {
      const int *pr = p ? prios : NULL;
      enum nm_mcast_tree_e t = (enum nm_mcast_tree_e)tree;
      nm_mcast_req_t req;
      int self[1] = {0}, out[1] = {1}, neg[1] = {-1}, dup[2] = {1, 1};
      ck_assert_int_eq(nm_mcast_isend(mc, self, pr, 1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, out, pr, 1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, neg, pr, 1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, dup, pr, 2, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, self, pr, -1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      /* an empty broadcast is valid and complete at once */
      memset(&req, 0, sizeof(req));
      ck_assert_int_eq(nm_mcast_isend(mc, self, pr, 0, 7, data, sizeof(data), t, &req), 0);
      ck_assert_int_eq(nm_mcast_test(mc, &req), 0);
      ck_assert_int_eq(nm_mcast_wait(mc, &req), 0);
    }
  /* nothing was sent: a receive from ourselves on that tag stays pending */
  nm_gate_t me;
  ck_assert_int_eq(nm_launcher_get_gate(l, 0, &me), 0);
  nm_sr_request_t r;
  char buf[32];
  ck_assert_int_eq(nm_sr_irecv(s, me, 7, buf, sizeof(buf), &r), 0);
  for (int i = 0; i < 100; i++)
    nm_core_progress(nm_launcher_get_core(l));
  ck_assert_int_eq(nm_sr_rtest(s, &r), -NM_EAGAIN);
  ck_assert_int_eq(nm_sr_rcancel(s, &r), 0);
  ck_assert_int_eq(nm_sr_rwait(s, &r), -NM_ECANCELED);
  ck_assert_int_eq(nm_mcast_finalize(mc), 0);
  /* the tag is free again */
  ck_assert_int_eq(nm_rpc_register(s, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, 64, dummy_handler, NULL, NULL, &rs), 0);
  ck_assert_int_eq(nm_rpc_unregister(rs), 0);
  ck_assert_int_eq(nm_session_close(s), 0);
  ck_assert_int_eq(nm_launcher_exit(l), 0);
}
END_TEST


/* ---- large destination lists: a few cores of a 6,144-rank job in this process ---- */

#define JOB 6144
#define BTAG ((nm_tag_t)0x4242)
#define MCAST_FIXED 36

/* One rank of the job: a core whose gates to other ranks go through its own fake driver. */
struct node {
  int rank;
  nm_core_t core;
  struct fake_drv_s *fake;
  nm_session_t sess;
};

static void node_init(struct node *n, int rank)
{
  n->rank = rank;
  n->core = fake_core_new_rank(rank, JOB, "aggreg", 32 * 1024, &n->fake);
  ck_assert_ptr_nonnull(n->core);
  ck_assert_int_eq(nm_session_open(n->core, "mcast", &n->sess), 0);
}

static struct node *node_of(struct node *nodes, int k, uint64_t rank)
{
  for (int i = 0; i < k; i++)
    if ((uint64_t)nodes[i].rank == rank)
      return &nodes[i];
  return NULL;
}

/* Move a large send of node @p s to the matching large receive (peers and rendezvous tag) of its peer's node.
 * @return bytes moved, or -1 when the receive is not there. */
static long pump_large(struct node *nodes, int k, struct node *s, int i)
{
  struct fake_large_s snd = s->fake->large[i];
  struct node *d = node_of(nodes, k, snd.peer);
  if (!d)
    return -1;
  for (int j = 0; j < d->fake->n_large; j++) {
    struct fake_large_s rcv = d->fake->large[j];
    if (rcv.is_send || rcv.peer != (uint64_t)s->rank || rcv.rtag != snd.rtag)
      continue;
    size_t n = snd.len < rcv.len ? snd.len : rcv.len;
    memcpy(rcv.buf, snd.buf, n);
    /* out of the fake's tables before the completions, which may post new transfers */
    s->fake->large[i] = s->fake->large[--s->fake->n_large];
    d->fake->large[j] = d->fake->large[--d->fake->n_large];
    nm_core_large_done(d->core, rcv.ctx, 0, n);
    nm_core_large_done(s->core, snd.ctx, 0, n);
    return (long)n;
  }
  return -1;
}

/* The network between the nodes: deliver every captured packet to its destination's node (packets to ranks
 * that have no node here are dropped), move rendezvous data, run progress; until nothing moves.
 * @return rendezvous bytes moved. */
static long pump(struct node *nodes, int k)
{
  long bytes = 0;
  int moved = 1;
  while (moved) {
    moved = 0;
    for (int i = 0; i < k; i++)
      nm_core_progress(nodes[i].core);
    for (int i = 0; i < k; i++) {
      struct fake_drv_s *f = nodes[i].fake;
      for (int p = 0; p < f->n_pkts; p++) {
        struct node *d = node_of(nodes, k, f->pkts[p].peer);
        if (d)
          nm_core_packet(d->core, &d->core->drvs[0], f->pkts[p].buf, f->pkts[p].len, (uint64_t)nodes[i].rank);
        moved = 1;
      }
      f->n_pkts = 0;
    }
    for (int i = 0; i < k; i++)
      for (int j = 0; j < nodes[i].fake->n_large; j++) {
        if (!nodes[i].fake->large[j].is_send)
          continue;
        long n = pump_large(nodes, k, &nodes[i], j);
        if (n >= 0) {
          bytes += n;
          moved = 1;
          j = -1; /* the table changed */
        }
      }
  }
  return bytes;
}

static void nodes_free(struct node *nodes, int k)
{
  for (int i = 0; i < k; i++)
    nm_core_destroy(nodes[i].core);
}

/* A raw rpc service on the broadcast tag: records every message (header and body) as it arrives on the wire. */
struct rec_msg {
  int src, done, status;
  uint8_t *hdr, *body;
  nm_len_t hlen, blen;
};
struct recorder {
  int n;
  struct rec_msg msg[4];
};

static int rec_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct recorder *r = ref;
  if (r->n == 4)
    return -NM_EPROTO;
  struct rec_msg *m = &r->msg[r->n++];
  m->src = nm_rpc_get_source(token)->rank;
  m->hlen = hlen;
  m->hdr = malloc(hlen ? hlen : 1);
  memcpy(m->hdr, header, hlen);
  m->blen = nm_rpc_get_body_size(token);
  m->body = malloc(m->blen ? m->blen : 1);
  nm_rpc_token_set_ref(token, m);
  return nm_rpc_irecv_body(token, m->body, m->blen);
}

static void rec_finalizer(nm_rpc_token_t token, void *ref)
{
  struct rec_msg *m = nm_rpc_token_get_ref(token);
  m->status = nm_rpc_token_status(token);
  m->done = 1;
}

static void rec_free(struct recorder *r)
{
  for (int i = 0; i < r->n; i++) {
    free(r->msg[i].hdr);
    free(r->msg[i].body);
  }
}

/* Wire header (doc/protocol.md, "Dynamic broadcast header"). */
static void put_hdr(uint8_t *h, uint32_t root, uint32_t n, nm_tag_t tag, uint64_t len, uint8_t tree, uint8_t kind,
                    uint32_t seq, int32_t prio)
{
  memset(h, 0, MCAST_FIXED);
  nm_put32(h, root);
  nm_put32(h + 4, n);
  nm_put64(h + 8, tag);
  nm_put64(h + 16, len);
  h[24] = tree;
  h[25] = kind;
  nm_put32(h + 28, seq);
  nm_put32(h + 32, (uint32_t)prio);
}

static void put_entry(uint8_t *e, uint32_t rank, int32_t prio, uint32_t seq)
{
  nm_put32(e, rank);
  nm_put32(e + 4, (uint32_t)prio);
  nm_put32(e + 8, seq);
}

/* Check a recorded header's fixed fields. */
static void check_hdr(const struct rec_msg *m, uint32_t root, uint32_t n, uint64_t len, uint8_t tree, uint8_t kind,
                      uint32_t seq, int32_t prio)
{
  ck_assert_uint_ge(m->hlen, MCAST_FIXED);
  ck_assert_uint_eq(nm_get32(m->hdr), root);
  ck_assert_uint_eq(nm_get32(m->hdr + 4), n);
  ck_assert(nm_get64(m->hdr + 8) == BTAG);
  ck_assert_uint_eq(nm_get64(m->hdr + 16), len);
  ck_assert_uint_eq(m->hdr[24], tree);
  ck_assert_uint_eq(m->hdr[25], kind);
  ck_assert_uint_eq(m->hdr[26] | m->hdr[27], 0);
  ck_assert_uint_eq(nm_get32(m->hdr + 28), seq);
  ck_assert_int_eq((int32_t)nm_get32(m->hdr + 32), prio);
}

static int prio_of(int r) { return r == 1 ? 100 : r == 2 ? 99 : r % 7; }

static int by_prio_then_rank(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  if (prio_of(x) != prio_of(y))
    return prio_of(y) - prio_of(x);
  return x - y;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    b[i] = (uint8_t)(i * 31 + seed);
}

/* Chain over the whole job with priorities: the root (rank 0) sends to rank 1 (priority 100) the list of the
 * other 6,142 ranks in priority order (73.7 KB: beyond the old 16 KiB header cap and beyond a 64 KiB packet);
 * rank 1 receives in place and forwards to rank 2 (priority 99) the 6,141 that follow, which rank 2's recorder
 * checks entry by entry. _i bit 0: data by rendezvous (100 kB) instead of eager (100 B); bit 1: rank 1 starts
 * its broadcast service only after everything arrived. */
START_TEST(test_large_list_chain)
{
  const nm_len_t len = (_i & 1) ? 100000 : 100;
  const int late = _i & 2;
  struct node nd[3];
  for (int i = 0; i < 3; i++)
    node_init(&nd[i], i);
  nm_mcast_service_t mc0, mc1 = NULL;
  ck_assert_int_eq(nm_mcast_init(nd[0].sess, &mc0), 0);
  if (!late)
    ck_assert_int_eq(nm_mcast_init(nd[1].sess, &mc1), 0);
  struct recorder rec = {0};
  nm_rpc_service_t rs;
  ck_assert_int_eq(nm_rpc_register(nd[2].sess, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, NM_RPC_HLEN_MAX, rec_handler,
                                   rec_finalizer, &rec, &rs), 0);
  uint8_t *data = malloc(len), *got = calloc(1, len);
  fill(data, len, 7);
  nm_sr_request_t rr;
  ck_assert_int_eq(nm_sr_irecv(nd[1].sess, nm_core_gate(nd[1].core, 0), BTAG, got, len, &rr), 0);
  int *dests = malloc(sizeof(int) * (JOB - 1)), *prios = malloc(sizeof(int) * (JOB - 1));
  int *expect = malloc(sizeof(int) * (JOB - 1));
  for (int i = 0; i < JOB - 1; i++) {
    dests[i] = expect[i] = i + 1;
    prios[i] = prio_of(i + 1);
  }
  qsort(expect, JOB - 1, sizeof(int), by_prio_then_rank); /* the root's stable sort by decreasing priority */
  ck_assert_int_eq(expect[0], 1);
  ck_assert_int_eq(expect[1], 2);
  nm_mcast_req_t req;
  ck_assert_int_eq(nm_mcast_isend(mc0, dests, prios, JOB - 1, BTAG, data, len, NM_MCAST_TREE_CHAIN, &req), 0);
  ck_assert_int_eq(req.n_children, 1);
  pump(nd, 3);
  if (late) { /* kept on rank 1 until its service starts */
    ck_assert_int_eq(rec.n, 0);
    ck_assert_int_eq(nm_sr_rtest(nd[1].sess, &rr), -NM_EAGAIN);
    ck_assert_int_eq(nm_mcast_init(nd[1].sess, &mc1), 0);
    pump(nd, 3);
  }
  /* rank 1 parsed its list, got the data in place, forwarded */
  ck_assert_int_eq(nm_sr_rtest(nd[1].sess, &rr), 0);
  ck_assert_mem_eq(got, data, len);
  ck_assert_int_eq(nm_mcast_test(mc0, &req), 0);
  /* rank 2 got, from rank 1, a LIST message (the list as body, more than a packet) then a DATA message */
  ck_assert_int_eq(rec.n, 2);
  const uint32_t n = JOB - 3;
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(rec.msg[k].src, 1);
    ck_assert_int_eq(rec.msg[k].done, 1);
    ck_assert_int_eq(rec.msg[k].status, 0);
    ck_assert_uint_eq(rec.msg[k].hlen, MCAST_FIXED);
    check_hdr(&rec.msg[k], 0, n, len, NM_MCAST_TREE_CHAIN, k ? 2 : 1, 0, 99);
  }
  ck_assert_uint_eq(rec.msg[0].blen, (nm_len_t)12 * n);
  ck_assert_uint_gt(MCAST_FIXED + rec.msg[0].blen, NM_RPC_HLEN_MAX);
  ck_assert_uint_gt(rec.msg[0].blen, nd[1].core->pw_cap); /* more than one packet */
  for (uint32_t k = 0; k < n; k++) {
    const uint8_t *e = rec.msg[0].body + 12 * (size_t)k;
    int r = expect[k + 2];
    if (nm_get32(e) != (uint32_t)r || (int32_t)nm_get32(e + 4) != prio_of(r) || nm_get32(e + 8) != 0)
      ck_abort_msg("entry %u: {%u, %d, %u}, want {%d, %d, 0}", k, nm_get32(e), (int32_t)nm_get32(e + 4),
                   nm_get32(e + 8), r, prio_of(r));
  }
  ck_assert_uint_eq(rec.msg[1].blen, len);
  ck_assert_mem_eq(rec.msg[1].body, data, len);
  ck_assert_int_eq(nm_mcast_finalize(mc1), 0);
  ck_assert_int_eq(nm_mcast_finalize(mc0), 0);
  rec_free(&rec);
  nodes_free(nd, 3);
  free(data);
  free(got);
  free(dests);
  free(prios);
  free(expect);
}
END_TEST

/* Binomial over the whole job, no priorities: the destinations, in the order given, are the tree's positions
 * 1..m (each subtree a run of consecutive destinations, as the static binomial tree). The child at position 4096 gets the 2,047
 * entries of positions 4097..6143 (24.6 KB: beyond the old cap, within a packet) as LIST + DATA; the child at
 * position 8 gets its 7 entries in its header (INLINE). */
START_TEST(test_large_list_binomial)
{
  const nm_len_t len = 64;
  const int m = JOB - 1;
  int *dests = malloc(sizeof(int) * (size_t)m), *order = NULL;
  int *list = malloc(sizeof(int) * (size_t)m);
  for (int i = 0; i < m; i++) {
    dests[i] = m - i; /* the caller's order, not the ranks' */
    list[i] = dests[i]; /* list[p - 1]: the rank at position p */
  }
  const int big = list[4096 - 1], small = list[8 - 1];
  struct node nd[3];
  node_init(&nd[0], 0);
  node_init(&nd[1], big);
  node_init(&nd[2], small);
  nm_mcast_service_t mc0;
  ck_assert_int_eq(nm_mcast_init(nd[0].sess, &mc0), 0);
  struct recorder rec[2] = {{0}};
  nm_rpc_service_t rs;
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(nm_rpc_register(nd[1 + i].sess, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, NM_RPC_HLEN_MAX,
                                     rec_handler, rec_finalizer, &rec[i], &rs), 0);
  uint8_t data[64];
  fill(data, len, 3);
  static nm_mcast_req_t req; /* never completes here (most children are not in this process) */
  ck_assert_int_eq(nm_mcast_isend(mc0, dests, NULL, m, BTAG, data, len, NM_MCAST_TREE_BINOMIAL, &req), 0);
  ck_assert_int_eq(req.n_children, 13);
  pump(nd, 3);
  struct recorder *r = &rec[0];
  ck_assert_int_eq(r->n, 2);
  check_hdr(&r->msg[0], 0, 2047, len, NM_MCAST_TREE_BINOMIAL, 1, 0, 0);
  check_hdr(&r->msg[1], 0, 2047, len, NM_MCAST_TREE_BINOMIAL, 2, 0, 0);
  ck_assert_uint_eq(r->msg[0].blen, 12 * 2047);
  ck_assert_uint_gt(MCAST_FIXED + r->msg[0].blen, NM_RPC_HLEN_MAX);
  for (int k = 0; k < 2047; k++) {
    const uint8_t *e = r->msg[0].body + 12 * (size_t)k;
    if (nm_get32(e) != (uint32_t)list[4096 + k] || nm_get32(e + 4) != 0 || nm_get32(e + 8) != 0)
      ck_abort_msg("entry %d: {%u, %d, %u}, want {%d, 0, 0}", k, nm_get32(e), (int32_t)nm_get32(e + 4),
                   nm_get32(e + 8), list[4096 + k]);
  }
  ck_assert_mem_eq(r->msg[1].body, data, len);
  r = &rec[1];
  ck_assert_int_eq(r->n, 1);
  check_hdr(&r->msg[0], 0, 7, len, NM_MCAST_TREE_BINOMIAL, 0, 0, 0);
  ck_assert_uint_eq(r->msg[0].hlen, MCAST_FIXED + 12 * 7);
  for (int k = 0; k < 7; k++)
    ck_assert_uint_eq(nm_get32(r->msg[0].hdr + MCAST_FIXED + 12 * k), list[8 + k]);
  ck_assert_uint_eq(r->msg[0].blen, len);
  ck_assert_mem_eq(r->msg[0].body, data, len);
  ck_assert_int_eq(nm_mcast_finalize(mc0), 0);
  nodes_free(nd, 3);
  rec_free(&rec[0]);
  rec_free(&rec[1]);
  free(dests);
  free(order);
  free(list);
}
END_TEST

/* Malformed input from a forwarder. Rank 0 runs the broadcast service and has posted the receive of a broadcast
 * from root 3; rank 5 sends it crafted rpc messages on the broadcast tag. */
enum bad_case {
  BAD_OVER_JOB,     /* LIST of 6,143 entries: more than a subtree can hold (job size - 2) */
  BAD_OVER_PARAM,   /* LIST of 100 entries to a service with max_dests 100 */
  BAD_DUP_LONG,     /* LIST of 5,000 entries with a duplicate (data by rendezvous, claimed receive) */
  BAD_DUP_SHORT,    /* INLINE with 3 entries, a duplicate */
  BAD_DUP_INLINE,   /* INLINE with 1,000 entries, a duplicate */
  BAD_LIST_LEN,     /* LIST whose body is one entry short */
  BAD_DATA_ALONE,   /* DATA without a LIST */
  BAD_DATA_DIFFERS, /* DATA whose priority differs from its LIST's */
  BAD_TOO_MANY,     /* five LISTs open at once */
  BAD_SENDER_DIES,  /* LIST, then the sender fails before its DATA */
  /* Pipelined broadcasts (NM_MCAST_FLAG_SEG; 100 bytes cut every 40: segments 0, 1, 2): */
  BAD_SEG_INDEX,    /* segment 0, then a SEG with index 2 where 1 is due: the receive fails with the gate */
  BAD_SEG_LEN,      /* segment 0, then SEG 1 with a 30-byte body where 40 are due */
  BAD_SEG_WHOLE,    /* flagged INLINE whose body is the whole data (not a segment): refused on the header */
  BAD_SEG_NOFLAG,   /* SEG without the segmented flag: refused on the header */
  BAD_SEG_DIES,     /* segments 0 and 1, then the sender fails before segment 2: the receive fails */
  BAD_N
};
#define SEG_LEN 40

struct crafted {
  uint8_t hdr[MCAST_FIXED + 12 * 1000];
  nm_len_t hlen;
  uint8_t *body;
  nm_len_t blen;
  nm_rpc_req_t req;
};

/* A LIST of n entries ranks 10, 11, ... (seq 0, prio 1), with a duplicate at the end when @p dup. */
static void craft_list(struct crafted *c, uint32_t n, uint32_t seq, int dup, nm_len_t data_len)
{
  put_hdr(c->hdr, 3, n, BTAG, data_len, NM_MCAST_TREE_CHAIN, 1, seq, 1);
  c->hlen = MCAST_FIXED;
  c->blen = (nm_len_t)12 * n;
  c->body = malloc(c->blen);
  for (uint32_t k = 0; k < n; k++)
    put_entry(c->body + 12 * (size_t)k, 10 + (dup && k == n - 1 ? 0 : k), 1, 0);
}

/* The DATA message of @p list (its body, the data, is passed at send time). */
static void craft_data(struct crafted *c, const struct crafted *list, nm_len_t len)
{
  memcpy(c->hdr, list->hdr, MCAST_FIXED);
  c->hdr[25] = 2;
  c->hlen = MCAST_FIXED;
  c->body = NULL;
  c->blen = len;
}

START_TEST(test_bad_headers)
{
  struct node nd[2];
  node_init(&nd[0], 0);
  node_init(&nd[1], 5);
  nm_mcast_service_t mc;
  struct nm_mcast_params_s par = {.field_mask = NM_MCAST_PARAM_MAX_DESTS, .max_dests = 100};
  ck_assert_int_eq(nm_mcast_init_params(nd[0].sess, _i == BAD_OVER_PARAM ? &par : NULL, &mc), 0);
  nm_gate_t from_root = nm_core_gate(nd[0].core, 3), from_5 = nm_core_gate(nd[0].core, 5);
  const nm_len_t len = _i == BAD_DUP_LONG ? 100000 : 100;
  uint8_t *data = malloc(len), *got = calloc(len, 1), *zero = calloc(len, 1);
  fill(data, len, 1);
  nm_sr_request_t rr;
  ck_assert_int_eq(nm_sr_irecv(nd[0].sess, from_root, BTAG, got, len, &rr), 0);
  nm_gate_t to0 = nm_core_gate(nd[1].core, 0);
  static struct crafted c[5];
  memset(c, 0, sizeof(c));
  int nc = 0, want_pulled = 0;
  switch (_i) {
  case BAD_OVER_JOB:
    craft_list(&c[nc++], JOB - 1, 0, 0, len);
    break;
  case BAD_OVER_PARAM: {
    craft_list(&c[nc++], 100, 0, 0, len);
    int d[101];
    for (int k = 0; k < 101; k++)
      d[k] = k + 1;
    nm_mcast_req_t req;
    ck_assert_int_eq(nm_mcast_isend(mc, d, NULL, 101, BTAG, data, len, NM_MCAST_TREE_BINOMIAL, &req), -NM_EINVAL);
    break;
  }
  case BAD_DUP_LONG:
    craft_list(&c[nc], 5000, 0, 1, len);
    craft_data(&c[nc + 1], &c[nc], len);
    nc += 2;
    want_pulled = 1;
    break;
  case BAD_DUP_SHORT:
  case BAD_DUP_INLINE: {
    uint32_t n = _i == BAD_DUP_SHORT ? 3 : 1000;
    put_hdr(c[0].hdr, 3, n, BTAG, len, NM_MCAST_TREE_CHAIN, 0, 0, 1);
    for (uint32_t k = 0; k < n; k++)
      put_entry(c[0].hdr + MCAST_FIXED + 12 * (size_t)k, 10 + (k == n - 1 ? 0 : k), 1, 0);
    c[0].hlen = MCAST_FIXED + 12 * n;
    c[0].blen = len;
    nc = 1;
    break;
  }
  case BAD_LIST_LEN:
    craft_list(&c[nc], 2000, 0, 0, len);
    c[nc++].blen -= 12;
    break;
  case BAD_DATA_ALONE:
    craft_list(&c[0], 2000, 0, 0, len); /* only to build the DATA from it */
    craft_data(&c[1], &c[0], len);
    free(c[0].body);
    c[0] = c[1];
    nc = 1;
    break;
  case BAD_DATA_DIFFERS:
    craft_list(&c[nc], 2000, 0, 0, len);
    craft_data(&c[nc + 1], &c[nc], len);
    nm_put32(c[nc + 1].hdr + 32, 2);
    nc += 2;
    break;
  case BAD_TOO_MANY:
    for (uint32_t k = 0; k < 5; k++)
      craft_list(&c[nc++], 2000, k, 0, len);
    break;
  case BAD_SENDER_DIES:
    craft_list(&c[nc++], 2000, 0, 0, len);
    break;
  case BAD_SEG_INDEX:
  case BAD_SEG_LEN:
  case BAD_SEG_WHOLE:
  case BAD_SEG_NOFLAG:
  case BAD_SEG_DIES:
    /* INLINE with no entry (rank 0 is a leaf), flagged, body = segment 0 */
    put_hdr(c[0].hdr, 3, 0, BTAG, len, NM_MCAST_TREE_CHAIN, 0, 0, 1);
    c[0].hdr[27] = 1;
    c[0].hlen = MCAST_FIXED;
    c[0].blen = _i == BAD_SEG_WHOLE ? len : SEG_LEN;
    nc = 1;
    if (_i == BAD_SEG_WHOLE)
      break;
    /* SEG 1: the same header, kind 4, n = 1 (the segment index), body = bytes [40, 80) */
    memcpy(c[1].hdr, c[0].hdr, MCAST_FIXED);
    c[1].hdr[25] = 4;
    nm_put32(c[1].hdr + 4, _i == BAD_SEG_INDEX ? 2 : 1);
    c[1].hdr[27] = _i == BAD_SEG_NOFLAG ? 0 : 1;
    c[1].hlen = MCAST_FIXED;
    c[1].body = data + SEG_LEN;
    c[1].blen = _i == BAD_SEG_LEN ? 30 : SEG_LEN;
    nc = 2;
    if (_i == BAD_SEG_NOFLAG) { /* alone: no broadcast to join */
      c[0] = c[1];
      nc = 1;
    }
    break;
  }
  for (int k = 0; k < nc; k++)
    ck_assert_int_eq(nm_rpc_isend(nd[1].sess, to0, NM_MCAST_RPC_TAG, c[k].hdr, c[k].hlen,
                                  c[k].body ? (const void *)c[k].body : data, c[k].blen, &c[k].req), 0);
  long pulled = pump(nd, 2);
  if (_i == BAD_SEG_DIES) {
    /* segments 0 and 1 are in; segment 2 will not come: the receive (claimed) fails when the gate does */
    ck_assert_int_eq(from_5->status, 0);
    ck_assert_int_eq(nm_sr_rtest(nd[0].sess, &rr), -NM_EAGAIN);
    ck_assert_int_eq(nm_mcast_finalize(mc), -NM_EBUSY);
    ck_assert_mem_eq(got, data, 2 * SEG_LEN);
    ck_assert_mem_eq(got + 2 * SEG_LEN, zero, len - 2 * SEG_LEN);
    nm_gate_fail(from_5, -NM_ECLOSED);
    ck_assert_int_eq(nm_sr_rtest(nd[0].sess, &rr), -NM_ECLOSED);
    pump(nd, 2);
    ck_assert_int_eq(nm_mcast_finalize(mc), 0);
  } else if (_i == BAD_SENDER_DIES) {
    ck_assert_int_eq(from_5->status, 0); /* a LIST waits for its DATA */
    ck_assert_int_eq(nm_mcast_finalize(mc), -NM_EBUSY);
    nm_gate_fail(from_5, -NM_ECLOSED);
    /* The LIST whose DATA will never come is dropped, and the broadcast counts as lost: our place in the root's
     * order fails the receive, and the list's first rank is told (SKIP; no node here: dropped). */
    ck_assert_int_eq(nm_sr_rtest(nd[0].sess, &rr), -NM_ECLOSED);
    pump(nd, 2);
    ck_assert_int_eq(nm_mcast_finalize(mc), 0);
  } else {
    ck_assert_int_eq(from_5->status, -NM_EPROTO);
    if (_i == BAD_OVER_JOB || _i == BAD_OVER_PARAM)
      ck_assert_int_eq(pulled, 0); /* refused on the header: nothing allocated, nothing pulled */
    if (_i == BAD_SEG_INDEX || _i == BAD_SEG_LEN) {
      /* segment 0 had claimed the receive: it fails with the broadcast, nothing past segment 0 was written */
      ck_assert_int_eq(nm_sr_rtest(nd[0].sess, &rr), -NM_EPROTO);
      ck_assert_mem_eq(got, data, SEG_LEN);
      ck_assert_mem_eq(got + SEG_LEN, zero, len - SEG_LEN);
    } else if (want_pulled) {
      ck_assert_int_ge(pulled, 5000 * 12); /* the list came, then failed the check */
      /* the data had claimed the receive: it fails with the broadcast */
      ck_assert_int_eq(nm_sr_rtest(nd[0].sess, &rr), -NM_EPROTO);
    } else {
      ck_assert_int_eq(nm_sr_rtest(nd[0].sess, &rr), -NM_EAGAIN); /* still posted: nothing claimed it */
    }
    ck_assert_int_eq(nm_mcast_finalize(mc), 0); /* nothing left behind */
  }
  ck_assert_int_eq(from_root->status, 0);
  nodes_free(nd, 2);
  for (int k = 0; k < nc; k++)
    if (c[k].hdr[25] == 1)
      free(c[k].body);
  free(data);
  free(got);
  free(zero);
}
END_TEST

/* ---- lost broadcasts: SKIP fills the destinations' places in the root's order (doc/mcast.md) ---- */

/* Cases of test_lost: a forwarder whose NMAD_PEER_ALLOC_MAX is below the data and that has no posted receive;
 * a forwarder that dies after the root's header reached it, before the data moved; a forwarder that dies after
 * it had all the data (the root's send completed) and before its own send left. */
enum { LOST_LIMIT, LOST_DEATH, LOST_LATE, LOST_N };

/* Deliver the packets node @p i sent to the nodes of @p nodes, once, without progressing anyone. */
static void deliver_once(struct node *nodes, int k, int i)
{
  struct fake_drv_s *f = nodes[i].fake;
  for (int p = 0; p < f->n_pkts; p++) {
    struct node *d = node_of(nodes, k, f->pkts[p].peer);
    if (d)
      nm_core_packet(d->core, &d->core->drvs[0], f->pkts[p].buf, f->pkts[p].len, (uint64_t)nodes[i].rank);
  }
  f->n_pkts = 0;
}

/* Chain 0 -> 1 -> 2 -> 3 of 100,000 B (rendezvous; 100 B, eager, for LOST_LATE). The broadcast is lost at rank 1: the receives of ranks 2 and
 * 3 (and, for the limit, of rank 1) complete with the error, and a point-to-point message the root sends next on
 * the same (gate, tag) is delivered to each of them: nothing stalls behind the lost broadcast. */
START_TEST(test_lost)
{
  const nm_len_t len = _i == LOST_LATE ? 100 : 100000;
  struct node nd[4];
  nm_mcast_service_t mc[4];
  for (int i = 0; i < 4; i++) {
    node_init(&nd[i], i);
    ck_assert_int_eq(nm_mcast_init(nd[i].sess, &mc[i]), 0);
  }
  uint8_t *data = malloc(len), *got[4] = {0};
  fill(data, len, 3);
  nm_sr_request_t rr[4], after[4], sr[4];
  int dests[3] = {1, 2, 3}, next[4] = {0, 11, 12, 13}, got_next[4] = {0};
  for (int i = 1; i < 4; i++)
    got[i] = calloc(1, len);
  for (int i = 2; i < 4; i++)
    ck_assert_int_eq(nm_sr_irecv(nd[i].sess, nm_core_gate(nd[i].core, 0), BTAG, got[i], len, &rr[i]), 0);
  if (_i == LOST_LIMIT)
    nd[1].core->cfg.peer_alloc_max = 1000; /* and rank 1 posts its receive only later: no buffer for 100,000 B */
  nm_mcast_req_t req;
  ck_assert_int_eq(nm_mcast_isend(mc[0], dests, NULL, 3, BTAG, data, len, NM_MCAST_TREE_CHAIN, &req), 0);
  struct node net[4] = {nd[0], nd[1], nd[2], nd[3]};
  int k = 4;
  if (_i != LOST_LIMIT) {
    nm_core_progress(nd[0].core);
    deliver_once(nd, 4, 0); /* rank 1 has the header and asked for the data (its RTR is queued); or, eager, it
                             * has the data and its forward to rank 2 is in its driver */
    nd[1].fake->n_pkts = 0; /* what rank 1 had not sent dies with it */
    for (int i = 0; i < 4; i++) /* then dies, and the launcher tells every other rank */
      if (i != 1)
        nm_gate_fail(nm_core_gate(nd[i].core, 1), -NM_ECLOSED);
    net[1] = nd[3]; /* out of the network */
    k = 3;
  }
  /* The root's next message on the same stream, to each destination. */
  for (int i = 1; i < 4; i++)
    if (i != 1 || _i == LOST_LIMIT)
      ck_assert_int_eq(nm_sr_isend(nd[0].sess, nm_core_gate(nd[0].core, i), BTAG, &next[i], sizeof(int), &sr[i]),
                       0);
  pump(net, k);
  const int want = _i == LOST_LIMIT ? -NM_ENOMEM : -NM_ECLOSED;
  ck_assert_int_eq(nm_mcast_test(mc[0], &req), _i == LOST_DEATH ? -NM_ECLOSED : 0);
  for (int i = 2; i < 4; i++) {
    ck_assert_int_eq(nm_sr_rtest(nd[i].sess, &rr[i]), want);
    ck_assert_int_eq(nm_sr_irecv(nd[i].sess, nm_core_gate(nd[i].core, 0), BTAG, &got_next[i], sizeof(int),
                                 &after[i]), 0);
    ck_assert_int_eq(nm_sr_rtest(nd[i].sess, &after[i]), 0);
    ck_assert_int_eq(got_next[i], next[i]);
  }
  if (_i == LOST_LIMIT) { /* rank 1 itself: its place holds the error, then the next message */
    ck_assert_int_eq(nm_sr_irecv(nd[1].sess, nm_core_gate(nd[1].core, 0), BTAG, got[1], len, &rr[1]), 0);
    ck_assert_int_eq(nm_sr_rtest(nd[1].sess, &rr[1]), -NM_ENOMEM);
    ck_assert_int_eq(nm_sr_irecv(nd[1].sess, nm_core_gate(nd[1].core, 0), BTAG, &got_next[1], sizeof(int),
                                 &after[1]), 0);
    ck_assert_int_eq(nm_sr_rtest(nd[1].sess, &after[1]), 0);
    ck_assert_int_eq(got_next[1], next[1]);
  }
  if (_i != LOST_LIMIT) /* the dead rank's own view: every peer gone, its broadcast ends, its service can go */
    for (int i = 0; i < 4; i++)
      if (i != 1)
        nm_gate_fail(nm_core_gate(nd[1].core, i), -NM_ECLOSED);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(nm_mcast_finalize(mc[i]), 0);
  nodes_free(nd, 4);
  for (int i = 1; i < 4; i++)
    free(got[i]);
  free(data);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mcast_unit");
  TCase *tc = tcase_create("mcast");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_shapes_against_simulation);
  tcase_add_test(tc, test_api_singleton);
  suite_add_tcase(s, tc);
  TCase *tl = tcase_create("large_lists");
  tcase_set_timeout(tl, 120);
  tcase_add_loop_test(tl, test_large_list_chain, 0, 4);
  tcase_add_test(tl, test_large_list_binomial);
  tcase_add_loop_test(tl, test_bad_headers, 0, BAD_N);
  tcase_add_loop_test(tl, test_lost, 0, LOST_N);
  suite_add_tcase(s, tl);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
