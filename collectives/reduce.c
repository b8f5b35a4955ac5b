/**
 * @file reduce.c
 * @brief Reduce as native non-blocking collectives (nm_coll_reduce.h): binomial tree (small) and Rabenseifner's
 * reduce-scatter + gather (large), and the choice between them (MPICH's threshold; issue 18, deliverable 1).
 * Both keep MPI's canonical order for non-commutative operators.
 */
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include "nm_coll_algo.h"
#include "nm_coll_reduce_private.h"
#include "nm_coll_tree.h"

static const char *const nm_red_names[NM_COLL_REDUCE_NALGOS] = {"auto", "binomial", "reduce_scatter_gather",
                                                                  "linear"};

/* nm_coll_reduce_choose_job() with the override of @p group (NULL: the environment's). */
static int nm_red_choose(const struct nm_coll_group_s *group, int p, nm_len_t count, nm_len_t esize,
                         int job_oversubscribed, enum nm_coll_reduce_algo_e *algo)
{
  int forced, err = nm_coll_algo_forced(group, NM_COLL_FAMILY_REDUCE, nm_red_names, NM_COLL_REDUCE_NALGOS, &forced);
  if (err)
    return err;
  nm_len_t m = count * esize;
  if (forced)
    *algo = (enum nm_coll_reduce_algo_e)forced;
  else if ((job_oversubscribed && p > 2 && m <= NM_COLL_REDUCE_OVERSUB_LINEAR_UPTO) ||
           (p == 2 && m <= NM_COLL_REDUCE_PAIR_LINEAR_UPTO))
    *algo = NM_COLL_REDUCE_LINEAR;
  else if (p <= 2 || m <= 2048 || count < (nm_len_t)p ||
           (job_oversubscribed && m >= NM_COLL_REDUCE_OVERSUB_BINOMIAL_FROM))
    *algo = NM_COLL_REDUCE_BINOMIAL;
  else
    *algo = NM_COLL_REDUCE_RS_GATHER;
  return 0;
}

int nm_coll_reduce_choose_job(int p, nm_len_t count, nm_len_t esize, int job_oversubscribed,
                              enum nm_coll_reduce_algo_e *algo)
{
  return nm_red_choose(NULL, p, count, esize, job_oversubscribed, algo);
}

int nm_coll_reduce_choose(int p, nm_len_t count, nm_len_t esize, enum nm_coll_reduce_algo_e *algo)
{
  return nm_coll_reduce_choose_job(p, count, esize, 0, algo);
}

/* ---- binomial tree: a commutative operator on the tree rooted at the root; a non-commutative one on the tree
 * rooted at member 0, where subtree [v, hi) is a range of consecutive members and a node combines
 * (own range) op (child's range), nearest child first; member 0 then sends the result to the root ---- */

static void nm_red_binomial(struct nm_ar_s *a, int root, const char *in, char *result)
{
  int p = a->p, commute = a->op->commute, base = commute ? root : 0, v = (a->r - base + p) % p;
  nm_len_t bytes = a->count * a->esize;
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, p, 0); /* p >= 1: cannot fail */
  nm_coll_tree_node(&t, v, &node);
  int holder = v == 0, round = a->round + (node.n_children > 0), at_root = holder && a->r == root;
  const char *acc = in;
  if (at_root && commute && in == result) {
    /* in place at the root: every child's vector is combined straight into the result */
    for (int i = node.n_children - 1; i >= 0; i--) {
      char *cw = nm_coll_sched_alloc(a->s, bytes);
      nm_coll_ar_recv(a, a->round, (nm_coll_tree_child(&t, &node, i, NULL) + base) % p, cw, a->count);
      nm_coll_ar_combine(a, round, cw, result, a->count);
    }
  } else {
    /* a chain over the children, nearest first (the tree module lists them farthest first): each child's vector
     * becomes (own range) op (child's range), so no copy of the own vector is needed, and the root receives the
     * farthest child straight into the result (issue 18 deliverable 2) */
    for (int i = node.n_children - 1; i >= 0; i--) {
      int c = nm_coll_tree_child(&t, &node, i, NULL);
      char *cw = i == 0 && at_root && in != result ? result : nm_coll_sched_alloc(a->s, bytes);
      nm_coll_ar_recv(a, a->round, (c + base) % p, cw, a->count);
      nm_coll_ar_combine(a, round, acc, cw, a->count);
      acc = cw;
    }
    if (at_root && acc != result)
      nm_coll_sched_copy(a->s, round, result, acc, bytes); /* a leaf root, or in place non-commutative */
  }
  if (node.parent >= 0)
    nm_coll_ar_send(a, round++, (node.parent + base) % p, acc, a->count);
  else if (a->r != root)
    nm_coll_ar_send(a, round++, root, acc, a->count); /* non-commutative: member 0 hands the result over */
  if (a->r == root && !holder)
    nm_coll_ar_recv(a, round++, base, result, a->count);
  a->round = round;
}

/* ---- reduce-scatter (recursive halving) + gather of the p' blocks at the root ---- */

/** The block new rank @p nr holds after the halving: the walk of nm_coll_ar_halving() without its messages. */
static int nm_red_block_of(int nr, int pof2)
{
  int send_idx = 0, recv_idx = 0;
  for (int mask = 1; mask < pof2; mask <<= 1) {
    if (nr < (nr ^ mask))
      send_idx = recv_idx + pof2 / (mask * 2);
    else
      recv_idx = send_idx + pof2 / (mask * 2);
    send_idx = recv_idx;
  }
  return recv_idx;
}

static void nm_red_rs_gather(struct nm_ar_s *a, int root, const char *in, char *result)
{
  int pof2 = nm_coll_algo_pof2(a->p), rem = a->p - pof2;
  nm_len_t bytes = a->count * a->esize;
  /* the root accumulates in the result itself (its block then needs no copy, the others arrive in place); the
   * own vector is read where it is until the first exchange combines it into acc (no copy) */
  a->acc = a->r == root ? result : nm_coll_sched_alloc(a->s, bytes);
  a->tmp = nm_coll_sched_alloc(a->s, bytes);
  if (!a->acc || !a->tmp)
    return; /* recorded: start fails */
  a->src = in == a->acc ? NULL : in;
  int nr = nm_coll_ar_fold(a, rem);
#define OFF(i) (nm_coll_algo_block(a->count, pof2, (i)))
  if (nr >= 0) {
    struct nm_ar_walk_s w;
    int blk = nm_coll_ar_halving(a, nr, pof2, rem, &w);
    if (a->r != root)
      nm_coll_ar_send(a, a->round++, root, nm_coll_ar_own(a, OFF(blk)), OFF(blk + 1) - OFF(blk));
    else if (a->src) /* p' = 1 only: no exchange took place */
      nm_coll_sched_copy(a->s, a->round, result + OFF(blk) * a->esize, a->src + OFF(blk) * a->esize,
                         (OFF(blk + 1) - OFF(blk)) * a->esize);
  }
  if (a->r == root) {
    for (int q = 0; q < pof2; q++) {
      int m = nm_coll_ar_real(q, rem), blk = nm_red_block_of(q, pof2);
      if (m != root)
        nm_coll_ar_recv(a, a->round, m, result + OFF(blk) * a->esize, OFF(blk + 1) - OFF(blk));
    }
    a->round++;
  }
#undef OFF
}

/* ---- linear (Open MPI's basic_linear): every member sends its vector to the root, which combines them in member
 * order: one wait per member, where the binomial tree's levels each wait for a rank to be scheduled when ranks
 * outnumber cores. Measured on 2 cores, 8 B: 8 ranks 21.8-24.4 us against 25.1-29.6 us by the binomial tree, but
 * 4 ranks 8.9-11.9 us against 7.7-9.4 us (two levels only), so only from 5 members (doc/performance.md) ---- */

static void nm_red_linear(struct nm_ar_s *a, int root, const char *in, char *result)
{
  a->acc = a->r == root ? result : NULL;
  a->src = in;
  if (a->r == root && !(a->tmp = nm_coll_sched_alloc(a->s, (size_t)a->p * a->count * a->esize)))
    return; /* recorded: start fails */
  nm_coll_ar_linear_to(a, root);
}

/* ---- entry points ---- */

int nm_coll_reduce_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op,
                         enum nm_coll_reduce_algo_e algo, int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self) || root < 0 || root >= group->n ||
      op == NULL || op->combine == NULL || op->esize == 0 || (int)algo < 0 || algo >= NM_COLL_REDUCE_NALGOS ||
      (count > 0 && ((self == root && recvbuf == NULL) || (self != root && sendbuf == NULL))))
    return -NM_EINVAL;
  if (algo == NM_COLL_REDUCE_AUTO) {
    int err = nm_red_choose(group, group->n, count, op->esize, nm_coll_algo_oversubscribed(s), &algo);
    if (err)
      return err;
  }
  if (count == 0)
    return 0;
  struct nm_coll_op_s *cop = nm_coll_sched_alloc(s, sizeof(*cop));
  if (cop == NULL)
    return 0; /* recorded: start fails with -NM_ENOMEM */
  *cop = *op;
  const char *in = sendbuf ? sendbuf : recvbuf;
  struct nm_ar_s a = {s, group, group->n, self, cop, NULL, NULL, count, op->esize, round, NULL};
  if (a.p == 1) {
    if (in != recvbuf)
      nm_coll_sched_copy(s, a.round, recvbuf, in, count * a.esize);
  } else if (algo == NM_COLL_REDUCE_RS_GATHER) {
    nm_red_rs_gather(&a, root, in, recvbuf);
  } else if (algo == NM_COLL_REDUCE_LINEAR) {
    nm_red_linear(&a, root, in, recvbuf);
  } else {
    nm_red_binomial(&a, root, in, recvbuf);
  }
  if (next_round)
    *next_round = a.round;
  return 0;
}

int nm_coll_ireduce(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                    const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                    enum nm_coll_reduce_algo_e algo, nm_coll_sched_t **req)
{
  int err;
  nm_coll_sched_t *s = nm_coll_algo_new(session, tag, req, &err);
  if (s == NULL)
    return err;
  err = nm_coll_reduce_build(s, 0, group, self, root, sendbuf, recvbuf, count, op, algo, NULL);
  return nm_coll_algo_start(s, err, req);
}

int nm_coll_reduce(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                   const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                   enum nm_coll_reduce_algo_e algo)
{
  nm_coll_sched_t *s;
  int err = nm_coll_ireduce(session, group, self, root, sendbuf, recvbuf, count, op, tag, algo, &s);
  return err ? err : nm_coll_sched_wait(s);
}

/* ---- blocking, small vectors, linear: without a schedule (nm_coll_reduce_eager()) ---- */

int nm_coll_reduce_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op,
                         nm_tag_t tag, enum nm_coll_reduce_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref)
{
  if (!nm_coll_ar_eager_ok(session, group, self, count, op) || root < 0 || root >= group->n || (int)algo < 0 ||
      algo >= NM_COLL_REDUCE_NALGOS ||
      (algo == NM_COLL_REDUCE_AUTO && nm_red_choose(group, group->n, count, op->esize,
                                                    nm_core_job_oversubscribed(nm_session_get_core(session)), &algo)) ||
      algo != NM_COLL_REDUCE_LINEAR)
    return NM_COLL_NOT_TAKEN; /* (an invalid override: the builder reports it) */
  if ((self == root && !recvbuf) || (self != root && !sendbuf))
    return -NM_EINVAL;
  int err = nm_coll_ar_linear_eager(session, group, self, root, sendbuf ? sendbuf : recvbuf, recvbuf, count, op, tag,
                                    wait, wait_ref);
  if (err != NM_COLL_NOT_TAKEN && err != -NM_EINVAL)
    nm_coll_algo_end(session);
  return err;
}
