/**
 * @file nm_coll_barrier.h
 * @brief Barrier as a native non-blocking collective over a group of gates (issue 18, deliverable 1): the
 * dissemination barrier (Hensgen, Finkel & Manber 1988), ceil(log2 p) rounds; in round k member r signals
 * r + 2^k and waits for r - 2^k (mod p), with empty messages. No member leaves before every member entered.
 * Cost: ceil(log2 p) alpha. The MPI shim's MPI_Barrier / MPI_Ibarrier run this builder.
 * Thread-safety: like the core (nm_coll_sched.h).
 */
#ifndef NM_COLL_BARRIER_H
#define NM_COLL_BARRIER_H

#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @brief Append this member's dissemination rounds to @p s from round @p round on.
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

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_BARRIER_H */
