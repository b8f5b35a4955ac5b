/**
 * @file nm_rpc.h
 * @brief Active messages (rpc), after NewMadeleine's rpc interface (Denis 2020, "Dynamic broadcasts in
 * StarPU/NewMadeleine", sections 4.2-4.3: "a dedicated communication channel that is separate from the channel
 * used for point-to-point communications ... always listening for all tags and from all nodes").
 *
 * The rpc channel of a session is a separate tag namespace (an internal session named "<session>/rpc"): rpc tags
 * never match point-to-point receives. A service (tag, mask) is always listening for all peers; several messages
 * for one service may be outstanding and are handled one after the other in arrival order, without any posted
 * receive.
 *
 * A message is a header (at most the service's header length) followed by a body. The header travels eagerly;
 * the handler runs when it has arrived, reads it, and chooses where the body goes with nm_rpc_irecv_body(). A
 * body above the rendezvous threshold then moves by rendezvous straight into that buffer (no intermediate copy);
 * a small body is copied from the packet. The finalizer runs when the body is in place.
 *
 * In a handler or finalizer you may: read the token, call nm_rpc_irecv_body() (handler only), post sends
 * (nm_rpc_isend(), nm_sr_isend()) and receives, set monitors. You must not wait (nm_sr_swait, nm_rpc_send,
 * nm_core_wait...) or close the session: they run inside progress.
 * Thread-safety: like the core (one thread at a time per core).
 */
#ifndef NM_RPC_H
#define NM_RPC_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest rpc header in bytes (16 KiB). A header travels in the first packet of its message (with the data of
 *  a small message, inline with the RDV of a large one), so it must fit in a packet with room to spare; longer
 *  metadata goes in the body, which has no such limit (dynamic broadcasts send long destination lists so, see
 *  nm_mcast.h). */
#define NM_RPC_HLEN_MAX ((nm_len_t)16 * 1024)

typedef struct nm_rpc_service_s *nm_rpc_service_t; /**< a registered service */
typedef struct nm_rpc_token_s *nm_rpc_token_t;     /**< one incoming message, from handler to finalizer */
typedef struct nm_req_s nm_rpc_req_t;              /**< send request (same struct as nm_sr_request_t) */

/** @brief Handler: the header of a message arrived.
 *  @param header the header bytes (valid during the call only); @param hlen their number.
 *  @return 0, or a negative -NM_E* to reject the message as malformed: the gate it came from is failed. */
typedef int (*nm_rpc_handler_t)(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref);
/** @brief Finalizer: the body (if the handler asked for it) is in its buffer, or the transfer failed
 *  (nm_rpc_token_status()). The token is released after this returns. */
typedef void (*nm_rpc_finalizer_t)(nm_rpc_token_t token, void *ref);

/**
 * @brief Register a service on the rpc channel of @p session: messages whose tag t satisfies
 * (t & mask) == (tag & mask) go to it. Services of one session must not overlap.
 * @param hlen_max largest header accepted in bytes (at most NM_RPC_HLEN_MAX); a longer header fails the sending
 *        gate before the handler runs and before anything is allocated for it.
 * @param handler required; @param finalizer may be NULL; @param ref passed to both.
 * @return 0, -NM_EINVAL (bad argument or overlapping service), -NM_ENOMEM.
 */
int nm_rpc_register(nm_session_t session, nm_tag_t tag, nm_tag_t mask, nm_len_t hlen_max,
                    nm_rpc_handler_t handler, nm_rpc_finalizer_t finalizer, void *ref, nm_rpc_service_t *out);

/** @brief Stop a service. Messages arriving later for its tags are kept on the channel until a service for
 *  them registers again (as messages that arrive before the first registration are).
 *  @return 0 or -NM_EBUSY if one of its tokens is still waiting for a body. */
int nm_rpc_unregister(nm_rpc_service_t service);

/** @brief Source gate of the message. */
nm_gate_t nm_rpc_get_source(nm_rpc_token_t token);
/** @brief Tag of the message. */
nm_tag_t nm_rpc_get_tag(nm_rpc_token_t token);
/** @brief Body size in bytes (total message minus header). */
nm_len_t nm_rpc_get_body_size(nm_rpc_token_t token);
/** @brief Session the service belongs to (the user session, not the internal rpc channel). */
nm_session_t nm_rpc_get_session(nm_rpc_token_t token);
/** @brief Free pointer carried from handler to finalizer. */
void nm_rpc_token_set_ref(nm_rpc_token_t token, void *ref);
void *nm_rpc_token_get_ref(nm_rpc_token_t token);
/** @brief Status of the body transfer, for the finalizer: 0, -NM_ETRUNCATED (buffer shorter than the body),
 *  -NM_ECLOSED (peer died). */
int nm_rpc_token_status(nm_rpc_token_t token);

/**
 * @brief From the handler only: receive the body (or its first @p len bytes) into @p buf. Without this call
 * the body is discarded. @return 0, -NM_EINVAL (called twice or outside the handler).
 */
int nm_rpc_irecv_body(nm_rpc_token_t token, void *buf, nm_len_t len);

/**
 * @brief Send a message to service @p tag on @p gate: header then body (both untouched until completion).
 * Prepare @p req with nm_sr_send_init() first to set a priority or a monitor, or pass a zeroed struct.
 * @param header, hlen header bytes (hlen <= NM_RPC_HLEN_MAX); @param body, blen body bytes (0 allowed).
 * @return 0, -NM_EINVAL, -NM_ECLOSED (gate failed; the request also completes with it).
 */
int nm_rpc_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *header, nm_len_t hlen,
                 const void *body, nm_len_t blen, nm_rpc_req_t *req);
/** @brief Blocking nm_rpc_isend() (not from a handler). @return the send status. */
int nm_rpc_send(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *header, nm_len_t hlen,
                const void *body, nm_len_t blen);

#ifdef __cplusplus
}
#endif
#endif /* NM_RPC_H */
