/**
 * @file nm_strategy.h
 * @brief Private: the strategy ops table (NewMadeleine's strategy plug-ins: pack_data, pack_ctrl, try_and_commit,
 * rdv_accept, per-gate instance state). The core keeps, per gate, a queue of pending sends and a queue of control
 * chunks; a strategy decides their order (pack_data, pack_ctrl), and when the core runs it on a gate
 * (try_and_commit) it decides which rail gets the next packet, how many packets may be in flight per rail, what
 * goes into each packet, and when a packet a driver refused is tried again. It uses the core helpers declared at
 * the end of this file to build and post packets. Issue 15, "Strategies own scheduling".
 */
#ifndef NM_STRATEGY_H
#define NM_STRATEGY_H

#include <nmad/nm_types.h>

struct nm_core_s;
struct nm_gate_s;
struct nm_req_s;
struct nm_pw_s;
struct nm_ctrl_s;

/** One piece of a rendezvous: bytes [offset, offset + len) of the message's rendezvous part on rail @p rail. */
struct nm_rdv_chunk_s {
  int rail;
  nm_len_t offset;
  nm_len_t len;
};

/** Packets a strategy lets into one (gate, rail) before it waits for a send completion: enough to keep a rail
 *  busy, few enough that an urgent packet queued later does not wait behind a long driver queue. */
#define NM_STRAT_MAX_INFLIGHT 4

struct nm_strategy_ops_s {
  const char *name;
  /** Per-gate instance state: set gate->strat (optional; NULL means none). Called once when the gate is made.
   *  @return 0 or -NM_ENOMEM (the gate is not made). */
  int (*gate_init)(struct nm_gate_s *gate);
  /** Release what gate_init set (optional). Called once when the gate is destroyed. */
  void (*gate_destroy)(struct nm_gate_s *gate);
  /** Insert a send request into gate->send_queue in this strategy's order. Must keep per-(session, tag) order
   *  among requests of the gate. Called by nm_core_post_send() right after it looked up the request's ordering
   *  stream: gate->last_seq is that stream's nm_seq_s. */
  void (*pack_data)(struct nm_gate_s *gate, struct nm_req_s *req);
  /** A send leaves gate->send_queue (its last byte is in a packet), called just before the core unlinks it.
   *  Optional: for a strategy that keeps an index of its queue. Sends leave from the queue's head only, or all at
   *  once when the gate fails (not reported: the gate takes no more sends). */
  void (*dequeued)(struct nm_gate_s *gate, struct nm_req_s *req);
  /** Insert a filled control chunk (RTR, ACK, CREDIT, CANCEL, CANCEL_REPLY) into the gate's control queue
   *  (gate->ctrl_head .. ctrl_tail) in this strategy's order. */
  void (*pack_ctrl)(struct nm_gate_s *gate, struct nm_ctrl_s *ctrl);
  /** Hand the gate's pending work to its rails while they accept: retries first, then new packets built with
   *  nm_strat_pw_new(), filled with nm_pw_pack_ctrl() / nm_pw_pack_req(), posted with nm_strat_pw_post().
   *  @return packets posted. */
  int (*try_and_commit)(struct nm_gate_s *gate);
  /** The priority of the most urgent pending work of the gate (its send and control queue heads); the core
   *  serves the gates of its work list in decreasing order of it. Optional: NULL means all gates are equal
   *  (work list in FIFO order). Only called when the gate has queued work. */
  nm_prio_t (*gate_prio)(const struct nm_gate_s *gate);
  /** Receiver: cut the rendezvous bytes [0, len) of a message of priority @p prio on @p gate into at most
   *  @p max chunks (rail, offset, len) written to chunks[]. @return the number of chunks (>= 1).
   *  Implemented by strategies/nm_strat_split_balance.c; the core's rendezvous code calls it. */
  int (*rdv_accept)(struct nm_gate_s *gate, nm_len_t len, int prio, struct nm_rdv_chunk_s *chunks, int max);
};

extern const struct nm_strategy_ops_s nm_strat_default_ops;
extern const struct nm_strategy_ops_s nm_strat_aggreg_ops;
extern const struct nm_strategy_ops_s nm_strat_prio_ops;

/** split_balance (strategies/nm_strat_split_balance.c, NewMadeleine's strategy of that name), the receiver's
 *  rendezvous cut of every strategy: cut the rendezvous bytes [0, @p len) of a message on @p gate across the
 *  gate's rails. Every subset of rails is priced with the drivers' nominal figures (props.latency_ns,
 *  props.bandwidth_MBps) as max(latency of the subset) + len / (sum of the subset's bandwidths), and the cheapest
 *  subset is used, each of its rails taking a share of the bytes in proportion to its bandwidth: a latency-bound
 *  message goes whole on the lowest-latency rail, a large one is split. The split points are 4 KiB aligned for
 *  messages of 64 KiB and more. @p prio does not change the split (the core issues the chunks of higher-priority
 *  messages first, nm_rdv.c).
 *  @param chunks array of at least @p max entries; written in increasing offset order, one per rail used.
 *  @return the number of chunks written (1 .. min(max, gate->n_rails)); their lengths add up to @p len.
 *  Thread-safety: called under the core lock. Source: issue 15, part 3. */
int nm_strat_rdv_split_balance(struct nm_gate_s *gate, nm_len_t len, int prio, struct nm_rdv_chunk_s *chunks,
                               int max);

/** Strategy for a NMAD_STRATEGY word. @return NULL if unknown. */
const struct nm_strategy_ops_s *nm_strategy_lookup(const char *name);

/** Comma-separated list of accepted NMAD_STRATEGY values (for error messages). */
#define NM_STRATEGY_NAMES "default, aggreg, prio"
/** The strategy used when NMAD_STRATEGY is unset: priority-aware aggregation (issue 15, "Priorities
 *  everywhere"). */
#define NM_STRATEGY_DEFAULT "prio"

/* ---- shared building blocks of the strategies (nm_strategy.c) ---- */

/** Control queue in decreasing priority, FIFO among equal priorities (the common case appends in O(1)).
 *  Used as pack_ctrl by every strategy of this tree. */
void nm_strat_ctrl_insert_prio(struct nm_gate_s *gate, struct nm_ctrl_s *ctrl);
/** Send queue in FIFO order (pack_data of aggreg and default). */
void nm_strat_data_fifo(struct nm_gate_s *gate, struct nm_req_s *req);
/** A rail of @p gate that may take one more packet now: fewer than @p max_inflight packets in flight, no refused
 *  packet waiting. Rails are tried in the order of @p order (gate->n_rails rail indices), or in index order when
 *  it is NULL; a rail busy only until the next pass (a packet of this gate, or of a paced driver, completed at
 *  post in this one) ends the search: the packet waits for it rather than taking a later rail (a gate's own hold is
 *  waived when its most urgent work is above the default priority, by the strategy's gate_prio). @return the rail
 *  index, or -1. */
int nm_strat_ready_rail(const struct nm_gate_s *gate, const int *order, int max_inflight);
/** Post again every packet a driver refused on the gate's rails. @return packets posted; *blocked set when a
 *  driver refused again (nothing more may be posted to that rail in this pass). */
int nm_strat_retry(struct nm_gate_s *gate, int *blocked);
/** A packet of the prio strategy takes no more chunks once it holds this many bytes. Aggregation pays for small
 *  messages; packets of up to sm's 128 KiB made of larger ones are copied whole at each end, and an urgent packet
 *  posted behind them waited for those copies: behind 4,096 queued 16 KiB sends, 25-28 us one way, 7-8 us with
 *  this cap (doc/performance.md, "Packets of bulk cut to 32 KiB"). */
#define NM_STRAT_AGGREG_MAX (32u * 1024u)
/** Bytes of a gate's packets left unread in its rail's driver (nm_drv_ops_s.backlog) above which bulk waits while
 *  urgent traffic shares the peer's queue: an urgent packet then waits for at most this much, plus one packet, to
 *  be read before it. Two packets of NM_STRAT_AGGREG_MAX: the sender writes one while the peer reads the other (at
 *  32 KiB the bulk went packet by packet, at half its rate; doc/architecture.md, "Bulk kept short"). */
#define NM_STRAT_BACKLOG_MAX (64u * 1024u)
/** How long after urgent work went into a gate's main queue its bulk is kept under NM_STRAT_BACKLOG_MAX (ns). */
#define NM_STRAT_URGENT_LIVE_NS (100ull * 1000 * 1000)
/** Whether @p gate's next packet, bulk (@p urgent 0: its most urgent work is at or below the default priority, as
 *  nm_strat_gate_urgent() says), waits before its rail @p r: a packet of urgent work went into the main queue of
 *  the rail's driver (not by its send_urgent: too large, or no room) within NM_STRAT_URGENT_LIVE_NS
 *  (gate->urgent_ns, stamped when such a packet is posted), and the driver reports more than NM_STRAT_BACKLOG_MAX
 *  bytes the peer has not read. Only for a strategy with gate_prio (priority-aware), whose packets start urgent;
 *  a driver without a backlog op never holds. Source: issue 15 ("large transfers are cut into chunks so that
 *  urgent traffic can pass between them"): over sm the ring is the queue urgent traffic waits in; behind 4,096
 *  queued 16 KiB sends, 7.7-8.1 us one way with a 256 KiB ring and 4.6-4.7 us with a 64 KiB one; the express ring
 *  takes small urgent packets without a hold, which halved the bulk's rate (doc/performance.md). Called with the
 *  core lock held. */
int nm_strat_bulk_held(struct nm_gate_s *gate, int r, int urgent);
/** Whether the most urgent pending work of @p gate is above the default priority, as the strategy sees it (only
 *  a strategy with gate_prio has any). */
int nm_strat_gate_urgent(const struct nm_gate_s *gate);
/** The common try_and_commit loop: packets a driver refused first; then while a rail is ready (tried in
 *  @p order as in nm_strat_ready_rail(), at most @p max_inflight packets in flight on it), build a packet, let
 *  @p fill put chunks into it, post it. A packet started on urgent work over a driver with send_urgent is marked
 *  (pw->urgent): @p fill then puts only urgent chunks into it, and the driver delivers it ahead of what it holds
 *  for the peer. @return packets posted. */
int nm_strat_commit_loop(struct nm_gate_s *gate, const int *order, int max_inflight,
                         int (*fill)(struct nm_gate_s *, struct nm_pw_s *));

/* ---- core helpers a strategy calls (core/nm_outgoing.c) ---- */

/** An empty packet wrapper for @p rail of @p gate, from the core's pool. @return NULL when the pool is empty. */
struct nm_pw_s *nm_strat_pw_new(struct nm_gate_s *gate, int rail);
/** Give back a packet wrapper that stayed empty. */
void nm_strat_pw_drop(struct nm_pw_s *pw);
/** Seal @p pw (packet header) and hand it to its rail's driver. @return 1 posted (or failed the gate: check
 *  gate->status), 0 the driver's queue is full (the packet is kept on the rail and tried again by
 *  nm_strat_retry()). */
int nm_strat_pw_post(struct nm_pw_s *pw);

#endif /* NM_STRATEGY_H */
