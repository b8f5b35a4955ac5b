/* split_balance: how a rendezvous message is cut across the rails of its gate (NewMadeleine's strategy of that
 * name; issue 15, part 3). The receiver asks for each piece with its own RTR (rail, offset, len); the core then
 * cuts each piece into NMAD_RDV_CHUNK-sized chunks so that urgent traffic passes between them (nm_rdv.c).
 *
 * The price of a set of rails is the time the message would take on it under the drivers' nominal figures:
 * the slowest start (largest latency) plus the bytes over the summed bandwidth, each rail carrying a share
 * proportional to its bandwidth so that all finish together. With at most NM_MAX_RAILS (4) rails every subset
 * is priced (15 at most), which needs no threshold: a small message costs mostly latency and goes whole on the
 * lowest-latency rail; a large one is spread over every rail whose bandwidth pays for its latency.
 * On one host (nm_core_set_one_host()) the rails share the host's memory and cores, so only single rails are
 * priced (NMAD_SPLIT_LOCAL=1 prices every set there too): splitting through shared memory and loopback tcp
 * measured 0.64-0.81x shared memory alone (doc/performance.md, "Two rails on one host"). */
#include "nmad/core/nm_core_private.h"

/* Split points of messages from this size on are aligned to NM_SPLIT_ALIGN bytes. */
#define NM_SPLIT_ALIGN 4096u
#define NM_SPLIT_ALIGN_FROM (64u * 1024u)

/* Nominal time of len bytes on the rails of mask, in ns (bandwidth in MB/s = bytes per us). */
static double nm_split_cost(const struct nm_gate_s *gate, unsigned mask, nm_len_t len)
{
  double lat = 0, bw = 0;
  for (int i = 0; i < gate->n_rails; i++)
    if (mask & (1u << i)) {
      const struct nm_drv_props_s *p = &gate->rails[i].drv->props;
      if ((double)p->latency_ns > lat)
        lat = (double)p->latency_ns;
      bw += (double)p->bandwidth_MBps;
    }
  return bw > 0 ? lat + (double)len * 1000.0 / bw : -1;
}

int nm_strat_rdv_split_balance(struct nm_gate_s *gate, nm_len_t len, int prio, struct nm_rdv_chunk_s *chunks,
                               int max)
{
  (void)prio;
  int n = gate->n_rails < max ? gate->n_rails : max;
  unsigned best = 1;
  double best_cost = -1;
  for (unsigned mask = 1; n > 0 && mask < (1u << n); mask++) {
    if (gate->core->one_host && !gate->core->cfg.split_local && (mask & (mask - 1)))
      continue; /* more than one rail */
    double c = nm_split_cost(gate, mask, len);
    /* strictly cheaper only: among equal prices the lower mask (fewer, lower-index rails) wins */
    if (c >= 0 && (best_cost < 0 || c < best_cost)) {
      best = mask;
      best_cost = c;
    }
  }
  uint64_t bw_total = 0;
  for (int i = 0; i < n; i++)
    if (best & (1u << i))
      bw_total += gate->rails[i].drv->props.bandwidth_MBps;
  int k = 0;
  nm_len_t off = 0;
  for (int i = 0; i < n && off < len; i++) {
    if (!(best & (1u << i)))
      continue;
    uint64_t bw = gate->rails[i].drv->props.bandwidth_MBps;
    bw_total -= bw;
    nm_len_t share = len - off;
    if (bw_total > 0) { /* not the last rail used: its proportional share, the last one takes the rest */
      share = (nm_len_t)((double)(len - off) * (double)bw / (double)(bw + bw_total));
      if (len >= NM_SPLIT_ALIGN_FROM)
        share -= share % NM_SPLIT_ALIGN;
      if (share == 0)
        continue;
    }
    chunks[k++] = (struct nm_rdv_chunk_s){.rail = i, .offset = off, .len = share};
    off += share;
  }
  if (k == 0) /* no rail (cannot happen on a gate) or a zero length: one piece on rail 0 */
    chunks[k++] = (struct nm_rdv_chunk_s){.rail = 0, .offset = 0, .len = len};
  return k;
}
