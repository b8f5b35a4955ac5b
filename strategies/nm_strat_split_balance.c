/* Receiver's rendezvous cut (rdv_accept of every strategy). Placeholder until branch i15-rdv lands its
 * bandwidth-proportional split: the whole rendezvous part in one chunk on rail 0, which is what the core did
 * before issue 15. */
#include "nmad/core/nm_core_private.h"

int nm_strat_rdv_split_balance(struct nm_gate_s *gate, nm_len_t len, int prio, struct nm_rdv_chunk_s *chunks,
                               int max)
{
  (void)gate;
  (void)prio;
  (void)max;
  chunks[0] = (struct nm_rdv_chunk_s){.rail = 0, .offset = 0, .len = len};
  return 1;
}
