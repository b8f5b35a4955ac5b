/**
 * @file nm_coll_reduce_private.h
 * @brief Private to the reduction family (collectives/allreduce.c, reduce.c): one reduction build and the steps
 * they share (combine, order-keeping merge, the fold of non-power-of-two p, the recursive-halving
 * reduce-scatter of Rabenseifner's algorithm).
 */
#ifndef NM_COLL_REDUCE_PRIVATE_H
#define NM_COLL_REDUCE_PRIVATE_H

#include <nmad/nm_coll_reduce.h>
#include "nm_coll_algo.h"

/** One build. */
struct nm_ar_s {
  nm_coll_sched_t *s;
  const struct nm_coll_group_s *group;
  int p, r;                      /* members, own index */
  const struct nm_coll_op_s *op; /* the schedule's copy */
  char *acc;                     /* the receive vector: accumulates */
  char *tmp;                     /* work vector for the partners' data */
  nm_len_t count, esize;
  int round;
  const char *src; /* this member's own vector while it is not yet in acc (no copy: issue 18 deliverable 2),
                      else NULL; the first exchange combines it with the partner's data straight into acc */
};

/** Where the recursive-halving index walk ends (MPICH's send_idx, recv_idx, last_idx, mask). */
struct nm_ar_walk_s {
  int send_idx, recv_idx, last_idx, mask;
};

/** inout = in op inout on @p count elements, when @p round starts. */
void nm_coll_ar_combine(struct nm_ar_s *a, int round, const void *in, void *inout, nm_len_t count);
/** acc = (lower) op (higher), the partner's data in @p tmp (copied back into acc when the partner is higher and
 *  the operator does not commute). */
void nm_coll_ar_merge(struct nm_ar_s *a, int round, int partner_lower, char *acc, char *tmp, nm_len_t count);
/** Where this member's current data at element @p off is read from: a->src before the first exchange, a->acc
 *  after. */
const char *nm_coll_ar_own(const struct nm_ar_s *a, nm_len_t off);
/** The receive half of an exchange in a->round with @p member (its send already appended): the partner's
 *  @p count elements at element @p off are combined with this member's into a->acc + off, (lower) op (higher),
 *  from a->round + 1 on (a->round is advanced). Before the first exchange (a->src set) they are received straight
 *  into acc and a->src is combined into them, when the order allows it (commutative operator or higher partner);
 *  otherwise a->src is first copied into acc. Afterwards a->src is NULL. */
void nm_coll_ar_recv_merge(struct nm_ar_s *a, int member, nm_len_t off, nm_len_t count);
/** Send / receive @p count elements (nothing for 0). */
void nm_coll_ar_send(struct nm_ar_s *a, int round, int member, const char *buf, nm_len_t count);
void nm_coll_ar_recv(struct nm_ar_s *a, int round, int member, char *buf, nm_len_t count);
/** The member of new rank @p nr after the fold of rem = p - p' members. */
int nm_coll_ar_real(int nr, int rem);
/** The fold (MPICH): members 2i < 2 rem hand a->acc to 2i + 1, which combines. @return this member's new rank,
 *  or -1 if it is folded out. */
int nm_coll_ar_fold(struct nm_ar_s *a, int rem);
/** Give the result back to the folded-out members (a->acc). */
void nm_coll_ar_unfold(struct nm_ar_s *a, int rem);
/** Rabenseifner's reduce-scatter by recursive halving among the p' members (new rank @p nr): a->acc's block
 *  nm_coll_algo_block(count, p', i) of the returned index i ends combined over all members, in order.
 *  @param[out] w where the walk ended (for the allgather that follows). */
int nm_coll_ar_halving(struct nm_ar_s *a, int nr, int pof2, int rem, struct nm_ar_walk_s *w);

/** Linear reduction to member @p root (Open MPI's basic_linear): every other member sends its vector (a->src, or
 *  a->acc in place) to the root in a->round; the root receives them into a->tmp (p vectors), then in the next
 *  round combines them in member order into a->acc. a->round ends after this member's part. */
void nm_coll_ar_linear_to(struct nm_ar_s *a, int root);

/** Bytes of the root's slots nm_coll_ar_linear_eager() keeps on the stack (more: on the heap). */
#define NM_COLL_AR_EAGER_STACK 8192

/** The checks the blocking small reductions share (nm_coll_reduce_eager(), nm_coll_allreduce_eager()): a group
 *  nm_coll_algo_eager_ok() takes, an operator, and a vector of 1 to NM_COLL_EAGER_MAX bytes. */
static inline int nm_coll_ar_eager_ok(nm_session_t session, const struct nm_coll_group_s *group, int self,
                                      nm_len_t count, const struct nm_coll_op_s *op)
{
  return nm_coll_algo_eager_ok(session, group, self, NM_COLL_EAGER_PEERS) && op && op->combine && op->esize > 0 &&
         count > 0 && count * op->esize <= NM_COLL_EAGER_MAX;
}

/** nm_coll_ar_linear_to() without a schedule, for the blocking small reductions (nm_coll_reduce_eager(),
 *  nm_coll_allreduce_eager()): a member other than @p root sends @p in (count elements) to the root; the root
 *  receives every member's vector into a scratch vector of p slots (its own copied from @p in), then combines them
 *  in member order into @p acc (acc = v0 op (v1 op (... op v(p-1)))). Same messages as the schedule's.
 *  @return 0, NM_COLL_NOT_TAKEN (no memory for the root's slots: nothing posted), -NM_EINVAL (a NULL gate: nothing
 *  posted), or the first error of the messages and combines. */
int nm_coll_ar_linear_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                            const char *in, char *acc, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                            nm_coll_wait_fn_t wait, void *wait_ref);

/** nm_coll_allreduce_choose_job() on the network @p net (tests give one; the library reads the session's).
 *  @return 0 or -NM_EINVAL. Thread-safety: any thread. */
int nm_coll_allreduce_choose_net(int p, nm_len_t count, const struct nm_coll_op_s *op, int job_oversubscribed,
                                 const struct nm_coll_algo_net_s *net, enum nm_coll_allreduce_algo_e *algo);

#endif /* NM_COLL_REDUCE_PRIVATE_H */
