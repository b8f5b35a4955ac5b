/**
 * @file nm_coll_split.h
 * @brief Split-tree non-blocking collectives (issue 19, deliverable 3): Denis, Jaeger, Jeannot, Pérache, Taboada
 * 2019, "Study on progress threads placement and dedicated cores for overlapping MPI nonblocking collectives on
 * manycore processor" (IJHPCA 33(6)), section 6.
 *
 * A tree collective (broadcast, reduce, gather, scatter) runs on the binomial tree of the one tree module
 * (collectives/nm_coll_tree.h). Its levels are numbered from the leaves as in the paper's fig. 8: level i holds
 * the edges between vrank v (a multiple of 2^i) and v + 2^(i-1), level 1 the N/2 edges of the leaves, level
 * H = ceil(log2 N) the root's farthest child. The *split* S (0 <= S <= H) cuts the tree (section 6.1):
 *  - levels 1..S, the short but wide part (half of all the edges at S = 1), run in the caller's context: on the
 *    application's core, not overlapped with its computation;
 *  - levels S+1..H, the long but narrow part, run in the core's progress as soon as the call returns: with
 *    NMAD_PROGRESS=thread on the progress thread (placed by NMAD_BIND), overlapped with the computation.
 * As in section 6.3: a one-to-all collective (broadcast, scatter) starts its upper levels in the call and runs
 * its S lower levels in nm_coll_split_wait(); an all-to-one collective (reduce, gather) runs its S lower levels
 * in the call itself (blocking) and leaves the upper ones to progress until the wait. S = 0 is everything in
 * progress (the paper's fig. 9), S = H everything in the caller's context (the blocking collective).
 *
 * The messages are the same for every S (one per tree edge, on the collective's tag): S only decides which
 * context posts them, so results are identical for every S, and members may even use different values of S.
 *
 * S is chosen, in this order: the caller's nm_coll_split_opts_s.S when >= 0; else the environment variable
 * NMAD_SPLIT_S (an integer >= 0, clamped to H, or "model"); else the model of section 6.2
 * (nm_coll_split_model_best()) on the host's figures (nm_coll_split_model_host()) or the caller's model.
 *
 * Thread-safety: like the core; one thread builds, starts and waits for a given collective. Do not post other
 * receives that could match the collective's tag while it runs; concurrent collectives need distinct tags.
 */
#ifndef NM_COLL_SPLIT_H
#define NM_COLL_SPLIT_H

#include <nmad/nm_coll.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ the model of section 6.2 (eqs. 3-9) */

/**
 * Parameters of the model of section 6.2. Time unit: the point-to-point transfer of one buffer of the
 * collective's size (section 6.2: "we take as unit the point-to-point transfer time of one buffer"); latency,
 * contention and cache effects are neglected as in the paper.
 */
struct nm_coll_split_model_s {
  int n_proc;     /**< N_proc: cores of the node (>= 1) */
  int n;          /**< N: ranks, one per application core (>= 1) */
  int comm_cores; /**< P(N): cores left to the progress threads; < 0 means N_proc - N (section 6.2). When P <= 0
                       the progress threads share the application's cores: nothing is overlapped in the model, and
                       nm_coll_split_model_best() answers S = 0 (measured; the paper's section 7 keeps S = H) */
  double compute; /**< C(N): the computation overlapped with the collective, in transfer units; < 0 means the
                       paper's choice: sized for perfect overlap on all cores, C(N_proc) = T_blocking(N_proc) =
                       H(N_proc), and strong scaling, C(N) = (N_proc / N) C(N_proc) (eq. 4; see below) */
  int variable;   /**< 0: constant-size buffers (broadcast, reduce; eqs. 6-7); 1: data doubling at each level
                       from the leaves (gather, scatter; eqs. 8-9) */
  int eq5_as_printed; /**< 0: F(N, i) is the exact number of edges of level i of the binomial tree;
                           1: F(N, i) = ceil(N / 2^i + 1/2), eq. 5 as printed (one edge too many at some N) */
};

/**
 * @brief The model's figures on the paper's experiment of section 6.2/7: @p n ranks on a node of @p n_proc cores,
 * the other cores for the progress threads, computation as eq. 4, exact level counts. Thread-safe.
 * @param variable 0 (broadcast, reduce) or 1 (gather, scatter).
 */
struct nm_coll_split_model_s nm_coll_split_model_paper(int n_proc, int n, int variable);

/**
 * @brief The model's figures on this host for a group of @p n ranks: N_proc = processors online
 * (sysconf(_SC_NPROCESSORS_ONLN)), N = @p n (the paper's setting: all the members on one node), P = N_proc - N,
 * computation as eq. 4. A job spread over several hosts should pass its own model (ranks and idle cores per
 * host). Reads the host, no message; thread-safe.
 */
struct nm_coll_split_model_s nm_coll_split_model_host(int n, int variable);

/** @brief H(N) = ceil(log2 N) (eq. 3): the levels of the binomial tree of @p n members (0 for n <= 1). */
int nm_coll_split_depth(int n);

/** @brief F(N, i): communications in level @p i (1 <= i <= H(N)) of the tree of @p m (eq. 5, or the exact count
 *  of edges, as m->eq5_as_printed says); 0 outside 1..H. */
int nm_coll_split_model_level(const struct nm_coll_split_model_s *m, int i);

/** @brief T_non-blocking(S, N) in transfer units: eq. 6 (constant size) or eq. 8 (variable size), the collective
 *  alone; S is clamped to [0, H]. With P <= 0, H (or W_H for the variable size): the blocking time. */
double nm_coll_split_model_nonblocking(const struct nm_coll_split_model_s *m, int S);

/** @brief T_overlapped(S, N) in transfer units: eq. 7 or eq. 9, the collective overlapped with C(N) of
 *  computation. With P <= 0, nothing is overlapped: C(N) + the blocking time, for every S. */
double nm_coll_split_model_overlapped(const struct nm_coll_split_model_s *m, int S);

/** @brief C(N) in transfer units (m->compute, or eq. 4 with C(N_proc) = H(N_proc) when m->compute < 0). */
double nm_coll_split_model_compute(const struct nm_coll_split_model_s *m);

/**
 * @brief The model's S (section 6.2, "Discussion and tuning": compute the predicted time for every S and keep
 * the best): argmin over S = 0..H of nm_coll_split_model_overlapped(), the smallest S on a tie; so 0 when
 * P <= 0, where every S costs the same in the model (the paper keeps S = H there; nmad's progress thread blocks
 * when idle, so on a time-sliced core the levels it holds move during the computation: measured within 1.1x of
 * the best S in 72 of 72 cases on a 2-core host, where S = H was up to 1.30x slower; doc/split-tree.md).
 * @return S in [0, H], or -NM_EINVAL for a NULL model, n < 1 or n_proc < 1. O(H^2). Thread-safe.
 */
int nm_coll_split_model_best(const struct nm_coll_split_model_s *m);

/* ------------------------------------------------------------------ the collectives (section 6.1, 6.3) */

/** S of nm_coll_split_opts_s: not forced (NMAD_SPLIT_S, else the model). */
#define NM_COLL_SPLIT_AUTO (-1)

/** Options of the split collectives; NULL means {NM_COLL_SPLIT_AUTO, NULL}. */
struct nm_coll_split_opts_s {
  int S; /**< levels run in the caller's context, >= 0 (above H it is H), or NM_COLL_SPLIT_AUTO */
  const struct nm_coll_split_model_s *model; /**< the model used when S is not forced; NULL: the host's
                                                  (nm_coll_split_model_host()) */
};

/** A started split collective (opaque); completed and freed by nm_coll_split_wait(). */
typedef struct nm_coll_split_s nm_coll_split_t;

/** A reduction: @p acc = @p acc (+) @p in, @p len bytes each; @p acc holds the members of lower root-relative
 *  rank ((member - root) mod n). Runs inside the core's progress (possibly on the progress thread): it must not
 *  call nmad. @return 0, or an error of the caller's, which the collective reports. */
typedef int (*nm_coll_split_combine_t)(void *acc, const void *in, nm_len_t len, void *ref);

/**
 * @brief Split-tree broadcast of @p len bytes of @p buf from member @p root (binomial tree, ceil(log2 n) levels;
 * a node forwards to its children farthest first). The upper H - S levels start now and progress in the core's
 * progress; the lower S levels run in nm_coll_split_wait() (section 6.3, one-to-all).
 * Every member calls it with the same @p root, @p len and @p tag.
 * @param session session of the messages; @param group n >= 1 members (nm_coll.h); @param self this member's
 * index, @param root the root's index; @param buf @p len bytes (the data at the root); @param tag tag of every
 * message; @param opts S or the model (NULL: automatic); @param req out: the started collective (NULL on error).
 * @return 0; -NM_EINVAL (NULL session, group or req, n < 1, self or root out of range, NULL buffer with len > 0,
 * a bad NMAD_SPLIT_S, reported on stderr) before anything is sent; -NM_ENOMEM. Communication errors are returned
 * by nm_coll_split_wait(). Memory: two schedules of this member's O(log n) operations.
 */
int nm_coll_split_ibcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                         nm_len_t len, nm_tag_t tag, const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req);

/**
 * @brief Split-tree reduce of @p len bytes per member into @p recvbuf at @p root, with @p combine (binomial tree:
 * a node combines its children's partial results nearest first, then sends to its parent). The lower S levels
 * run in this call (blocking, section 6.3 all-to-one), the upper ones in the core's progress until the wait.
 * The combination order is that of the root-relative ranks, so @p combine must be associative, and commutative
 * unless @p root is 0.
 * @param sendbuf this member's @p len bytes; @param recvbuf @p len bytes at the root (ignored elsewhere);
 * @param combine, @param ref the reduction and its argument. Other parameters and errors as
 * nm_coll_split_ibcast() (also -NM_EINVAL for a NULL combine, or a NULL recvbuf at the root with len > 0).
 * Memory: 2 len bytes of scratch (one at the root), released by the wait.
 */
int nm_coll_split_ireduce(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t len, nm_coll_split_combine_t combine,
                          void *ref, nm_tag_t tag, const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req);

/**
 * @brief Split-tree gather of @p block bytes per member into @p recvbuf at @p root (n blocks, member m's at
 * m * block). A node gathers its subtree's contiguous blocks and sends them up, so the data doubles at each level
 * (the variable-size model, eqs. 8-9, chooses S). Lower S levels in this call, upper ones in progress.
 * @param sendbuf this member's block; @param recvbuf n * @p block bytes at the root (ignored elsewhere).
 * Other parameters and errors as nm_coll_split_ireduce(). Memory: a subtree's blocks of scratch (n blocks at the
 * root, 1 at a leaf).
 */
int nm_coll_split_igather(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t block, nm_tag_t tag,
                          const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req);

/**
 * @brief Split-tree scatter of n blocks of @p block bytes from @p sendbuf at @p root (member m gets block m into
 * @p recvbuf): the reverse of nm_coll_split_igather(), one-to-all like the broadcast (upper levels in progress,
 * lower S levels in the wait). @param sendbuf n * @p block bytes at the root (ignored elsewhere);
 * @param recvbuf @p block bytes. Other parameters, errors and memory as nm_coll_split_igather().
 */
int nm_coll_split_iscatter(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                           const void *sendbuf, void *recvbuf, nm_len_t block, nm_tag_t tag,
                           const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req);

/** @brief The S a started collective uses (after the clamp to [0, H]). */
int nm_coll_split_get_S(const nm_coll_split_t *req);

/**
 * @brief Complete a split collective: wait for its upper levels, run the lower ones (one-to-all), copy the result
 * into place, free it. @return 0 or the first error of its sends, receives and combines (-NM_ECLOSED: a peer
 * died, -NM_ETRUNCATED: a peer sent more, the combine's own error). Both parts always run to their end, so that
 * no member waits for ever for this one. Thread-safety: the thread that started it; releases the core lock while
 * it blocks (nm_core_wait_flag()).
 */
int nm_coll_split_wait(nm_coll_split_t *req);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_SPLIT_H */
