/**
 * @file nm_newmad_mcast_types.h
 * @brief The storage of NewMadeleine-style broadcast requests (nm_mcast_interface.h). Separate so that the
 *        library's own file can use it next to nmad's <nmad/nm_mcast.h> (whose nm_mcast_service_t is another
 *        type). Fields are private.
 */
#ifndef NM_NEWMAD_MCAST_TYPES_H
#define NM_NEWMAD_MCAST_TYPES_H

#include <nm_public.h>
#include <nm_data.h>
#include <nm_coll_interface.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nm_newmad_mcast_service_s;
/** The root's notifier: called once the broadcast's sends completed (the data may be reused). */
typedef void (*nm_mcast_notifier_t)(void *ref);

/** A broadcast at its root (NewMadeleine's nm_mcast_t), caller's storage from send_init to the notifier. */
struct nm_newmad_mcast_s {
  struct nm_newmad_mcast_service_s *service;
  void *native;               /* nmad's nm_mcast_req_t, allocated by nm_mcast_isend() */
  void *packed;               /* the data packed when its descriptor has several pieces */
  int *world;                 /* destinations as job ranks */
  nm_mcast_notifier_t notifier;
  void *ref;
  int status;
  volatile int completed;
  struct nm_newmad_mcast_s *next, *prev; /* the service's broadcasts in flight */
};

#ifdef __cplusplus
}
#endif
#endif
