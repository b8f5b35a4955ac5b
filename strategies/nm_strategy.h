/**
 * @file nm_strategy.h
 * @brief Private: the strategy ops table. The core keeps, per gate, a queue of pending sends and a queue of
 * control chunks; a strategy decides the order of the send queue (enqueue) and what goes into the next packet
 * when a rail is ready (try_and_commit), as in NewMadeleine's strategy plug-ins.
 */
#ifndef NM_STRATEGY_H
#define NM_STRATEGY_H

#include <nmad/nm_types.h>

struct nm_core_s;
struct nm_gate_s;
struct nm_req_s;
struct nm_pw_s;

/** A piece of a rendezvous message: bytes [offset, offset + len) of it, received on rail @p rail of the gate. */
struct nm_rdv_chunk_s {
  int rail;
  nm_len_t offset;
  nm_len_t len;
};

struct nm_strategy_ops_s {
  const char *name;
  /** Insert a send request into gate->send_queue in this strategy's order. Must keep per-(session, tag) order
   *  among requests of the gate. */
  void (*enqueue)(struct nm_gate_s *gate, struct nm_req_s *req);
  /** Fill the empty packet wrapper @p pw from the gate's control queue and send queue, using
   *  nm_pw_pack_ctrl() / nm_pw_pack_req() (core/nm_core_private.h). @return number of chunks packed. */
  int (*try_and_commit)(struct nm_gate_s *gate, struct nm_pw_s *pw);
  /** Receiver: cut the rendezvous bytes [0, len) of a message of priority prio on gate into at most max
   *  chunks (rail, offset, len) written to chunks[]. @return the number of chunks (>= 1). */
  int (*rdv_accept)(struct nm_gate_s *gate, nm_len_t len, int prio, struct nm_rdv_chunk_s *chunks, int max);
};

extern const struct nm_strategy_ops_s nm_strat_default_ops;
extern const struct nm_strategy_ops_s nm_strat_aggreg_ops;
extern const struct nm_strategy_ops_s nm_strat_prio_ops;

/** Shared by aggreg and prio: pack every control chunk, then queued sends in queue order while they fit.
 *  @return chunks packed. */
int nm_strat_pack_all(struct nm_gate_s *gate, struct nm_pw_s *pw);

/** split_balance (strategies/nm_strat_split_balance.c, NewMadeleine's strategy of that name): cut the rendezvous
 *  bytes [0, @p len) of a message on @p gate across the gate's rails. Every subset of rails is priced with the
 *  drivers' nominal figures (props.latency_ns, props.bandwidth_MBps) as
 *  max(latency of the subset) + len / (sum of the subset's bandwidths), and the cheapest subset is used, each of
 *  its rails taking a share of the bytes in proportion to its bandwidth: a latency-bound message goes whole on
 *  the lowest-latency rail, a large one is split. The split points are 4 KiB aligned for messages of 64 KiB and
 *  more (page-aligned pieces for CMA / zero-copy paths). @p prio does not change the split (the core issues the
 *  chunks of higher-priority messages first, nm_rdv.c).
 *  @param chunks array of at least @p max entries; written in increasing offset order, one per rail used.
 *  @return the number of chunks written (1 .. min(max, gate->n_rails)); their lengths add up to @p len.
 *  Thread-safety: called under the core lock. Source: issue 15, part 3. */
int nm_strat_rdv_split_balance(struct nm_gate_s *gate, nm_len_t len, int prio, struct nm_rdv_chunk_s *chunks,
                               int max);

/** Strategy for a NMAD_STRATEGY word (default, aggreg, prio). @return NULL if unknown. */
const struct nm_strategy_ops_s *nm_strategy_lookup(const char *name);

/** Comma-separated list of accepted NMAD_STRATEGY values (for error messages). */
#define NM_STRATEGY_NAMES "default, aggreg, prio"

#endif /* NM_STRATEGY_H */
