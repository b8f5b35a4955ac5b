/**
 * @file nm_coll_interface.h
 * @brief NewMadeleine's communicators (nm_comm_t: a group of ranks on a session) and tree kinds, as StarPU's
 *        dynamic broadcasts use them (issue 16, deliverable 2; doc/newmad.md). Compat layer: nmad's own groups
 *        are nm_coll.h's (a gate function), its tree kinds nm_mcast.h's.
 *
 * A communicator here is made by nm_mpi_nmad.h from an MPI communicator (nm_mpi_comm()): its session is the one
 * nm_mpi_nmad_dest() gives for that communicator, its ranks are the communicator's. Thread-safety: read-only
 * after creation, any thread.
 */
#ifndef NM_COLL_INTERFACE_H
#define NM_COLL_INTERFACE_H

#include <nm_public.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A communicator: members' job ranks (world), this process's rank among them, their session. */
struct nm_newmad_comm_s {
  nm_session_t session;
  int rank, size;
  int *world;      /**< job rank of each member (size entries) */
};
typedef struct nm_newmad_comm_s *nm_comm_t;

/** Tree kinds of NewMadeleine's collectives (nm_mcast_isend()); DEFAULT is nmad's default (binomial). */
typedef enum {
  NM_COLL_TREE_NONE = 0,
  NM_COLL_TREE_FLAT,
  NM_COLL_TREE_CHAIN,
  NM_COLL_TREE_CHAIN_MODIFIED, /**< mapped to CHAIN */
  NM_COLL_TREE_2ARY,           /**< binary */
  NM_COLL_TREE_BINOMIAL,
  NM_COLL_TREE_3NOMIAL,        /**< mapped to BINOMIAL */
  NM_COLL_TREE_4NOMIAL,        /**< mapped to BINOMIAL */
  NM_COLL_TREE_8NOMIAL,        /**< mapped to BINOMIAL */
  NM_COLL_TREE_DEFAULT
} nm_coll_tree_kind_t;

/** @brief nm_sr_init() (nm_sendrecv_interface.h), declared here for the files that cannot include that header. */
int nm_newmad_sr_init(nm_session_t session);
/** @brief Attach @p comm to @p session (a session of nm_sr_init()); nm_mpi_nmad.h's use. @return 0 or -NM_EINVAL. */
int nm_newmad_session_set_comm(nm_session_t session, nm_comm_t comm);
/** @brief The communicator attached to @p session by nm_mpi_nmad.h (nm_mpi_comm()), or NULL. Thread-safety: takes the
 *  core lock. */
nm_comm_t nm_comm_get_by_session(nm_session_t session);
/** @brief This process's rank in @p comm. */
static inline int nm_comm_rank(nm_comm_t comm) { return comm->rank; }
/** @brief Members of @p comm. */
static inline int nm_comm_size(nm_comm_t comm) { return comm->size; }
/** @brief The session of @p comm. */
static inline nm_session_t nm_comm_get_session(nm_comm_t comm) { return comm->session; }
/** @brief Gate to member @p rank of @p comm (made on first use). @return NULL when out of range or out of memory.
 *  Thread-safety: takes the core lock. */
nm_gate_t nm_comm_get_gate(nm_comm_t comm, int rank);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_INTERFACE_H */
