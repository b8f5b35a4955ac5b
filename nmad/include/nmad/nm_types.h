/**
 * @file nm_types.h
 * @brief Basic types shared by every nmad interface: core, session, gate, tags, lengths, and the request that
 *        callers embed in their own structs (DESIGN.md rule 4: no allocation on the fast path).
 */
#ifndef NM_TYPES_H
#define NM_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t nm_tag_t;    /**< 64-bit message tag */
typedef uint64_t nm_len_t;    /**< a length in bytes */
typedef int32_t nm_prio_t;    /**< send priority: larger is more urgent; 0 is the default */
typedef uint32_t nm_seq_t;    /**< per-(gate, session, tag) sequence number */

typedef struct nm_core_s *nm_core_t;       /**< the communication engine of one process */
typedef struct nm_session_s *nm_session_t; /**< a named namespace of tags on a core */
typedef struct nm_gate_s *nm_gate_t;       /**< the connection to one peer process */

/** Wildcard gate for receives and probes: match any source. */
#define NM_ANY_GATE ((nm_gate_t)NULL)
/** Mask that makes every tag bit significant. */
#define NM_TAG_MASK_FULL ((nm_tag_t)UINT64_MAX)
/** Mask that matches any tag. */
#define NM_TAG_MASK_NONE ((nm_tag_t)0)

/** Events reported to request monitors (bit mask). */
enum nm_event_e {
  NM_EVENT_SEND_COMPLETED = 0x01, /**< the send buffer may be reused */
  NM_EVENT_RECV_COMPLETED = 0x02, /**< the receive buffer holds the message (or the request failed) */
  NM_EVENT_RECV_DATA = 0x04,      /**< (mcast) data arrived in the buffer; forwarding may still read it */
  NM_EVENT_FINALIZED = 0x08       /**< (mcast) forwarding done; the buffer may be reused */
};

struct nm_req_s;
/** @brief Request monitor: called once per event in @p events mask, from inside progress.
 *  It may post new requests but must not wait (it runs within progress). */
typedef void (*nm_req_notifier_t)(struct nm_req_s *req, unsigned event, void *ref);

/** Kind of a request. */
enum nm_req_kind_e { NM_REQ_NONE = 0, NM_REQ_SEND = 1, NM_REQ_RECV = 2 };

/**
 * @brief A send or receive request, embedded by the caller (like MPI_Request storage).
 * All fields are private to nmad; read them only through the interface functions.
 * The struct must stay at the same address from post to completion.
 * Inside nmad, the layers above the core (sendrecv, rpc, mcast) set the caller's arguments (session, gate, tag,
 * mask, buf, len, hdr, hdr_len, prio, the monitor) only through the core interface (nmad/core/nm_core_interface.h:
 * nm_core_req_init(), nm_core_req_isend(), nm_core_req_irecv(), nm_core_req_set_prio(),
 * nm_core_req_set_monitor()); kind, state, flags, seq, cookie, msg_len, the links and the completion fields are
 * the core's state, written by the core alone. A layer may read completed, status and buf.
 */
struct nm_req_s {
  struct nm_req_s *next, *prev; /* link in a gate's send queue or a session's posted/rendezvous list */
  struct nm_req_s *pw_next;     /* link among the sends carried by one packet */
  struct nm_session_s *session;
  struct nm_gate_s *gate;       /* destination or source (NULL = any source until matched) */
  nm_tag_t tag, mask;
  nm_seq_t seq;
  uint8_t kind;                 /* enum nm_req_kind_e */
  uint8_t state;                /* internal state machine (core/nm_req.h) */
  uint16_t flags;               /* NM_REQF_* (core/nm_req.h) */
  volatile int completed;       /* 1 once every event has been delivered */
  int status;                   /* 0 or -NM_E* */
  nm_prio_t prio;
  void *buf;                    /* user buffer (send: const data) */
  nm_len_t len;                 /* user buffer length in bytes */
  const void *hdr;              /* send: optional header sent before buf (rpc), hdr_len bytes */
  nm_len_t hdr_len;
  nm_len_t msg_len;             /* actual message length (recv: as announced by the sender) */
  uint64_t cookie;              /* rendezvous / synchronous-send identifier on the sender's gate */
  nm_len_t frag_off;            /* send: message bytes already packed in DATA_FRAG pieces (core/nm_frag.c) */
  uint64_t qkey;                /* send: its order in the gate's send queue (strategies/nm_strat_prio.c) */
  nm_req_notifier_t notifier;   /* request monitor, or NULL */
  void *notifier_ref;
  unsigned notifier_mask;
  void *user_ref;               /* free for the interface above (e.g. MPI shim) */
  uint64_t reserved[4];         /* room for interfaces (rpc/mcast) without changing the size */
};

#ifdef __cplusplus
}
#endif
#endif /* NM_TYPES_H */
