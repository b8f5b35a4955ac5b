/**
 * @file reduce_scatter.c
 * @brief Reduce-scatter as native non-blocking collectives (nm_coll_reduce.h; issue 18 deliverable 1): recursive
 * halving and pairwise exchange for commutative operators (MPICH's two algorithms, Thakur, Rabenseifner and Gropp
 * 2005, section 4.4), a reduce to member 0 followed by the pieces for non-commutative ones; and the choice.
 *
 * Recursive halving on p' = 2^floor(log2 p) members after the fold of the others (members 2i < 2 rem hand their
 * vector to 2i + 1): new rank i owns the pieces of its real members, which are contiguous in member order, so the
 * p' "blocks" are ranges of the vector; with the mask going down from p' / 2, the lower partner keeps the lower
 * half of the blocks it still holds, and new rank i ends with block i. The groups combined at a step are not
 * ranges of consecutive members, hence commutative operators only.
 *
 * No copy of the send vector: the first exchange receives the partner's part straight into the work vector and
 * combines the send vector into it (nm_coll_ar_recv_merge()); only the own piece is copied to the receive buffer
 * at the end.
 */
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_errno.h>
#include "nm_coll_algo.h"
#include "nm_coll_reduce_private.h"

#include <string.h>

static const char *const nm_rs_names[NM_COLL_REDUCE_SCATTER_NALGOS] = {"auto", "recursive_halving", "pairwise",
                                                                      "reduce_then_scatter"};

const char *nm_coll_reduce_scatter_algo_name(enum nm_coll_reduce_scatter_algo_e algo)
{
  return (int)algo >= 0 && algo < NM_COLL_REDUCE_SCATTER_NALGOS ? nm_rs_names[algo] : NULL;
}

/* nm_coll_reduce_scatter_choose() with the override of @p group (NULL: the environment's). */
static int nm_rs_choose(const struct nm_coll_group_s *group, nm_len_t total_bytes, int commute,
                        enum nm_coll_reduce_scatter_algo_e *algo)
{
  int forced, err = nm_coll_algo_forced(group, NM_COLL_FAMILY_REDUCE_SCATTER, nm_rs_names,
                                        NM_COLL_REDUCE_SCATTER_NALGOS, &forced);
  if (err)
    return err;
  if (!commute)
    *algo = NM_COLL_REDUCE_SCATTER_REDUCE_THEN_SCATTER; /* a forced halving / pairwise included */
  else if (forced)
    *algo = (enum nm_coll_reduce_scatter_algo_e)forced;
  else
    *algo = total_bytes < 524288 ? NM_COLL_REDUCE_SCATTER_HALVING : NM_COLL_REDUCE_SCATTER_PAIRWISE;
  return 0;
}

int nm_coll_reduce_scatter_choose(int p, nm_len_t total_bytes, int commute,
                                  enum nm_coll_reduce_scatter_algo_e *algo)
{
  (void)p; /* the rule does not depend on it (MPICH's) */
  return nm_rs_choose(NULL, total_bytes, commute, algo);
}

/* ---- recursive halving ---- */

static void nm_rs_halving(struct nm_ar_s *a, const nm_len_t *off, char *recvbuf)
{
  int p = a->p, r = a->r, pof2 = nm_coll_algo_pof2(p), rem = p - pof2;
  const nm_len_t mine = off[r + 1] - off[r];
  int nr = nm_coll_ar_fold(a, rem);
  if (nr < 0) { /* folded out: r + 1 sends this member's piece when done */
    nm_coll_ar_recv(a, a->round++, r + 1, recvbuf, mine);
    return;
  }
  /* blocks of the new ranks: new rank i < rem holds the pieces of 2i and 2i + 1, the others of i + rem */
#define BOFF(i) ((i) >= pof2 ? off[p] : off[(i) < rem ? 2 * (i) : (i) + rem])
  int lo = 0, hi = pof2;
  for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
    int partner = nr ^ mask, dst = nm_coll_ar_real(partner, rem), mid = lo + mask;
    int keep_lo = nr < partner ? lo : mid, keep_hi = nr < partner ? mid : hi;
    int give_lo = nr < partner ? mid : lo, give_hi = nr < partner ? hi : mid;
    nm_coll_ar_send(a, a->round, dst, nm_coll_ar_own(a, BOFF(give_lo)), BOFF(give_hi) - BOFF(give_lo));
    nm_coll_ar_recv_merge(a, dst, BOFF(keep_lo), BOFF(keep_hi) - BOFF(keep_lo));
    lo = keep_lo;
    hi = keep_hi;
  }
#undef BOFF
  if (nr < rem) /* the folded-out member 2 nr's piece */
    nm_coll_ar_send(a, a->round++, r - 1, nm_coll_ar_own(a, off[r - 1]), off[r] - off[r - 1]);
  /* a round of its own: in place, the copy may overwrite the piece just sent */
  if (mine > 0)
    nm_coll_sched_copy(a->s, a->round++, recvbuf, nm_coll_ar_own(a, off[r]), mine * a->esize);
}

/* ---- pairwise: in step k, send member r + k its piece of the own vector, receive member r - k's contribution
 * to the own piece, combine (p - 1 steps, one piece in flight each way) ---- */

static void nm_rs_pairwise(struct nm_ar_s *a, const nm_len_t *off, char *piece, int in_place)
{
  int p = a->p, r = a->r;
  const nm_len_t mine = off[r + 1] - off[r];
  const char *own = a->src ? a->src : a->acc; /* the whole own vector, never written here */
  for (int k = 1; k < p; k++) {
    int to = (r + k) % p, from = (r - k + p) % p;
    nm_coll_ar_send(a, a->round, to, own + off[to] * a->esize, off[to + 1] - off[to]);
    if (k == 1 && !in_place) { /* the first contribution straight into the piece, the own one combined into it */
      nm_coll_ar_recv(a, a->round++, from, piece, mine);
      nm_coll_ar_combine(a, a->round, own + off[r] * a->esize, piece, mine);
    } else {
      nm_coll_ar_recv(a, a->round++, from, a->tmp, mine);
      nm_coll_ar_combine(a, a->round, a->tmp, piece, mine);
    }
  }
}

/* ---- non-commutative: reduce to member 0 (order-keeping), then member 0 sends each member its piece ---- */

static int nm_rs_reduce_then_scatter(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                                     const void *in, void *recvbuf, const nm_len_t *off,
                                     const struct nm_coll_op_s *op, int *next_round)
{
  nm_len_t total = off[group->n];
  char *result = self == 0 ? nm_coll_sched_alloc(s, total * op->esize) : NULL;
  if (self == 0 && result == NULL)
    return 0; /* recorded: start fails */
  int err = nm_coll_reduce_build(s, round, group, self, 0, in, result, total, op, NM_COLL_REDUCE_AUTO, &round);
  if (err)
    return err;
  if (self == 0) {
    for (int i = 0; i < group->n; i++) {
      nm_len_t n = off[i + 1] - off[i];
      if (n == 0)
        continue;
      if (i == 0)
        nm_coll_sched_copy(s, round, recvbuf, result, n * op->esize);
      else
        nm_coll_sched_send(s, round, nm_coll_algo_gate(group, i), result + off[i] * op->esize, n * op->esize, 0);
    }
    round++;
  } else if (off[self + 1] > off[self]) {
    nm_coll_sched_recv(s, round++, nm_coll_algo_gate(group, 0), recvbuf, (off[self + 1] - off[self]) * op->esize);
  }
  *next_round = round;
  return 0;
}

int nm_coll_reduce_scatter_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                                 const void *sendbuf, void *recvbuf, const nm_len_t counts[],
                                 const struct nm_coll_op_s *op, enum nm_coll_reduce_scatter_algo_e algo,
                                 int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self) || counts == NULL || op == NULL ||
      op->combine == NULL || op->esize == 0 || (int)algo < 0 || algo >= NM_COLL_REDUCE_SCATTER_NALGOS)
    return -NM_EINVAL;
  int p = group->n;
  nm_len_t *off = nm_coll_sched_alloc(s, sizeof(nm_len_t) * (size_t)(p + 1));
  if (off == NULL)
    return 0; /* recorded: start fails */
  off[0] = 0;
  for (int i = 0; i < p; i++)
    off[i + 1] = off[i] + counts[i];
  nm_len_t total = off[p], mine = counts[self];
  if (total == 0)
    return 0;
  if ((mine > 0 || sendbuf == NULL) && recvbuf == NULL)
    return -NM_EINVAL;
  int err = 0;
  if (algo == NM_COLL_REDUCE_SCATTER_AUTO || !op->commute)
    err = nm_rs_choose(group, total * op->esize, op->commute, &algo);
  if (err)
    return err;
  int in_place = sendbuf == NULL || sendbuf == recvbuf;
  const char *in = in_place ? recvbuf : sendbuf;
  if (algo == NM_COLL_REDUCE_SCATTER_REDUCE_THEN_SCATTER)
    return nm_rs_reduce_then_scatter(s, round, group, self, in, recvbuf, off, op, next_round ? next_round : &round);
  struct nm_coll_op_s *cop = nm_coll_sched_alloc(s, sizeof(*cop));
  if (cop == NULL)
    return 0;
  *cop = *op;
  struct nm_ar_s a = {s, group, p, self, cop, NULL, NULL, total, op->esize, round, NULL};
  if (p == 1) {
    if (!in_place)
      nm_coll_sched_copy(s, a.round++, recvbuf, in, total * a.esize);
  } else if (algo == NM_COLL_REDUCE_SCATTER_PAIRWISE) {
    /* in place the own piece accumulates where it lies (the others are only read), then moves to the start */
    char *piece = in_place ? (char *)recvbuf + off[self] * a.esize : recvbuf;
    a.src = in;
    a.tmp = nm_coll_sched_alloc(s, (mine ? mine : 1) * a.esize);
    if (mine == 0)
      piece = a.tmp; /* nothing received: any place */
    nm_rs_pairwise(&a, off, piece, in_place);
    if (in_place && off[self] > 0 && mine > 0)
      nm_coll_sched_copy(s, a.round++, recvbuf, piece, mine * a.esize);
  } else {
    /* in place the vector is worked on where it lies; else in a work vector the send vector is combined into */
    a.acc = in_place ? recvbuf : nm_coll_sched_alloc(s, total * a.esize);
    a.tmp = nm_coll_sched_alloc(s, total * a.esize);
    a.src = in_place ? NULL : in;
    if (a.acc && a.tmp)
      nm_rs_halving(&a, off, recvbuf);
  }
  if (next_round)
    *next_round = a.round;
  return 0;
}
