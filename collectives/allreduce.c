/**
 * @file allreduce.c
 * @brief Allreduce as native non-blocking collectives (nm_coll_reduce.h): recursive doubling, Rabenseifner's
 * reduce-scatter + allgather, ring; and the choice between them (issue 18, deliverable 1).
 *
 * Every algorithm accumulates into the receive vector itself and never copies the send vector (issue 18
 * deliverable 2): the first exchange receives the partner's data straight into the receive vector and combines
 * the send vector into it (nm_coll_ar_recv_merge()); later exchanges receive into one work vector, combined at
 * the start of the next round. Recursive doubling
 * and Rabenseifner pair an aligned group of members with the adjacent one, so combining (lower) op (higher) keeps
 * MPI's canonical order; the fold of non-power-of-two p pairs 2i with 2i + 1, which keeps the groups contiguous.
 * Ring combines block b in the order b + 1, ..., p - 1, 0, ..., b: commutative operators only. Linear (Open
 * MPI's basic_linear) combines at member 0, from the top member down.
 */
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include "nm_coll_algo.h"
#include "nm_coll_reduce_private.h"

#include <stdlib.h>
#include <string.h>

static const char *const nm_ar_names[NM_COLL_ALLREDUCE_NALGOS] = {"auto", "recursive_doubling", "rabenseifner",
                                                                 "ring", "linear"};

static int nm_ar_local(const struct nm_coll_local_s *l)
{
  const struct nm_coll_op_s *op = l->p;
  return op->combine(op->ref, l->src, l->dst, (nm_len_t)l->count);
}

/** inout = in op inout on @p count elements, when @p round starts. */
void nm_coll_ar_combine(struct nm_ar_s *a, int round, const void *in, void *inout, nm_len_t count)
{
  if (count == 0)
    return;
  struct nm_coll_local_s l = {.src = in, .dst = inout, .count = (int64_t)count, .p = (void *)a->op};
  nm_coll_sched_local(a->s, round, nm_ar_local, &l);
}

/** acc = (lower) op (higher) with the partner's data in tmp: acc = tmp op acc when the partner is lower (or the
 *  operator commutes), else tmp = acc op tmp, copied back into acc. */
void nm_coll_ar_merge(struct nm_ar_s *a, int round, int partner_lower, char *acc, char *tmp, nm_len_t count)
{
  if (partner_lower || a->op->commute) {
    nm_coll_ar_combine(a, round, tmp, acc, count);
  } else if (count > 0) {
    nm_coll_ar_combine(a, round, acc, tmp, count);
    nm_coll_sched_copy(a->s, round, acc, tmp, count * a->esize);
  }
}

const char *nm_coll_ar_own(const struct nm_ar_s *a, nm_len_t off)
{
  return (a->src ? a->src : a->acc) + off * a->esize;
}

void nm_coll_ar_recv_merge(struct nm_ar_s *a, int member, nm_len_t off, nm_len_t count)
{
  int lower = member < a->r;
  char *acc = a->acc + off * a->esize;
  if (a->src && (a->op->commute || !lower)) {
    /* acc = own op partner's: for a higher partner this is the canonical order, for a commutative op any is */
    nm_coll_ar_recv(a, a->round++, member, acc, count);
    nm_coll_ar_combine(a, a->round, a->src + off * a->esize, acc, count);
  } else {
    if (a->src) /* a lower partner and a non-commutative operator: acc must hold our operand */
      nm_coll_sched_copy(a->s, a->round, a->acc, a->src, a->count * a->esize);
    nm_coll_ar_recv(a, a->round++, member, a->tmp + off * a->esize, count);
    nm_coll_ar_merge(a, a->round, lower, acc, a->tmp + off * a->esize, count);
  }
  a->src = NULL;
}

void nm_coll_ar_send(struct nm_ar_s *a, int round, int member, const char *buf, nm_len_t count)
{
  if (count > 0)
    nm_coll_sched_send(a->s, round, nm_coll_algo_gate(a->group, member), buf, count * a->esize, 0);
}

void nm_coll_ar_recv(struct nm_ar_s *a, int round, int member, char *buf, nm_len_t count)
{
  if (count > 0)
    nm_coll_sched_recv(a->s, round, nm_coll_algo_gate(a->group, member), buf, count * a->esize);
}

/* ---- the fold of non-power-of-two p (MPICH): members 2i < 2 rem hand their vector to 2i + 1 ---- */

/** The member of new rank @p nr among the p' that remain. */
int nm_coll_ar_real(int nr, int rem) { return nr < rem ? nr * 2 + 1 : nr + rem; }

/** Fold; @return this member's new rank, or -1 if it waits for the result. */
int nm_coll_ar_fold(struct nm_ar_s *a, int rem)
{
  if (a->r >= 2 * rem)
    return a->r - rem;
  if (a->r % 2 == 0) {
    nm_coll_ar_send(a, a->round++, a->r + 1, nm_coll_ar_own(a, 0), a->count);
    a->src = NULL; /* the result comes back into acc (unfold) */
    return -1;
  }
  nm_coll_ar_recv_merge(a, a->r - 1, 0, a->count);
  return a->r / 2;
}

void nm_coll_ar_unfold(struct nm_ar_s *a, int rem)
{
  if (a->r >= 2 * rem)
    return;
  if (a->r % 2)
    nm_coll_ar_send(a, a->round++, a->r - 1, a->acc, a->count);
  else
    nm_coll_ar_recv(a, a->round++, a->r + 1, a->acc, a->count);
}

/* ---- recursive doubling ---- */

static void nm_ar_rd(struct nm_ar_s *a)
{
  int pof2 = nm_coll_algo_pof2(a->p), rem = a->p - pof2;
  int nr = nm_coll_ar_fold(a, rem);
  for (int mask = 1; nr >= 0 && mask < pof2; mask <<= 1) {
    int dst = nm_coll_ar_real(nr ^ mask, rem);
    nm_coll_ar_send(a, a->round, dst, nm_coll_ar_own(a, 0), a->count);
    nm_coll_ar_recv_merge(a, dst, 0, a->count);
  }
  nm_coll_ar_unfold(a, rem);
}

/* ---- Rabenseifner: recursive halving reduce-scatter, recursive doubling allgather (MPICH's index walk) ---- */

/** Offset (in elements) of block @p i of the p' blocks. */
static nm_len_t nm_ar_blk(const struct nm_ar_s *a, int pof2, int i) { return nm_coll_algo_block(a->count, pof2, i); }

int nm_coll_ar_halving(struct nm_ar_s *a, int nr, int pof2, int rem, struct nm_ar_walk_s *w)
{
  w->send_idx = w->recv_idx = 0;
  w->last_idx = pof2;
  for (w->mask = 1; w->mask < pof2; w->mask <<= 1) {
    int mask = w->mask, nd = nr ^ mask, dst = nm_coll_ar_real(nd, rem);
    nm_len_t so, sc, ro, rc;
    if (nr < nd) {
      w->send_idx = w->recv_idx + pof2 / (mask * 2);
      so = nm_ar_blk(a, pof2, w->send_idx), sc = nm_ar_blk(a, pof2, w->last_idx) - so;
      ro = nm_ar_blk(a, pof2, w->recv_idx), rc = nm_ar_blk(a, pof2, w->send_idx) - ro;
    } else {
      w->recv_idx = w->send_idx + pof2 / (mask * 2);
      so = nm_ar_blk(a, pof2, w->send_idx), sc = nm_ar_blk(a, pof2, w->recv_idx) - so;
      ro = nm_ar_blk(a, pof2, w->recv_idx), rc = nm_ar_blk(a, pof2, w->last_idx) - ro;
    }
    nm_coll_ar_send(a, a->round, dst, nm_coll_ar_own(a, so), sc);
    nm_coll_ar_recv_merge(a, dst, ro, rc); /* acc's other part is never read again: the allgather fills it */
    w->send_idx = w->recv_idx;
    if (mask * 2 < pof2)
      w->last_idx = w->recv_idx + pof2 / (mask * 2);
  }
  return w->recv_idx;
}

static void nm_ar_rabenseifner(struct nm_ar_s *a)
{
  int pof2 = nm_coll_algo_pof2(a->p), rem = a->p - pof2;
  int nr = nm_coll_ar_fold(a, rem);
  if (nr >= 0) {
    struct nm_ar_walk_s w;
    nm_coll_ar_halving(a, nr, pof2, rem, &w);
    int send_idx = w.send_idx, recv_idx, last_idx = w.last_idx;
    for (int mask = w.mask >> 1; mask > 0; mask >>= 1) {
      int nd = nr ^ mask, dst = nm_coll_ar_real(nd, rem);
      nm_len_t so, sc, ro, rc;
      if (nr < nd) {
        if (mask != pof2 / 2)
          last_idx = last_idx + pof2 / (mask * 2);
        recv_idx = send_idx + pof2 / (mask * 2);
        so = nm_ar_blk(a, pof2, send_idx), sc = nm_ar_blk(a, pof2, recv_idx) - so;
        ro = nm_ar_blk(a, pof2, recv_idx), rc = nm_ar_blk(a, pof2, last_idx) - ro;
      } else {
        recv_idx = send_idx - pof2 / (mask * 2);
        so = nm_ar_blk(a, pof2, send_idx), sc = nm_ar_blk(a, pof2, last_idx) - so;
        ro = nm_ar_blk(a, pof2, recv_idx), rc = nm_ar_blk(a, pof2, send_idx) - ro;
      }
      nm_coll_ar_send(a, a->round, dst, a->acc + so * a->esize, sc);
      nm_coll_ar_recv(a, a->round, dst, a->acc + ro * a->esize, rc);
      a->round++;
      if (nr > nd)
        send_idx = recv_idx;
    }
  }
  nm_coll_ar_unfold(a, rem);
}

/* ---- ring: p - 1 steps of reduce-scatter, p - 1 of allgather, one block each ---- */

static void nm_ar_ring(struct nm_ar_s *a)
{
  int p = a->p, r = a->r, right = (r + 1) % p, left = (r - 1 + p) % p;
#define BLK(i) nm_coll_algo_block(a->count, p, (i))
  const char *own = a->src; /* each block gets the own contribution once: where it is, no copy of it */
  for (int k = 0; k < p - 1; k++) { /* send block r - k (combined last step), receive block r - k - 1 */
    int sb = ((r - k) % p + p) % p, rb = ((r - k - 1) % p + p) % p;
    char *blk = a->acc + BLK(rb) * a->esize;
    nm_coll_ar_send(a, a->round, right, nm_coll_ar_own(a, BLK(sb)), BLK(sb + 1) - BLK(sb));
    a->src = NULL; /* from step 1 on, the block sent is the one combined in acc */
    nm_coll_ar_recv(a, a->round++, left, own ? blk : a->tmp, BLK(rb + 1) - BLK(rb));
    nm_coll_ar_combine(a, a->round, own ? own + BLK(rb) * a->esize : a->tmp, blk, BLK(rb + 1) - BLK(rb));
  }
  /* with a separate send vector, acc's block r is first written by the allgather's first step */
  for (int k = 0; k < p - 1; k++) { /* block r + 1 is complete here: pass the complete blocks on */
    int sb = ((r + 1 - k) % p + p) % p, rb = ((r - k) % p + p) % p;
    nm_coll_ar_send(a, a->round, right, a->acc + BLK(sb) * a->esize, BLK(sb + 1) - BLK(sb));
    nm_coll_ar_recv(a, a->round, left, a->acc + BLK(rb) * a->esize, BLK(rb + 1) - BLK(rb));
    a->round++;
  }
#undef BLK
}

/* ---- linear (Open MPI's basic_linear): every member sends its vector to member 0, which combines the p vectors
 * in member order and sends the result back. Member 0 handles 2 (p - 1) messages, but every member waits twice
 * whatever p: where ranks outnumber cores each round of recursive doubling waits for its partner to be scheduled,
 * and 8 ranks on 2 cores allreduced 8 B in 26-27 us this way (as MPI_Gather + MPI_Bcast) against 37-39 us by
 * recursive doubling (doc/performance.md, "Allreduce on an oversubscribed host"). ---- */

void nm_coll_ar_linear_to(struct nm_ar_s *a, int root)
{
  nm_len_t bytes = a->count * a->esize;
  if (a->r != root) {
    nm_coll_ar_send(a, a->round++, root, nm_coll_ar_own(a, 0), a->count);
    return;
  }
  /* member m's vector in slot m, then acc = v0 op (v1 op (... op v(p-1))) from the top down, which keeps MPI's
   * canonical order for any operator */
  char *slots = a->tmp;
  nm_coll_sched_copy(a->s, a->round, slots + (size_t)root * bytes, nm_coll_ar_own(a, 0), bytes);
  for (int m = 0; m < a->p; m++)
    if (m != root)
      nm_coll_ar_recv(a, a->round, m, slots + (size_t)m * bytes, a->count);
  a->round++;
  nm_coll_sched_copy(a->s, a->round, a->acc, slots + (size_t)(a->p - 1) * bytes, bytes);
  for (int m = a->p - 2; m >= 0; m--)
    nm_coll_ar_combine(a, a->round, slots + (size_t)m * bytes, a->acc, a->count);
  a->round++;
  a->src = NULL;
}

static void nm_ar_linear(struct nm_ar_s *a)
{
  nm_coll_ar_linear_to(a, 0);
  if (a->r != 0) { /* a round after the send: acc may be the send vector */
    nm_coll_ar_recv(a, a->round++, 0, a->acc, a->count);
    return;
  }
  for (int m = 1; m < a->p; m++)
    nm_coll_ar_send(a, a->round, m, a->acc, a->count);
  a->round++;
}

/* ---- choice ---- */

const char *nm_coll_allreduce_algo_name(enum nm_coll_allreduce_algo_e algo)
{
  return (int)algo >= 0 && algo < NM_COLL_ALLREDUCE_NALGOS ? nm_ar_names[algo] : NULL;
}

/** Costs of nm_coll_allreduce_build()'s documentation, step by step: each step's message priced by
 *  nm_coll_algo_msg_time(), so that a step above the rendezvous threshold pays its RTR's round trip (on tcp a
 *  64 KiB vector's two exchanges of recursive doubling go by rendezvous, the four halved ones of Rabenseifner's
 *  do not). Without a rendezvous cost these are the Hockney sums of the documentation. */
static double nm_ar_cost(enum nm_coll_allreduce_algo_e algo, int p, double m, const struct nm_coll_algo_net_s *net)
{
  int pof2 = nm_coll_algo_pof2(p), f = pof2 != p, lg = 0;
  while ((1 << lg) < pof2)
    lg++;
  switch (algo) {
  case NM_COLL_ALLREDUCE_RD:
    return (lg + 2 * f) * nm_coll_algo_msg_time(net, m);
  case NM_COLL_ALLREDUCE_RABENSEIFNER: {
    double t = 2 * f * nm_coll_algo_msg_time(net, m), part = m;
    for (int k = 0; k < lg; k++) { /* reduce-scatter halves, the allgather doubles back */
      part /= 2;
      t += 2 * nm_coll_algo_msg_time(net, part);
    }
    return t;
  }
  case NM_COLL_ALLREDUCE_LINEAR:
    return 2 * (p - 1) * nm_coll_algo_msg_time(net, m);
  default:
    return 2 * (p - 1) * nm_coll_algo_msg_time(net, m / p);
  }
}

/* The rule once the override is known (@p forced, 0: auto), on the network @p net, or @p session's when @p net is
 * NULL (read only when the model is needed: not for a forced or an oversubscribed small choice). */
static int nm_ar_rule(int forced, int p, nm_len_t count, const struct nm_coll_op_s *op, int job_oversubscribed,
                      nm_session_t session, const struct nm_coll_algo_net_s *net,
                      enum nm_coll_allreduce_algo_e *algo)
{
  if (forced) {
    *algo = forced == NM_COLL_ALLREDUCE_RING && !op->commute ? NM_COLL_ALLREDUCE_RD
                                                              : (enum nm_coll_allreduce_algo_e)forced;
    return 0;
  }
  double m = (double)count * (double)op->esize;
  *algo = NM_COLL_ALLREDUCE_RD;
  if (p > 2 && m <= NM_COLL_ALLREDUCE_OVERSUB_LINEAR_UPTO && job_oversubscribed) {
    *algo = NM_COLL_ALLREDUCE_LINEAR;
    return 0;
  }
  if (p <= 2 || m <= 2048 || count < (nm_len_t)p)
    return 0;
  struct nm_coll_algo_net_s session_net;
  if (net == NULL) {
    nm_coll_algo_net(session, &session_net);
    net = &session_net;
  }
  double best = nm_ar_cost(NM_COLL_ALLREDUCE_RD, p, m, net);
  /* linear is the oversubscribed host's choice above; on one port per member it costs 2 (p - 1) messages */
  for (int x = NM_COLL_ALLREDUCE_RABENSEIFNER; x <= NM_COLL_ALLREDUCE_RING; x++) {
    double c = nm_ar_cost((enum nm_coll_allreduce_algo_e)x, p, m, net);
    if ((x != NM_COLL_ALLREDUCE_RING || op->commute) && c < best) {
      best = c;
      *algo = (enum nm_coll_allreduce_algo_e)x;
    }
  }
  return 0;
}

/* The choice with the override of @p group (NULL: the environment's), on @p net or @p session's network. */
static int nm_ar_choose(const struct nm_coll_group_s *group, nm_session_t session, int p, nm_len_t count,
                        const struct nm_coll_op_s *op, int job_oversubscribed, const struct nm_coll_algo_net_s *net,
                        enum nm_coll_allreduce_algo_e *algo)
{
  int forced, err;
  if (p < 1 || op == NULL || algo == NULL)
    return -NM_EINVAL;
  err = nm_coll_algo_forced(group, NM_COLL_FAMILY_ALLREDUCE, nm_ar_names, NM_COLL_ALLREDUCE_NALGOS, &forced);
  if (err)
    return err;
  return nm_ar_rule(forced, p, count, op, job_oversubscribed, session, net, algo);
}

int nm_coll_allreduce_choose(nm_session_t session, int p, nm_len_t count, const struct nm_coll_op_s *op,
                             enum nm_coll_allreduce_algo_e *algo)
{
  int oversubscribed = session ? nm_core_job_oversubscribed(nm_session_get_core(session)) : 0;
  return nm_coll_allreduce_choose_job(session, p, count, op, oversubscribed, algo);
}

int nm_coll_allreduce_choose_job(nm_session_t session, int p, nm_len_t count, const struct nm_coll_op_s *op,
                                 int job_oversubscribed, enum nm_coll_allreduce_algo_e *algo)
{
  return nm_ar_choose(NULL, session, p, count, op, job_oversubscribed, NULL, algo);
}

int nm_coll_allreduce_choose_net(int p, nm_len_t count, const struct nm_coll_op_s *op, int job_oversubscribed,
                                 const struct nm_coll_algo_net_s *net, enum nm_coll_allreduce_algo_e *algo)
{
  if (net == NULL)
    return -NM_EINVAL;
  return nm_ar_choose(NULL, NULL, p, count, op, job_oversubscribed, net, algo);
}

/* ---- entry points ---- */

int nm_coll_allreduce_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                            const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op,
                            enum nm_coll_allreduce_algo_e algo, int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self) || op == NULL || op->combine == NULL ||
      op->esize == 0 || (count > 0 && recvbuf == NULL) || (int)algo < 0 || algo >= NM_COLL_ALLREDUCE_NALGOS)
    return -NM_EINVAL;
  if (algo == NM_COLL_ALLREDUCE_AUTO) {
    int err = nm_ar_choose(group, nm_coll_sched_session(s), group->n, count, op, nm_coll_algo_oversubscribed(s),
                           NULL, &algo);
    if (err)
      return err;
  }
  if (algo == NM_COLL_ALLREDUCE_RING && !op->commute)
    algo = NM_COLL_ALLREDUCE_RD;
  if (count == 0)
    return 0;
  struct nm_coll_op_s *cop = nm_coll_sched_alloc(s, sizeof(*cop));
  if (cop == NULL)
    return 0; /* recorded: start fails with -NM_ENOMEM */
  *cop = *op;
  struct nm_ar_s a = {s, group, group->n, self, cop, recvbuf, NULL, count, op->esize, round, NULL};
  /* the send vector is read where it is: the first exchange combines it into recvbuf (no copy of it) */
  if (sendbuf && sendbuf != recvbuf)
    a.src = sendbuf;
  if (a.p == 1 && a.src)
    nm_coll_sched_copy(s, a.round, a.acc, a.src, count * a.esize);
  if (a.p > 1) {
    nm_len_t work = algo == NM_COLL_ALLREDUCE_LINEAR ? (self == 0 ? (nm_len_t)a.p * count : 0)
                    : algo != NM_COLL_ALLREDUCE_RING ? count
                    : a.src ? 0 : nm_coll_algo_block(count, a.p, 1);
    a.tmp = nm_coll_sched_alloc(s, work * a.esize);
    if (algo == NM_COLL_ALLREDUCE_LINEAR)
      nm_ar_linear(&a);
    else if (algo == NM_COLL_ALLREDUCE_RING)
      nm_ar_ring(&a);
    else if (algo == NM_COLL_ALLREDUCE_RABENSEIFNER)
      nm_ar_rabenseifner(&a);
    else
      nm_ar_rd(&a);
  }
  if (next_round)
    *next_round = a.round;
  return 0;
}

int nm_coll_iallreduce(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                       void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                       enum nm_coll_allreduce_algo_e algo, nm_coll_sched_t **req)
{
  int err;
  nm_coll_sched_t *s = nm_coll_algo_new(session, tag, req, &err);
  if (s == NULL)
    return err;
  err = nm_coll_allreduce_build(s, 0, group, self, sendbuf, recvbuf, count, op, algo, NULL);
  return nm_coll_algo_start(s, err, req);
}

int nm_coll_allreduce(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                      void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                      enum nm_coll_allreduce_algo_e algo)
{
  nm_coll_sched_t *s;
  int err = nm_coll_iallreduce(session, group, self, sendbuf, recvbuf, count, op, tag, algo, &s);
  return err ? err : nm_coll_sched_wait(s);
}

/* ---- blocking, small vectors, linear: without a schedule (nm_coll_allreduce_eager(), nm_coll_reduce_eager()) ---- */

int nm_coll_ar_linear_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                            const char *in, char *acc, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                            nm_coll_wait_fn_t wait, void *wait_ref)
{
  int p = group->n, err = 0;
  nm_len_t bytes = count * op->esize;
  nm_gate_t gate[NM_COLL_EAGER_PEERS];
  for (int m = 0, i = 0; m < p; m++) /* every gate first: a bad group posts nothing, as a schedule */
    if (m != self && (self == root || m == root) && !(gate[i++] = nm_coll_algo_gate(group, m)))
      return -NM_EINVAL;
  if (self != root) {
    nm_coll_algo_exchange(session, tag, gate[0], in, bytes, NULL, NULL, 0, wait, wait_ref, &err);
    return err;
  }
  /* the p slots on the stack when they fit (4 members of 1 KiB), else on the heap: no allocation per call for the
   * small reductions this path is for */
  char stack_slots[NM_COLL_AR_EAGER_STACK];
  char *slots = (size_t)p * bytes <= sizeof(stack_slots) ? stack_slots : malloc((size_t)p * bytes);
  if (!slots)
    return NM_COLL_NOT_TAKEN;
  memcpy(slots + (size_t)root * bytes, in, bytes);
  nm_sr_request_t req[NM_COLL_EAGER_PEERS];
  int posted = 0;
  for (int m = 0, i = 0; m < p; m++)
    if (m != root)
      posted += nm_coll_algo_recv(session, gate[i++], tag, slots + (size_t)m * bytes, bytes, &req[posted], &err);
  nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
  memcpy(acc, slots + (size_t)(p - 1) * bytes, bytes);
  for (int m = p - 2; m >= 0; m--) /* MPI's canonical order for any operator, as nm_coll_ar_linear_to() */
    nm_coll_algo_keep(&err, op->combine(op->ref, slots + (size_t)m * bytes, acc, count));
  if (slots != stack_slots)
    free(slots);
  return err;
}

int nm_coll_allreduce_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                            void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                            enum nm_coll_allreduce_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref)
{
  if (!nm_coll_ar_eager_ok(session, group, self, count, op) || (int)algo < 0 || algo >= NM_COLL_ALLREDUCE_NALGOS ||
      (algo == NM_COLL_ALLREDUCE_AUTO &&
       nm_ar_choose(group, session, group->n, count, op, nm_core_job_oversubscribed(nm_session_get_core(session)),
                    NULL, &algo)) ||
      (algo != NM_COLL_ALLREDUCE_LINEAR && !(algo == NM_COLL_ALLREDUCE_RD && group->n == 2)))
    return NM_COLL_NOT_TAKEN; /* (an invalid override: the builder reports it) */
  if (!recvbuf)
    return -NM_EINVAL;
  const char *in = sendbuf ? sendbuf : recvbuf;
  if (algo == NM_COLL_ALLREDUCE_RD) {
    /* 2 members: recursive doubling's one exchange (nm_ar_rd()'s messages), each combining v0 op v1 (MPI's order;
     * the schedule's own op partner's is the same bits for a commutative operator). Why: on a schedule the
     * exchange cost 0.24 us at 8 B, against Open MPI's 0.17 (2 ranks bound; doc/performance.md, issue 18). */
    int other = 1 - self, err = 0;
    nm_gate_t gate = nm_coll_algo_gate(group, other);
    if (!gate)
      return -NM_EINVAL;
    nm_len_t bytes = count * op->esize;
    _Alignas(64) char theirs[NM_COLL_EAGER_MAX]; /* the operator reads it as elements */
    nm_coll_algo_exchange(session, tag, gate, in, bytes, gate, theirs, bytes, wait, wait_ref, &err);
    if (!err && self == 0) {
      nm_coll_algo_keep(&err, op->combine(op->ref, in, theirs, count));
      memcpy(recvbuf, theirs, bytes);
    } else if (!err) {
      if (in != recvbuf)
        memcpy(recvbuf, in, bytes);
      nm_coll_algo_keep(&err, op->combine(op->ref, theirs, recvbuf, count));
    }
    nm_coll_algo_end(session);
    return err;
  }
  /* nm_ar_linear(): the reduction to member 0, then its result to every member (after the send: in place, the
   * receive vector is the send vector) */
  int err = nm_coll_ar_linear_eager(session, group, self, 0, in, recvbuf, count, op, tag, wait, wait_ref);
  if (err == NM_COLL_NOT_TAKEN || err == -NM_EINVAL)
    return err; /* nothing posted */
  nm_len_t bytes = count * op->esize;
  if (self != 0) {
    nm_coll_algo_exchange(session, tag, NULL, NULL, 0, nm_coll_algo_gate(group, 0), recvbuf, bytes, wait, wait_ref,
                          &err);
  } else {
    nm_sr_request_t req[NM_COLL_EAGER_PEERS];
    int posted = 0;
    for (int m = 1; m < group->n; m++)
      posted += nm_coll_algo_send_eager(session, nm_coll_algo_gate(group, m), tag, recvbuf, bytes, &req[posted], &err);
    nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
  }
  nm_coll_algo_end(session);
  return err;
}
