/**
 * @file nm_coll_reduce.h
 * @brief Reductions as native non-blocking collectives over a group of gates (issue 17 deliverable 1, issue 18
 * deliverable 1): the MPI shim's MPI_Allreduce / MPI_Iallreduce run these builders, with MPI's datatypes and
 * operators turned into a combine function (nmad/mpi/mpi_coll.c); the native API needs no MPI type.
 *
 * Data are contiguous arrays of @c count elements of @c op->esize bytes. A reduction operator is a caller's
 * function combining two such arrays element-wise, in MPI's convention: inout[i] = in[i] op inout[i], @p in being
 * the operand of the lower-ranked members. Every algorithm combines contiguous blocks of whole elements.
 *
 * Order: with a non-commutative operator (op->commute == 0) the result is x0 op x1 op ... op x(p-1) (members in
 * group order), the canonical order of MPI-3.1 section 5.9.1; recursive doubling and Rabenseifner's algorithm
 * always combine (lower members) op (higher members), ring needs a commutative operator (a non-commutative one
 * runs recursive doubling instead). Every member ends with bitwise the same result.
 *
 * Thread-safety: like the core (nm_coll_sched.h); the combine function runs inside the core's progress, under the
 * core lock: it must not call nmad.
 */
#ifndef NM_COLL_REDUCE_H
#define NM_COLL_REDUCE_H

#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Combine @p count elements: inout[i] = in[i] op inout[i] (in: the lower-ranked operand).
 *  @return 0, or an error kept as the collective's error (the caller's convention, see nm_coll_sched_error()). */
typedef int (*nm_coll_combine_fn_t)(void *ref, const void *in, void *inout, nm_len_t count);

/** A reduction operator on elements of @c esize bytes. Copied by the builders: it need not outlive the call, but
 *  @c ref must live until the collective completes. */
struct nm_coll_op_s {
  nm_coll_combine_fn_t combine;
  void *ref;      /**< passed to combine */
  nm_len_t esize; /**< bytes per element, >= 1 */
  int commute;    /**< nonzero: operands may be combined in either order */
};

/** Allreduce algorithms (names for NMAD_ALLREDUCE_ALGO in comments). */
enum nm_coll_allreduce_algo_e {
  NM_COLL_ALLREDUCE_AUTO = 0,     /**< "auto": NMAD_ALLREDUCE_ALGO, else nm_coll_allreduce_choose() */
  NM_COLL_ALLREDUCE_RD,           /**< "recursive_doubling": log2(p) exchanges of the whole vector (MPICH's
                                       small-message algorithm; p not a power of two: the first 2 (p - p') members
                                       fold pairwise first, p' = 2^floor(log2 p)) */
  NM_COLL_ALLREDUCE_RABENSEIFNER, /**< "rabenseifner": reduce-scatter by recursive halving, then allgather by
                                       recursive doubling (Rabenseifner 2004; MPICH's large-message algorithm),
                                       the same fold for p not a power of two */
  NM_COLL_ALLREDUCE_RING,         /**< "ring": ring reduce-scatter then ring allgather of p blocks (commutative
                                       operators only) */
  NM_COLL_ALLREDUCE_LINEAR,       /**< "linear": every member sends to member 0, which combines in member order
                                       and sends the result to all (Open MPI's basic_linear): 2 (p - 1) messages
                                       through member 0, two waits per member; the choice for small vectors when
                                       ranks outnumber cores */
  NM_COLL_ALLREDUCE_NALGOS
};

/** Bytes up to which a job with more ranks than cores allreduces linearly (nm_coll_allreduce_choose()). */
#define NM_COLL_ALLREDUCE_OVERSUB_LINEAR_UPTO 2048

/**
 * @brief Append this member's part of an allreduce to schedule @p s from round @p round on.
 * Costs (p members, m bytes, Hockney alpha and beta, combining not counted; p' = 2^floor(log2 p), f = 1 when p is
 * not a power of two, else 0):
 *  - recursive doubling: (log2 p' + 2f)(alpha + m beta);
 *  - Rabenseifner: 2 (log2 p' + f) alpha + (2 (p' - 1) / p' + 2f) m beta;
 *  - ring: 2 (p - 1) alpha + 2 ((p - 1) / p) m beta;
 *  - linear: 2 (p - 1)(alpha + m beta) at member 0 (its worth is elsewhere: two waits per member where ranks
 *    outnumber cores), member 0 holding p vectors meanwhile.
 * @param group p >= 1 members (nm_coll.h); @param self this member's index; @param sendbuf @p count elements of
 * this member, or NULL (or == @p recvbuf) for in place: the data are then in @p recvbuf; @param recvbuf @p count
 * elements: the result on every member; @param op the operator (copied into @p s); @param algo an algorithm or
 * NM_COLL_ALLREDUCE_AUTO; @param next_round out (may be NULL): the first round after this member's operations.
 * @return 0, or -NM_EINVAL (bad argument, invalid NMAD_ALLREDUCE_ALGO) before anything is appended.
 * Memory: one work vector of m bytes (Rabenseifner, recursive doubling) or of m / p bytes (ring in place; none
 * with a separate send vector), freed with @p s. The send vector is read where it is, never copied (issue 18
 * deliverable 2): the first exchange combines it into @p recvbuf.
 */
int nm_coll_allreduce_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                            const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op,
                            enum nm_coll_allreduce_algo_e algo, int *next_round);

/** @brief Non-blocking allreduce: builds and starts a schedule with tag @p tag on @p session (every member
 *  calls it with the same count, operator, algorithm and tag). Complete it with nm_coll_sched_wait(*req).
 *  @return 0, -NM_EINVAL, -NM_ENOMEM; communication errors come from the wait. */
int nm_coll_iallreduce(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                       void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                       enum nm_coll_allreduce_algo_e algo, nm_coll_sched_t **req);

/** @brief Blocking allreduce: nm_coll_iallreduce() then nm_coll_sched_wait(). @return 0 or the first error. */
int nm_coll_allreduce(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                      void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                      enum nm_coll_allreduce_algo_e algo);

/**
 * @brief The allreduce algorithm for (p, m = count x esize bytes): NMAD_ALLREDUCE_ALGO when set; else linear
 * for p > 2 and m <= NM_COLL_ALLREDUCE_OVERSUB_LINEAR_UPTO in a job with more ranks than cores on its one host
 * (nm_core_job_oversubscribed(), the same on every member); else the cheapest of the three costs above with the
 * network's alpha and beta (recursive doubling below 2 KiB or when count < p, as MPICH); ring is only considered
 * for a commutative operator (linear is not priced against them). A forced ring with a non-commutative
 * operator runs recursive doubling. The same on every member for the same arguments.
 * @param[out] algo never NM_COLL_ALLREDUCE_AUTO. @return 0 or -NM_EINVAL (invalid NMAD_ALLREDUCE_ALGO, message on
 * stderr naming it and the accepted values). Thread-safety: any thread.
 */
int nm_coll_allreduce_choose(nm_session_t session, int p, nm_len_t count, const struct nm_coll_op_s *op,
                             enum nm_coll_allreduce_algo_e *algo);

/** @brief nm_coll_allreduce_choose() with the job's oversubscription given (@p job_oversubscribed, the same on
 *  every member: nm_core_job_oversubscribed()); @p session may be NULL (nominal network figures).
 *  @return 0 or -NM_EINVAL. Thread-safety: any thread. */
int nm_coll_allreduce_choose_job(nm_session_t session, int p, nm_len_t count, const struct nm_coll_op_s *op,
                                 int job_oversubscribed, enum nm_coll_allreduce_algo_e *algo);

/** @brief Name of an allreduce algorithm as NMAD_ALLREDUCE_ALGO spells it, or NULL out of range. */
const char *nm_coll_allreduce_algo_name(enum nm_coll_allreduce_algo_e algo);

/** Reduce algorithms (names for NMAD_REDUCE_ALGO in comments). */
enum nm_coll_reduce_algo_e {
  NM_COLL_REDUCE_AUTO = 0,       /**< "auto": NMAD_REDUCE_ALGO, else nm_coll_reduce_choose() */
  NM_COLL_REDUCE_BINOMIAL,       /**< "binomial": binomial tree, a node combines its children nearest first;
                                      ceil(log2 p)(alpha + m beta). A commutative operator uses the tree rooted at
                                      the root; a non-commutative one the tree rooted at member 0 (each subtree a
                                      range of consecutive members), whose result member 0 sends to the root */
  NM_COLL_REDUCE_RS_GATHER,      /**< "reduce_scatter_gather": Rabenseifner's reduce-scatter by recursive halving
                                      (order-keeping, with the fold of non-power-of-two p), then every member sends
                                      its block to the root: (log2 p' + p' - 1 + f) alpha +
                                      (2 (p' - 1) / p' + f) m beta (the root receives p' - 1 blocks) */
  NM_COLL_REDUCE_LINEAR,         /**< "linear": every member sends to the root, which combines in member order
                                      (Open MPI's basic_linear): (p - 1)(alpha + m beta) at the root, one wait per
                                      member; the choice for small vectors when ranks outnumber cores */
  NM_COLL_REDUCE_NALGOS
};

/**
 * @brief Append this member's part of a reduce to @p root to schedule @p s from round @p round on.
 * @param sendbuf @p count elements of this member, or NULL (or == @p recvbuf) at the root for in place;
 * @param recvbuf at the root: the result (@p count elements); ignored elsewhere; other parameters as
 * nm_coll_allreduce_build(). The result is x0 op x1 op ... op x(p-1) in member order for any operator.
 * @return 0 or -NM_EINVAL (bad argument, invalid NMAD_REDUCE_ALGO). Memory: binomial: one vector per child
 * (O(m log p) at the root), reduce-scatter-gather: two vectors of m bytes (one at the root, which accumulates in
 * @p recvbuf). Neither copies the send vector (issue 18 deliverable 2).
 */
int nm_coll_reduce_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op,
                         enum nm_coll_reduce_algo_e algo, int *next_round);

/** @brief Non-blocking reduce (build and start; complete with nm_coll_sched_wait(*req)).
 *  @return 0, -NM_EINVAL or -NM_ENOMEM. */
int nm_coll_ireduce(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                    const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                    enum nm_coll_reduce_algo_e algo, nm_coll_sched_t **req);

/** @brief Blocking reduce: nm_coll_ireduce() then nm_coll_sched_wait(). @return 0 or the first error. */
int nm_coll_reduce(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                   const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                   enum nm_coll_reduce_algo_e algo);

/** @brief The reduce algorithm for (p, m = count x esize bytes): NMAD_REDUCE_ALGO when set, else linear for p = 2
 *  and m <= NM_COLL_REDUCE_PAIR_LINEAR_UPTO, binomial for m <= 2 KiB, p <= 2 or count < p (MPICH), reduce-scatter +
 *  gather otherwise.
 *  @return 0 or -NM_EINVAL (invalid NMAD_REDUCE_ALGO, message on stderr). */
int nm_coll_reduce_choose(int p, nm_len_t count, nm_len_t esize, enum nm_coll_reduce_algo_e *algo);

/** Bytes up to which 2 members reduce linearly: the binomial tree's one message, but a blocking call then sends it
 *  without a schedule (nm_coll_reduce_eager()): 2 ranks bound one per core, 8 B 0.22-0.38 us against 0.38-0.50,
 *  1 KiB 0.34-0.40 against 0.44-0.55, 4 KiB 0.51-0.60 against 0.58-0.69 (Open MPI 0.25-0.29 at 8 B-1 KiB;
 *  doc/performance.md, issue 18). */
#define NM_COLL_REDUCE_PAIR_LINEAR_UPTO 4096
/** Bytes up to which an oversubscribed job (p > 2) reduces linearly (nm_coll_reduce_choose_job()). */
#define NM_COLL_REDUCE_OVERSUB_LINEAR_UPTO 2048
/** Bytes from which an oversubscribed job keeps the binomial reduce (nm_coll_reduce_choose_job()). */
#define NM_COLL_REDUCE_OVERSUB_BINOMIAL_FROM (128u * 1024u)

/** @brief nm_coll_reduce_choose() for a job that may have more ranks than cores (@p job_oversubscribed, the same
 *  on every rank: nm_core_job_oversubscribed()). Reduce-scatter + gather wins by running its halving exchanges on
 *  every rank at once; with more ranks than cores they cannot, and each of its extra rendezvous steps waits for a
 *  rank to be scheduled: with 4 ranks on 2 cores the binomial tree measured 2-3x faster from 256 KiB (equal with
 *  8 ranks) and reduce-scatter + gather faster at 64 KiB (doc/performance.md, issue 18). So an oversubscribed job
 *  that does not force an algorithm keeps the binomial tree from NM_COLL_REDUCE_OVERSUB_BINOMIAL_FROM bytes on,
 *  and reduces linearly for p > 2 (two levels of the tree or more) up to NM_COLL_REDUCE_OVERSUB_LINEAR_UPTO
 *  bytes (one wait per member; at 4 ranks on 2 cores, 16 alternated runs each, linear's runs stay at the host's
 *  fast level, 4.2-4.4 us at the first quartile for 8 B and 1 KiB, where binomial's fall to 6.3-6.5 us:
 *  doc/performance.md).
 *  @return 0 or -NM_EINVAL (invalid NMAD_REDUCE_ALGO). Thread-safety: any thread. */
int nm_coll_reduce_choose_job(int p, nm_len_t count, nm_len_t esize, int job_oversubscribed,
                              enum nm_coll_reduce_algo_e *algo);

/** Reduce-scatter algorithms (names for NMAD_REDUCE_SCATTER_ALGO in comments; collectives/reduce_scatter.c). */
enum nm_coll_reduce_scatter_algo_e {
  NM_COLL_REDUCE_SCATTER_AUTO = 0,            /**< "auto": NMAD_REDUCE_SCATTER_ALGO, else
                                                   nm_coll_reduce_scatter_choose() */
  NM_COLL_REDUCE_SCATTER_HALVING,             /**< "recursive_halving": log2 p' steps halving the vector (the fold
                                                   of non-power-of-two p first, the folded-out members' pieces sent
                                                   back at the end): (log2 p' + 2f) alpha + ((p' - 1) / p' + 2f) m
                                                   beta; commutative operators only (MPICH, Thakur 2005 4.4) */
  NM_COLL_REDUCE_SCATTER_PAIRWISE,            /**< "pairwise": p - 1 steps, step k sends member r + k its piece and
                                                   receives member r - k's contribution to the own piece:
                                                   (p - 1) alpha + ((p - 1) / p) m beta; commutative only */
  NM_COLL_REDUCE_SCATTER_REDUCE_THEN_SCATTER, /**< "reduce_then_scatter": a reduce to member 0 (nm_coll_reduce_build(),
                                                   automatic algorithm), which sends each member its piece: what a
                                                   non-commutative operator runs, whatever is forced */
  NM_COLL_REDUCE_SCATTER_NALGOS
};

/**
 * @brief Append this member's part of a reduce-scatter to @p s from round @p round on: the vectors of sum(counts)
 * elements are combined, and member i gets elements [counts[0] + ... + counts[i - 1], + counts[i]) of the result
 * in its @p recvbuf. A non-commutative operator keeps member order (x0 op x1 op ... op x(p-1)) through
 * "reduce_then_scatter"; commutative ones run @p algo or the automatic choice.
 * @param sendbuf the whole vector of this member, or NULL (or == @p recvbuf) for in place: the whole vector is then
 * in @p recvbuf, and the piece ends at its start; @param counts p element counts, the same on every member;
 * @param op the operator (copied); @param algo an algorithm or NM_COLL_REDUCE_SCATTER_AUTO; @param next_round out
 * (may be NULL). The send vector is never copied (issue 18 deliverable 2); the own piece is copied once at the end
 * (recursive halving; pairwise in place).
 * @return 0 or -NM_EINVAL (bad argument, invalid NMAD_REDUCE_SCATTER_ALGO). Memory: recursive halving two vectors
 * of m bytes (one in place), pairwise one piece, reduce-then-scatter the result vector at member 0 plus the
 * reduce's. Thread-safety: like the core (nm_coll_sched.h).
 */
int nm_coll_reduce_scatter_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                                 const void *sendbuf, void *recvbuf, const nm_len_t counts[],
                                 const struct nm_coll_op_s *op, enum nm_coll_reduce_scatter_algo_e algo,
                                 int *next_round);

/** @brief The reduce-scatter algorithm for p members, @p total_bytes (the whole vector) and an operator that
 *  commutes or not (MPICH's rule): a non-commutative operator always gets "reduce_then_scatter"; else
 *  NMAD_REDUCE_SCATTER_ALGO when set, recursive halving below 512 KiB, pairwise from there on.
 *  @return 0 or -NM_EINVAL (invalid NMAD_REDUCE_SCATTER_ALGO, message on stderr naming it and the accepted values).
 *  Thread-safety: any thread. */
int nm_coll_reduce_scatter_choose(int p, nm_len_t total_bytes, int commute, enum nm_coll_reduce_scatter_algo_e *algo);

/** @brief Name of a reduce-scatter algorithm as NMAD_REDUCE_SCATTER_ALGO spells it, or NULL out of range. */
const char *nm_coll_reduce_scatter_algo_name(enum nm_coll_reduce_scatter_algo_e algo);

/**
 * @brief A blocking reduction of a small vector to @p root without a schedule: with the linear algorithm (the choice
 * of @p algo, NM_COLL_REDUCE_AUTO resolved as the builder does: on a job with more ranks than cores for small
 * vectors), every other member sends its vector to the root, which combines them in member order, with the messages
 * of nm_coll_reduce_build(), posted as plain receives and sends (each send leaving at once without a request where
 * the driver allows); members on a schedule pair with it. Taken for 2 to 33 members and vectors of at most 4 KiB.
 * @param sendbuf this member's vector, or NULL at the root (in place: its vector is @p recvbuf's);
 * @param recvbuf the root's result (count elements); @param wait how to wait (NULL: the core's wait).
 * @return 0 done; NM_COLL_NOT_TAKEN (nothing posted: build a schedule); -NM_EINVAL (a missing buffer, a NULL gate:
 * nothing posted); or the first error of the messages and combines (all of them posted and completed).
 * Thread-safety: one thread per group at a time; takes the core lock per call. Source: issue 18, deliverable 3.
 */
int nm_coll_reduce_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op,
                         nm_tag_t tag, enum nm_coll_reduce_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref);

/** @brief The allreduce counterpart of nm_coll_reduce_eager(): linear (a reduction to member 0, which sends the
 *  result to every member), or for 2 members recursive doubling (one exchange, both combining v0 op v1), the
 *  messages of nm_coll_allreduce_build(). @param sendbuf this member's vector, or NULL (in place: @p recvbuf's).
 *  @return as nm_coll_reduce_eager(). */
int nm_coll_allreduce_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                            void *recvbuf, nm_len_t count, const struct nm_coll_op_s *op, nm_tag_t tag,
                            enum nm_coll_allreduce_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_REDUCE_H */
