/* Strategy "aggreg": every pending control chunk, then as many queued sends as fit, in one packet. Sends stay in
 * FIFO order whatever their priority (the pre-issue-15 default, kept as the reference for message rate), so a
 * send that does not fit stops the packing (no overtaking). Control chunks follow their priority. */
#include "nmad/core/nm_core_private.h"

static int nm_strat_aggreg_fill(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  int n = 0;
  while (gate->ctrl_head && nm_pw_pack_ctrl(pw))
    n++;
  while (gate->send_queue.head && nm_pw_pack_req(pw, gate->send_queue.head))
    n++;
  return n;
}

static int nm_strat_aggreg_try_and_commit(struct nm_gate_s *gate)
{
  return nm_strat_commit_loop(gate, NULL, NM_STRAT_MAX_INFLIGHT, nm_strat_aggreg_fill);
}

const struct nm_strategy_ops_s nm_strat_aggreg_ops = {
  .name = "aggreg",
  .pack_data = nm_strat_data_fifo,
  .pack_ctrl = nm_strat_ctrl_insert_prio,
  .try_and_commit = nm_strat_aggreg_try_and_commit,
  .rdv_accept = nm_strat_rdv_split_balance,
};
