/**
 * @file nm_sendrecv_interface.h
 * @brief NewMadeleine's send/receive request model over nmad (issue 16, deliverable 2; doc/newmad.md): requests
 *        built in steps (init, data descriptor, priority, header length, post), receives whose data descriptor
 *        is given after the message's first bytes were looked at (peek / offset), and request monitors with
 *        event info (NM_SR_EVENT_*). Compat layer over nmad's core; exclusive with <nmad/nm_sendrecv.h> in one
 *        translation unit (the same names take other arguments there).
 *
 * A session is made usable for this interface by nm_sr_init() (nm_mpi_nmad.h does it for its session): from then
 * on the session's messages are matched by this layer (a session hook), in post order, on (gate or NM_ANY_GATE,
 * tag under mask), in the sender's order per (gate, tag) (MPI non-overtaking, kept by the core). Data is moved
 * without an intermediate copy when the send descriptor has at most two pieces (nmad's core sends a header and a
 * body) and, on the receiving side, for eager messages always and for rendezvous bodies that land in one piece;
 * otherwise once through a temporary buffer (doc/newmad.md, "Copies").
 *
 * Events (nm_sr_request_monitor()): a receive fires NM_SR_EVENT_RECV_DATA when a message matched it and it has no
 * data descriptor yet (the monitor may peek at the first bytes, set an offset and give the descriptor). At the
 * end, a send fires NM_SR_EVENT_SEND_COMPLETED | NM_SR_EVENT_FINALIZED and a receive NM_SR_EVENT_RECV_COMPLETED |
 * NM_SR_EVENT_FINALIZED, in one call (the bits of the monitor's mask), as NewMadeleine does for a request nothing
 * holds any more: nmad's broadcasts hand the data over once forwarding is done, so COMPLETED never comes alone.
 * The monitor may release the request at FINALIZED: nothing touches it afterwards.
 *
 * Thread-safety: every call takes the core lock (nm_core_lock()); requests may be posted from several threads
 * while the progress thread runs. One request is used by one thread at a time. Monitors run under the core lock
 * (from the progress thread or inside a call) and must not block.
 */
#ifndef NM_SENDRECV_INTERFACE_H
#define NM_SENDRECV_INTERFACE_H

#ifdef NM_SENDRECV_H
#error "<nm_sendrecv_interface.h> (NewMadeleine's names) and <nmad/nm_sendrecv.h> (nmad's) cannot be used in one file"
#endif

#include <nm_public.h>
#include <nm_data.h>
#include <nm_session_interface.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Event bits of nm_sr_request_monitor() (NewMadeleine's names; nmad's NM_EVENT_* values). */
typedef uint32_t nm_sr_event_t;
#define NM_SR_EVENT_SEND_COMPLETED ((nm_sr_event_t)0x01) /**< send: the data may be reused */
#define NM_SR_EVENT_RECV_COMPLETED ((nm_sr_event_t)0x02) /**< receive: the data is in the descriptor */
#define NM_SR_EVENT_RECV_DATA ((nm_sr_event_t)0x04)      /**< receive: matched, no descriptor yet (peek now) */
#define NM_SR_EVENT_FINALIZED ((nm_sr_event_t)0x08)      /**< the request is over: it may be released */

struct nm_sr_request_s;
/** What a monitor learns with an event. */
typedef struct nm_sr_event_info_s {
  struct {
    struct nm_sr_request_s *p_request; /**< the request */
  } req;
  struct {
    nm_gate_t p_gate; /**< receive events: the source */
    nm_tag_t tag;     /**< receive events: the message's tag */
    nm_len_t len;     /**< receive events: the message's length in bytes */
  } recv;
  int status; /**< COMPLETED / FINALIZED: the request's status (0 or -NM_E*) */
} nm_sr_event_info_t;

/** A monitor: called with the event bits, their info and the request's ref (nm_sr_request_set_ref()). */
typedef void (*nm_sr_event_notifier_t)(nm_sr_event_t event, const nm_sr_event_info_t *info, void *ref);

/** A request of this interface, embedded by the caller; must stay in place from init to FINALIZED. Fields are
 *  private. Initialise storage with NM_SR_REQUEST_NULL or nm_sr_send_init() / nm_sr_recv_init(). */
typedef struct nm_sr_request_s {
  struct nm_req_s req;           /* nmad's core request carrying the transfer */
  struct nm_data_s data;         /* copy of the caller's descriptor */
  nm_session_t session;
  nm_gate_t gate;                /* posted: destination / source (NULL: any) */
  nm_tag_t tag, mask;
  nm_gate_t src;                 /* receive: matched source */
  nm_tag_t rtag;                 /* receive: matched tag */
  nm_len_t hlen;                 /* send: header length (nm_sr_send_header()) */
  nm_len_t offset;               /* receive: bytes already consumed (nm_sr_recv_offset()) */
  nm_len_t msg_len;              /* receive: the message's length */
  nm_prio_t prio;
  uint8_t kind;                  /* 0 none, 1 send, 2 receive */
  uint8_t has_data;
  uint8_t state;                 /* NM_SR_ST_* (nm_newmad_sr.c) */
  uint8_t truncated;
  int status;
  volatile int completed;        /* 1 once its events were delivered */
  void *ref;                     /* nm_sr_request_set_ref() */
  nm_sr_event_t ev_mask;
  nm_sr_event_t events;          /* events that happened (a monitor set later still gets them) */
  nm_sr_event_notifier_t notifier;
  struct nm_sr_request_s *next, *prev; /* posted receives of the session */
  void *tmp;                     /* packed send, or bounce buffer of a receive body */
  nm_len_t body_at;              /* receive through tmp: message offset of tmp[0] */
  nm_len_t body_len;
  const void *in;                /* during NM_SR_EVENT_RECV_DATA: the incoming message */
} nm_sr_request_t;

/** Initial value of a request's storage. */
#define NM_SR_REQUEST_NULL ((nm_sr_request_t){.kind = 0})

/* ---- library entry points (nm_newmad_sr.c); use the NewMadeleine names below ---- */
int nm_newmad_sr_init(nm_session_t session);
int nm_newmad_sr_exit(nm_session_t session);
void nm_newmad_sr_send_init(nm_session_t session, nm_sr_request_t *req);
void nm_newmad_sr_send_pack_data(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data);
int nm_newmad_sr_send_set_priority(nm_session_t session, nm_sr_request_t *req, nm_prio_t prio);
int nm_newmad_sr_send_header(nm_session_t session, nm_sr_request_t *req, nm_len_t hlen);
int nm_newmad_sr_send_post(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, int sync);
void nm_newmad_sr_recv_init(nm_session_t session, nm_sr_request_t *req);
void nm_newmad_sr_recv_unpack_data(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data);
int nm_newmad_sr_recv_irecv(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag,
                            nm_tag_t mask);
int nm_newmad_sr_recv_peek(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data);
int nm_newmad_sr_recv_offset(nm_session_t session, nm_sr_request_t *req, nm_len_t offset);
int nm_newmad_sr_request_monitor(nm_session_t session, nm_sr_request_t *req, nm_sr_event_t mask,
                                 nm_sr_event_notifier_t notifier);
int nm_newmad_sr_wait(nm_session_t session, nm_sr_request_t *req);
int nm_newmad_sr_test(nm_session_t session, nm_sr_request_t *req);
int nm_newmad_sr_rcancel(nm_session_t session, nm_sr_request_t *req);
int nm_newmad_sr_recv_source(nm_session_t session, nm_sr_request_t *req, nm_gate_t *gate);
int nm_newmad_sr_get_size(nm_session_t session, nm_sr_request_t *req, nm_len_t *len);
int nm_newmad_sr_recv_get_tag(nm_session_t session, nm_sr_request_t *req, nm_tag_t *tag);

/* ---- NewMadeleine's names ---- */

/** @brief Make @p session usable by this interface (its messages are matched here from now on; stored ones are
 *  offered to the receives posted later). @return 0, -NM_EALREADY, -NM_EBUSY (the session has another hook, e.g.
 *  an rpc channel), -NM_ENOMEM. */
static inline int nm_sr_init(nm_session_t session) { return nm_newmad_sr_init(session); }
/** @brief Stop using @p session here: posted receives complete with -NM_ECANCELED. @return 0 or -NM_EINVAL. */
static inline int nm_sr_exit(nm_session_t session) { return nm_newmad_sr_exit(session); }

/** @brief Reset @p req as a send of @p session (priority 0, no data, no header, no monitor). */
static inline void nm_sr_send_init(nm_session_t session, nm_sr_request_t *req) { nm_newmad_sr_send_init(session, req); }
/** @brief The data to send: @p data is copied (the memory it describes must stay until SEND_COMPLETED). */
static inline void nm_sr_send_pack_data(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data)
{
  nm_newmad_sr_send_pack_data(session, req, data);
}
/** @brief Send priority, larger is more urgent (NMAD_STRATEGY=prio honours it). @return 0 or -NM_EINVAL (posted). */
static inline int nm_sr_send_set_priority(nm_session_t session, nm_sr_request_t *req, nm_prio_t prio)
{
  return nm_newmad_sr_send_set_priority(session, req, prio);
}
/** @brief The first @p hlen bytes of the data are a header the receiver may peek at before giving its buffer,
 *  even when the rest comes by rendezvous. @return 0 or -NM_EINVAL (hlen > 16 KiB or > the data). */
static inline int nm_sr_send_header(nm_session_t session, nm_sr_request_t *req, nm_len_t hlen)
{
  return nm_newmad_sr_send_header(session, req, hlen);
}
/** @brief Post the send to (@p gate, @p tag). @return 0, -NM_EINVAL, -NM_ENOMEM, or the gate's error. */
static inline int nm_sr_send_isend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag)
{
  return nm_newmad_sr_send_post(session, req, gate, tag, 0);
}
/** @brief As nm_sr_send_isend(), synchronous: completes once the receiver matched the message. */
static inline int nm_sr_send_issend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag)
{
  return nm_newmad_sr_send_post(session, req, gate, tag, 1);
}

/** @brief Reset @p req as a receive of @p session (no data descriptor, offset 0, no monitor). */
static inline void nm_sr_recv_init(nm_session_t session, nm_sr_request_t *req) { nm_newmad_sr_recv_init(session, req); }
/** @brief Where the message goes: @p data (copied) describes the whole message; bytes before the offset
 *  (nm_sr_recv_offset()) are not written. Before nm_sr_recv_irecv() or inside the RECV_DATA monitor. */
static inline void nm_sr_recv_unpack_data(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data)
{
  nm_newmad_sr_recv_unpack_data(session, req, data);
}
/** @brief Post the receive: messages from @p gate (NM_ANY_GATE: any) whose tag t has (t & mask) == (tag & mask).
 *  @return 0, -NM_EINVAL (session without nm_sr_init(), request not initialised). */
static inline int nm_sr_recv_irecv(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag,
                                   nm_tag_t mask)
{
  return nm_newmad_sr_recv_irecv(session, req, gate, tag, mask);
}
/** @brief Inside the RECV_DATA monitor: copy the message's first nm_data_size(@p data) bytes into @p data.
 *  @return 0, -NM_EINVAL (not inside RECV_DATA), -NM_EAGAIN (those bytes are not here yet: a rendezvous body;
 *  the sender's header, nm_sr_send_header(), always is). */
static inline int nm_sr_recv_peek(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data)
{
  return nm_newmad_sr_recv_peek(session, req, data);
}
/** @brief The first @p offset bytes of the message were consumed (by a peek): the descriptor given next is the
 *  whole message's and is filled from @p offset on. @return 0 or -NM_EINVAL (already receiving). */
static inline int nm_sr_recv_offset(nm_session_t session, nm_sr_request_t *req, nm_len_t offset)
{
  return nm_newmad_sr_recv_offset(session, req, offset);
}

/** @brief Attach a monitor: @p notifier(event, info, ref) for each event of @p mask. Before posting, or after: the
 *  events of @p mask that already happened (a send that completed inside nm_sr_send_isend(), a receive that
 *  matched a stored message inside nm_sr_recv_irecv()) are delivered at once, from this call, in their order, as
 *  NewMadeleine does. @return 0 or -NM_EINVAL (request not initialised). */
static inline int nm_sr_request_monitor(nm_session_t session, nm_sr_request_t *req, nm_sr_event_t mask,
                                        nm_sr_event_notifier_t notifier)
{
  return nm_newmad_sr_request_monitor(session, req, mask, notifier);
}
/** @brief The pointer given to monitors as ref. */
static inline void nm_sr_request_set_ref(nm_sr_request_t *req, void *ref) { req->ref = ref; }
/** @brief The monitor ref of @p req. */
static inline void *nm_sr_request_get_ref(nm_sr_request_t *req) { return req->ref; }

/** @brief Wait for a send (blocks; the core lock is released while blocked). @return its status. */
static inline int nm_sr_swait(nm_session_t session, nm_sr_request_t *req) { return nm_newmad_sr_wait(session, req); }
/** @brief Wait for a receive. @return 0, -NM_ETRUNCATED, -NM_ECANCELED, -NM_ECLOSED. */
static inline int nm_sr_rwait(nm_session_t session, nm_sr_request_t *req) { return nm_newmad_sr_wait(session, req); }
/** @brief One progress pass, then the send's state. @return -NM_EAGAIN pending, else its status. */
static inline int nm_sr_stest(nm_session_t session, nm_sr_request_t *req) { return nm_newmad_sr_test(session, req); }
/** @brief One progress pass, then the receive's state. @return -NM_EAGAIN pending, else its status. */
static inline int nm_sr_rtest(nm_session_t session, nm_sr_request_t *req) { return nm_newmad_sr_test(session, req); }
/** @brief Cancel a receive that matched nothing: it completes with -NM_ECANCELED. @return 0 or -NM_EBUSY (matched:
 *  it completes normally, or not posted). NewMadeleine returns -NM_EINPROGRESS there; nmad has no such code. */
static inline int nm_sr_rcancel(nm_session_t session, nm_sr_request_t *req) { return nm_newmad_sr_rcancel(session, req); }
/** @brief Source of a matched receive. @return 0 or -NM_EAGAIN. */
static inline int nm_sr_recv_source(nm_session_t session, nm_sr_request_t *req, nm_gate_t *gate)
{
  return nm_newmad_sr_recv_source(session, req, gate);
}
/** @brief Tag of a matched receive. @return 0 or -NM_EAGAIN. */
static inline int nm_sr_request_get_tag(nm_sr_request_t *req, nm_tag_t *tag)
{
  return nm_newmad_sr_recv_get_tag(req->session, req, tag);
}
/** @brief Bytes received (receive) or sent (send) by a completed request. @return 0 or -NM_EAGAIN. */
static inline int nm_sr_request_get_size(nm_sr_request_t *req, nm_len_t *len)
{
  return nm_newmad_sr_get_size(req->session, req, len);
}

#ifdef __cplusplus
}
#endif
#endif /* NM_SENDRECV_INTERFACE_H */
