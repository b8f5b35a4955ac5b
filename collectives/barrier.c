/**
 * @file barrier.c
 * @brief The dissemination and linear barriers (nm_coll_barrier.h) as native non-blocking collectives, and the
 * choice between them.
 */
#include <nmad/nm_coll_barrier.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include "nm_coll_algo.h"

static const char *const nm_bar_names[NM_COLL_BARRIER_NALGOS] = {"auto", "dissemination", "linear"};

/* nm_coll_barrier_choose_job() with the override of @p group (NULL: the environment's). */
static int nm_bar_choose(const struct nm_coll_group_s *group, int p, int job_oversubscribed,
                         enum nm_coll_barrier_algo_e *algo)
{
  int forced, err = nm_coll_algo_forced(group, NM_COLL_FAMILY_BARRIER, nm_bar_names, NM_COLL_BARRIER_NALGOS, &forced);
  if (err)
    return err;
  if (forced)
    *algo = (enum nm_coll_barrier_algo_e)forced;
  else
    *algo = job_oversubscribed && p > 2 ? NM_COLL_BARRIER_LINEAR : NM_COLL_BARRIER_DISSEMINATION;
  return 0;
}

int nm_coll_barrier_choose_job(int p, int job_oversubscribed, enum nm_coll_barrier_algo_e *algo)
{
  return nm_bar_choose(NULL, p, job_oversubscribed, algo);
}

int nm_coll_barrier_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                          int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self))
    return -NM_EINVAL;
  int p = group->n;
  enum nm_coll_barrier_algo_e algo;
  int err = nm_bar_choose(group, p, nm_coll_algo_oversubscribed(s), &algo);
  if (err)
    return err;
  if (algo == NM_COLL_BARRIER_LINEAR && p > 1) {
    /* every member signals member 0, which answers every member once all signals are in */
    for (int m = 1; m < p; m++) {
      if (self == 0) {
        nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, m), NULL, 0);
        nm_coll_sched_send(s, round + 1, nm_coll_algo_gate(group, m), NULL, 0, 0);
      } else if (m == self) {
        nm_coll_sched_send(s, round, nm_coll_algo_gate(group, 0), NULL, 0, 0);
        nm_coll_sched_recv(s, round + 1, nm_coll_algo_gate(group, 0), NULL, 0);
      }
    }
    round += 2;
  } else {
    /* one round per distance: the signal of round k must not be taken for one of round k + 1 (same gate and tag
     * only when 2^k and 2^(k+1) hit the same member mod p; per-(gate, tag) order then pairs them in turn) */
    for (int k = 1; k < p; k <<= 1, round++) {
      nm_coll_sched_send(s, round, nm_coll_algo_gate(group, (self + k) % p), NULL, 0, 0);
      nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, (self - k + p) % p), NULL, 0);
    }
  }
  if (next_round)
    *next_round = round;
  return 0;
}

int nm_coll_ibarrier(nm_session_t session, const struct nm_coll_group_s *group, int self, nm_tag_t tag,
                     nm_coll_sched_t **req)
{
  int err;
  nm_coll_sched_t *s = nm_coll_algo_new(session, tag, req, &err);
  return s == NULL ? err : nm_coll_algo_start(s, nm_coll_barrier_build(s, 0, group, self, NULL), req);
}

int nm_coll_barrier(nm_session_t session, const struct nm_coll_group_s *group, int self, nm_tag_t tag)
{
  nm_coll_sched_t *s;
  int err = nm_coll_ibarrier(session, group, self, tag, &s);
  return err ? err : nm_coll_sched_wait(s);
}

/* ---- blocking, without a schedule (nm_coll_barrier_eager()) ---- */

int nm_coll_barrier_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, nm_tag_t tag,
                          nm_coll_wait_fn_t wait, void *wait_ref)
{
  enum nm_coll_barrier_algo_e algo;
  if (!nm_coll_algo_eager_ok(session, group, self, NM_COLL_EAGER_PEERS) ||
      nm_bar_choose(group, group->n, nm_core_job_oversubscribed(nm_session_get_core(session)), &algo))
    return NM_COLL_NOT_TAKEN; /* (an invalid override: the builder reports it) */
  int p = group->n, err = 0;
  nm_gate_t gate[NM_COLL_EAGER_PEERS];
  int ng = algo == NM_COLL_BARRIER_LINEAR ? (self == 0 ? p - 1 : 1) : 0;
  for (int k = 1; algo != NM_COLL_BARRIER_LINEAR && k < p; k <<= 1)
    ng += 2;
  if (ng > NM_COLL_EAGER_PEERS)
    return NM_COLL_NOT_TAKEN;
  /* every gate first: a bad group posts nothing, as a schedule that recorded a NULL gate never starts (linear: the
   * root's peers 1..p-1, or the root; dissemination: to self + 2^k, from self - 2^k, by round) */
  for (int i = 0; i < ng; i++) {
    int m = algo == NM_COLL_BARRIER_LINEAR ? (self == 0 ? i + 1 : 0)
                                           : (i % 2 == 0 ? self + (1 << (i / 2)) : self - (1 << (i / 2)) + p) % p;
    if (!(gate[i] = nm_coll_algo_gate(group, m)))
      return -NM_EINVAL;
  }
  if (algo == NM_COLL_BARRIER_LINEAR && self == 0) {
    /* the signals of every member, then the answers: nm_coll_barrier_build()'s two rounds */
    nm_sr_request_t req[NM_COLL_EAGER_PEERS];
    int posted = 0;
    for (int i = 0; i < ng; i++)
      posted += nm_coll_algo_recv(session, gate[i], tag, NULL, 0, &req[posted], &err);
    nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
    posted = 0;
    for (int i = 0; i < ng; i++)
      posted += nm_coll_algo_send_eager(session, gate[i], tag, NULL, 0, &req[posted], &err);
    nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
  } else if (algo == NM_COLL_BARRIER_LINEAR) {
    nm_coll_algo_exchange(session, tag, gate[0], NULL, 0, NULL, NULL, 0, wait, wait_ref, &err);
    nm_coll_algo_exchange(session, tag, NULL, NULL, 0, gate[0], NULL, 0, wait, wait_ref, &err);
  } else {
    for (int i = 0; i < ng; i += 2) /* dissemination: round k sends to self + 2^k, receives from self - 2^k */
      nm_coll_algo_exchange(session, tag, gate[i], NULL, 0, gate[i + 1], NULL, 0, wait, wait_ref, &err);
  }
  nm_coll_algo_end(session);
  return err;
}
