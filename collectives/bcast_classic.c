/**
 * @file bcast_classic.c
 * @brief The eight classic broadcasts of Hasanov & Lastovetsky 2015, section 2.1 (flat, chain, pipelined chain,
 * binary, split-binary, binomial, scatter + ring allgather, scatter + recursive-doubling allgather), as native
 * collectives over a group of gates (nm_coll_bcast.h documents each one and its cost).
 *
 * Built on sendrecv's non-blocking requests only (DESIGN.md: interface -> core, one-way). Trees come from the one
 * tree module (nm_coll_tree.h) in root-relative virtual ranks: vrank v is group member (v + root) % n. No state
 * between calls (rule 1), requests on the stack (rule 4), no allocation.
 */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>
#include "nm_coll_tree.h"

#include <stddef.h>

/** Sends the flat tree's root keeps in flight. */
#define NM_BC_FLAT_WINDOW 64
/** Receives the pipelined chain posts ahead, and its synchronous sends in flight. A plain eager send completes
 *  when its data is handed over (an inject), so a sender would put every segment on the link at once; they share
 *  it and the first one arrives as late as the last, which makes the pipeline a plain chain (seen under nmad-sim:
 *  4 KiB segments, 300 KB, 16 members: 2.1 ms vs 0.54 ms in the model). A synchronous send completes when the
 *  receiver has matched it, so at most NM_BC_PIPE_SENDS segments share the link. */
#define NM_BC_PIPE_SENDS 1
#define NM_BC_PIPE_WINDOW 8

/** One call's context. */
struct nm_bc_s {
  nm_session_t session;
  const struct nm_coll_group_s *group;
  int n, root, v; /* size, root's index, own vrank */
  nm_tag_t tag;
  char *buf;
  nm_len_t len;
};

static inline void nm_bc_keep(int *err, int rc)
{
  if (*err == 0 && rc != 0)
    *err = rc;
}

static nm_gate_t nm_bc_gate(const struct nm_bc_s *b, int vrank)
{
  return b->group->gate_of(b->group->ref, (vrank + b->root) % b->n);
}

/* Post a send / receive; a request that failed to post has completed with its error (nm_sr_isend()), so *posted
 * says whether it must be waited for. */
static int nm_bc_isend(const struct nm_bc_s *b, int vrank, nm_len_t off, nm_len_t len, nm_sr_request_t *r, int *posted)
{
  int rc = nm_sr_isend(b->session, nm_bc_gate(b, vrank), b->tag, b->buf + off, len, r);
  *posted = rc == 0;
  return rc;
}

static int nm_bc_irecv(const struct nm_bc_s *b, int vrank, nm_len_t off, nm_len_t len, nm_sr_request_t *r, int *posted)
{
  int rc = nm_sr_irecv(b->session, nm_bc_gate(b, vrank), b->tag, b->buf + off, len, r);
  *posted = rc == 0;
  return rc;
}

static int nm_bc_send(const struct nm_bc_s *b, int vrank, nm_len_t off, nm_len_t len)
{
  nm_sr_request_t r;
  int posted, rc = nm_bc_isend(b, vrank, off, len, &r, &posted);
  return posted ? nm_sr_swait(b->session, &r) : rc;
}

static int nm_bc_recv(const struct nm_bc_s *b, int vrank, nm_len_t off, nm_len_t len)
{
  nm_sr_request_t r;
  int posted, rc = nm_bc_irecv(b, vrank, off, len, &r, &posted);
  return posted ? nm_sr_rwait(b->session, &r) : rc;
}

/* Send [soff, soff + slen) to @p to while receiving [roff, roff + rlen) from @p from, both in flight at once;
 * an empty piece (both sides compute the same lengths) is not sent. */
static int nm_bc_sendrecv(const struct nm_bc_s *b, int to, nm_len_t soff, nm_len_t slen, int from, nm_len_t roff,
                          nm_len_t rlen)
{
  nm_sr_request_t rr, sr;
  int rp = 0, sp = 0, err = 0;
  if (rlen > 0)
    nm_bc_keep(&err, nm_bc_irecv(b, from, roff, rlen, &rr, &rp));
  if (slen > 0)
    nm_bc_keep(&err, nm_bc_isend(b, to, soff, slen, &sr, &sp));
  if (rp)
    nm_bc_keep(&err, nm_sr_rwait(b->session, &rr));
  if (sp)
    nm_bc_keep(&err, nm_sr_swait(b->session, &sr));
  return err;
}

/* ---- whole-message trees: chain (2.1.2), binary (2.1.4), binomial (2.1.6) ---- */

/* Receive [off, off + len) from the parent in @p t, then send it to each child one after the other (single-port
 * model: the farthest child first). With @p skip_empty, an empty piece is neither received nor sent. */
static int nm_bc_tree(const struct nm_bc_s *b, const struct nm_coll_tree_s *t, int v, nm_len_t off, nm_len_t len,
                      int skip_empty)
{
  struct nm_coll_tree_node_s node;
  int err = 0;
  if (skip_empty && len == 0)
    return 0;
  nm_coll_tree_node(t, v, &node);
  if (node.parent >= 0) {
    int rc = nm_bc_recv(b, node.parent, off, len);
    if (rc != 0 && rc != -NM_ETRUNCATED)
      return rc; /* nothing valid to forward */
    err = rc;    /* a truncated message still holds len valid bytes: forward them so the subtree completes */
  }
  for (int i = 0; i < node.n_children; i++)
    nm_bc_keep(&err, nm_bc_send(b, nm_coll_tree_child(t, &node, i, NULL), off, len));
  return err;
}

static int nm_bc_whole_tree(const struct nm_bc_s *b, enum nm_coll_tree_kind_e kind)
{
  struct nm_coll_tree_s t;
  int rc = nm_coll_tree_init(&t, kind, b->n, 0);
  return rc ? rc : nm_bc_tree(b, &t, b->v, 0, b->len, 0);
}

/* ---- flat tree (2.1.1): the root posts its sends NM_BC_FLAT_WINDOW at a time ---- */

static int nm_bc_flat(const struct nm_bc_s *b)
{
  nm_sr_request_t reqs[NM_BC_FLAT_WINDOW];
  int posted[NM_BC_FLAT_WINDOW];
  int err = 0;
  if (b->v != 0)
    return nm_bc_recv(b, 0, 0, b->len);
  for (int next = 1; next < b->n;) {
    int count = 0;
    while (next < b->n && count < NM_BC_FLAT_WINDOW) {
      nm_bc_keep(&err, nm_bc_isend(b, next++, 0, b->len, &reqs[count], &posted[count]));
      count++;
    }
    for (int i = 0; i < count; i++)
      if (posted[i])
        nm_bc_keep(&err, nm_sr_swait(b->session, &reqs[i]));
  }
  return err;
}

/* ---- pipelined chain (2.1.3) ---- */

/* X = ceil(len / seg) segments (one empty segment for len = 0). Receives are posted NM_BC_PIPE_WINDOW segments
 * ahead, so segment k + 1.. arrive while segment k is being forwarded (synchronous sends, see above); per-(gate, tag) order matches them in
 * order. The whole schedule runs even after an error, so that no neighbour waits forever. */
static int nm_bc_pipelined_chain(const struct nm_bc_s *b, nm_len_t seg)
{
  nm_sr_request_t rreq[NM_BC_PIPE_WINDOW], sreq[NM_BC_PIPE_SENDS];
  int rposted[NM_BC_PIPE_WINDOW] = {0}, sposted[NM_BC_PIPE_SENDS] = {0};
  nm_len_t nseg = b->len == 0 ? 1 : (b->len - 1) / seg + 1, k;
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  int err = nm_coll_tree_init(&t, NM_COLL_TREE_CHAIN, b->n, 0);
  if (err)
    return err;
  nm_coll_tree_node(&t, b->v, &node);
  int parent = node.parent, has_parent = parent >= 0, child = nm_coll_tree_child(&t, &node, 0, NULL);
#define NM_BC_SEG_OFF(k) ((k) * seg)
#define NM_BC_SEG_LEN(k) ((k) * seg + seg <= b->len ? seg : b->len - (k) * seg)
  if (has_parent)
    for (k = 0; k < nseg && k < NM_BC_PIPE_WINDOW; k++)
      nm_bc_keep(&err, nm_bc_irecv(b, parent, NM_BC_SEG_OFF(k), NM_BC_SEG_LEN(k), &rreq[k], &rposted[k]));
  for (k = 0; k < nseg; k++) {
    int slot = (int)(k % NM_BC_PIPE_WINDOW);
    if (has_parent) {
      if (rposted[slot])
        nm_bc_keep(&err, nm_sr_rwait(b->session, &rreq[slot]));
      rposted[slot] = 0;
      if (k + NM_BC_PIPE_WINDOW < nseg) {
        nm_len_t kk = k + NM_BC_PIPE_WINDOW;
        nm_bc_keep(&err, nm_bc_irecv(b, parent, NM_BC_SEG_OFF(kk), NM_BC_SEG_LEN(kk), &rreq[slot], &rposted[slot]));
      }
    }
    if (child >= 0) {
      int ss = (int)(k % NM_BC_PIPE_SENDS), rc;
      if (sposted[ss])
        nm_bc_keep(&err, nm_sr_swait(b->session, &sreq[ss]));
      rc = nm_sr_issend(b->session, nm_bc_gate(b, child), b->tag, b->buf + NM_BC_SEG_OFF(k), NM_BC_SEG_LEN(k),
                        &sreq[ss]);
      sposted[ss] = rc == 0;
      nm_bc_keep(&err, rc);
    }
  }
  for (int i = 0; i < NM_BC_PIPE_SENDS; i++)
    if (sposted[i])
      nm_bc_keep(&err, nm_sr_swait(b->session, &sreq[i]));
#undef NM_BC_SEG_OFF
#undef NM_BC_SEG_LEN
  return err;
}

/* ---- split-binary tree (2.1.5) ---- */

static int nm_bc_split_binary(const struct nm_bc_s *b)
{
  struct nm_coll_tree_s t;
  int n = b->n, v = b->v, err = 0;
  int left = n / 2;          /* members 1..left: the root's left subtree (nm_coll_tree.h's binary split) */
  int right = n - 1 - left;  /* members left+1..n-1; right <= left <= right + 1 */
  nm_len_t h = (b->len + 1) / 2; /* the first half, [0, h), goes left; [h, len) goes right */
  if (n == 1)
    return 0;
  int rc = nm_coll_tree_init(&t, NM_COLL_TREE_BINARY, n, 0);
  if (rc)
    return rc;
  /* Forwarding phase: each half down its subtree of the binary tree (the root's two children get one half each). */
  if (v == 0) {
    if (h > 0)
      nm_bc_keep(&err, nm_bc_send(b, 1, 0, h));
    if (right > 0 && b->len - h > 0)
      nm_bc_keep(&err, nm_bc_send(b, 1 + left, h, b->len - h));
  } else if (v <= left) {
    nm_bc_keep(&err, nm_bc_tree(b, &t, v, 0, h, 1));
  } else {
    nm_bc_keep(&err, nm_bc_tree(b, &t, v, h, b->len - h, 1));
  }
  /* Exchange phase: left member 1 + i and right member 1 + left + i swap halves; the unpaired left member (when
   * left = right + 1) gets the second half from the root. */
  if (v == 0) {
    if (left > right)
      nm_bc_keep(&err, b->len - h > 0 ? nm_bc_send(b, left, h, b->len - h) : 0);
  } else if (v <= left) {
    int i = v - 1;
    if (i < right)
      nm_bc_keep(&err, nm_bc_sendrecv(b, 1 + left + i, 0, h, 1 + left + i, h, b->len - h));
    else if (b->len - h > 0)
      nm_bc_keep(&err, nm_bc_recv(b, 0, h, b->len - h));
  } else {
    int i = v - 1 - left;
    nm_bc_keep(&err, nm_bc_sendrecv(b, 1 + i, h, b->len - h, 1 + i, 0, h));
  }
  return err;
}

/* ---- scatter + allgather (2.1.7, 2.1.8) ---- */

/* Offset of block @p blk of @p nb balanced blocks: floor(len / nb) bytes each, the first len % nb one more. */
static nm_len_t nm_bc_block_off(const struct nm_bc_s *b, int nb, int blk)
{
  nm_len_t q = b->len / (nm_len_t)nb, r = b->len % (nm_len_t)nb;
  return (nm_len_t)blk * q + ((nm_len_t)blk < r ? (nm_len_t)blk : r);
}

/* Binomial scatter over vranks 0..nb-1: vrank v ends with the blocks [v, hi) of its subtree (so its own). */
static int nm_bc_scatter(const struct nm_bc_s *b, int nb)
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
      nm_bc_keep(&err, nm_bc_recv(b, node.parent, lo, hi - lo));
  }
  for (int i = 0; i < node.n_children; i++) {
    int chi, c = nm_coll_tree_child(&t, &node, i, &chi);
    nm_len_t lo = nm_bc_block_off(b, nb, c), hi = nm_bc_block_off(b, nb, chi);
    if (hi > lo)
      nm_bc_keep(&err, nm_bc_send(b, c, lo, hi - lo));
  }
  return err;
}

static int nm_bc_scatter_ring(const struct nm_bc_s *b)
{
  int n = b->n, v = b->v, err = nm_bc_scatter(b, n);
  /* Ring allgather: in step i, send block v - i to v + 1, receive block v - i - 1 from v - 1. */
  for (int i = 0; i < n - 1; i++) {
    int sb = ((v - i) % n + n) % n, rb = ((v - i - 1) % n + n) % n;
    nm_len_t so = nm_bc_block_off(b, n, sb), ro = nm_bc_block_off(b, n, rb);
    nm_bc_keep(&err, nm_bc_sendrecv(b, (v + 1) % n, so, nm_bc_block_off(b, n, sb + 1) - so, (v - 1 + n) % n, ro,
                                    nm_bc_block_off(b, n, rb + 1) - ro));
  }
  return err;
}

static int nm_bc_scatter_rd(const struct nm_bc_s *b)
{
  int n = b->n, v = b->v, pof2 = 1, err = 0;
  while (pof2 * 2 <= n)
    pof2 *= 2;
  if (v < pof2) {
    err = nm_bc_scatter(b, pof2);
    /* Recursive doubling: at distance mask, the aligned groups of mask blocks of v and of v ^ mask swap. */
    for (int mask = 1; mask < pof2; mask <<= 1) {
      int partner = v ^ mask, mine = v & ~(mask - 1), theirs = partner & ~(mask - 1);
      nm_len_t so = nm_bc_block_off(b, pof2, mine), ro = nm_bc_block_off(b, pof2, theirs);
      nm_bc_keep(&err, nm_bc_sendrecv(b, partner, so, nm_bc_block_off(b, pof2, mine + mask) - so, partner, ro,
                                      nm_bc_block_off(b, pof2, theirs + mask) - ro));
    }
    if (v + pof2 < n && b->len > 0)
      nm_bc_keep(&err, nm_bc_send(b, v + pof2, 0, b->len));
  } else if (b->len > 0) {
    err = nm_bc_recv(b, v - pof2, 0, b->len);
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

int nm_coll_bcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                  nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts)
{
  enum nm_coll_bcast_algo_e algo = opts ? opts->algo : NM_COLL_BCAST_BINOMIAL;
  nm_len_t seg = opts && opts->segment > 0 ? opts->segment : NM_COLL_BCAST_SEGMENT_DEFAULT;
  int n = group ? group->n : 0;
  if (session == NULL || group == NULL || group->gate_of == NULL || n < 1 || self < 0 || self >= n || root < 0 ||
      root >= n || (len > 0 && buf == NULL) || (int)algo < 0 || algo >= NM_COLL_BCAST_NALGOS)
    return -NM_EINVAL;
  if (opts && opts->groups > 1) { /* Hasanov 2015, section 3: collectives/bcast_hier.c */
    struct nm_coll_bcast_hier_s h;
    int rc = nm_coll_bcast_hier_init(&h, group, self, opts->groups);
    return rc ? rc : nm_coll_bcast_hier(session, &h, root, buf, len, tag, opts);
  }
  if (n == 1)
    return 0;
  struct nm_bc_s b = {session, group, n, root, (self - root + n) % n, tag, buf, len};
  switch (algo) {
  case NM_COLL_BCAST_FLAT:
    return nm_bc_flat(&b);
  case NM_COLL_BCAST_CHAIN:
    return nm_bc_whole_tree(&b, NM_COLL_TREE_CHAIN);
  case NM_COLL_BCAST_PIPELINED_CHAIN:
    return nm_bc_pipelined_chain(&b, seg);
  case NM_COLL_BCAST_BINARY:
    return nm_bc_whole_tree(&b, NM_COLL_TREE_BINARY);
  case NM_COLL_BCAST_SPLIT_BINARY:
    return nm_bc_split_binary(&b);
  case NM_COLL_BCAST_BINOMIAL:
    return nm_bc_whole_tree(&b, NM_COLL_TREE_BINOMIAL);
  case NM_COLL_BCAST_SCATTER_RING:
    return nm_bc_scatter_ring(&b);
  case NM_COLL_BCAST_SCATTER_RD:
  default:
    return nm_bc_scatter_rd(&b);
  }
}

/* The array form of a group. */
static nm_gate_t nm_bc_array_gate(void *ref, int member) { return ((const nm_gate_t *)ref)[member]; }

int nm_coll_bcast_array(nm_session_t session, const nm_gate_t *gates, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts)
{
  struct nm_coll_group_s g = {n, nm_bc_array_gate, (void *)gates};
  return nm_coll_bcast(session, gates ? &g : NULL, self, root, buf, len, tag, opts);
}
