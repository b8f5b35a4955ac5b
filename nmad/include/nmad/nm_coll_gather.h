/**
 * @file nm_coll_gather.h
 * @brief Gather and scatter of equal blocks as native non-blocking collectives over a group of gates (issue 17
 * deliverable 1, issue 18 deliverable 1); the MPI shim's MPI_Gather / MPI_Scatter and their I- versions run these
 * builders on packed bytes. Thread-safety: like the core (nm_coll_sched.h).
 */
#ifndef NM_COLL_GATHER_H
#define NM_COLL_GATHER_H

#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Gather / scatter algorithms (names for NMAD_GATHER_ALGO and NMAD_SCATTER_ALGO in comments). */
enum nm_coll_gather_algo_e {
  NM_COLL_GATHER_AUTO = 0, /**< "auto": the variable, else nm_coll_gather_choose() */
  NM_COLL_GATHER_BINOMIAL, /**< "binomial": binomial tree of the tree module, a node moves its whole subtree's
                                blocks at once: ceil(log2 p) alpha + ((p - 1) / p) m beta, m = p b the total, plus
                                a copy through a subtree buffer at inner nodes */
  NM_COLL_GATHER_FLAT,     /**< "flat": every member exchanges its block with the root directly:
                                (p - 1)(alpha + b beta) at the root, no copy */
  NM_COLL_GATHER_NALGOS
};

/** @brief Append a gather of @p len bytes per member to @p root: member i's block ends at recvbuf + i len on the
 *  root. @param sendbuf this member's block, or NULL at the root for in place (its block already in place);
 *  @param recvbuf the root's p len bytes (ignored elsewhere). @return 0 or -NM_EINVAL (bad argument, invalid
 *  NMAD_GATHER_ALGO). */
int nm_coll_gather_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t len, enum nm_coll_gather_algo_e algo,
                         int *next_round);

/** @brief Append a scatter of @p len bytes per member from @p root: block i of the root's @p sendbuf (p len bytes)
 *  ends in member i's @p recvbuf. At the root @p recvbuf may be NULL (in place: its block is not copied).
 *  @return 0 or -NM_EINVAL (bad argument, invalid NMAD_SCATTER_ALGO). */
int nm_coll_scatter_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t len, enum nm_coll_gather_algo_e algo,
                          int *next_round);

/** @brief The algorithm for @p p members and blocks of @p len bytes: the variable @p var (NMAD_GATHER_ALGO or
 *  NMAD_SCATTER_ALGO) when set, else binomial for blocks below 16 KiB and flat from there on (each block then
 *  crosses one link only, not one per tree level); flat for 2 members (the tree's one message, which a blocking
 *  call then sends without a schedule). @return 0 or -NM_EINVAL (invalid value, message on stderr naming @p var). */
int nm_coll_gather_choose(const char *var, int p, nm_len_t len, enum nm_coll_gather_algo_e *algo);

/** @brief nm_coll_gather_choose() for a job that may have more ranks than cores (@p job_oversubscribed, the same on
 *  every rank: nm_core_job_oversubscribed()): such a job takes the flat algorithm at every size, since each level
 *  of the binomial tree waits for a forwarder to get a core (4 ranks on 2 cores: Gather and Scatter of 8 B
 *  7.3-7.5 us flat against 12-13 us binomial; doc/performance.md, issue 18). A forced algorithm stays forced.
 *  @return 0 or -NM_EINVAL. Thread-safety: any thread. */
int nm_coll_gather_choose_job(const char *var, int p, nm_len_t len, int job_oversubscribed,
                              enum nm_coll_gather_algo_e *algo);

/** @brief Non-blocking gather (build and start; complete with nm_coll_sched_wait(*req)). */
int nm_coll_igather(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                    const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_gather_algo_e algo,
                    nm_coll_sched_t **req);

/** @brief Non-blocking scatter (build and start; complete with nm_coll_sched_wait(*req)). */
int nm_coll_iscatter(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                     const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_gather_algo_e algo,
                     nm_coll_sched_t **req);

/**
 * @brief A blocking gather of small blocks without a schedule: with the flat algorithm (the choice of @p algo,
 * NM_COLL_GATHER_AUTO resolved as the builders do), the root posts a receive per member into @p recvbuf (block i
 * at i @p len) and waits for them, every other member sends its block, at once without a request where the driver
 * allows (nm_sr_send_now()). The messages are nm_coll_gather_build()'s, so members on a schedule pair with it.
 * Taken for 1 B <= @p len <= 4 KiB and at most 33 members; otherwise (or binomial) nothing is done.
 * @param sendbuf, recvbuf as nm_coll_gather_build(); @param wait how to wait (NULL: the core's wait);
 * @param wait_ref passed to @p wait.
 * @return 0 done; NM_COLL_NOT_TAKEN (nothing posted: build a schedule); -NM_EINVAL (a missing buffer, a NULL gate:
 * nothing posted); or the first error of the messages (all of them posted and completed).
 * Thread-safety: one thread per group at a time; takes the core lock per call. Source: issue 18, deliverable 3.
 */
int nm_coll_gather_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag,
                         enum nm_coll_gather_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref);

/** @brief The scatter counterpart of nm_coll_gather_eager(): the root sends block i of @p sendbuf to member i
 *  (copying its own into @p recvbuf unless NULL, in place), the others receive theirs into @p recvbuf; the messages
 *  of nm_coll_scatter_build(). @return as nm_coll_gather_eager(). */
int nm_coll_scatter_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag,
                          enum nm_coll_gather_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_GATHER_H */
