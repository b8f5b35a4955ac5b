/**
 * @file nm_mcast_interface.h
 * @brief NewMadeleine's dynamic broadcasts over nmad's (Denis 2020, sections 3.2 and 4.3; issue 16, deliverable 2;
 *        doc/newmad.md): a service per communicator, root requests with a notifier, data descriptors and a header
 *        length. Compat layer over <nmad/nm_mcast.h> (native: only the root knows the destinations; receivers
 *        post ordinary receives from the root with the tag, here nm_sr_recv_irecv() on the communicator's
 *        session, and see NM_SR_EVENT_RECV_COMPLETED then NM_SR_EVENT_FINALIZED).
 *
 * Thread-safety: every call takes the core lock. The notifier runs from a progress pass (the progress thread, or
 * the thread inside a wait or test), under the core lock: it may release the request, not block.
 */
#ifndef NM_MCAST_INTERFACE_H
#define NM_MCAST_INTERFACE_H

#ifdef NM_MCAST_H
#error "<nm_mcast_interface.h> (NewMadeleine's names) and <nmad/nm_mcast.h> (nmad's) cannot be used in one file"
#endif

#include <nm_public.h>
#include <nm_data.h>
#include <nm_coll_interface.h>
#include <nm_newmad_mcast_types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_newmad_mcast_service_s *nm_mcast_service_t; /**< broadcasts on one communicator */
typedef struct nm_newmad_mcast_s nm_mcast_t;                   /**< a broadcast at its root */

struct nm_newmad_mcast_service_s *nm_newmad_mcast_init(nm_comm_t comm);
int nm_newmad_mcast_finalize(struct nm_newmad_mcast_service_s *service);
void nm_newmad_mcast_send_init(struct nm_newmad_mcast_service_s *service, struct nm_newmad_mcast_s *mcast);
int nm_newmad_mcast_isend(struct nm_newmad_mcast_s *mcast, nm_comm_t comm, const int *dests, const int *prios,
                          int n, nm_tag_t tag, const struct nm_data_s *data, nm_len_t hlen,
                          nm_coll_tree_kind_t tree);
void nm_newmad_mcast_send_destroy(struct nm_newmad_mcast_s *mcast);
int nm_newmad_mcast_wait(struct nm_newmad_mcast_s *mcast);

/** @brief Start broadcasts on @p comm's session (every member calls it, collectively in spirit: a broadcast that
 *  arrives before is kept). @return the service, or NULL (no session attached, out of memory). */
static inline nm_mcast_service_t nm_mcast_init(nm_comm_t comm) { return nm_newmad_mcast_init(comm); }
/** @brief Stop the service. @return 0 or -NM_EBUSY while broadcasts are in flight. */
static inline int nm_mcast_finalize(nm_mcast_service_t service) { return nm_newmad_mcast_finalize(service); }
/** @brief Reset @p mcast for a broadcast of @p service (no notifier). */
static inline void nm_mcast_send_init(nm_mcast_service_t service, nm_mcast_t *mcast)
{
  nm_newmad_mcast_send_init(service, mcast);
}
/** @brief @p notifier(@p ref) is called once the root's sends completed. */
static inline void nm_mcast_send_set_notifier(nm_mcast_t *mcast, nm_mcast_notifier_t notifier, void *ref)
{
  mcast->notifier = notifier;
  mcast->ref = ref;
}
/**
 * @brief Broadcast @p data from this process (the root) to the @p n members @p dests of @p comm, with priorities
 * @p prios (n entries, larger is more urgent, or NULL), as a message of tag @p tag.
 * @param hlen bytes at the start of the data that receivers may peek at (nm_sr_recv_peek()): a broadcast reaches a
 *        receiver whole, so any hlen <= the data's size is honoured.
 * @param tree tree kind (NM_COLL_TREE_DEFAULT: nmad's binomial tree).
 * @return 0, -NM_EINVAL (bad destination, comm of another session than the service's), -NM_ENOMEM.
 */
static inline int nm_mcast_isend(nm_mcast_t *mcast, nm_comm_t comm, int *dests, int *prios, int n, nm_tag_t tag,
                                 const struct nm_data_s *data, nm_len_t hlen, nm_coll_tree_kind_t tree)
{
  return nm_newmad_mcast_isend(mcast, comm, dests, prios, n, tag, data, hlen, tree);
}
/** @brief Wait until the root's sends completed. @return the broadcast's status. */
static inline int nm_mcast_wait(nm_mcast_t *mcast) { return nm_newmad_mcast_wait(mcast); }
/** @brief Release what nm_mcast_isend() allocated (after the notifier or the wait). */
static inline void nm_mcast_send_destroy(nm_mcast_t *mcast) { nm_newmad_mcast_send_destroy(mcast); }

#ifdef __cplusplus
}
#endif
#endif /* NM_MCAST_INTERFACE_H */
