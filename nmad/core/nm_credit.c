/* Eager flow control (DESIGN.md rule 9): a receiver accepts at most NMAD_EAGER_CREDIT bytes of eager data from
 * each peer that it has not consumed yet. The sender keeps the credit it has left on each gate; an eager message
 * takes nm_wire_credit_cost() of it, and one that finds too little goes by rendezvous instead, whose data waits
 * in the sender's buffer until a receive matches. The receiver gives the credit back in a CREDIT chunk once a
 * quarter of the window was consumed. Sends never wait for credit: a rendezvous request is always allowed, so an
 * MPI program whose receives come in any order still progresses (MPI-3.1 section 3.5, the progress rule). */
#include "nm_core_private.h"

int nm_credit_short(const struct nm_gate_s *gate, nm_len_t total)
{
  return nm_credit_on(gate) && (int64_t)nm_wire_credit_cost(total) > gate->credit;
}

void nm_credit_charge(struct nm_gate_s *gate, nm_len_t total)
{
  if (nm_credit_on(gate))
    gate->credit -= (int64_t)nm_wire_credit_cost(total);
}

void nm_credit_stored(struct nm_gate_s *gate, uint64_t cost)
{
  struct nm_core_stats_s *st = &gate->core->stats;
  gate->credit_owed -= (int64_t)cost; /* nm_core_packet() counts every arrival consumed: a stored one is not yet */
  st->unexpected_bytes += cost;
  if (st->unexpected_bytes > st->unexpected_bytes_peak)
    st->unexpected_bytes_peak = st->unexpected_bytes;
}

void nm_credit_consumed(struct nm_gate_s *gate, uint64_t cost)
{
  struct nm_core_s *core = gate->core;
  if (gate->status)
    return;
  gate->credit_owed += (int64_t)cost;
  if (gate->credit_owed < (int64_t)(core->cfg.eager_credit / 4))
    return;
  struct nm_ctrl_s *c = nm_gate_new_ctrl(gate, NM_WIRE_CREDIT);
  if (!c)
    return; /* no memory now: the credit goes back with a later message */
  c->cookie = (uint64_t)gate->credit_owed;
  gate->credit_owed = 0;
  core->stats.credit_chunks_sent++;
  nm_gate_push_ctrl(gate, c);
}

int nm_credit_handle(struct nm_gate_s *gate, uint64_t bytes)
{
  uint64_t window = gate->core->cfg.eager_credit;
  if (!nm_credit_on(gate) || bytes > window || gate->credit > (int64_t)(window - bytes))
    return -NM_EPROTO; /* more than it was ever given: the peer does not follow the protocol */
  gate->credit += (int64_t)bytes;
  return NM_ESUCCESS;
}

void nm_credit_release(struct nm_unexp_s *u)
{
  if (!u->credit)
    return;
  u->gate->core->stats.unexpected_bytes -= u->credit;
  nm_credit_consumed(u->gate, u->credit);
  u->credit = 0;
}

void nm_core_get_stats(nm_core_t core, struct nm_core_stats_s *stats)
{
  NM_CORE_LOCKED(core);
  *stats = core->stats;
}
