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
 * A point-to-point request gets a monitor on its nmad request (nm_sr_request_set_monitor, nm_mpi_request_watch)
 * only when it needs one: when it is freed while active, and when a multi-request wait sleeps on it
 * (MPI_Waitany/Waitsome store the address of a flag in the nmad request's user_ref and block in
 * nm_core_wait_flag() on it, so that they spin/yield/block exactly like single waits). Single waits sleep on the
 * nmad request's own completion flag, and a "plain" request (struct nm_mpi_request_s::plain) is completed and
 * released in one step.
 */
#ifndef NM_MPI_P2P_H
#define NM_MPI_P2P_H

#include "nm_mpi_private.h"
#include <stdlib.h>

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
  if (!d || !d->committed) /* predefined types are committed */
    return MPI_ERR_TYPE;
  /* One unsigned comparison each for the common case (a rank of the group, a tag in [0, TAG_UB]); the special
   * values (negative) are looked at only when it fails. */
  if (__builtin_expect((unsigned)peer >= (unsigned)c->peer_size, 0) && peer != MPI_PROC_NULL &&
      !(is_recv && peer == MPI_ANY_SOURCE))
    return MPI_ERR_RANK;
  if (__builtin_expect((unsigned)tag > (unsigned)NM_MPI_TAG_UB, 0) && !(is_recv && tag == MPI_ANY_TAG))
    return MPI_ERR_TAG;
  *pc = c;
  *pd = d;
  return MPI_SUCCESS;
}

/** Attach the monitor of point-to-point requests to a posted @p r whose nmad request has not completed (checked
 *  by the caller, with no progress since): it wakes multi-request waits (the flag in the nmad request's user_ref)
 *  and releases requests nobody waits for (user_freed). */
void nm_mpi_request_watch(struct nm_mpi_request_s *r);

/** Nobody will wait for @p r any more (MPI_Request_free while active, buffered sends): release it now when it is
 *  complete, else when its transfer completes (its monitor). Point-to-point or completed requests only. */
void nm_mpi_request_detach(struct nm_mpi_request_s *r);

/** Fill a request (table or stack) for a point-to-point operation; not started. */
static inline void nm_mpi_p2p_setup(struct nm_mpi_request_s *r, int kind, const void *buf, int count,
                                    MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, int mode)
{
  r->kind = kind;
  r->buf = (void *)buf;
  r->count = count;
  r->datatype = datatype;
  r->peer = peer;
  r->tag = tag;
  r->comm = comm;
  r->mode = mode;
}



/** Buffered send (MPI-3.1 3.6): copy the data and send the copy from a detached request accounted against the
 *  buffer of MPI_Buffer_attach. @p link: the application's request to link with the transfer (MPI_Ibsend, for
 *  MPI_Cancel), or NULL. @return MPI_SUCCESS, MPI_ERR_BUFFER (no buffer or no room), other classes. */
int nm_mpi_bsend_post(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      struct nm_mpi_request_s *link);
/** Link the application's request @p u of a buffered send (MPI_Ibsend) with its detached transfer @p t, so that
 *  MPI_Cancel on @p u can withdraw @p t; released with @p u. */
void nm_mpi_bsend_link(struct nm_mpi_request_s *u, struct nm_mpi_request_s *t);

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
/** Block until @p r completes and write its status to @p status (may be MPI_STATUS_IGNORE) with the rules of
 *  single completions (MPI_ERROR only set on failure, MPI-3.1 3.2.5). Release @p r next: when its transfer
 *  succeeded on the latency path, r->status is not filled. @return the operation's MPI code. */
int nm_mpi_request_wait_status(struct nm_mpi_request_s *r, MPI_Status *status);
/** Check @p r without progressing. @return 1 when complete (or inactive), 0 otherwise. */
int nm_mpi_request_check(struct nm_mpi_request_s *r);

/** Status helpers. */
void nm_mpi_status_empty(MPI_Status *s);
void nm_mpi_status_proc_null(MPI_Status *s);
/** Copy @p src to @p dst (dst may be MPI_STATUS_IGNORE); MPI_ERROR is copied only when @p with_error or when
 *  it carries an error (single-status calls leave the field alone on success, MPI-3.1 3.2.5). */
static inline void nm_mpi_status_out(MPI_Status *dst, const MPI_Status *src, int with_error)
{
  if (dst == MPI_STATUS_IGNORE)
    return;
  int err = dst->MPI_ERROR;
  *dst = *src;
  if (!with_error && src->MPI_ERROR == MPI_SUCCESS)
    dst->MPI_ERROR = err;
}

/** Release a matched message (MPI_Mprobe) nobody received, with its data (MPI_Finalize). */
void nm_mpi_message_free(void *message);

/** Rank in @p comm's source group of a gate; falls back to the world rank when the communicator is gone. */
int nm_mpi_source_rank(MPI_Comm comm, nm_gate_t gate);

/** Post the nmad send or receive of point-to-point request @p r, whose communicator and datatype objects are known;
 *  the operation comes as values (what nm_mpi_p2p_setup() stores), so that the caller can store them after the
 *  post, off the latency path: a send leaves before its request is filled in. Contiguous data goes straight from
 *  or to the application's buffer; non-contiguous data (and buffered sends) through a packed temporary r->tmp,
 *  unpacked and freed at completion. Sets r->active, r->completed, r->tmp (and r->status for MPI_PROC_NULL), and
 *  r->plain: with @p plain (a non-persistent request: Isend, Irecv, Send, Recv), a request in flight with nothing
 *  to unpack at completion takes the waits' latency path. No monitor is attached here: the latency path does
 *  without one, and nm_mpi_request_watch() adds it to the requests that need it. Inline: the blocking and
 *  non-blocking calls all start here.
 *  @return MPI_SUCCESS (also when the nmad request failed at once: it then completes with its error),
 *          MPI_ERR_RANK, MPI_ERR_NO_MEM, or the class of an nmad error when nothing was posted (r inactive). */
static inline __attribute__((always_inline)) int nm_mpi_transfer_post(struct nm_mpi_request_s *r,
                                                                      const struct nm_mpi_comm_s *c,
                                                                      const struct nm_mpi_datatype_s *d, int kind,
                                                                      const void *buf, int count, int peer,
                                                                      int tag, int mode, int prio, int plain)
{
  r->active = 1;
  r->completed = 0; /* the status is filled at completion (nm_mpi_request_complete) */
  r->plain = 0;
  r->tmp = NULL;
  if (peer == MPI_PROC_NULL) {
    nm_mpi_status_proc_null(&r->status);
    r->completed = 1;
    return MPI_SUCCESS;
  }
  nm_len_t len = (nm_len_t)nm_mpi_datatype_packed_size(d, count);
  void *ptr = len ? nm_mpi_datatype_contig_ptr(d, buf) : NULL;
  int err;
  if (kind == NM_MPI_REQ_SEND) {
    nm_gate_t gate = nm_mpi_comm_gate(c, peer);
    if (!gate)
      return MPI_ERR_RANK;
    if (len && (!d->contiguous || mode == NM_MPI_MODE_BUFFERED)) {
      if (!(r->tmp = malloc(len)))
        return MPI_ERR_NO_MEM;
      nm_mpi_datatype_pack(d, buf, count, r->tmp);
      ptr = r->tmp;
    }
    nm_tag_t ntag = nm_mpi_p2p_tag(c, tag);
    r->plain = plain && !r->tmp; /* set before the post: nothing reads it until a wait */
    if (__builtin_expect(!prio && mode != NM_MPI_MODE_SYNC, 1)) {
      err = nm_sr_isend(nm_mpi.session, gate, ntag, ptr, len, &r->nreq); /* init and post in one call */
    } else {
      nm_sr_send_init(nm_mpi.session, &r->nreq);
      if (prio)
        nm_sr_send_set_priority(nm_mpi.session, &r->nreq, prio);
      if (mode == NM_MPI_MODE_SYNC)
        err = nm_sr_send_issend(nm_mpi.session, &r->nreq, gate, ntag, ptr, len);
      else
        err = nm_sr_send_isend(nm_mpi.session, &r->nreq, gate, ntag, ptr, len);
    }
  } else {
    nm_gate_t gate = NM_ANY_GATE;
    if (peer != MPI_ANY_SOURCE && !(gate = nm_mpi_comm_gate(c, peer)))
      return MPI_ERR_RANK;
    nm_tag_t ntag = nm_mpi_p2p_tag(c, tag == MPI_ANY_TAG ? 0 : tag);
    nm_tag_t mask = tag == MPI_ANY_TAG ? NM_MPI_TAG_MASK_ANY : NM_TAG_MASK_FULL;
    if (len && !d->contiguous) {
      if (!(r->tmp = malloc(len)))
        return MPI_ERR_NO_MEM;
      ptr = r->tmp; /* unpacked in nm_mpi_request_complete() */
    }
    r->plain = plain && !r->tmp;
    err = nm_sr_irecv_mask(nm_mpi.session, gate, ntag, mask, ptr, len, &r->nreq); /* init and post */
  }
  if (err && !r->nreq.completed) { /* not posted at all */
    free(r->tmp);
    r->tmp = NULL;
    r->active = 0;
    return nm_mpi_from_nm_err(err);
  }
  return MPI_SUCCESS; /* failures after posting complete the request with their status */
}

/** nm_mpi_transfer_post() of a request whose fields (nm_mpi_p2p_setup(), prio) are set: MPI_Start, collectives. */
static inline int nm_mpi_request_post(struct nm_mpi_request_s *r, const struct nm_mpi_comm_s *c,
                                      const struct nm_mpi_datatype_s *d)
{
  return nm_mpi_transfer_post(r, c, d, r->kind, r->buf, r->count, r->peer, r->tag, r->mode, r->prio, 0);
}

/** A free request object of @p kind, from the free list (last freed first: its cache lines are warm) or newly
 *  allocated; only kind and handle are set. @return NULL when out of memory. Inline: the latency path. */
static inline __attribute__((always_inline)) struct nm_mpi_request_s *nm_mpi_request_take(int kind)
{
  struct nm_mpi_request_s *r = nm_mpi.request_free;
  if (__builtin_expect(r != NULL, 1)) {
    nm_mpi.request_free = r->next_free;
  } else {
    r = calloc(1, sizeof(*r));
    int h = r ? nm_mpi_table_add(&nm_mpi.requests, r) : -1;
    if (h < 0) {
      free(r);
      return NULL;
    }
    r->handle = h;
  }
  r->kind = kind;
  if (kind == NM_MPI_REQ_COLL)
    nm_mpi.n_coll_reqs++;
  return r;
}

/** Put an object that holds nothing any more (no datatype reference, no temporary, no nmad request in flight)
 *  back on the free list; its handle becomes invalid. */
static inline void nm_mpi_request_recycle(struct nm_mpi_request_s *r)
{
  r->kind = 0;
  r->plain = 0; /* a stale handle never takes the waits' latency path */
  r->next_free = nm_mpi.request_free;
  nm_mpi.request_free = r;
}

/** nm_mpi_p2p_setup() of a new non-persistent request, with its priority. */
static inline void nm_mpi_p2p_fill(struct nm_mpi_request_s *r, int kind, const void *buf, int count,
                                   MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, int mode, int prio)
{
  nm_mpi_p2p_setup(r, kind, buf, count, datatype, peer, tag, comm, mode);
  r->prio = prio;
  r->persistent = 0;
  r->user_freed = 0;
}

/** Create, fill and start a non-blocking point-to-point request: the arguments are checked here (MPI_ERR_COMM,
 *  _COUNT, _TYPE, _RANK, _TAG), then the request is posted (nm_mpi_request_post()). Inline, so that Isend, Irecv
 *  and their variants each get a copy specialised for their kind and mode (the latency path).
 *  @return MPI_SUCCESS or the error class; *request is set on success. */
static inline __attribute__((always_inline)) int nm_mpi_p2p_post(int kind, const void *buf, int count,
                                                                 MPI_Datatype datatype, int peer, int tag,
                                                                 MPI_Comm comm, int mode, int prio,
                                                                 MPI_Request *request)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d;
  int err = nm_mpi_p2p_check_get(comm, count, datatype, peer, tag, kind == NM_MPI_REQ_RECV, &c, &d);
  if (err)
    return err;
  struct nm_mpi_request_s *r = nm_mpi_request_take(kind);
  if (!r)
    return MPI_ERR_NO_MEM;
  /* A send leaves before its request is filled in (the rest is done while the message travels); a receive is
   * filled in first, so that fewer values stay live across the post. Nothing reads these fields before a wait. */
  if (kind == NM_MPI_REQ_RECV)
    nm_mpi_p2p_fill(r, kind, buf, count, datatype, peer, tag, comm, mode, prio);
  err = nm_mpi_transfer_post(r, c, d, kind, buf, count, peer, tag, mode, prio, 1);
  if (err) {
    nm_mpi_request_recycle(r); /* nothing was posted, r->tmp is NULL */
    return err;
  }
  if (kind != NM_MPI_REQ_RECV)
    nm_mpi_p2p_fill(r, kind, buf, count, datatype, peer, tag, comm, mode, prio);
  if (datatype >= NM_MPI_PREDEFINED_TYPES) /* held until the request is released (predefined types are not counted) */
    nm_mpi_datatype_ref(datatype);
  *request = r->handle;
  return MPI_SUCCESS;
}

#pragma GCC visibility pop

/** The root's side of a dynamic broadcast from an MPI program (MPIX_Dynamic_bcast, MPIX_Mcast_topo;
 *  mpi_ext_p2p.c): @p dests are ranks of @p comm (@p c its object, arguments already checked), translated to world
 *  ranks; non-contiguous data is packed once; the request completes with the broadcast (nm_mcast_test). @p seg
 *  segment size in bytes (0: whole message); @p einval the MPI error class for the engine's -NM_EINVAL; @p func
 *  the MPI function named in errors. @return MPI_SUCCESS or the error handler's result. Under the MPI lock. */
int nm_mpi_dbcast_post(MPI_Comm comm, struct nm_mpi_comm_s *c, const void *buf, int count, MPI_Datatype datatype,
                       const int dests[], const int prios[], int ndests, int tag, enum nm_mcast_tree_e tree,
                       nm_len_t seg, int einval, const char *func, MPI_Request *request);

#endif /* NM_MPI_P2P_H */
