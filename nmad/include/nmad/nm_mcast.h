/**
 * @file nm_mcast.h
 * @brief Dynamic broadcasts (Denis 2020, "Dynamic broadcasts in StarPU/NewMadeleine", section 3.2 and 4.3).
 *
 * Only the root knows the recipients. It calls nm_mcast_isend() with the destination ranks, optional
 * priorities, a tag and the data. Each recipient posts an ordinary point-to-point receive from the root's gate
 * with that tag (nm_sr_irecv(session, root_gate, tag, ...)): the broadcast is received in place into that buffer,
 * forwarded from it to the recipient's subtree, and the receive completes. The broadcast takes exactly the place
 * of a point-to-point message from the root in MPI's non-overtaking order: point-to-point messages and broadcasts
 * from one root with one tag are delivered in the root's send order; broadcasts from different roots never mix.
 *
 * Messages travel on the rpc channel (nm_rpc.h). Each carries the root, the tag, the data length, the tree kind,
 * and this hop's subtree as (rank, priority, sequence number) triples; a forwarding node splits its list into
 * child subtrees, trims it per child, and sends each child's message with that child's priority (honoured by
 * NMAD_STRATEGY=prio). Destinations are placed so that higher priorities receive earlier (closer to the root).
 * Large data is forwarded by rendezvous into the receivers' buffers. A subtree list of up to 1,362 entries rides
 * in the rpc header, as in the paper (section 3.2); a longer one (any number up to the job size: at 12 bytes per
 * destination the list of a 6,144-rank job is 74 KB, more than a packet) is sent as a separate message just
 * before the data, whose body comes by rendezvous when large (doc/mcast.md, "Large destination lists"). A receiver accepts a subtree of
 * at most max_dests - 1 entries (nm_mcast_init_params(); default: the job size minus 2) and checks that bound
 * before it allocates anything for the list.
 *
 * If the matching receive is not posted when a broadcast arrives, the data is received into a temporary buffer
 * and forwarding proceeds at once: a slow receiver never delays its subtree. The data is then kept as an
 * unexpected message and delivered when the receive is posted.
 *
 * Events on a receive request that got a broadcast (nm_sr_request_set_monitor):
 *  - NM_EVENT_RECV_DATA: the data is in the buffer and may be read (forwarding may still be reading it);
 *  - NM_EVENT_FINALIZED and NM_EVENT_RECV_COMPLETED: forwarding is done, the buffer may be reused;
 *    nm_sr_rwait()/rtest() report completion at this point.
 * A receive posted after the broadcast arrived gets the same two calls, one right after the other, when the
 * kept data is copied into it. A request that got a point-to-point message only sees NM_EVENT_RECV_COMPLETED.
 * Thread-safety: like the core (one thread at a time per core).
 */
#ifndef NM_MCAST_H
#define NM_MCAST_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Shape of the forwarding tree. */
enum nm_mcast_tree_e {
  NM_MCAST_TREE_BINOMIAL = 0, /**< binomial (paper fig. 1; default) */
  NM_MCAST_TREE_FLAT = 1,     /**< the root sends to everybody */
  NM_MCAST_TREE_CHAIN = 2,    /**< each node sends to the next one */
  NM_MCAST_TREE_BINARY = 3,   /**< binary tree */
  NM_MCAST_TREE_TOPO_ID = 4   /**< topology-ID tree (Song 2009, sections 4-6; nm_mcast_topo.h): the root sorts the
                                   destinations by topology ID, every hop sends one message per group of equal
                                   (longest common prefix, next digit), farthest first */
};

typedef struct nm_mcast_service_s *nm_mcast_service_t; /**< the broadcast engine of a session */

/** rpc tag reserved for broadcast messages on a session's rpc channel (do not register rpc services over it). */
#define NM_MCAST_RPC_TAG ((nm_tag_t)0x6e6d6d6361737401ULL)

/** Bits of nm_mcast_params_s.field_mask: which fields are set. */
#define NM_MCAST_PARAM_MAX_DESTS 0x1u
#define NM_MCAST_PARAM_MAX_INLINE 0x2u
#define NM_MCAST_PARAM_SEG_SIZE 0x4u

/** Settings of a broadcast service (nm_mcast_init_params()). Set in field_mask the bit of every field you fill;
 *  the others keep their defaults, so the struct can grow without breaking callers. */
struct nm_mcast_params_s {
  uint64_t field_mask; /**< NM_MCAST_PARAM_* bits of the fields set */
  /** Largest number of destinations of one broadcast (NM_MCAST_PARAM_MAX_DESTS). nm_mcast_isend() refuses more;
   *  a received subtree list of more than max_dests - 1 entries fails the sender's gate (-NM_EPROTO) before any
   *  memory is allocated for it, so a peer makes this process hold at most 12 x (max_dests - 1) bytes per
   *  broadcast it forwards. Default and upper bound: job size - 1 (larger values are reduced to it). Every
   *  process of the job must use the same value. */
  int max_dests;
  /** Longest subtree list, in entries, that this process sends inside a child's rpc header
   *  (NM_MCAST_PARAM_MAX_INLINE); a longer one goes in a message of its own just before the data (one message
   *  more per such child, and its list comes by rendezvous when above the rendezvous threshold, instead of
   *  taking up to 16 KiB of the first packet). Default and upper bound: 1,362, what fits in NM_RPC_HLEN_MAX;
   *  0 sends every non-empty list apart. Receivers accept both forms: processes may use different values. */
  int max_inline;
  /** Segment size in bytes of the broadcasts this service's nm_mcast_isend() starts (NM_MCAST_PARAM_SEG_SIZE);
   *  see nm_mcast_isend_seg(). Default 0: store-and-forward, each hop forwards once it has the whole data. The
   *  default stays 0 because a segment costs one rpc message per child and hop (a 36-byte header, and a
   *  rendezvous handshake when the segment is above the rendezvous threshold): pipelining pays for large data on
   *  deep trees (chain, binary) and costs small broadcasts and flat trees; doc/mcast.md, "Pipelined broadcasts",
   *  gives the figures to choose from. Only the root's value matters: forwarders relay the root's segments. */
  nm_len_t seg_size;
};

/** @brief Start dynamic broadcasts on @p session: registers the broadcast rpc service. Every process that may
 *  receive or forward a broadcast calls it once (typically right after opening the session). Broadcast messages
 *  that reach a process before its call are kept and handled at the call. Same as nm_mcast_init_params() with
 *  default settings. @return 0, -NM_EINVAL, -NM_ENOMEM.
 *  Thread-safety: like the core. */
int nm_mcast_init(nm_session_t session, nm_mcast_service_t *out);
/** @brief nm_mcast_init() with settings (Denis 2020, section 4.3: the service listens for broadcasts from every
 *  node). @param params NULL for the defaults, else see struct nm_mcast_params_s.
 *  @return 0, -NM_EINVAL (NULL session or out, unknown field_mask bit, max_dests or max_inline < 0, or the
 *  broadcast rpc tag already has a service), -NM_ENOMEM. Thread-safety: like the core. */
int nm_mcast_init_params(nm_session_t session, const struct nm_mcast_params_s *params, nm_mcast_service_t *out);
/** @brief Stop the service. @return 0 or -NM_EBUSY while broadcasts are being received or forwarded (a list
 *  whose data message will not come because its sender failed does not count). */
int nm_mcast_finalize(nm_mcast_service_t service);

/** Send request of a broadcast at the root (caller-owned, stays in place until completion). */
typedef struct nm_mcast_req_s {
  struct nm_req_s *child_reqs;   /* one send per child of the root (allocated by nm_mcast_isend) */
  int n_children, n_done;
  int status;
  volatile int completed;
  void *priv;                    /* header buffers */
} nm_mcast_req_t;

/**
 * @brief Root side of a dynamic broadcast.
 * Only the root knows the destinations (Denis 2020, section 3.2): each child gets its subtree list and
 * priorities, in its rpc header up to max_inline entries (default 1,362), else in a message of its own sent
 * right before the data.
 * @param dests array of @p n destination ranks (not the root, no duplicates, in [0, size)).
 * @param prios array of @p n priorities (larger = more urgent), or NULL for all 0.
 * @param n number of destinations, 0 to the service's max_dests (default: job size - 1).
 * @param tag the point-to-point tag receivers use; @param data, len the data, @p len bytes (untouched until
 * completion). @param tree tree kind (NM_MCAST_TREE_BINOMIAL by default). Segmented (pipelined) when the service's
 * seg_size is set (nm_mcast_params_s), see nm_mcast_isend_seg().
 * @return 0, or -NM_EINVAL for a bad destination list (duplicate, root itself, out of range, n < 0,
 * n > max_dests), -NM_ENOMEM. Thread-safety: like the core.
 */
int nm_mcast_isend(nm_mcast_service_t service, const int *dests, const int *prios, int n, nm_tag_t tag,
                   const void *data, nm_len_t len, enum nm_mcast_tree_e tree, nm_mcast_req_t *req);
/**
 * @brief Root side of a pipelined dynamic broadcast (issue 17, deliverable 5; Denis 2020, section 6 names
 * pipelined trees as future work; Hasanov 2015, section 2.1.3 for the pipelined chain).
 * Same as nm_mcast_isend(), but the data travels in segments of @p seg bytes (the last one shorter when @p seg
 * does not divide @p len): every hop sends segment k to its children as soon as segments 0..k are in, while later
 * segments are still arriving, so a chain of p hops takes about (X + p - 2) segment steps for X segments instead
 * of X (p - 1). Receivers post one plain nm_sr_irecv() of the whole message as for any broadcast; it completes when
 * every segment is in and forwarded (same events). Priorities apply to every segment of a destination.
 * @param seg segment size in bytes; 0, or >= @p len, sends the data whole (store-and-forward, as nm_mcast_isend()
 *        with the default service settings). At most 2^32 segments.
 * Other parameters and errors as nm_mcast_isend(); -NM_EINVAL also for more than 2^32 segments.
 * Thread-safety: like the core.
 */
int nm_mcast_isend_seg(nm_mcast_service_t service, const int *dests, const int *prios, int n, nm_tag_t tag,
                       const void *data, nm_len_t len, enum nm_mcast_tree_e tree, nm_len_t seg,
                       nm_mcast_req_t *req);
/** @brief Wait until the root's sends completed (the buffer may be reused). @return 0 or the first error. */
int nm_mcast_wait(nm_mcast_service_t service, nm_mcast_req_t *req);
/** @brief One progress pass, then the state. @return -NM_EAGAIN if pending, else the status. */
int nm_mcast_test(nm_mcast_service_t service, nm_mcast_req_t *req);

#ifdef __cplusplus
}
#endif
#endif /* NM_MCAST_H */
