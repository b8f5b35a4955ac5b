/**
 * @file nm_bench_bcast_sim.c
 * @brief Duration of a broadcast, flat and hierarchical with G groups (Hasanov 2015, sections 2.1 and 3;
 * nm_coll_bcast() with nm_coll_bcast_opts_s.groups), for a list of G and of sizes, next to the model's time
 * (nm_coll_model.h). Made for nmad-sim (issue 17, benchmark 7b: bench/nm_bench_bcast_sim.sh), runs under nmad-run
 * too.
 *
 *   nmad-sim -n P --platform FILE --cfg=network/model:CM02 [--send-overhead NS] ./nm_bench_bcast_sim
 *            --algo NAME|auto [--inner NAME] --groups 1,2,4,... --sizes 512K,2M [--segment B] [--inner-segment B]
 *            [--alpha-ns A --beta B/s] [--check] [--iters N]
 *
 * One line per (size, G) on rank 0: algo,inner,p,size,groups_asked,groups_formed,time_us,model_us
 * (G = 1: the flat algorithm; model_us from --alpha-ns and --beta, 0 if not given). With --algo auto, one line per
 * size: nm_coll_bcast() with no options, so the library's automatic choice decides (nm_coll_bcast_auto(): the
 * model with the platform's alpha and beta, or NMAD_BCAST_ALGO); algo is "auto:" and the choice
 * ("hier:" when hierarchical), inner the segment size in bytes (0: whole message), groups_* the choice's G and
 * model_us the model's prediction for it (issue 17, "the model's automatic choice is within 1.15x of the best
 * forced algorithm"). The time runs from a job
 * barrier to a second one after every rank's broadcast returned (under nmad-sim a barrier costs no simulated
 * time), i.e. from the root's start to the last member's end; it is the minimum over --iters broadcasts
 * (default 1: simulated time is deterministic). Every member makes only the gates it talks to (the group is
 * given by nm_launcher_gate_of). Without --check the receive buffers are neither initialised nor checked (with
 * nmad-sim's --fake-payload, large transfers do not touch them: 6,142 ranks x 2 MiB would not fit in memory).
 * Exit status: 0, or 1 on a bad option, a failed broadcast, or bad data under --check. No global state.
 */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_model.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BB_TAG ((nm_tag_t)0xB5B0)
#define BB_MAX_LIST 64

struct bb_opts {
  enum nm_coll_bcast_algo_e algo, inner;
  int groups[BB_MAX_LIST], ngroups;
  size_t sizes[BB_MAX_LIST];
  int nsizes;
  nm_len_t segment, inner_segment;
  double alpha_ns, beta;
  int check, iters;
  int automatic; /* --algo auto: opts NULL, the library chooses */
};

static int bb_algo(const char *s, enum nm_coll_bcast_algo_e *out)
{
  struct nm_coll_bcast_choice_s c;
  if (nm_coll_bcast_choice_parse(s, &c) != 0 || c.hierarchical)
    return -1;
  *out = c.algo;
  return 0;
}

static size_t bb_size(const char *s)
{
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  switch (*end) {
  case 'K': case 'k': v <<= 10; break;
  case 'M': case 'm': v <<= 20; break;
  case 'G': case 'g': v <<= 30; break;
  default: break;
  }
  return (size_t)v;
}

/* A comma-separated list of sizes (with K/M/G) or of integers. @return its length, -1 when too long. */
static int bb_list(const char *s, size_t *out)
{
  int n = 0;
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (n == BB_MAX_LIST)
      return -1;
    out[n++] = bb_size(t);
  }
  return n;
}

static int bb_parse(int argc, char **argv, struct bb_opts *o)
{
  int inner_set = 0;
  size_t tmp[BB_MAX_LIST];
  memset(o, 0, sizeof(*o));
  o->algo = NM_COLL_BCAST_SCATTER_RING;
  o->groups[0] = 1;
  o->ngroups = 1;
  o->sizes[0] = 512 << 10;
  o->nsizes = 1;
  o->iters = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--check") == 0) {
      o->check = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "nm_bench_bcast_sim: %s needs a value\n", a);
      return -1;
    }
    i++;
    if (strcmp(a, "--algo") == 0 && strcmp(v, "auto") == 0) {
      o->automatic = 1;
      continue;
    }
    if (strcmp(a, "--algo") == 0 && bb_algo(v, &o->algo) == 0)
      continue;
    if (strcmp(a, "--inner") == 0 && bb_algo(v, &o->inner) == 0) {
      inner_set = 1;
      continue;
    }
    if (strcmp(a, "--groups") == 0 && (o->ngroups = bb_list(v, tmp)) > 0) {
      for (int k = 0; k < o->ngroups; k++)
        o->groups[k] = (int)tmp[k];
      continue;
    }
    if (strcmp(a, "--sizes") == 0 && (o->nsizes = bb_list(v, o->sizes)) > 0)
      continue;
    if (strcmp(a, "--segment") == 0) {
      o->segment = bb_size(v);
      continue;
    }
    if (strcmp(a, "--inner-segment") == 0) {
      o->inner_segment = bb_size(v);
      continue;
    }
    if (strcmp(a, "--alpha-ns") == 0) {
      o->alpha_ns = atof(v);
      continue;
    }
    if (strcmp(a, "--beta") == 0) {
      o->beta = atof(v);
      continue;
    }
    if (strcmp(a, "--iters") == 0 && atoi(v) > 0) {
      o->iters = atoi(v);
      continue;
    }
    fprintf(stderr, "nm_bench_bcast_sim: bad option %s %s (see the header of bench/nm_bench_bcast_sim.c)\n", a, v);
    return -1;
  }
  if (!inner_set)
    o->inner = o->algo;
  if (o->inner_segment == 0)
    o->inner_segment = o->segment;
  return 0;
}

/* The model's time in us for p members, G groups, m bytes (0 without --alpha-ns/--beta). Inner and outer
 * are priced each with their own algorithm and segment count: T_outer(G') + T_inner(ceil(p / G)). */
static double bb_model_us(const struct bb_opts *o, int p, int groups, size_t m)
{
  if (o->alpha_ns <= 0 || o->beta <= 0)
    return 0;
  double a = o->alpha_ns * 1e-9, b = 1 / o->beta, to = 0, ti = 0;
  nm_len_t so = o->segment ? o->segment : NM_COLL_BCAST_SEGMENT_DEFAULT;
  nm_len_t si = o->inner_segment ? o->inner_segment : NM_COLL_BCAST_SEGMENT_DEFAULT;
  size_t xo = m ? (m + so - 1) / so : 1, xi = m ? (m + si - 1) / si : 1;
  if (groups <= 1) {
    nm_coll_model_bcast_time(o->algo, p, m, a, b, xo, &to);
    return to * 1e6;
  }
  int g = groups > p ? p : groups, s = (p + g - 1) / g, gf = (p + s - 1) / s;
  nm_coll_model_bcast_time(o->algo, gf, m, a, b, xo, &to);
  nm_coll_model_bcast_time(o->inner, s, m, a, b, xi, &ti);
  return (to + ti) * 1e6;
}

/* Checks a member's buffer after a broadcast of bb's pattern and clears it for the next one. @return 0 or -1. */
static int bb_check(uint8_t *buf, size_t m, int rank, const char *what)
{
  for (size_t k = 0; k < m; k++)
    if (buf[k] != (uint8_t)(k * 131 + 7)) {
      fprintf(stderr, "nm_bench_bcast_sim: rank %d: %s, %zu B: wrong byte at %zu\n", rank, what, m, k);
      return -1;
    }
  memset(buf, 0, m);
  return 0;
}

/* --algo auto: nm_coll_bcast() without options (the library's choice), best of --iters; one CSV line on rank 0.
 * @return 0, or -1 when the broadcast failed or (--check) the data is wrong. */
static int bb_run_auto(const struct bb_opts *o, nm_launcher_t launcher, nm_session_t session,
                       const struct nm_coll_group_s *world, int rank, uint8_t *buf, size_t m)
{
  struct nm_coll_bcast_choice_s c;
  nm_core_t core = nm_launcher_get_core(launcher);
  int rc = nm_coll_bcast_auto(session, world->n, m, &c), status = 0;
  double best = -1;
  for (int it = 0; it < o->iters && rc == 0; it++) {
    nm_launcher_barrier(launcher);
    uint64_t t0 = nm_core_time_ns(core);
    rc = nm_coll_bcast(session, world, rank, 0, buf, m, BB_TAG, NULL);
    nm_launcher_barrier(launcher);
    double us = (double)(nm_core_time_ns(core) - t0) / 1e3;
    if (best < 0 || us < best)
      best = us;
  }
  if (rc) {
    fprintf(stderr, "nm_bench_bcast_sim: rank %d: auto, %zu B: %s\n", rank, m, nm_strerror(rc));
    return -1;
  }
  if (o->check && rank != 0 && bb_check(buf, m, rank, "auto") != 0)
    status = -1;
  if (rank == 0) {
    char name[64];
    snprintf(name, sizeof(name), "%s%s", c.hierarchical ? "hier:" : "", nm_coll_model_algo_name(c.algo));
    printf("auto:%s,%zu,%d,%zu,%d,%d,%.3f,%.3f\n", name, c.segment, world->n, m, c.groups, c.groups, best,
           c.predicted_s * 1e6);
    fflush(stdout);
  }
  return status;
}

int main(int argc, char **argv)
{
  struct bb_opts o;
  nm_launcher_t launcher;
  nm_session_t session;
  int rank, size, status = 0;
  int rc = nm_launcher_init(&launcher, &argc, &argv);
  if (rc) {
    fprintf(stderr, "nm_bench_bcast_sim: nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  if (bb_parse(argc, argv, &o) != 0) {
    nm_launcher_exit(launcher);
    return 1;
  }
  nm_core_t core = nm_launcher_get_core(launcher);
  rc = nm_session_open(core, "nm_bench_bcast_sim", &session);
  if (rc) {
    fprintf(stderr, "nm_bench_bcast_sim: nm_session_open: %s\n", nm_strerror(rc));
    nm_launcher_exit(launcher);
    return 1;
  }
  struct nm_coll_group_s world = {size, nm_launcher_gate_of, launcher, NULL, NULL};
  if (rank == 0)
    printf("algo,inner,p,size,groups_asked,groups_formed,time_us,model_us\n");
  for (int si = 0; si < o.nsizes && status == 0; si++) {
    size_t m = o.sizes[si];
    uint8_t *buf = malloc(m ? m : 1);
    if (!buf) {
      fprintf(stderr, "nm_bench_bcast_sim: rank %d: out of memory (%zu bytes)\n", rank, m);
      status = 1;
      break;
    }
    if (rank == 0 || o.check)
      for (size_t k = 0; k < m; k++)
        buf[k] = rank == 0 ? (uint8_t)(k * 131 + 7) : 0;
    if (o.automatic) {
      if (bb_run_auto(&o, launcher, session, &world, rank, buf, m) != 0)
        status = 1;
      free(buf);
      continue;
    }
    for (int gi = 0; gi < o.ngroups; gi++) {
      struct nm_coll_bcast_opts_s bo = {o.algo, o.segment, o.groups[gi], o.inner, o.inner_segment};
      struct nm_coll_bcast_hier_s h;
      nm_coll_bcast_hier_init(&h, &world, rank, o.groups[gi]);
      double best = -1;
      for (int it = 0; it < o.iters; it++) {
        nm_launcher_barrier(launcher);
        uint64_t t0 = nm_core_time_ns(core);
        rc = nm_coll_bcast(session, &world, rank, 0, buf, m, BB_TAG, &bo);
        nm_launcher_barrier(launcher);
        double us = (double)(nm_core_time_ns(core) - t0) / 1e3;
        if (rc) {
          fprintf(stderr, "nm_bench_bcast_sim: rank %d: G = %d, %zu B: %s\n", rank, o.groups[gi], m,
                  nm_strerror(rc));
          status = 1;
        }
        if (best < 0 || us < best)
          best = us;
      }
      if (o.check && rank != 0 && bb_check(buf, m, rank, "forced") != 0)
        status = 1;
      if (rank == 0) {
        printf("%s,%s,%d,%zu,%d,%d,%.3f,%.3f\n", nm_coll_model_algo_name(o.algo), nm_coll_model_algo_name(o.inner),
               size, m, o.groups[gi], o.groups[gi] > 1 ? h.groups : 1, best, bb_model_us(&o, size, o.groups[gi], m));
        fflush(stdout);
      }
    }
    free(buf);
  }
  nm_session_close(session);
  nm_launcher_exit(launcher);
  return status;
}
