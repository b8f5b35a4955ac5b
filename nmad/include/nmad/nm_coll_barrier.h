/**
 * @file nm_coll_barrier.h
 * @brief Barrier as a native non-blocking collective over a group of gates (issue 18, deliverable 1): the
 * dissemination barrier (Hensgen, Finkel & Manber 1988), ceil(log2 p) rounds; in round k member r signals
 * r + 2^k and waits for r - 2^k (mod p), with empty messages; and the linear one (fan-in to member 0, fan-out),
 * chosen when ranks outnumber cores. No member leaves before every member entered.
 * Cost: ceil(log2 p) alpha, or 2 alpha + 2 (p - 1) o. The MPI shim's MPI_Barrier / MPI_Ibarrier run this builder.
 * Thread-safety: like the core (nm_coll_sched.h).
 */
#ifndef NM_COLL_BARRIER_H
#define NM_COLL_BARRIER_H

#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Barrier algorithms (names for NMAD_BARRIER_ALGO in comments). */
enum nm_coll_barrier_algo_e {
  NM_COLL_BARRIER_AUTO = 0,      /**< "auto": NMAD_BARRIER_ALGO, else nm_coll_barrier_choose_job() */
  NM_COLL_BARRIER_DISSEMINATION, /**< "dissemination": ceil(log2 p) rounds, every member in each */
  NM_COLL_BARRIER_LINEAR,        /**< "linear": every member signals member 0, which answers all (Open MPI's
                                      basic linear barrier): two rounds, 2 (p - 1) messages, member 0 leaves first */
  NM_COLL_BARRIER_NALGOS
};

/** @brief The barrier algorithm: NMAD_BARRIER_ALGO when set; else linear for a job with more ranks than cores on
 *  its host (@p job_oversubscribed, the same on every rank: nm_core_job_oversubscribed()) and p > 2, since every
 *  dissemination round needs every member to be scheduled (4 ranks on 2 cores: Open MPI's linear barrier 5.2 us,
 *  its recursive doubling 10.5, nmad's dissemination 9.2; doc/performance.md, issue 18); dissemination otherwise.
 *  @return 0 or -NM_EINVAL (invalid NMAD_BARRIER_ALGO, message on stderr). Thread-safety: any thread. */
int nm_coll_barrier_choose_job(int p, int job_oversubscribed, enum nm_coll_barrier_algo_e *algo);

/** @brief Append this member's rounds (nm_coll_barrier_choose_job()'s algorithm) to @p s from round @p round on.
 *  @param group p >= 1 members; @param self this member's index; @param next_round out (may be NULL): the first
 *  round after this member's operations. @return 0 or -NM_EINVAL (bad arguments). */
int nm_coll_barrier_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                          int *next_round);

/** @brief Non-blocking barrier with tag @p tag on @p session; complete with nm_coll_sched_wait(*req).
 *  @return 0, -NM_EINVAL or -NM_ENOMEM. */
int nm_coll_ibarrier(nm_session_t session, const struct nm_coll_group_s *group, int self, nm_tag_t tag,
                     nm_coll_sched_t **req);

/** @brief Blocking barrier: nm_coll_ibarrier() then nm_coll_sched_wait(). @return 0 or the first error. */
int nm_coll_barrier(nm_session_t session, const struct nm_coll_group_s *group, int self, nm_tag_t tag);

/**
 * @brief A blocking barrier without a schedule: the messages of nm_coll_barrier_build() for the algorithm it would
 * choose (linear or dissemination, NMAD_BARRIER_ALGO included), posted as plain receives and sends, each send
 * leaving at once without a request where the driver allows (nm_sr_send_now()); members on a schedule pair with it.
 * Taken for 2 to 33 members; otherwise nothing is done.
 * @param wait how to wait (NULL: the core's wait); @param wait_ref passed to @p wait.
 * @return 0 done; NM_COLL_NOT_TAKEN (nothing posted: build a schedule); -NM_EINVAL (a NULL gate: nothing posted); or
 * the first error of the messages (all of them posted and completed). Thread-safety: one thread per group at a
 * time; takes the core lock per call. Source: issue 18, deliverable 3 (doc/collectives.md, "Blocking small collectives
 * without a schedule").
 */
int nm_coll_barrier_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, nm_tag_t tag,
                          nm_coll_wait_fn_t wait, void *wait_ref);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_BARRIER_H */
