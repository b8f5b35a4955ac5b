/**
 * @file bcast_classic.c
 * @brief The eight classic broadcasts of Hasanov & Lastovetsky 2015, section 2.1 (flat, chain, pipelined chain,
 * binary, split-binary, binomial, scatter + ring allgather, scatter + recursive-doubling allgather), as native
 * non-blocking collectives over a group of gates (nm_coll_bcast.h documents each one and its cost).
 *
 * Each algorithm is a builder: it appends this member's sends and receives to a schedule (nm_coll_sched.h), one
 * round per point where the member must wait for something before it goes on (a receive before forwarding, one
 * child after the other in the single-port model of the paper). The schedule runs in the core's progress;
 * nm_coll_bcast() waits for it, nm_coll_ibcast() hands it back, and the MPI shim appends the same builders to its
 * own schedules (MPI_Bcast, MPI_Ibcast). Trees come from the one tree module (nm_coll_tree.h) in root-relative
 * virtual ranks: vrank v is group member (v + root) % n.
 */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_sched.h>
#include <nmad/nm_coll_model.h>
#include <nmad/nm_errno.h>
#include "nm_coll_algo.h"
#include "nm_coll_tree.h"
#include <nmad/nm_core.h>
#include "nmad/core/nm_core_interface.h"

#include <stddef.h>

/** One build: the schedule, the group in root-relative ranks, the buffer, and the next free round. */
struct nm_bc_s {
  nm_coll_sched_t *s;
  const struct nm_coll_group_s *group;
  int n, root, v; /* size, root's index, own vrank */
  char *buf;
  nm_len_t len;
  int round; /* the next round this member's operations go to */
};

static nm_gate_t nm_bc_gate(const struct nm_bc_s *b, int vrank)
{
  return b->group->gate_of(b->group->ref, (vrank + b->root) % b->n);
}

static void nm_bc_send(struct nm_bc_s *b, int round, int vrank, nm_len_t off, nm_len_t len, unsigned flags)
{
  nm_coll_sched_send(b->s, round, nm_bc_gate(b, vrank), b->buf + off, len, flags);
}

static void nm_bc_recv(struct nm_bc_s *b, int round, int vrank, nm_len_t off, nm_len_t len)
{
  nm_coll_sched_recv(b->s, round, nm_bc_gate(b, vrank), b->buf + off, len);
}

/* In one round: send [soff, soff + slen) to @p to while receiving [roff, roff + rlen) from @p from; an empty piece
 * (both sides compute the same lengths) is not sent. */
static void nm_bc_sendrecv(struct nm_bc_s *b, int to, nm_len_t soff, nm_len_t slen, int from, nm_len_t roff,
                           nm_len_t rlen)
{
  if (rlen > 0)
    nm_bc_recv(b, b->round, from, roff, rlen);
  if (slen > 0)
    nm_bc_send(b, b->round, to, soff, slen, 0);
  b->round++;
}

/* ---- whole-message trees: chain (2.1.2), binary (2.1.4), binomial (2.1.6) ---- */

/* Receive [off, off + len) from the parent in @p t, then send it to each child one after the other (single-port
 * model: the farthest child first), one round each. With @p skip_empty, an empty piece is neither received nor
 * sent. */
static void nm_bc_tree(struct nm_bc_s *b, const struct nm_coll_tree_s *t, nm_len_t off, nm_len_t len,
                       int skip_empty)
{
  struct nm_coll_tree_node_s node;
  if (skip_empty && len == 0)
    return;
  nm_coll_tree_node(t, b->v, &node);
  if (node.parent >= 0)
    nm_bc_recv(b, b->round++, node.parent, off, len);
  for (int i = 0; i < node.n_children; i++)
    nm_bc_send(b, b->round++, nm_coll_tree_child(t, &node, i, NULL), off, len, 0);
}

static int nm_bc_whole_tree(struct nm_bc_s *b, enum nm_coll_tree_kind_e kind)
{
  struct nm_coll_tree_s t;
  int rc = nm_coll_tree_init(&t, kind, b->n, 0);
  if (rc == 0)
    nm_bc_tree(b, &t, 0, b->len, 0);
  return rc;
}

/* ---- flat tree (2.1.1): the root posts every send in one round ---- */

/* How long a flat tree's receiver spins before it yields, on a job with more ranks than cores: twice the time
 * the root takes to post its p - 1 messages (the sender's overhead of the network's figures), for an eager
 * message. The root never waits for a receiver, so while it runs a receiver's data is at most that far away,
 * and yielding at once would hand the core to ranks with nothing to do: measured over sm at 8 ranks on 2 cores
 * (doc/performance.md, "A flat broadcast's receivers spin for the root's row"), 8 B went from 1.2-15 us
 * (bimodal) to 1.0-1.8 us. A large message is pulled by each receiver, whose copy needs the cores: no spin. */
uint64_t nm_coll_bcast_recv_spin_ns(nm_session_t session, enum nm_coll_bcast_algo_e algo, int n, nm_len_t len)
{
  nm_core_t core = nm_session_get_core(session);
  uint32_t overhead_ns = 0;
  if (algo != NM_COLL_BCAST_FLAT || n < 2 || !nm_core_job_oversubscribed(core) ||
      len > nm_core_rdv_threshold(core) || nm_core_network_logp(core, NULL, &overhead_ns, NULL, NULL, NULL) != 0)
    return 0;
  return 2 * (uint64_t)(n - 1) * overhead_ns;
}

static uint64_t nm_bc_flat_spin_ns(const struct nm_bc_s *b)
{
  return nm_coll_bcast_recv_spin_ns(nm_coll_sched_session(b->s), NM_COLL_BCAST_FLAT, b->n, b->len);
}

static int nm_bc_flat(struct nm_bc_s *b)
{
  if (b->v != 0) {
    nm_coll_sched_set_spin(b->s, nm_bc_flat_spin_ns(b));
    nm_bc_recv(b, b->round, 0, 0, b->len);
  }
  else
    for (int v = 1; v < b->n; v++)
      nm_bc_send(b, b->round, v, 0, b->len, 0);
  b->round++;
  return 0;
}

/* ---- pipelined chain (2.1.3) ---- */

/* X = ceil(len / seg) segments (one empty segment for len = 0). Round k: receive segment k and forward segment
 * k - 1, so a member forwards while the next segment arrives. The sends are synchronous: a plain eager send
 * completes when its data is handed over (an inject), so the root would put every segment on the link at once;
 * they would share it and the first would arrive as late as the last, which makes the pipeline a plain chain
 * (seen under nmad-sim: 4 KiB segments, 300 KB, 16 members: 2.1 ms vs 0.54 ms in the model). A synchronous send
 * completes when the receiver has matched it, so one segment at a time is on each link. */
static int nm_bc_pipelined_chain(struct nm_bc_s *b, nm_len_t seg)
{
  nm_len_t nseg = b->len == 0 ? 1 : (b->len - 1) / seg + 1;
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  int err = nm_coll_tree_init(&t, NM_COLL_TREE_CHAIN, b->n, 0);
  if (err)
    return err;
  nm_coll_tree_node(&t, b->v, &node);
  int parent = node.parent, child = nm_coll_tree_child(&t, &node, 0, NULL);
  int r0 = b->round + (parent >= 0); /* the round of the first forward: after the first receive */
  for (nm_len_t k = 0; k < nseg; k++) {
    nm_len_t off = k * seg, len = off + seg <= b->len ? seg : b->len - off;
    if (parent >= 0)
      nm_bc_recv(b, b->round + (int)k, parent, off, len);
    if (child >= 0)
      nm_bc_send(b, r0 + (int)k, child, off, len, NM_COLL_SEND_SYNC);
  }
  b->round = r0 + (int)nseg;
  return 0;
}

/* ---- split-binary tree (2.1.5) ---- */

static int nm_bc_split_binary(struct nm_bc_s *b)
{
  struct nm_coll_tree_s t;
  int n = b->n, v = b->v;
  int left = n / 2;              /* members 1..left: the root's left subtree (nm_coll_tree.h's binary split) */
  int right = n - 1 - left;      /* members left+1..n-1; right <= left <= right + 1 */
  nm_len_t h = (b->len + 1) / 2; /* the first half, [0, h), goes left; [h, len) goes right */
  int rc = nm_coll_tree_init(&t, NM_COLL_TREE_BINARY, n, 0);
  if (rc)
    return rc;
  /* Forwarding phase: each half down its subtree of the binary tree (the root's two children get one half each). */
  if (v == 0) {
    if (h > 0)
      nm_bc_send(b, b->round++, 1, 0, h, 0);
    if (right > 0 && b->len - h > 0)
      nm_bc_send(b, b->round++, 1 + left, h, b->len - h, 0);
  } else if (v <= left) {
    nm_bc_tree(b, &t, 0, h, 1);
  } else {
    nm_bc_tree(b, &t, h, b->len - h, 1);
  }
  /* Exchange phase: left member 1 + i and right member 1 + left + i swap halves; the unpaired left member (when
   * left = right + 1) gets the second half from the root. */
  if (v == 0) {
    if (left > right && b->len - h > 0)
      nm_bc_send(b, b->round++, left, h, b->len - h, 0);
  } else if (v <= left) {
    int i = v - 1;
    if (i < right)
      nm_bc_sendrecv(b, 1 + left + i, 0, h, 1 + left + i, h, b->len - h);
    else if (b->len - h > 0)
      nm_bc_recv(b, b->round++, 0, h, b->len - h);
  } else {
    int i = v - 1 - left;
    nm_bc_sendrecv(b, 1 + i, h, b->len - h, 1 + i, 0, h);
  }
  return 0;
}

/* ---- scatter + allgather (2.1.7, 2.1.8) ---- */

/* Offset of block @p blk of @p nb balanced blocks: floor(len / nb) bytes each, the first len % nb one more. */
static nm_len_t nm_bc_block_off(const struct nm_bc_s *b, int nb, int blk)
{
  nm_len_t q = b->len / (nm_len_t)nb, r = b->len % (nm_len_t)nb;
  return (nm_len_t)blk * q + ((nm_len_t)blk < r ? (nm_len_t)blk : r);
}

/* Binomial scatter over vranks 0..nb-1: vrank v ends with the blocks [v, hi) of its subtree (so its own). */
static int nm_bc_scatter(struct nm_bc_s *b, int nb)
{
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  int err = nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, nb, 0);
  if (err)
    return err;
  nm_coll_tree_node(&t, b->v, &node);
  if (node.parent >= 0) {
    nm_len_t lo = nm_bc_block_off(b, nb, b->v), hi = nm_bc_block_off(b, nb, node.hi);
    if (hi > lo)
      nm_bc_recv(b, b->round++, node.parent, lo, hi - lo);
  }
  for (int i = 0; i < node.n_children; i++) {
    int chi, c = nm_coll_tree_child(&t, &node, i, &chi);
    nm_len_t lo = nm_bc_block_off(b, nb, c), hi = nm_bc_block_off(b, nb, chi);
    if (hi > lo)
      nm_bc_send(b, b->round++, c, lo, hi - lo, 0);
  }
  return 0;
}

static int nm_bc_scatter_ring(struct nm_bc_s *b)
{
  int n = b->n, v = b->v, err = nm_bc_scatter(b, n);
  /* Ring allgather: in step i, send block v - i to v + 1, receive block v - i - 1 from v - 1. */
  for (int i = 0; i < n - 1 && !err; i++) {
    int sb = ((v - i) % n + n) % n, rb = ((v - i - 1) % n + n) % n;
    nm_len_t so = nm_bc_block_off(b, n, sb), ro = nm_bc_block_off(b, n, rb);
    nm_bc_sendrecv(b, (v + 1) % n, so, nm_bc_block_off(b, n, sb + 1) - so, (v - 1 + n) % n, ro,
                   nm_bc_block_off(b, n, rb + 1) - ro);
  }
  return err;
}

static int nm_bc_scatter_rd(struct nm_bc_s *b)
{
  int n = b->n, v = b->v, pof2 = 1, err = 0;
  while (pof2 * 2 <= n)
    pof2 *= 2;
  if (v < pof2) {
    err = nm_bc_scatter(b, pof2);
    /* Recursive doubling: at distance mask, the aligned groups of mask blocks of v and of v ^ mask swap. */
    for (int mask = 1; mask < pof2 && !err; mask <<= 1) {
      int partner = v ^ mask, mine = v & ~(mask - 1), theirs = partner & ~(mask - 1);
      nm_len_t so = nm_bc_block_off(b, pof2, mine), ro = nm_bc_block_off(b, pof2, theirs);
      nm_bc_sendrecv(b, partner, so, nm_bc_block_off(b, pof2, mine + mask) - so, partner, ro,
                     nm_bc_block_off(b, pof2, theirs + mask) - ro);
    }
    if (v + pof2 < n && b->len > 0)
      nm_bc_send(b, b->round++, v + pof2, 0, b->len, 0);
  } else if (b->len > 0) {
    nm_bc_recv(b, b->round++, v - pof2, 0, b->len);
  }
  return err;
}

/* ---- entry points ---- */

const char *nm_coll_bcast_algo_name(enum nm_coll_bcast_algo_e algo)
{
  static const char *const names[NM_COLL_BCAST_NALGOS] = {"flat",         "chain",    "pipelined-chain",
                                                          "binary",       "split-binary", "binomial",
                                                          "scatter-ring", "scatter-rd"};
  return (int)algo >= 0 && algo < NM_COLL_BCAST_NALGOS ? names[algo] : NULL;
}

/* Check the arguments shared by the entry points. */
static int nm_bc_check(const struct nm_coll_group_s *group, int self, int root, const void *buf, nm_len_t len,
                       const struct nm_coll_bcast_opts_s *opts)
{
  int n = group ? group->n : 0;
  if (group == NULL || group->gate_of == NULL || n < 1 || self < 0 || self >= n || root < 0 || root >= n ||
      (len > 0 && buf == NULL) || (opts && ((int)opts->algo < 0 || opts->algo >= NM_COLL_BCAST_NALGOS)))
    return -NM_EINVAL;
  return 0;
}

int nm_coll_bcast_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                        void *buf, nm_len_t len, const struct nm_coll_bcast_opts_s *opts, int *next_round)
{
  struct nm_coll_bcast_opts_s chosen;
  int err = s == NULL || round < 0 ? -NM_EINVAL : nm_bc_check(group, self, root, buf, len, opts);
  if (err == 0 && opts == NULL) {
    err = nm_coll_bcast_auto_opts_env(nm_coll_sched_session(s), group->bcast_memo, group->n, len,
                                      nm_coll_algo_override(group, NM_COLL_FAMILY_BCAST), &chosen);
    opts = &chosen;
  }
  if (err == 0 && opts->groups > 1) { /* Hasanov 2015, section 3: collectives/bcast_hier.c */
    struct nm_coll_bcast_hier_s h;
    err = nm_coll_bcast_hier_init(&h, group, self, opts->groups);
    return err ? err : nm_coll_bcast_hier_build(s, round, &h, root, buf, len, opts, next_round);
  }
  if (err)
    return err;
  enum nm_coll_bcast_algo_e algo = opts->algo;
  nm_len_t seg = opts->segment > 0 ? opts->segment : NM_COLL_BCAST_SEGMENT_DEFAULT;
  struct nm_bc_s b = {s, group, group->n, root, (self - root + group->n) % group->n, buf, len, round};
  if (b.n > 1) {
    switch (algo) {
    case NM_COLL_BCAST_FLAT:
      err = nm_bc_flat(&b);
      break;
    case NM_COLL_BCAST_CHAIN:
      err = nm_bc_whole_tree(&b, NM_COLL_TREE_CHAIN);
      break;
    case NM_COLL_BCAST_PIPELINED_CHAIN:
      err = nm_bc_pipelined_chain(&b, seg);
      break;
    case NM_COLL_BCAST_BINARY:
      err = nm_bc_whole_tree(&b, NM_COLL_TREE_BINARY);
      break;
    case NM_COLL_BCAST_SPLIT_BINARY:
      err = nm_bc_split_binary(&b);
      break;
    case NM_COLL_BCAST_BINOMIAL:
      err = nm_bc_whole_tree(&b, NM_COLL_TREE_BINOMIAL);
      break;
    case NM_COLL_BCAST_SCATTER_RING:
      err = nm_bc_scatter_ring(&b);
      break;
    case NM_COLL_BCAST_SCATTER_RD:
    default:
      err = nm_bc_scatter_rd(&b);
      break;
    }
  }
  if (next_round)
    *next_round = b.round;
  return err;
}

int nm_coll_ibcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                   nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts, nm_coll_sched_t **req)
{
  if (req)
    *req = NULL;
  int err = session == NULL || req == NULL ? -NM_EINVAL : nm_bc_check(group, self, root, buf, len, opts);
  if (err)
    return err;
  nm_coll_sched_t *s = nm_coll_sched_new(session, tag);
  if (s == NULL)
    return -NM_ENOMEM;
  err = nm_coll_bcast_build(s, 0, group, self, root, buf, len, opts, NULL);
  if (err) {
    nm_coll_sched_destroy(s);
    return err;
  }
  err = nm_coll_sched_start(s); /* frees s on error */
  if (err == 0)
    *req = s;
  return err;
}

int nm_coll_bcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                  nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts)
{
  nm_coll_sched_t *s;
  int err = nm_coll_ibcast(session, group, self, root, buf, len, tag, opts, &s);
  return err ? err : nm_coll_sched_wait(s);
}

/* The array form of a group. */
static nm_gate_t nm_bc_array_gate(void *ref, int member) { return ((const nm_gate_t *)ref)[member]; }

int nm_coll_bcast_array(nm_session_t session, const nm_gate_t *gates, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts)
{
  struct nm_coll_group_s g = {n, nm_bc_array_gate, (void *)gates, NULL, NULL};
  return nm_coll_bcast(session, gates ? &g : NULL, self, root, buf, len, tag, opts);
}
