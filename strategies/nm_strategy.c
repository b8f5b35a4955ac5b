/* Strategy selection by name (NMAD_STRATEGY) and the building blocks the strategies share: queue orders, rail
 * choice, retries and the packet loop. Each strategy file picks among them (NewMadeleine's model). */
#include "nmad/core/nm_core_private.h"
#include <string.h>

static const struct nm_strategy_ops_s *const nm_strategies[] = {
  &nm_strat_default_ops, &nm_strat_aggreg_ops, &nm_strat_prio_ops,
};

const struct nm_strategy_ops_s *nm_strategy_lookup(const char *name)
{
  for (size_t i = 0; i < sizeof(nm_strategies) / sizeof(nm_strategies[0]); i++)
    if (strcmp(nm_strategies[i]->name, name) == 0)
      return nm_strategies[i];
  return NULL;
}

void nm_strat_ctrl_insert_prio(struct nm_gate_s *gate, struct nm_ctrl_s *ctrl)
{
  /* Most control chunks have the default priority: compare with the tail first so they append in O(1). */
  if (!gate->ctrl_tail || gate->ctrl_tail->prio >= ctrl->prio) {
    ctrl->next = NULL;
    if (gate->ctrl_tail)
      gate->ctrl_tail->next = ctrl;
    else
      gate->ctrl_head = ctrl;
    gate->ctrl_tail = ctrl;
    return;
  }
  struct nm_ctrl_s **pp = &gate->ctrl_head;
  while ((*pp)->prio >= ctrl->prio) /* stops before the tail: the tail is less urgent than ctrl */
    pp = &(*pp)->next;
  ctrl->next = *pp;
  *pp = ctrl;
}

void nm_strat_data_fifo(struct nm_gate_s *gate, struct nm_req_s *req)
{
  nm_req_list_append(&gate->send_queue, req);
}

/* Such a packet does not wait for the pass that would aggregate a burst (nm_strat_ready_rail()). */
int nm_strat_gate_urgent(const struct nm_gate_s *gate)
{
  const struct nm_strategy_ops_s *st = gate->core->cfg.strategy;
  return st->gate_prio && st->gate_prio(gate) > 0;
}

int nm_strat_ready_rail(const struct nm_gate_s *gate, const int *order, int max_inflight)
{
  const uint64_t busy = gate->core->pass + 1; /* the stamp of a packet completed at post in this pass */
  for (int k = 0; k < gate->n_rails; k++) {
    int i = order ? order[k] : k;
    const struct nm_rail_s *rail = &gate->rails[i];
    /* Free again at the next pass: the packet waits for it (and the burst behind it aggregates) rather than
     * taking the next rail, a slower one with the prio strategy's order (sm+tcp sent every other small packet
     * over tcp: half sm's message rate). Urgent work does not wait for its gate's pass (a paced driver still takes
     * one packet per pass, so that the pass picks the most urgent gate): behind bulk, the next pass starts with
     * the drivers' polls (a ring of bulk to read), and an urgent pong over sm waited for them. */
    if (rail->drv->inject_pass == busy || (rail->inject_pass == busy && !nm_strat_gate_urgent(gate)))
      return -1;
    if (rail->inflight < max_inflight && !rail->retry)
      return i;
  }
  return -1;
}

int nm_strat_bulk_held(struct nm_gate_s *gate, int r, int urgent)
{
  struct nm_core_s *core = gate->core;
  const struct nm_rail_s *rail = &gate->rails[r];
  /* the clock is read only for bulk behind a backlog on a gate whose urgent traffic took the main queue lately
   * (gate->urgent_ns, stamped when nm_strat_pw_post() hands such a packet to the main path) */
  if (urgent || !gate->urgent_ns || !rail->drv->ops->backlog ||
      rail->drv->ops->backlog(rail->drv, rail->peer) <= NM_STRAT_BACKLOG_MAX)
    return 0;
  if (nm_core_time_ns(core) - gate->urgent_ns > NM_STRAT_URGENT_LIVE_NS) {
    gate->urgent_ns = 0;
    return 0;
  }
  core->bulk_held_pass = core->pass;
  return 1;
}

int nm_strat_retry(struct nm_gate_s *gate, int *blocked)
{
  int n = 0;
  *blocked = 0;
  for (int i = 0; i < gate->n_rails && !gate->status; i++) {
    struct nm_pw_s *pw = gate->rails[i].retry;
    if (!pw)
      continue;
    gate->rails[i].retry = NULL;
    gate->core->n_retry--;
    if (nm_strat_pw_post(pw))
      n++;
    else
      *blocked = 1;
  }
  return n;
}

int nm_strat_commit_loop(struct nm_gate_s *gate, const int *order, int max_inflight,
                         int (*fill)(struct nm_gate_s *, struct nm_pw_s *))
{
  int blocked = 0, n = gate->core->n_retry ? nm_strat_retry(gate, &blocked) : 0; /* none refused anywhere: no walk */
  if (blocked)
    return n; /* the driver's queue is full: a new packet would only join the refused one */
  while (!gate->status && (gate->send_queue.head || gate->ctrl_head)) {
    int r = nm_strat_ready_rail(gate, order, max_inflight);
    if (r < 0)
      break;
    const int urgent = nm_strat_gate_urgent(gate);
    if (nm_strat_bulk_held(gate, r, urgent))
      break;
    struct nm_pw_s *pw = nm_strat_pw_new(gate, r);
    if (!pw)
      break;
    pw->urgent = urgent;
    if (fill(gate, pw) == 0) {
      nm_strat_pw_drop(pw);
      break;
    }
    if (!nm_strat_pw_post(pw))
      break;
    n++;
  }
  return n;
}
