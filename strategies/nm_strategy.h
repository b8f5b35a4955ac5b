/**
 * @file nm_strategy.h
 * @brief Private: the strategy ops table. The core keeps, per gate, a queue of pending sends and a queue of
 * control chunks; a strategy decides the order of the send queue (enqueue) and what goes into the next packet
 * when a rail is ready (try_and_commit), as in NewMadeleine's strategy plug-ins.
 */
#ifndef NM_STRATEGY_H
#define NM_STRATEGY_H

struct nm_core_s;
struct nm_gate_s;
struct nm_req_s;
struct nm_pw_s;

struct nm_strategy_ops_s {
  const char *name;
  /** Insert a send request into gate->send_queue in this strategy's order. Must keep per-(session, tag) order
   *  among requests of the gate. */
  void (*enqueue)(struct nm_gate_s *gate, struct nm_req_s *req);
  /** Fill the empty packet wrapper @p pw from the gate's control queue and send queue, using
   *  nm_pw_pack_ctrl() / nm_pw_pack_req() (core/nm_core_private.h). @return number of chunks packed. */
  int (*try_and_commit)(struct nm_gate_s *gate, struct nm_pw_s *pw);
};

extern const struct nm_strategy_ops_s nm_strat_default_ops;
extern const struct nm_strategy_ops_s nm_strat_aggreg_ops;
extern const struct nm_strategy_ops_s nm_strat_prio_ops;

/** Shared by aggreg and prio: pack every control chunk, then queued sends in queue order while they fit.
 *  @return chunks packed. */
int nm_strat_pack_all(struct nm_gate_s *gate, struct nm_pw_s *pw);

/** Strategy for a NMAD_STRATEGY word (default, aggreg, prio). @return NULL if unknown. */
const struct nm_strategy_ops_s *nm_strategy_lookup(const char *name);

/** Comma-separated list of accepted NMAD_STRATEGY values (for error messages). */
#define NM_STRATEGY_NAMES "default, aggreg, prio"

#endif /* NM_STRATEGY_H */
