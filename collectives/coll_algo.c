/**
 * @file coll_algo.c
 * @brief What the collective families' choosers share (see nm_coll_algo.h): the environment override, the
 * network's Hockney figures, the start of a built schedule.
 */
#include "nm_coll_algo.h"
#include <nmad/nm_coll_model.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include "nmad/core/nm_core_interface.h"

#include <float.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const nm_coll_override_vars[NM_COLL_NFAMILIES] = {
    "NMAD_BARRIER_ALGO",   "NMAD_ALLREDUCE_ALGO", "NMAD_REDUCE_ALGO", "NMAD_REDUCE_SCATTER_ALGO",
    "NMAD_ALLGATHER_ALGO", "NMAD_ALLTOALL_ALGO",  "NMAD_GATHER_ALGO", "NMAD_SCATTER_ALGO",
    "NMAD_BCAST_ALGO"};

/* A value too long for the table: no family has such a name, so it stays invalid (and is named so). */
static const char nm_coll_override_too_long[] = "(longer than NM_COLL_OVERRIDE_MAX)";
_Static_assert(sizeof(nm_coll_override_too_long) <= NM_COLL_OVERRIDE_MAX, "the marker fits the table");

const char *nm_coll_override_var(enum nm_coll_family_e f)
{
  return (int)f >= 0 && f < NM_COLL_NFAMILIES ? nm_coll_override_vars[f] : NULL;
}

void nm_coll_overrides_read(struct nm_coll_overrides_s *o)
{
  for (int f = 0; f < NM_COLL_NFAMILIES; f++) {
    const char *v = getenv(nm_coll_override_vars[f]);
    if (v == NULL)
      v = "";
    size_t len = strlen(v);
    if (len >= NM_COLL_OVERRIDE_MAX) {
      v = nm_coll_override_too_long; /* shorter than NM_COLL_OVERRIDE_MAX (checked below) */
      len = sizeof(nm_coll_override_too_long) - 1;
    }
    memcpy(o->value[f], v, len + 1);
  }
}

const char *nm_coll_algo_override(const struct nm_coll_group_s *group, enum nm_coll_family_e f)
{
  return group && group->overrides ? group->overrides->value[f] : getenv(nm_coll_override_vars[f]);
}

int nm_coll_algo_forced_parse(const struct nm_coll_group_s *group, enum nm_coll_family_e f,
                              const char *const names[], int n, int *algo)
{
  return nm_coll_algo_parse(nm_coll_override_vars[f], nm_coll_algo_override(group, f), names, n, algo);
}

int nm_coll_algo_env(const char *var, const char *const names[], int n, int *algo)
{
  return nm_coll_algo_parse(var, getenv(var), names, n, algo);
}

int nm_coll_algo_parse(const char *var, const char *v, const char *const names[], int n, int *algo)
{
  *algo = 0;
  if (v == NULL || *v == '\0')
    return 0;
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) {
      *algo = i;
      return 0;
    }
  char accepted[256] = "";
  for (int i = 0; i < n; i++) {
    strncat(accepted, names[i], sizeof(accepted) - strlen(accepted) - 1);
    if (i + 1 < n)
      strncat(accepted, ", ", sizeof(accepted) - strlen(accepted) - 1);
  }
  fprintf(stderr, "nmad: %s='%s' is invalid; accepted: %s\n", var, v, accepted);
  return -NM_EINVAL;
}

/* Hockney latency @p alpha (s) and inverse bandwidth @p beta (s/byte) of @p session's network. */
static void nm_coll_algo_hockney(nm_session_t session, double *alpha, double *beta)
{
  uint32_t lat_ns;
  uint64_t bw;
  if (session == NULL || nm_core_network_props(nm_session_get_core(session), &lat_ns, &bw) != 0) {
    lat_ns = 1000;
    bw = 1000;
  }
  nm_coll_model_hockney(lat_ns, bw > UINT32_MAX ? UINT32_MAX : (uint32_t)bw, alpha, beta);
}

void nm_coll_algo_net(nm_session_t session, struct nm_coll_algo_net_s *net)
{
  nm_coll_algo_hockney(session, &net->alpha, &net->beta);
  net->eager_upto = net->pull_upto = DBL_MAX;
  if (session) {
    nm_core_t core = nm_session_get_core(session);
    net->eager_upto = (double)nm_core_rdv_threshold(core);
    net->pull_upto = (double)nm_core_rdv_pull_upto(core);
  }
}

uint32_t nm_coll_algo_latency_ns(nm_session_t session)
{
  uint32_t lat_ns;
  uint64_t bw;
  if (session == NULL || nm_core_network_props(nm_session_get_core(session), &lat_ns, &bw) != 0)
    return 0;
  return lat_ns;
}

double nm_coll_algo_msg_time(const struct nm_coll_algo_net_s *net, double bytes)
{
  double t = net->alpha + bytes * net->beta;
  if (bytes > net->eager_upto && bytes > net->pull_upto)
    t += 2 * net->alpha; /* RTR back, then the data: the receiver does not pull it at match */
  return t;
}

void nm_coll_algo_wait(nm_session_t session, nm_coll_wait_fn_t wait, void *ref, volatile int *flag,
                       uint64_t spin_ns)
{
  if (wait) {
    wait(flag, spin_ns, ref);
    return;
  }
  nm_core_t core = nm_session_get_core(session);
  while (!*flag)
    nm_core_wait_flag_spin(core, flag, 0, spin_ns);
}

void nm_coll_algo_wait_all(nm_session_t session, nm_coll_wait_fn_t wait, void *ref, nm_sr_request_t *req, int n,
                           int *err)
{
  for (int i = 0; i < n; i++) {
    nm_coll_algo_wait(session, wait, ref, &req[i].completed, 0);
    nm_coll_algo_keep(err, req[i].status);
  }
}

void nm_coll_algo_exchange(nm_session_t session, nm_tag_t tag, nm_gate_t to, const void *sbuf, nm_len_t slen,
                           nm_gate_t from, void *rbuf, nm_len_t rlen, nm_coll_wait_fn_t wait, void *ref, int *err)
{
  nm_sr_request_t req[2];
  int posted = 0;
  if (from)
    posted += nm_coll_algo_recv(session, from, tag, rbuf, rlen, &req[posted], err);
  if (to)
    posted += nm_coll_algo_send_eager(session, to, tag, sbuf, slen, &req[posted], err);
  nm_coll_algo_wait_all(session, wait, ref, req, posted, err);
}

void nm_coll_algo_end(nm_session_t session)
{
  nm_core_end_burst(nm_session_get_core(session));
}

int nm_coll_algo_oversubscribed(const nm_coll_sched_t *s)
{
  nm_session_t session = s ? nm_coll_sched_session(s) : NULL;
  return session ? nm_core_job_oversubscribed(nm_session_get_core(session)) : 0;
}

nm_coll_sched_t *nm_coll_algo_new(nm_session_t session, nm_tag_t tag, nm_coll_sched_t **req, int *err)
{
  nm_coll_sched_t *s = NULL;
  *err = -NM_EINVAL;
  if (req == NULL || session == NULL)
    return NULL;
  *req = NULL;
  s = nm_coll_sched_new(session, tag);
  *err = s ? 0 : -NM_ENOMEM;
  return s;
}

int nm_coll_algo_start(nm_coll_sched_t *s, int err, nm_coll_sched_t **req)
{
  if (err) {
    nm_coll_sched_destroy(s);
    return err;
  }
  err = nm_coll_sched_start(s); /* frees s on error */
  if (err == 0)
    *req = s;
  return err;
}
