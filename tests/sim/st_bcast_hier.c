/**
 * @file st_bcast_hier.c
 * @brief Simulator test: the hierarchical broadcast (Hasanov 2015, section 3; collectives/bcast_hier.c; issue 17,
 * deliverable 3) at scale under nmad-sim, every byte checked on every rank, over the function form of the group
 * (a rank makes only the gates it talks to):
 *  - each algorithm at both levels, and two mixed pairs (scatter-ring over binomial, flat over pipelined chain),
 *    with G = sqrt(p) rounded and G = 5 (p = 64: groups of 13, the last of 12), 1000 B (eager) and 300001 B
 *    (rendezvous; 16 KiB segments for the pipelined chain), from root 0 and from a root that is not the first
 *    member of its group;
 *  - simulated time against the model where the comparison is clean: flat and chain, flat vs hierarchical with
 *    G = sqrt(p), 300001 B, whose costs are (p - 1)(alpha + m beta) and (G + p/G - 2)(alpha + m beta) (sections
 *    2.1.1, 2.1.2, eq. (1)); the simulated ratio flat / hierarchical must be within --tolerance (default 5%) of
 *    the model's (nm_coll_model_bcast_time / nm_coll_model_bcast_hier_time with the platform's alpha and beta,
 *    --alpha-ns and --beta). A ratio is asserted, not a time: the rendezvous handshake (RDV, RTR) adds the same
 *    few alpha per hop to both forms. Simulated time is deterministic: this is no wall-clock assertion.
 * Rank 0 prints each broadcast's simulated duration.
 */
#include "st_common.h"
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_model.h>
#include <math.h>
#include <string.h>

#define ST_TAG ((nm_tag_t)0x5c00)

/* One broadcast, data checked. @return its simulated duration in us (on every rank). */
static double st_one(struct st_ctx *c, enum nm_coll_bcast_algo_e outer, enum nm_coll_bcast_algo_e inner, int groups,
                     int root, size_t len, int seq)
{
  struct nm_coll_group_s world = {c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  struct nm_coll_bcast_opts_s o = {outer, 16384, groups, inner, 16384};
  uint8_t *buf = malloc(len + 1);
  if (c->rank == root)
    st_fill(buf, len, root, -1, seq);
  else
    memset(buf, 0, len);
  nm_launcher_barrier(c->launcher);
  uint64_t t0 = nm_core_time_ns(c->core);
  int rc = nm_coll_bcast(c->session, &world, c->rank, root, buf, len, ST_TAG, &o);
  nm_launcher_barrier(c->launcher); /* so that t1 - t0 covers the last member's receive */
  uint64_t t1 = nm_core_time_ns(c->core);
  const char *on = nm_coll_bcast_algo_name(outer), *in = nm_coll_bcast_algo_name(inner);
  ST_CHECK(c, rc == 0, "%s/%s G=%d from %d, %zu bytes: %s", on, in, groups, root, len, nm_strerror(rc));
  long bad = st_verify(buf, len, root, -1, seq);
  ST_CHECK(c, bad < 0, "%s/%s G=%d from %d, %zu bytes: first bad byte %ld", on, in, groups, root, len, bad);
  double us = (double)(t1 - t0) / 1e3;
  if (c->rank == root)
    printf("%-16s / %-16s G=%2d root %2d %7zu B: %10.1f us (simulated)\n", on, in, groups, root, len, us);
  free(buf);
  return us;
}

int main(int argc, char **argv)
{
  static const size_t sizes[2] = {1000, 300001};
  struct st_ctx c;
  double alpha_ns = 2000, beta = 1e9, tol = 0.05;
  if (st_init(&c, &argc, &argv))
    return 1;
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--alpha-ns") == 0)
      alpha_ns = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--beta") == 0)
      beta = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--tolerance") == 0)
      tol = atof(argv[i + 1]);
  }
  int gsq = (int)lround(sqrt((double)c.size)), gs[2] = {gsq, 5};
  int roots[2] = {0, c.size / 2 + 1}; /* p / 2 + 1 is not the first member of its group for these G */
  int seq = 0;
  for (int a = 0; a < NM_COLL_BCAST_NALGOS + 2; a++) {
    enum nm_coll_bcast_algo_e outer = (enum nm_coll_bcast_algo_e)a, inner = outer;
    if (a == NM_COLL_BCAST_NALGOS)
      outer = NM_COLL_BCAST_SCATTER_RING, inner = NM_COLL_BCAST_BINOMIAL;
    else if (a == NM_COLL_BCAST_NALGOS + 1)
      outer = NM_COLL_BCAST_FLAT, inner = NM_COLL_BCAST_PIPELINED_CHAIN;
    for (int g = 0; g < 2; g++)
      for (int s = 0; s < 2; s++)
        for (int r = 0; r < 2; r++)
          st_one(&c, outer, inner, gs[g], roots[r], sizes[s], seq++);
  }
  /* simulated flat / hierarchical against the model's, for the flat tree and the chain */
  static const enum nm_coll_bcast_algo_e timed[2] = {NM_COLL_BCAST_FLAT, NM_COLL_BCAST_CHAIN};
  for (int i = 0; i < 2; i++) {
    size_t m = sizes[1];
    double flat_us = st_one(&c, timed[i], timed[i], 0, 0, m, seq++);
    double hier_us = st_one(&c, timed[i], timed[i], gsq, 0, m, seq++);
    double tf = 0, th = 0;
    nm_coll_model_bcast_time(timed[i], c.size, m, alpha_ns * 1e-9, 1 / beta, 1, &tf);
    nm_coll_model_bcast_hier_time(timed[i], c.size, gsq, m, alpha_ns * 1e-9, 1 / beta, 1, &th);
    double got = flat_us / hier_us, want = tf / th, err = fabs(got / want - 1);
    if (c.rank == 0)
      printf("%-16s p=%d G=%d m=%zu: flat/hier simulated %.3f, model %.3f (eq. (1)), error %.1f%%\n",
             nm_coll_bcast_algo_name(timed[i]), c.size, gsq, m, got, want, 100 * err);
    ST_CHECK(&c, err <= tol, "%s: flat/hier %.3f, model %.3f (tolerance %.0f%%)", nm_coll_bcast_algo_name(timed[i]),
             got, want, 100 * tol);
  }
  nm_launcher_barrier(c.launcher);
  if (c.rank == 0)
    printf("st_bcast_hier: %d ranks: %s\n", c.size, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
