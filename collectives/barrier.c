/**
 * @file barrier.c
 * @brief The dissemination and linear barriers (nm_coll_barrier.h) as native non-blocking collectives, and the
 * choice between them.
 */
#include <nmad/nm_coll_barrier.h>
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
