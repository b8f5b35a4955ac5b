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
  /* ---- hierarchical transformation (Hasanov 2015, section 3; issue 17, deliverable 3; collectives/bcast_hier.c).
   * Zero (the value of a zero-initialised struct) means flat, exactly as before these fields existed. */
  int groups; /**< G, the number of groups: 0 or 1: flat; > 1: hierarchical, @c algo and @c segment are then
                   the outer broadcast's (among the G group leaders), @c inner_algo and @c inner_segment the
                   inner one's (inside every group). Above p it is clamped to p. */
  enum nm_coll_bcast_algo_e inner_algo; /**< algorithm inside the groups when groups > 1 (0 is NM_COLL_BCAST_FLAT:
                                             set it; the paper's experiments use inner_algo = algo) */
  nm_len_t inner_segment; /**< segment of an inner NM_COLL_BCAST_PIPELINED_CHAIN (0: NM_COLL_BCAST_SEGMENT_DEFAULT) */
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
 * (nm_coll_bcast_auto(), nm_coll_model.h), the same on every member. With opts->groups > 1, the hierarchical
 * transformation of section 3 (nm_coll_bcast_hier_build(), its groups made for the call in O(1)).
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

/**
 * @brief How long a receiver of broadcast @p algo over @p n members (@p len bytes) should spin before it yields:
 *        for the flat tree (2.1.1) on a job with more ranks than cores, twice the time the root takes to post its
 *        n - 1 eager messages (the network's sender overhead, nm_core_network_logp()); 0 otherwise (the configured
 *        spin). The hint nm_coll_bcast_build() gives its schedule, for callers that wait on their own.
 * @return nanoseconds. Thread-safety: any thread (reads the core's fixed figures).
 */
uint64_t nm_coll_bcast_recv_spin_ns(nm_session_t session, enum nm_coll_bcast_algo_e algo, int n, nm_len_t len);

/**
 * @brief A blocking broadcast of a small message without a schedule: this member receives once from its parent
 * (if not the root) in the tree of @p opts->algo, then sends to its children, each send leaving at once without a
 * request where the driver allows (nm_sr_send_now()). The messages are nm_coll_bcast_build()'s for the same
 * algorithm and @p tag, so members on this path and members on a schedule pair alike. Taken for the whole-message
 * trees of Hasanov & Lastovetsky 2015, section 2.1 (flat 2.1.1, chain 2.1.2, binary 2.1.4, binomial 2.1.6), flat
 * @p opts (groups <= 1), @p len <= 4 KiB and at most 32 children; anything else is left to the caller
 * (collectives/bcast_eager.c says why it exists).
 * @param group members (n >= 2); @param self, root member indices; @param buf @p len bytes (the root's data, the
 * others' destination); @param wait how to wait (NULL: the core's wait, spin then yield then block);
 * @param wait_ref passed to @p wait.
 * @return 0 done; NM_COLL_NOT_TAKEN (nothing was posted: build a schedule instead); -NM_EINVAL (a NULL gate from the
 * group: nothing was posted); or the first error of its receive and sends (-NM_ETRUNCATED, -NM_ECLOSED), every
 * message having been posted and completed.
 * Thread-safety: one thread per group at a time (as every blocking collective); takes the core lock per call.
 */
int nm_coll_bcast_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts, nm_coll_wait_fn_t wait,
                        void *wait_ref);

/** @brief nm_coll_bcast() over a group given as an array of @p n gates (the same on every member).
 *  @return as nm_coll_bcast(). */
int nm_coll_bcast_array(nm_session_t session, const nm_gate_t *gates, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts);

/**
 * @brief The G groups of a group and this member's place in them: Hasanov 2015, section 3 (Algorithm 1, lines
 * 4-6), the two "sub-communicators" of the hierarchical broadcast. Made by nm_coll_bcast_hier_init(), read-only
 * afterwards; O(1) in size whatever p.
 *
 * Layout: with s = ceil(p / G) members per group, group g holds the consecutive members [g s, min((g + 1) s, p))
 * (G' = ceil(p / s) <= G groups, the last one possibly smaller: p need not be divisible by G). The leader of a
 * group is its first member, except in the root's group, whose leader is the root itself, so that the outer
 * broadcast starts at the root (the paper's Calculate_Root_Inner). The groups do not depend on the root: one
 * struct serves every root.
 *
 * What is cached, and its lifetime: the layout and this member's own group (its first member and size; the group
 * is a function of the caller's group), pure arithmetic on (p, G, self), built without any message. The two
 * struct nm_coll_group_s handed to nm_coll_bcast() are made per call on the stack from it (O(1); the leader
 * group substitutes the root for its group's first member), so the struct may be copied. The gates
 * come from the caller's group's gate_of() as the broadcasts ask for them: a member makes only the gates of the
 * members it exchanges with (DESIGN.md rule 8), and nm_launcher_gate_of() keeps them in the core. Unlike the
 * paper's MPI_Comm_split (its fig. 9 charges two splits per call), building the groups costs no communication, so
 * nm_coll_bcast() simply rebuilds them per call; a caller that broadcasts often on one group (an MPI
 * communicator) may keep one struct per (group, G) instead. The struct holds a pointer to @p group: it is valid
 * as long as that group is.
 */
struct nm_coll_bcast_hier_s {
  const struct nm_coll_group_s *parent; /**< the caller's group, p members */
  int p;         /**< members of the caller's group */
  int groups;    /**< G', the number of groups actually formed (<= the G asked for) */
  int gsize;     /**< s = ceil(p / G): members per group (the last group may hold fewer) */
  int self;      /**< this member's index in @c parent */
  int my_group;  /**< self / gsize */
  int inner_first; /**< first member of this member's group (my_group * gsize) */
  int inner_n;     /**< members in this member's group (gsize, or fewer for the last group) */
};

/** @brief Fill @p h for member @p self of @p group with @p groups groups (G > p is clamped to p; G <= 1 makes one
 *  group of all members, the flat broadcast). No message, no allocation; thread-safe for distinct @p h.
 *  @return 0, or -NM_EINVAL for a NULL pointer, a group without gate_of, n < 1 or self out of range. */
int nm_coll_bcast_hier_init(struct nm_coll_bcast_hier_s *h, const struct nm_coll_group_s *group, int self, int groups);

/**
 * @brief Hierarchical broadcast of Hasanov & Lastovetsky 2015, section 3 (Algorithm 1): @c opts->algo among the
 * group leaders from @p root, then @c opts->inner_algo inside every group from its leader, the groups of @p h.
 * Any of the eight algorithms at each level, any root, any p, 0 bytes to 1 GiB and more.
 *
 * Cost: T_outer(G) + T_inner(ceil(p / G)), the flat costs of nm_coll_bcast() at G and at the largest group's size;
 * with the same algorithm at both levels this is the paper's eq. (1) (flat, chain: (G + p/G - 2)(alpha + m beta)),
 * eq. (3) (pipelined chain: (2X + G + p/G - 4)(alpha + (m/X) beta)), eq. (5) (scatter-ring-allgather:
 * (log2 p + G + p/G - 2) alpha + 2m (2 - 1/G - G/p) beta), and no gain for binary, binomial, split-binary and
 * scatter-recursive-doubling (sections 3.3, 3.5, 3.6); nm_coll_model_bcast_hier_time() prices it.
 *
 * Blocking; every member calls it with the same @p root, @p len, @p tag, options and G (as MPI_Bcast). The outer
 * and the inner broadcast use the same @p tag: no pair of members exchanges in both (an outer pair is two leaders
 * of different groups, an inner pair lies in one group), so per-(gate, tag) order keeps them apart.
 * Thread-safety: like the core; do not post other receives that could match @p tag while it runs.
 *
 * @param session session of the messages; @param h from nm_coll_bcast_hier_init() (the same G on every member);
 * @param root the root's index in h->parent; @param buf @p len bytes (the data at the root, filled elsewhere);
 * @param tag tag of every message; @param opts algo/segment (outer) and inner_algo/inner_segment (inner);
 * opts->groups is ignored here (h has the groups).
 * @return 0; -NM_EINVAL for bad arguments (NULL session, h or opts, root out of range, NULL buffer with len > 0,
 * an unknown algorithm at either level) before anything is sent; otherwise the first error of the outer or the
 * inner broadcast (nm_coll_bcast()'s). The schedule runs to its end after an error: a leader whose outer receive
 * failed still serves its group (with what it has), so that no member waits for ever.
 */
int nm_coll_bcast_hier(nm_session_t session, const struct nm_coll_bcast_hier_s *h, int root, void *buf,
                       nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts);

/** @brief The builder behind nm_coll_bcast_hier() (and nm_coll_bcast_build() with opts->groups > 1): appends this
 *  member's outer broadcast (a leader only) then its inner one to @p s from round @p round on, the inner one in
 *  the rounds after the outer one (a leader forwards to its group once it has the data). Parameters as
 *  nm_coll_bcast_hier() and nm_coll_bcast_build(). @return 0 or -NM_EINVAL. Thread-safety: one thread. */
int nm_coll_bcast_hier_build(nm_coll_sched_t *s, int round, const struct nm_coll_bcast_hier_s *h, int root,
                             void *buf, nm_len_t len, const struct nm_coll_bcast_opts_s *opts, int *next_round);

/** @brief Name of algorithm @p algo ("flat", "chain", "pipelined-chain", "binary", "split-binary", "binomial",
 *  "scatter-ring", "scatter-rd"), or NULL if out of range. Thread-safe. */
const char *nm_coll_bcast_algo_name(enum nm_coll_bcast_algo_e algo);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_BCAST_H */
