/* Strategy "prio" (the default when NMAD_STRATEGY is unset): priority-aware aggregation. The send queue is kept in
 * decreasing priority (FIFO among equal priorities, so unprioritised traffic appends in O(1) and packs exactly as
 * "aggreg"); control chunks (RTR, ACK, CANCEL, ...) carry their message's priority and are merged with the sends
 * by priority when a packet is filled, so the RTR of an urgent receive passes bulk data and the RTR of a bulk
 * receive waits behind urgent data. A send never overtakes an earlier send of its ordering stream (same session
 * and nm_seq_tag()): that would only make the receiver hold it back (per-(gate, tag) order). The core serves the
 * gates in the order of gate_prio, so an urgent message to one peer leaves before bulk to another.
 * Per-gate state: the gate's rails by increasing nominal latency, so packets (small by nature) take the
 * lowest-latency rail that is ready (issue 15, "latency-bound messages on the lowest-latency rail"). */
#include "nmad/core/nm_core_private.h"
#include <stdlib.h>

struct nm_strat_prio_gate_s {
  int rail_order[NM_MAX_RAILS];
};

static int nm_strat_prio_gate_init(struct nm_gate_s *gate)
{
  struct nm_strat_prio_gate_s *st = malloc(sizeof(*st));
  if (!st)
    return -NM_ENOMEM;
  /* insertion sort by latency; equal latencies keep the drivers' order (NMAD_DRIVER=a+b: a first) */
  for (int i = 0; i < gate->n_rails; i++) {
    int j = i;
    uint32_t lat = gate->rails[i].drv->props.latency_ns;
    while (j > 0 && gate->rails[st->rail_order[j - 1]].drv->props.latency_ns > lat) {
      st->rail_order[j] = st->rail_order[j - 1];
      j--;
    }
    st->rail_order[j] = i;
  }
  gate->strat = st;
  return NM_ESUCCESS;
}

static void nm_strat_prio_gate_destroy(struct nm_gate_s *gate)
{
  free(gate->strat);
}

static void nm_strat_prio_pack_data(struct nm_gate_s *gate, struct nm_req_s *req)
{
  /* Walk from the tail: insert after the last request that is at least as urgent or that belongs to the same
   * ordering stream. */
  uint32_t sid = req->session->id;
  nm_tag_t stream = nm_seq_tag(sid, req->tag);
  struct nm_req_s *pos = gate->send_queue.tail;
  while (pos && pos->prio < req->prio &&
         !(pos->session->id == sid && nm_seq_tag(sid, pos->tag) == stream))
    pos = pos->prev;
  nm_req_list_insert_after(&gate->send_queue, pos, req);
}

static nm_prio_t nm_strat_prio_gate_prio(const struct nm_gate_s *gate)
{
  nm_prio_t p = NM_PRIO_LOWEST;
  if (gate->ctrl_head)
    p = gate->ctrl_head->prio;
  if (gate->send_queue.head && gate->send_queue.head->prio > p)
    p = gate->send_queue.head->prio;
  return p;
}

/* Fill a packet with the most urgent of the two queue heads, again and again, until the next one does not fit. */
static int nm_strat_prio_fill(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  int n = 0;
  for (;;) {
    struct nm_ctrl_s *c = gate->ctrl_head;
    struct nm_req_s *r = gate->send_queue.head;
    int ok;
    if (c && (!r || c->prio >= r->prio))
      ok = nm_pw_pack_ctrl(pw);
    else if (r)
      ok = nm_pw_pack_req(pw, r);
    else
      break;
    if (!ok)
      break;
    n++;
  }
  return n;
}

static int nm_strat_prio_try_and_commit(struct nm_gate_s *gate)
{
  const struct nm_strat_prio_gate_s *st = gate->strat; /* NULL: the gate was made under another strategy */
  return nm_strat_commit_loop(gate, st ? st->rail_order : NULL, NM_STRAT_MAX_INFLIGHT, nm_strat_prio_fill);
}

const struct nm_strategy_ops_s nm_strat_prio_ops = {
  .name = "prio",
  .gate_init = nm_strat_prio_gate_init,
  .gate_destroy = nm_strat_prio_gate_destroy,
  .pack_data = nm_strat_prio_pack_data,
  .pack_ctrl = nm_strat_ctrl_insert_prio,
  .try_and_commit = nm_strat_prio_try_and_commit,
  .gate_prio = nm_strat_prio_gate_prio,
  .rdv_accept = nm_strat_rdv_split_balance,
};
