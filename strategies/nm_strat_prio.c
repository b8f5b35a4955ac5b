/* Strategy "prio": aggregation like "aggreg", but the send queue is kept sorted by decreasing priority, so the
 * most urgent messages fill packets first. A send never overtakes an earlier send with the same
 * (session, tag) on the gate: that would only make the receiver hold it back (per-(gate, tag) order). */
#include "nmad/core/nm_core_private.h"

static void nm_strat_prio_enqueue(struct nm_gate_s *gate, struct nm_req_s *req)
{
  /* Walk from the tail: insert after the last request that is at least as urgent or that has the same
   * (session, tag); FIFO among equal priorities. */
  struct nm_req_s *pos = gate->send_queue.tail;
  while (pos && pos->prio < req->prio && !(pos->tag == req->tag && pos->session == req->session))
    pos = pos->prev;
  nm_req_list_insert_after(&gate->send_queue, pos, req);
}

const struct nm_strategy_ops_s nm_strat_prio_ops = {
  .name = "prio",
  .enqueue = nm_strat_prio_enqueue,
  .try_and_commit = nm_strat_pack_all,
  .rdv_accept = nm_strat_rdv_split_balance,
};
