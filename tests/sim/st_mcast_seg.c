/**
 * @file st_mcast_seg.c
 * @brief Simulator test of pipelined dynamic broadcasts (nm_mcast_isend_seg(); issue 17, deliverable 5) at 64+
 * simulated ranks, every byte checked on every rank:
 *  - every tree kind, from root 0 and from root N/3 with priorities, 1 MiB + 5 bytes in 64 KiB segments (the last
 *    one 5 bytes), and 37 bytes in 1-byte segments;
 *  - the pipelined chain's duration against its model (Hasanov 2015, section 2.1.3; Denis 2020, section 6): with
 *    X segments of S bytes over p ranks the pipeline takes X + p - 2 steps. The last rank has the data no sooner
 *    than (X + p - 2) S / beta (a hop forwards a segment once it has all of it, the root's link emits one segment
 *    per S / beta), and no later than X + p - 2 steps of 2 t, t being one segment over one hop, measured here as a
 *    2-rank broadcast of one segment (rendezvous and ack included). Why 2 t and not the textbook t: with two
 *    segments in flight per child and segment 0 outside that window, two segments share each link and the
 *    simulated link divides its bandwidth between them, so segment 0 reaches each hop after about 2 t
 *    (doc/performance.md, "Issue 17: pipelined dynamic broadcasts"). The store-and-forward chain is bounded
 *    below by (p - 1) M / beta.
 *    beta = 1e9 B/s on tests/sim/flat-64.xml under CM02. Durations are simulated time, on the root, up to a
 *    zero-byte ack from the last rank (one latency, in t too).
 */
#include "st_common.h"
#include <nmad/nm_mcast.h>
#include <string.h>

#define ST_TAG ((nm_tag_t)0x5e00)
#define ST_TAG_ACK ((nm_tag_t)0x5eff)
#define ST_BETA 1e9 /* B/s, tests/sim/flat-64.xml */

/* One broadcast from @p root to @p dests (the others take no part), data checked; @p acker (a destination, or -1)
 * sends a zero-byte ack to the root when its receive completed. @return the simulated duration in ns at the root
 * (to the ack when there is one), 0 elsewhere. */
static double st_seg_bcast(struct st_ctx *c, nm_mcast_service_t mc, int root, const int *dests, const int *prios,
                           int n, int tree, size_t len, size_t seg, int acker, int seq)
{
  uint8_t *buf = malloc(len + 1);
  nm_tag_t tag = ST_TAG + (nm_tag_t)seq;
  int member = 0, rc;
  double dur = 0;
  for (int i = 0; i < n; i++)
    member |= dests[i] == c->rank;
  nm_sr_request_t r, ack;
  if (member) {
    memset(buf, 0, len);
    rc = nm_sr_irecv(c->session, st_gate(c, root), tag, buf, len, &r);
    ST_CHECK(c, rc == 0, "nm_sr_irecv: %s", nm_strerror(rc));
  }
  if (c->rank == root && acker >= 0)
    nm_sr_irecv(c->session, st_gate(c, acker), ST_TAG_ACK, NULL, 0, &ack);
  nm_launcher_barrier(c->launcher); /* every receive is posted */
  if (c->rank == root) {
    st_fill(buf, len, root, -1, seq);
    uint64_t t0 = nm_core_time_ns(c->core);
    nm_mcast_req_t req;
    rc = nm_mcast_isend_seg(mc, dests, prios, n, tag, buf, len, (enum nm_mcast_tree_e)tree, seg, &req);
    ST_CHECK(c, rc == 0, "nm_mcast_isend_seg: %s", nm_strerror(rc));
    if (rc == 0) {
      rc = nm_mcast_wait(mc, &req);
      ST_CHECK(c, rc == 0, "nm_mcast_wait: %s", nm_strerror(rc));
    }
    if (acker >= 0)
      nm_sr_rwait(c->session, &ack);
    dur = (double)(nm_core_time_ns(c->core) - t0);
  } else if (member) {
    rc = nm_sr_rwait(c->session, &r);
    ST_CHECK(c, rc == 0, "tree %d, %zu B in %zu B segments from %d: receive %s", tree, len, seg, root,
             nm_strerror(rc));
    long bad = st_verify(buf, len, root, -1, seq);
    ST_CHECK(c, bad < 0, "tree %d, %zu B in %zu B segments from %d: first bad byte %ld", tree, len, seg, root, bad);
    if (c->rank == acker) {
      nm_sr_request_t a;
      rc = nm_sr_isend(c->session, st_gate(c, root), ST_TAG_ACK, NULL, 0, &a);
      ST_CHECK(c, rc == 0 && nm_sr_swait(c->session, &a) == 0, "ack: %s", nm_strerror(rc));
    }
  }
  free(buf);
  return dur;
}

int main(int argc, char **argv)
{
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  nm_mcast_service_t mc;
  int rc = nm_mcast_init(c.session, &mc);
  ST_CHECK(&c, rc == 0, "nm_mcast_init: %s", nm_strerror(rc));
  nm_launcher_barrier(c.launcher);
  const int p = c.size, r2 = p / 3;
  int *dests = malloc(sizeof(int) * (size_t)p), *d2 = malloc(sizeof(int) * (size_t)p);
  int *prios = malloc(sizeof(int) * (size_t)p), n2 = 0, seq = 0;
  for (int r = 1; r < p; r++)
    dests[r - 1] = r;
  for (int r = 0; r < p; r++)
    if (r != r2) {
      d2[n2] = r;
      prios[n2++] = r % 3;
    }
  for (int tree = 0; tree < 4; tree++) {
    st_seg_bcast(&c, mc, 0, dests, NULL, p - 1, tree, (1 << 20) + 5, 64 * 1024, -1, seq++);
    st_seg_bcast(&c, mc, r2, d2, prios, n2, tree, (1 << 20) + 5, 64 * 1024, -1, seq++);
    st_seg_bcast(&c, mc, 0, dests, NULL, p - 1, tree, 37, 1, -1, seq++);
  }
  /* The chain against its model: M = 1 MiB in X = 16 segments of S = 64 KiB. */
  const size_t m = 1 << 20, s = 64 * 1024;
  const double x = (double)(m / s);
  double step = st_seg_bcast(&c, mc, 0, dests, NULL, 1, NM_MCAST_TREE_CHAIN, s, 0, 1, seq++);
  double pipe = st_seg_bcast(&c, mc, 0, dests, NULL, p - 1, NM_MCAST_TREE_CHAIN, m, s, p - 1, seq++);
  double sf = st_seg_bcast(&c, mc, 0, dests, NULL, p - 1, NM_MCAST_TREE_CHAIN, m, 0, p - 1, seq++);
  if (c.rank == 0) {
    double lo = (x + p - 2) * (double)s / ST_BETA * 1e9, hi = (x + p - 2) * 2 * step;
    double sf_lo = (p - 1) * m / ST_BETA * 1e9;
    printf("st_mcast_seg: chain of %d ranks, 1 MiB: pipelined (16 x 64 KiB) %.1f us, model [%.1f, %.1f] us "
           "(t = %.1f us; textbook (X + p - 2) t = %.1f us); store-and-forward %.1f us (>= %.1f us): %.1fx\n",
           p, pipe / 1e3, lo / 1e3, hi / 1e3, step / 1e3, (x + p - 2) * step / 1e3, sf / 1e3, sf_lo / 1e3, sf / pipe);
    ST_CHECK(&c, pipe >= lo && pipe <= hi, "pipelined chain %.1f us outside its model [%.1f, %.1f] us", pipe / 1e3,
             lo / 1e3, hi / 1e3);
    ST_CHECK(&c, sf >= sf_lo, "store-and-forward chain %.1f us below its bound %.1f us", sf / 1e3, sf_lo / 1e3);
  }
  free(dests);
  free(d2);
  free(prios);
  nm_launcher_barrier(c.launcher); /* nothing is still being forwarded when the services stop */
  rc = nm_mcast_finalize(mc);
  ST_CHECK(&c, rc == 0, "nm_mcast_finalize: %s", nm_strerror(rc));
  if (c.rank == 0)
    printf("st_mcast_seg: %d ranks: %s\n", c.size, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
