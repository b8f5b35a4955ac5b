/**
 * @file nm_sendrecv.h
 * @brief Point-to-point interface (names follow NewMadeleine's sendrecv).
 *
 * Semantics: messages between one pair of processes with the same (session, tag) are received in send order
 * (MPI non-overtaking). Receives match on (gate or NM_ANY_GATE, tag under mask). A message that arrives before
 * its receive is kept (unexpected) until a receive matches it. Small messages go eagerly; messages above the
 * rendezvous threshold (NMAD_RDV_THRESHOLD, default 32 KiB; just under 128 KiB over sm on a host with more
 * ranks than cores) go RDV -> RTR -> data straight into the receive buffer (over sm the data is announced with
 * the RDV and pulled at match, no RTR: doc/protocol.md, "Get rendezvous"). A receive buffer shorter than the
 * message completes with -NM_ETRUNCATED after its first bytes are filled. Requests are caller-owned nm_sr_request_t structs that must stay in place until completion.
 * Thread-safety: like the core (one thread at a time per core).
 */
#ifndef NM_SENDRECV_H
#define NM_SENDRECV_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_core.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_req_s nm_sr_request_t; /**< a send or receive request, embedded by the caller */

/* ---- sends ---- */

/** @brief Prepare a send request (priority 0, no monitor). Must precede set_priority/set_monitor. */
void nm_sr_send_init(nm_session_t session, nm_sr_request_t *req);

/** @brief Set the send priority (larger = more urgent). With the default strategy (prio), higher-priority messages
 *  leave first, while messages with the same (gate, tag) keep their order. @return 0 or -NM_EINVAL if posted. */
int nm_sr_send_set_priority(nm_session_t session, nm_sr_request_t *req, nm_prio_t prio);

/**
 * @brief Post a prepared send of a contiguous buffer.
 * @param gate destination; @param tag 64-bit tag; @param buf data (len bytes, untouched until completion);
 * @param len bytes (0 allowed).
 * @return 0 or -NM_EINVAL (bad gate/req), -NM_ECLOSED (gate failed: the request also completes with that status).
 */
int nm_sr_send_isend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag,
                     const void *buf, nm_len_t len);

/** @brief Like nm_sr_send_isend() but synchronous: completes only once the receiver matched it (ACK). */
int nm_sr_send_issend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag,
                      const void *buf, nm_len_t len);

/**
 * @brief Send a small message at once without a request when it can leave in this call (nm_core_send_now()):
 *        at most 4 KiB, eager, to an idle gate of a driver that copies at post (sm; libfabric with fi_inject).
 * @return 1 it left (@p buf reusable, nothing to wait for), 0 not taken (nothing done: post it with
 *         nm_sr_isend(), which keeps the order), -NM_EINVAL (bad session, gate or buffer).
 * Thread-safety: takes the core lock. Source: issue 18, deliverable 3.
 */
int nm_sr_send_now(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len);

/** @brief nm_sr_send_init() + nm_sr_send_isend(). */
int nm_sr_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                nm_sr_request_t *req);
/** @brief nm_sr_send_init() + nm_sr_send_issend(). */
int nm_sr_issend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                 nm_sr_request_t *req);

/* ---- receives ---- */

/**
 * @brief Post a receive that matches tags t with (t & mask) == (tag & mask).
 * @param gate source, or NM_ANY_GATE; @param buf destination of len bytes.
 * @return 0 or -NM_EINVAL. Errors of the transfer are reported in the request status.
 */
int nm_sr_irecv_mask(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, void *buf,
                     nm_len_t len, nm_sr_request_t *req);
/** @brief nm_sr_irecv_mask() with a full mask (exact tag). */
int nm_sr_irecv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, void *buf, nm_len_t len,
                nm_sr_request_t *req);

/* ---- completion ---- */

/** @brief Wait for a send. @return the request status: 0 or -NM_E* (e.g. -NM_ECLOSED if the peer died). */
int nm_sr_swait(nm_session_t session, nm_sr_request_t *req);
/** @brief Wait for a receive. @return 0, -NM_ETRUNCATED, -NM_ECANCELED, -NM_ECLOSED, -NM_EPROTO. */
int nm_sr_rwait(nm_session_t session, nm_sr_request_t *req);
/** @brief Test a send after one progress pass. @return -NM_EAGAIN if pending, else its status. */
int nm_sr_stest(nm_session_t session, nm_sr_request_t *req);
/** @brief Test a receive after one progress pass. @return -NM_EAGAIN if pending, else its status. */
int nm_sr_rtest(nm_session_t session, nm_sr_request_t *req);
/** @brief Wait for any request (send or receive) with a deadline (absolute CLOCK_MONOTONIC ns, 0 = none).
 *  @return its status, or -NM_ETIMEDOUT (request still pending). */
int nm_sr_wait_deadline(nm_session_t session, nm_sr_request_t *req, uint64_t deadline_ns);

/** @brief Source gate of a completed (or matched) receive. @return 0 or -NM_EAGAIN if not matched yet. */
int nm_sr_recv_source(nm_session_t session, nm_sr_request_t *req, nm_gate_t *gate);
/** @brief Received tag of a matched receive. @return 0 or -NM_EAGAIN. */
int nm_sr_recv_get_tag(nm_session_t session, nm_sr_request_t *req, nm_tag_t *tag);
/** @brief Bytes delivered into the buffer of a completed receive (<= buffer length). @return 0 or -NM_EAGAIN. */
int nm_sr_get_size(nm_session_t session, nm_sr_request_t *req, nm_len_t *len);

/**
 * @brief Non-blocking probe for an unexpected message matching (gate, tag under mask).
 * @param[out] out_gate, out_tag, out_len source, tag and full length of the first match (any may be NULL).
 * @return 0 if found, -NM_EAGAIN if none yet.
 */
int nm_sr_iprobe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                 nm_tag_t *out_tag, nm_len_t *out_len);
/** @brief Blocking nm_sr_iprobe(). @return 0, or -NM_ECLOSED if @p gate failed meanwhile. */
int nm_sr_probe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                nm_tag_t *out_tag, nm_len_t *out_len);

/** @brief Cancel a posted receive that has not matched yet; it completes with -NM_ECANCELED.
 *  @return 0, or -NM_EBUSY if it already matched (it will complete normally). */
int nm_sr_rcancel(nm_session_t session, nm_sr_request_t *req);

/**
 * @brief Withdraw a posted send that no receive matched yet (what MPI_Cancel of a send needs, MPI-3.1 3.8.4).
 * The receiver is asked (a CANCEL message; doc/protocol.md): if no receive matched the message, it is dropped
 * there and @p req completes with -NM_ECANCELED (nothing was received); if one did, @p req completes normally.
 * Either way wait for @p req as usual: it completes once the outcome is known, which takes the receiver's
 * progress. An eager send that had already completed (its data left) is re-armed: nm_sr_swait() waits again, for
 * the outcome. Not thread-safe (as every call on a session).
 * @return 0 (outcome pending), -NM_EBUSY (a receive already matched it, or asked for its data: nothing changes),
 *         -NM_EALREADY (cancel already requested), -NM_EINVAL (not a posted send), -NM_ENOMEM, or the gate's
 *         error (-NM_ECLOSED...) if the peer is gone.
 */
int nm_sr_scancel(nm_session_t session, nm_sr_request_t *req);

/**
 * @brief Attach a request monitor: @p notifier(req, event, ref) is called from progress for each event in
 * @p mask (NM_EVENT_SEND_COMPLETED / NM_EVENT_RECV_COMPLETED). Set it before posting (after send_init for
 * sends; for receives use nm_sr_recv_init() + nm_sr_request_set_monitor() + nm_sr_recv_irecv()), or later on a
 * posted request that has not completed: a layer above can then attach a monitor only to the requests that need
 * one (an MPI request freed while active, a wait on several requests) and keep it off the latency path.
 * "From progress" means from inside any call that may progress, not only waits: a receive post that matches a
 * stored rendezvous or synchronous message sends an RTR or ACK, and the driver may read incoming packets then, so
 * monitors of other requests (and of this one) can run before nm_sr_recv_irecv() returns. A monitor that re-posts
 * receives and tracks their post order must allow for that (doc/reliability.md, "reordering on any-source tags").
 * Not thread-safe: no progress on the session may run concurrently (it is the caller's serialisation).
 * @return 0, -NM_EINVAL (request not initialised) or -NM_EALREADY (already completed: the monitor would never
 *         be called; the caller handles the completion itself).
 */
int nm_sr_request_set_monitor(nm_session_t session, nm_sr_request_t *req, unsigned mask,
                              nm_req_notifier_t notifier, void *ref);

/** @brief Prepare a receive request (so a monitor can be set before posting). */
void nm_sr_recv_init(nm_session_t session, nm_sr_request_t *req);
/** @brief Post a prepared receive (see nm_sr_irecv_mask()). */
int nm_sr_recv_irecv(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask,
                     void *buf, nm_len_t len);

/** @brief Free-for-use pointer attached to a request (for layers above). */
static inline void nm_sr_request_set_ref(nm_sr_request_t *req, void *ref) { req->user_ref = ref; }
static inline void *nm_sr_request_get_ref(nm_sr_request_t *req) { return req->user_ref; }

#ifdef __cplusplus
}
#endif
#endif /* NM_SENDRECV_H */
