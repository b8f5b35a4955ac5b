/* Strategy "default": one chunk per packet, control chunks first, sends in FIFO order. */
#include "nmad/core/nm_core_private.h"

static void nm_strat_default_enqueue(struct nm_gate_s *gate, struct nm_req_s *req)
{
  nm_req_list_append(&gate->send_queue, req);
}

static int nm_strat_default_try_and_commit(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  if (gate->ctrl_head)
    return nm_pw_pack_ctrl(pw);
  if (gate->send_queue.head)
    return nm_pw_pack_req(pw, gate->send_queue.head);
  return 0;
}

const struct nm_strategy_ops_s nm_strat_default_ops = {
  .name = "default",
  .enqueue = nm_strat_default_enqueue,
  .try_and_commit = nm_strat_default_try_and_commit,
  .rdv_accept = nm_strat_rdv_split_balance,
};
