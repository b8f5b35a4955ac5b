/**
 * @file bcast_auto.c
 * @brief The automatic choice of a broadcast algorithm (issue 17, deliverable 4): Hasanov 2015's cost models in
 * LogP form (nm_coll_model.h: wire latency L, sender's overhead o per message, beta) fed with the network's
 * nominal figures, or an expert's NMAD_BCAST_ALGO.
 *
 * Every member of a broadcast must reach the same choice without talking: it depends only on p, the length (both
 * the same on every member, as MPI_Bcast requires), the drivers' nominal figures (nm_core_network_props(): the
 * same on every rank of a job), whether the job is oversubscribed (nm_core_job_oversubscribed(), likewise) and the
 * environment (nmad-run gives every rank the same). A choice costs a getenv and at most a few hundred model
 * evaluations (the best G scan), 0.3 us at p = 8 and 6-8 us at p = 6,144, so nm_coll_bcast_auto_opts() keeps the
 * model's choices in a memo the caller owns (one per MPI communicator, nmad/mpi/mpi_coll.c; optional per native
 * group): the state lives with the group, never here.
 */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_model.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>

#include "nm_coll_algo.h"

#include <stdint.h>
#include <stdlib.h>

/** LogP parameters of @p session's network (a singleton, without one, gets shm-like figures: p is 1 there). */
static void nm_bcast_auto_net(nm_session_t session, struct nm_coll_model_net_s *net)
{
  uint32_t lat_ns, o_ns, g_ns, g_free;
  uint64_t bw;
  if (nm_core_network_logp(nm_session_get_core(session), &lat_ns, &o_ns, &g_ns, &g_free, &bw) != 0) {
    lat_ns = 1000;
    o_ns = 500;
    g_ns = 0;
    g_free = 0;
    bw = 1000;
  }
  nm_coll_model_logp(lat_ns, o_ns, g_ns, g_free, bw > UINT32_MAX ? UINT32_MAX : (uint32_t)bw, net);
}

/* nm_coll_bcast_auto() with the override @p env already read (NULL or empty: none). */
static int nm_bcast_auto_env(nm_session_t session, int p, nm_len_t len, const char *env,
                             struct nm_coll_bcast_choice_s *choice)
{
  struct nm_coll_model_net_s net;
  if (session == NULL || p < 1 || choice == NULL)
    return -NM_EINVAL;
  nm_bcast_auto_net(session, &net);
  if (env && *env) {
    struct nm_coll_bcast_choice_s forced;
    int err = nm_coll_bcast_choice_parse(env, &forced);
    return err ? err : nm_coll_bcast_choice_complete_logp(&forced, p, (size_t)len, &net, choice);
  }
  if (nm_core_job_oversubscribed(nm_session_get_core(session))) {
    /* More ranks than cores on the job's one host: every level of a tree waits for its forwarder to get a core,
     * and the copies, pulled by the receivers (shared memory), are bound by the cores, not by the tree: measured
     * with 4 and 8 ranks on 2 cores, the flat tree was the fastest or within the runs' spread of it from 8 KiB to
     * 4 MiB, up to 3.3x faster than the model's choice (doc/performance.md, issue 18). The model, which prices
     * one port per member and a link per pair, cannot see that; the flat tree is then the choice.
     * Over a network driver (tcp on loopback) nobody pulls: the root writes every copy into its sockets, and above
     * 512 KiB the split-binary tree (each half down one subtree) beats it, 1.4-1.9x at 1 and 2 MiB with 4 and 8
     * ranks on 2 cores; above 2 MiB the model's pipelined chain does (doc/performance.md, "Bcast and Allgather
     * over tcp on an oversubscribed host"). */
    struct nm_coll_bcast_choice_s pick = {.algo = NM_COLL_BCAST_FLAT, .hierarchical = 0, .groups = 1};
    if (len > NM_COLL_BCAST_OVERSUB_FLAT_UPTO &&
        nm_coll_algo_latency_ns(session) >= NM_COLL_NET_LAT_NS) {
      if (len > NM_COLL_BCAST_OVERSUB_SPLIT_UPTO)
        return nm_coll_bcast_choose_logp(p, (size_t)len, &net, choice);
      pick.algo = NM_COLL_BCAST_SPLIT_BINARY;
    }
    return nm_coll_bcast_choice_complete_logp(&pick, p, (size_t)len, &net, choice);
  }
  return nm_coll_bcast_choose_logp(p, (size_t)len, &net, choice);
}

int nm_coll_bcast_auto(nm_session_t session, int p, nm_len_t len, struct nm_coll_bcast_choice_s *choice)
{
  return nm_bcast_auto_env(session, p, len, getenv("NMAD_BCAST_ALGO"), choice);
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

int nm_coll_bcast_auto_opts(nm_session_t session, struct nm_coll_bcast_memo_s *memo, int p, nm_len_t len,
                            struct nm_coll_bcast_opts_s *opts)
{
  return nm_coll_bcast_auto_opts_env(session, memo, p, len, getenv("NMAD_BCAST_ALGO"), opts);
}

int nm_coll_bcast_auto_opts_env(nm_session_t session, struct nm_coll_bcast_memo_s *memo, int p, nm_len_t len,
                                const char *env, struct nm_coll_bcast_opts_s *opts)
{
  if (opts == NULL)
    return -NM_EINVAL;
  if (env && *env)
    memo = NULL; /* an expert's override is read at every call and never remembered */
  struct nm_coll_bcast_memo_entry_s *e =
      memo ? &memo->entry[(len ^ (len >> 10) ^ (len >> 20)) % NM_COLL_BCAST_MEMO] : NULL;
  if (e && e->p == p && p > 0 && e->len == len) {
    *opts = e->opts;
    return NM_ESUCCESS;
  }
  struct nm_coll_bcast_choice_s choice;
  int err = nm_bcast_auto_env(session, p, len, env, &choice);
  if (err)
    return err;
  nm_coll_bcast_opts_of_choice(&choice, opts);
  if (e) {
    e->p = p;
    e->len = len;
    e->opts = *opts;
  }
  return NM_ESUCCESS;
}
