/**
 * @file bcast_auto.c
 * @brief The automatic choice of a broadcast algorithm (issue 17, deliverable 4): Hasanov 2015's cost models
 * (nm_coll_model.h) fed with the network's nominal latency and bandwidth, or an expert's NMAD_BCAST_ALGO.
 *
 * Every member of a broadcast must reach the same choice without talking: it depends only on p, the length (both
 * the same on every member, as MPI_Bcast requires), the drivers' nominal figures (nm_core_network_props(): the
 * same on every rank of a job) and the environment (nmad-run gives every rank the same). Nothing is cached: the
 * choice costs a getenv and at most a few hundred model evaluations (the best G scan), small next to a broadcast.
 */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_model.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>

#include <stdint.h>
#include <stdlib.h>

/** Hockney parameters of @p session's network (a singleton, without one, gets shm-like figures: p is 1 there). */
static void nm_bcast_auto_hockney(nm_session_t session, double *alpha, double *beta)
{
  uint32_t lat_ns;
  uint64_t bw;
  if (nm_core_network_props(nm_session_get_core(session), &lat_ns, &bw) != 0) {
    lat_ns = 1000;
    bw = 1000;
  }
  nm_coll_model_hockney(lat_ns, bw > UINT32_MAX ? UINT32_MAX : (uint32_t)bw, alpha, beta);
}

int nm_coll_bcast_auto(nm_session_t session, int p, nm_len_t len, struct nm_coll_bcast_choice_s *choice)
{
  double alpha, beta;
  if (session == NULL || p < 1 || choice == NULL)
    return -NM_EINVAL;
  nm_bcast_auto_hockney(session, &alpha, &beta);
  const char *env = getenv("NMAD_BCAST_ALGO");
  if (env && *env) {
    struct nm_coll_bcast_choice_s forced;
    int err = nm_coll_bcast_choice_parse(env, &forced);
    return err ? err : nm_coll_bcast_choice_complete(&forced, p, (size_t)len, alpha, beta, choice);
  }
  return nm_coll_bcast_choose(p, (size_t)len, alpha, beta, choice);
}

void nm_coll_bcast_opts_of_choice(const struct nm_coll_bcast_choice_s *choice, struct nm_coll_bcast_opts_s *opts)
{
  /* the model prices the paper's form: the same algorithm (and segment) at both levels */
  opts->algo = choice->algo;
  opts->segment = choice->segment;
  opts->groups = choice->hierarchical ? choice->groups : 1;
  opts->inner_algo = choice->algo;
  opts->inner_segment = choice->segment;
}
