/**
 * @file nm_mpi_p2p.h
 * @brief Private to the point-to-point family (mpi_request.c, mpi_p2p.c, mpi_ext_p2p.c): argument checks,
 *        status helpers, waiting, buffered sends. The contract with the other families is nm_mpi_private.h.
 *
 * Request life cycle (struct nm_mpi_request_s):
 *  - `active`: started and not yet returned by a wait/test (non-persistent requests are released at that point;
 *    persistent ones become inactive and keep their handle);
 *  - `completed`: the MPI-level completion was processed (status filled, data unpacked, temporaries freed);
 *  - `user_freed`: nobody will wait for it (MPI_Request_free while active, buffered sends): the nmad request
 *    monitor destroys it when the transfer completes.
 * Point-to-point requests carry a monitor on their nmad request (nm_sr_request_set_monitor) that also wakes
 * multi-request waits: MPI_Waitany/Waitsome store the address of a flag in the nmad request's user_ref and
 * block in nm_core_wait_flag() on it, so that they spin/yield/block exactly like single waits.
 */
#ifndef NM_MPI_P2P_H
#define NM_MPI_P2P_H

#include "nm_mpi_private.h"

#pragma GCC visibility push(hidden) /* internal to libnmad_mpi (see nm_mpi_private.h) */

/** Send modes (struct nm_mpi_request_s::mode). */
enum nm_mpi_send_mode_e {
  NM_MPI_MODE_STANDARD = 0,
  NM_MPI_MODE_SYNC = 1,
  NM_MPI_MODE_BUFFERED = 2,
  NM_MPI_MODE_READY = 3
};

/** Check the arguments of a point-to-point call. @p is_recv allows MPI_ANY_SOURCE and MPI_ANY_TAG.
 *  @return MPI_SUCCESS or the error class (MPI_ERR_COMM, _COUNT, _TYPE, _RANK, _TAG). */
int nm_mpi_p2p_check(MPI_Comm comm, int count, MPI_Datatype datatype, int peer, int tag, int is_recv);

/** nm_mpi_p2p_check() that also hands back the communicator and datatype objects (inline: every
 *  point-to-point call starts here). */
static inline int nm_mpi_p2p_check_get(MPI_Comm comm, int count, MPI_Datatype datatype, int peer, int tag,
                                       int is_recv, struct nm_mpi_comm_s **pc, struct nm_mpi_datatype_s **pd)
{
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return MPI_ERR_COMM;
  if (count < 0)
    return MPI_ERR_COUNT;
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  if (!d || !(d->committed || d->predefined))
    return MPI_ERR_TYPE;
  int size = c->is_inter ? c->remote_size : c->size;
  if (peer != MPI_PROC_NULL && !(is_recv && peer == MPI_ANY_SOURCE) && (peer < 0 || peer >= size))
    return MPI_ERR_RANK;
  if (!(is_recv && tag == MPI_ANY_TAG) && (tag < 0 || tag > NM_MPI_TAG_UB))
    return MPI_ERR_TAG;
  *pc = c;
  *pd = d;
  return MPI_SUCCESS;
}

/** nm_mpi_request_start() of a point-to-point request whose communicator and datatype objects are known. */
int nm_mpi_request_post(struct nm_mpi_request_s *r, const struct nm_mpi_comm_s *c,
                        const struct nm_mpi_datatype_s *d);

/** Fill a request (table or stack) for a point-to-point operation; not started. */
void nm_mpi_p2p_setup(struct nm_mpi_request_s *r, int kind, const void *buf, int count, MPI_Datatype datatype,
                      int peer, int tag, MPI_Comm comm, int mode);

/** A free request object with only its kind and handle set (nm_mpi_request_new() without the defaults: the
 *  caller sets every field it reads). @return handle, or MPI_REQUEST_NULL (out of memory) with *out NULL. */
MPI_Request nm_mpi_request_claim(int kind, struct nm_mpi_request_s **out);

/** Create, fill and start a non-blocking point-to-point request (arguments already checked).
 *  @return MPI_SUCCESS or the error class; *request is set on success. */
int nm_mpi_p2p_post(int kind, const void *buf, int count, MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
                    int mode, int prio, MPI_Request *request);

/** Buffered send (MPI-3.1 3.6): copy the data and send the copy from a detached request accounted against the
 *  buffer of MPI_Buffer_attach. @return MPI_SUCCESS, MPI_ERR_BUFFER (no buffer or no room), other classes. */
int nm_mpi_bsend_post(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);

/** Wait until no buffered send is in flight (MPI_Buffer_detach, MPI_Finalize). */
void nm_mpi_bsend_drain(void);

/** One non-blocking progress pass of the core and of every active non-blocking collective. */
void nm_mpi_poll(void);
/** State of a wait loop that re-checks its own condition (probe, drains, collectives): how long it has been
 *  idle, to spin first, then yield, then block. */
struct nm_mpi_waiter_s {
  uint64_t idle_since; /* ns, 0 while events keep coming */
};
#define NM_MPI_WAITER_INIT {0}
/** One step of such a loop: progress the core and every active collective; when idle, spin (20 us), then yield
 *  (until 10 ms), then block in the drivers until an nmad event (at most 1 ms). */
void nm_mpi_wait_event(struct nm_mpi_waiter_s *w);
/** Block until @p r completes (its completion is processed: status filled). */
void nm_mpi_request_wait(struct nm_mpi_request_s *r);
/** Check @p r without progressing. @return 1 when complete (or inactive), 0 otherwise. */
int nm_mpi_request_check(struct nm_mpi_request_s *r);

/** Status helpers. */
void nm_mpi_status_empty(MPI_Status *s);
void nm_mpi_status_proc_null(MPI_Status *s);
/** Copy @p src to @p dst (dst may be MPI_STATUS_IGNORE); MPI_ERROR is copied only when @p with_error or when
 *  it carries an error (single-status calls leave the field alone on success, MPI-3.1 3.2.5). */
void nm_mpi_status_out(MPI_Status *dst, const MPI_Status *src, int with_error);

/** Release a matched message (MPI_Mprobe) nobody received, with its data (MPI_Finalize). */
void nm_mpi_message_free(void *message);

/** Rank in @p comm's source group of a gate; falls back to the world rank when the communicator is gone. */
int nm_mpi_source_rank(MPI_Comm comm, nm_gate_t gate);

#pragma GCC visibility pop

#endif /* NM_MPI_P2P_H */
