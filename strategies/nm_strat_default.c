/* Strategy "default": one chunk per packet, control chunks first, sends in FIFO order (no aggregation: the
 * baseline that shows what aggregation gains). Not the default any more: NMAD_STRATEGY unset selects "prio". */
#include "nmad/core/nm_core_private.h"

static int nm_strat_default_fill(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  if (gate->ctrl_head)
    return nm_pw_pack_ctrl(pw);
  if (gate->send_queue.head)
    return nm_pw_pack_req(pw, gate->send_queue.head);
  return 0;
}

static int nm_strat_default_try_and_commit(struct nm_gate_s *gate)
{
  return nm_strat_commit_loop(gate, NULL, NM_STRAT_MAX_INFLIGHT, nm_strat_default_fill);
}

const struct nm_strategy_ops_s nm_strat_default_ops = {
  .name = "default",
  .pack_data = nm_strat_data_fifo,
  .pack_ctrl = nm_strat_ctrl_insert_prio,
  .try_and_commit = nm_strat_default_try_and_commit,
  .rdv_accept = nm_strat_rdv_split_balance,
};
