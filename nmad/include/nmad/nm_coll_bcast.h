/**
 * @file nm_coll_bcast.h
 * @brief The broadcast algorithms of Hasanov & Lastovetsky 2015 ("Topology-oblivious optimization of MPI
 * broadcast algorithms on extreme-scale platforms", section 2.1.1-2.1.8), by the paper's names, and their
 * hierarchical transformation (section 3). This header names the algorithms; the broadcasts themselves
 * (collectives/) and their cost models (collectives/nm_coll_model.c) both use these names.
 */
#ifndef NM_COLL_BCAST_H
#define NM_COLL_BCAST_H

#ifdef __cplusplus
extern "C" {
#endif

/** A broadcast algorithm, Hasanov 2015 section 2.1 (the section number is in each comment). */
enum nm_coll_bcast_algo_e {
  NM_COLL_BCAST_FLAT = 0,           /**< 2.1.1 flat tree: the root sends to every member */
  NM_COLL_BCAST_CHAIN,              /**< 2.1.2 linear tree (chain): each member forwards the whole message */
  NM_COLL_BCAST_PIPELINED_CHAIN,    /**< 2.1.3 pipelined linear tree: the chain, message cut into X segments */
  NM_COLL_BCAST_BINARY,             /**< 2.1.4 binary tree */
  NM_COLL_BCAST_SPLIT_BINARY,       /**< 2.1.5 split-binary tree: each half of the message down one subtree,
                                         then halves exchanged between the subtrees */
  NM_COLL_BCAST_BINOMIAL,           /**< 2.1.6 binomial tree */
  NM_COLL_BCAST_SCATTER_RING,       /**< 2.1.7 scatter (binomial) + ring allgather */
  NM_COLL_BCAST_SCATTER_RD,         /**< 2.1.8 scatter (binomial) + recursive-doubling allgather */
  NM_COLL_BCAST_NALGOS              /**< number of algorithms (not one) */
};

/* ---- the eight broadcasts as native collectives (issue 17, deliverable 2; collectives/bcast_classic.c) ---- */
#ifdef __cplusplus
}
#endif
#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>
#ifdef __cplusplus
extern "C" {
#endif

/** Segment of the pipelined chain when nm_coll_bcast_opts_s.segment is 0: 64 KiB, so that a 1 MiB message makes
 *  X = 16 segments (the chain's pipeline fills after p - 2 of them, Hasanov 2015, 2.1.3). */
#define NM_COLL_BCAST_SEGMENT_DEFAULT ((nm_len_t)65536)

/** Options of nm_coll_bcast(). */
struct nm_coll_bcast_opts_s {
  enum nm_coll_bcast_algo_e algo; /**< which of the eight algorithms */
  nm_len_t segment; /**< bytes per segment of NM_COLL_BCAST_PIPELINED_CHAIN (0: NM_COLL_BCAST_SEGMENT_DEFAULT);
                         ignored by the other algorithms */
};

/**
 * @brief Broadcast @p len bytes of @p buf from group member @p root with one of the eight algorithms of Hasanov &
 * Lastovetsky 2015, section 2.1 (costs with p members, m bytes, latency alpha, inverse bandwidth beta):
 *  - NM_COLL_BCAST_FLAT (2.1.1): the root sends to every member, (p - 1)(alpha + m beta);
 *  - NM_COLL_BCAST_CHAIN (2.1.2): member v receives from v - 1 and forwards, (p - 1)(alpha + m beta);
 *  - NM_COLL_BCAST_PIPELINED_CHAIN (2.1.3): the chain in X = ceil(m / segment) segments, a member forwards
 *    segment k while it receives the next ones, (X + p - 2)(alpha + (m / X) beta);
 *  - NM_COLL_BCAST_BINARY (2.1.4): 2 (log2(p + 1) - 1)(alpha + m beta);
 *  - NM_COLL_BCAST_SPLIT_BINARY (2.1.5): first half (ceil(m / 2) bytes) down the left subtree of the root, second
 *    half down the right one, then each left member exchanges halves with its pair in the right subtree (the left
 *    subtree's unpaired member, when p - 1 is odd, gets the second half from the root),
 *    2 (log2(p + 1) - 2)(alpha + m beta) + alpha + (m / 2) beta;
 *  - NM_COLL_BCAST_BINOMIAL (2.1.6): ceil(log2 p)(alpha + m beta);
 *  - NM_COLL_BCAST_SCATTER_RING (2.1.7): binomial scatter of p blocks, then ring allgather,
 *    (log2 p + p - 1) alpha + 2 ((p - 1) / p) m beta;
 *  - NM_COLL_BCAST_SCATTER_RD (2.1.8): binomial scatter, then recursive-doubling allgather,
 *    2 log2(p) alpha + 2 ((p - 1) / p) m beta. When p is not a power of two, the scatter and the allgather run
 *    over the first p' = 2^floor(log2 p) members and member v >= p' then receives the whole message from v - p'
 *    (one more alpha + m beta).
 * Scatter blocks: member v (root-relative) owns block v of floor(m / b) bytes, the first m % b blocks one byte
 * more (b = p, or p' for SCATTER_RD), so blocks differ by at most one byte; empty pieces are not sent.
 * Trees are those of the one tree module (collectives/nm_coll_tree.h); a node serves its children one after the
 * other (the single-port model of the paper), except the flat tree's root, which posts all its sends at once.
 *
 * Blocking: nm_coll_ibcast() then nm_coll_sched_wait(). Every member calls it with the same @p root, @p len,
 * @p tag and algorithm (as MPI_Bcast). Any root, any p >= 1 (p = 1 is a no-op), 0 bytes to 1 GiB and more.
 * Memory: one schedule (nm_coll_sched.h) of this member's operations: O(its sends and receives), e.g. O(log p)
 * for the binomial tree, O(p) at the flat tree's root, O(X) for the pipelined chain.
 * Thread-safety: like the core; do not post other receives that could match @p tag while it runs.
 *
 * @param session session of the messages; @param group p members (nm_coll.h): only the gates of the members this
 * one exchanges with are asked for; @param self this process's index in the group, @param root the root's index;
 * @param buf @p len bytes: the data at the root, filled elsewhere; @param tag tag of every message;
 * @param opts algorithm and segment size; NULL: the model's choice for (p, len) or NMAD_BCAST_ALGO
 * (nm_coll_bcast_auto(), nm_coll_model.h), the same on every member.
 * @return 0; -NM_EINVAL for bad arguments (NULL session or group, n < 1, self or root out of range, NULL buffer
 * with len > 0, unknown algorithm) before anything is sent; otherwise the first error of its sends and receives
 * (-NM_ECLOSED: a peer died, -NM_ETRUNCATED: a peer sent more), -NM_ENOMEM. The schedule runs to its end after
 * an error (a member forwards what it has), so that no member of the subtree waits for ever.
 */
int nm_coll_bcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                  nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts);

/**
 * @brief Non-blocking nm_coll_bcast(): builds this member's schedule and starts it; it progresses in the core's
 * progress (any wait, the progress thread). Complete it with nm_coll_sched_wait(*req) (which frees it), or test
 * *nm_coll_sched_done_flag(*req) and then nm_coll_sched_release(*req). Buffers stay in use until then.
 * @param req out: the started schedule (NULL on error). Other parameters and errors as nm_coll_bcast() (the
 * argument errors are returned here, the communication errors by the wait).
 */
int nm_coll_ibcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                   nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts, nm_coll_sched_t **req);

/**
 * @brief Append this member's part of a broadcast (algorithm and segment from @p opts, as nm_coll_bcast()) to
 * schedule @p s, from round @p round on: the builder behind nm_coll_ibcast(), for callers that put a broadcast
 * inside a larger schedule (the MPI shim's MPI_Bcast / MPI_Ibcast with their pack and unpack around it, the
 * hierarchical transformation's outer then inner broadcast). The messages use @p s's tag.
 * @param next_round out (may be NULL): the first round after this member's operations (== @p round if it has
 * none). @return 0, or -NM_EINVAL (as nm_coll_bcast()'s argument errors; a NULL gate from the group is recorded
 * in @p s and reported by nm_coll_sched_start()). Thread-safety: the caller's schedule, one thread.
 */
int nm_coll_bcast_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                        void *buf, nm_len_t len, const struct nm_coll_bcast_opts_s *opts, int *next_round);

/** @brief nm_coll_bcast() over a group given as an array of @p n gates (the same on every member).
 *  @return as nm_coll_bcast(). */
int nm_coll_bcast_array(nm_session_t session, const nm_gate_t *gates, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts);

/** @brief Name of algorithm @p algo ("flat", "chain", "pipelined-chain", "binary", "split-binary", "binomial",
 *  "scatter-ring", "scatter-rd"), or NULL if out of range. Thread-safe. */
const char *nm_coll_bcast_algo_name(enum nm_coll_bcast_algo_e algo);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_BCAST_H */
