/**
 * @file nm_coll.h
 * @brief Static collectives over a group of gates (every member calls them), built on sendrecv.
 * Source: Hasanov & Lastovetsky 2015, "Hierarchical redesign of classic MPI broadcast algorithms", section 2
 * (the classic algorithms and their costs); the binomial tree here is the one of Denis 2020 fig. 1.
 *
 * A group is an array of @p n gates, the same array (same order) on every member; @p self is this process's
 * index in it and @p root the root's index. Messages use @p tag on @p session: do not post other receives that
 * could match it while a collective runs. Thread-safety: like the core.
 */
#ifndef NM_COLL_H
#define NM_COLL_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Binomial-tree broadcast of @p len bytes from group member @p root (O(log n) steps: the root sends to
 * root+n/2.., halving, as in Denis 2020 fig. 1). Blocking.
 * @return 0 or the first error of its sends/receives (e.g. -NM_ECLOSED, -NM_ETRUNCATED).
 */
int nm_coll_bcast_binomial(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                           nm_len_t len, nm_tag_t tag);

/** @brief Naive broadcast: the root sends to every other member in turn (O(n) at the root); others receive.
 *  Blocking. @return 0 or the first error. */
int nm_coll_bcast_naive(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_H */
