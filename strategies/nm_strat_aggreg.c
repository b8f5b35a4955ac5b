/* Strategy "aggreg" (the default): every pending control chunk, then as many queued sends as fit, in one
 * packet. Sends stay in FIFO order, so a send that does not fit stops the packing (no overtaking). */
#include "nmad/core/nm_core_private.h"

static void nm_strat_aggreg_enqueue(struct nm_gate_s *gate, struct nm_req_s *req)
{
  nm_req_list_append(&gate->send_queue, req);
}

int nm_strat_pack_all(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  int n = 0;
  while (gate->ctrl_head && nm_pw_pack_ctrl(pw))
    n++;
  while (gate->send_queue.head && nm_pw_pack_req(pw, gate->send_queue.head))
    n++;
  return n;
}

const struct nm_strategy_ops_s nm_strat_aggreg_ops = {
  .name = "aggreg",
  .enqueue = nm_strat_aggreg_enqueue,
  .try_and_commit = nm_strat_pack_all,
  .rdv_accept = nm_strat_rdv_split_balance,
};
