/**
 * @file barrier.c
 * @brief The dissemination barrier (nm_coll_barrier.h) as a native non-blocking collective.
 */
#include <nmad/nm_coll_barrier.h>
#include <nmad/nm_errno.h>
#include "nm_coll_algo.h"

int nm_coll_barrier_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                          int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self))
    return -NM_EINVAL;
  int p = group->n;
  /* one round per distance: the signal of round k must not be taken for one of round k + 1 (same gate and tag
   * only when 2^k and 2^(k+1) hit the same member mod p; per-(gate, tag) order then pairs them in turn) */
  for (int k = 1; k < p; k <<= 1, round++) {
    nm_coll_sched_send(s, round, nm_coll_algo_gate(group, (self + k) % p), NULL, 0, 0);
    nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, (self - k + p) % p), NULL, 0);
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
