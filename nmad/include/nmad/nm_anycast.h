/**
 * @file nm_anycast.h
 * @brief Rootless broadcast ("anycast") on a skip ring (Li, Koziol, Tang, Byna 2018, "Anycast: Rootless
 *        Broadcasting with MPI", ExaMPI'18; issue 19, deliverable 2).
 *
 * Any member of a group may broadcast at any time without the others knowing that it is the origin. The members
 * are the nodes of a skip ring (paper, section 2.1), built once per group by nm_anycast_init(): member i has a
 * height h(i) (member 0: H = ceil(log2 n); member i > 0: 1 + the trailing zero bits of i, at most H) and one
 * outbound channel per level l < h(i), to the next member after i whose height is above l (the last ones wrap to
 * member 0). A member has at most H outbound and H inbound channels: O(log n) state per member.
 *
 * The origin sends on all its outbound channels. A member that receives forwards on its outbound channels under the
 * two rules of section 2.2: (1) a message received from a lower member is new here and goes to all channels, one
 * received from a higher (or equal) member goes only to lower members; (2) never to a member at or past the origin
 * on the ring. Every other member then receives each anycast exactly once: n - 1 receptions, n - 1 messages, in at
 * most 2H - 2 hops (checked for every origin of every n up to 300, and n = 512 and 1,024, by tests/test_anycast.c).
 *
 * Receivers get an anycast in one of two ways, chosen at nm_anycast_init():
 *  - a handler (struct nm_anycast_params_s.handler) called with the origin, tag and data as soon as the data is
 *    here, before it is forwarded;
 *  - a plain receive: nm_sr_irecv(nm_anycast_session(ac), NM_ANY_GATE (or the origin's gate), tag, buf, len, &req);
 *    the origin is the receive's source (nm_sr_recv_source(), then nm_anycast_member_of()). Anycasts of one origin
 *    with one tag are received in the origin's order; one that arrives before its receive is kept as an
 *    unexpected message of that session (counted in the core's unexpected bytes).
 *
 * The paper's second drawback (section 4: "the rootless receive operation must be polled periodically by the
 * application") does not exist here: anycasts travel on the rpc channel (nm_rpc.h), whose handlers run inside
 * nmad's progress, so a member forwards during any nmad call it makes, and with NMAD_PROGRESS=thread the progress
 * thread forwards while the application computes. The first drawback (a handle built on a communicator) stays:
 * the ring is built per group, once, as the paper does; nm_anycast_init() is local (no communication).
 *
 * Wire: one rpc message per hop on rpc tag NM_ANYCAST_RPC_TAG | ring, a 32-byte header (doc/protocol.md,
 * "Anycast header") and the data as its body. Every header is checked before anything is allocated for it: the
 * sender must be one of this member's inbound channels and come from that member's gate, the origin a member that
 * the sender may still forward for, the length the body's and at most max_len; otherwise the sender's gate fails
 * with -NM_EPROTO.
 *
 * Memory: a member keeps, per anycast it forwards, one copy of the data (freed when its sends complete) and one
 * pooled record with a send request per outbound channel; with a receive not yet posted, the data stays as an
 * unexpected message until it is received.
 *
 * Thread-safety: like the core (functions take the core lock; handlers run under it, inside progress).
 */
#ifndef NM_ANYCAST_H
#define NM_ANYCAST_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_coll.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_anycast_s *nm_anycast_t; /**< the skip ring of one group on one session */

/** rpc tags of anycast messages on a session's rpc channel: this value with the ring id in the low 16 bits (do not
 *  register rpc services over them). */
#define NM_ANYCAST_RPC_TAG ((nm_tag_t)0x6e6d616e79630000ULL)

/** @brief Handler of a received anycast. Runs inside progress (possibly on the progress thread) under the core
 *  lock: it may post sends and receives, not wait.
 *  @param origin the origin's index in the group; @param tag the anycast's tag;
 *  @param data, len the data, @p len bytes, readable during the call only. */
typedef void (*nm_anycast_handler_t)(nm_anycast_t ac, int origin, nm_tag_t tag, const void *data, nm_len_t len,
                                     void *ref);

/** Bits of nm_anycast_params_s.field_mask. */
#define NM_ANYCAST_PARAM_MAX_LEN 0x1u
#define NM_ANYCAST_PARAM_HANDLER 0x2u

/** Settings of a skip ring (nm_anycast_init()); set in field_mask the bit of each field you fill. */
struct nm_anycast_params_s {
  uint64_t field_mask; /**< NM_ANYCAST_PARAM_* bits of the fields set */
  /** Largest anycast in bytes (NM_ANYCAST_PARAM_MAX_LEN). nm_anycast_isend() refuses more; a received header
   *  announcing more fails the sender's gate before anything is allocated. Default and upper bound:
   *  nm_core_peer_alloc_max(). Every member should use the same value. */
  nm_len_t max_len;
  /** Deliver through this handler (NM_ANYCAST_PARAM_HANDLER) instead of receives on nm_anycast_session(). */
  nm_anycast_handler_t handler;
  void *handler_ref; /**< passed to handler */
};

/** Counters of one member (nm_anycast_get_stats()). */
struct nm_anycast_stats_s {
  uint64_t started;   /**< anycasts this member originated */
  uint64_t received;  /**< anycasts received here (delivered to the handler or the receive session) */
  uint64_t sent;      /**< messages this member sent (originated and forwarded) */
  uint64_t lost;      /**< anycasts that arrived but could not be delivered or forwarded (peer failure, memory) */
};

/**
 * @brief Build the skip ring of @p group for this member and start listening for anycasts (Li 2018, section 2.1).
 * Local: no message is exchanged. Every member calls it with the same group (same order) and @p ring; anycasts that
 * arrive before the call are kept on the rpc channel and handled at the call.
 * @param session the session whose rpc channel carries the anycasts.
 * @param group n >= 1 members; only the gates of the O(log n) neighbours are asked for (DESIGN.md rule 8), plus
 *        the origin's gate of each anycast delivered to a receive.
 * @param self this member's index in @p group, in [0, n).
 * @param ring id in [0, 65535] that tells apart the rings of one session.
 * @param params NULL for the defaults, else struct nm_anycast_params_s.
 * @param[out] out the ring.
 * @return 0, -NM_EINVAL (bad argument, unknown field_mask bit, a ring with this id already on the session, a
 *         neighbour's gate that the group cannot give), -NM_ENOMEM.
 * Thread-safety: like the core.
 */
int nm_anycast_init(nm_session_t session, const struct nm_coll_group_s *group, int self, unsigned ring,
                    const struct nm_anycast_params_s *params, nm_anycast_t *out);

/** @brief Stop listening and free the ring. @return 0, or -NM_EBUSY while anycasts are being received or forwarded
 *  here (progress and call again). Anycasts that reach this member afterwards are kept on the rpc channel.
 *  Thread-safety: like the core. */
int nm_anycast_finalize(nm_anycast_t ac);

/** Send request of an anycast at its origin (caller-owned, stays in place until completion). */
typedef struct nm_anycast_req_s {
  int status;             /**< 0, or the first error of the origin's sends */
  volatile int completed; /**< set when the origin's sends are done */
  void *priv;
} nm_anycast_req_t;

/**
 * @brief Originate an anycast of @p len bytes with @p tag to every other member (Li 2018, section 2.2: the origin
 * sends on all its outbound channels). No other member needs to know. Every member (origin or forwarder) sends
 * on its farthest channel at priority 0 and on each nearer one a step lower, so that the largest subtree is
 * served first when anycasts queue up (doc/anycast.md, "Forwarding").
 * @param data, len the data (untouched until completion); @p len at most max_len.
 * @param req completes when the origin's sends are done (the buffer may then be reused), not when every member
 *        has it.
 * @return 0, -NM_EINVAL (NULL ring or request, NULL data with a length, @p len above max_len), -NM_ENOMEM.
 * Thread-safety: like the core.
 */
int nm_anycast_isend(nm_anycast_t ac, nm_tag_t tag, const void *data, nm_len_t len, nm_anycast_req_t *req);
/** @brief Progress until @p req completes. @return its status. */
int nm_anycast_wait(nm_anycast_t ac, nm_anycast_req_t *req);
/** @brief One progress pass. @return -NM_EAGAIN while pending, else the status. */
int nm_anycast_test(nm_anycast_t ac, nm_anycast_req_t *req);

/** @brief Progress until every anycast this member is receiving, forwarding or originating has left it (its sends
 *  completed). Forwarding runs inside progress: call this before a phase that makes no progress (a launcher
 *  barrier, computing without a progress thread), or the members behind this one may wait for it (a large
 *  anycast's rendezvous needs the forwarder's progress). Anycasts that arrive later are not waited for.
 *  @param deadline_ns absolute ns on nm_core_time_ns(), 0 for none. @return 0, -NM_ETIMEDOUT, -NM_EINVAL. */
int nm_anycast_flush(nm_anycast_t ac, uint64_t deadline_ns);

/** @brief The session on which anycasts are received with plain receives (nm_sr_irecv() on NM_ANY_GATE or the
 *  origin's gate, with the tag). Local to this process: nothing is sent on it. NULL in handler mode. */
nm_session_t nm_anycast_session(nm_anycast_t ac);
/** @brief Group index of the origin whose gate is @p gate (the source of a completed receive on
 *  nm_anycast_session()). @return the index, or -1 when no anycast from that gate was delivered here. */
int nm_anycast_member_of(nm_anycast_t ac, nm_gate_t gate);
/** @brief Members of the ring and this member's index. */
int nm_anycast_size(nm_anycast_t ac);
int nm_anycast_self(nm_anycast_t ac);
/** @brief This member's counters. @return 0 or -NM_EINVAL. */
int nm_anycast_get_stats(nm_anycast_t ac, struct nm_anycast_stats_s *out);

#ifdef __cplusplus
}
#endif
#endif /* NM_ANYCAST_H */
