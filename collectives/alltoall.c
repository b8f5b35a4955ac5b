/**
 * @file alltoall.c
 * @brief All-to-all as native non-blocking collectives (nm_coll_alltoall.h): pairwise exchange, Bruck's
 * algorithm and the linear one (everything posted at once), and the choice between them (MPICH's short-message
 * rule; issue 18, deliverable 1).
 */
#include <nmad/nm_coll_alltoall.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_core.h>
#include <string.h>
#include "nm_coll_algo.h"

static const char *const nm_a2a_names[NM_COLL_ALLTOALL_NALGOS] = {"auto", "pairwise", "bruck", "linear"};

const char *nm_coll_alltoall_algo_name(enum nm_coll_alltoall_algo_e algo)
{
  return (int)algo >= 0 && algo < NM_COLL_ALLTOALL_NALGOS ? nm_a2a_names[algo] : NULL;
}

/* Whether an oversubscribed job over shared memory posts its p - 1 blocks of @p block bytes all at once
 * (nm_coll_alltoall_choose_job()): eager blocks while a member's burst stays within
 * NM_COLL_ALLTOALL_OVERSUB_BURST_MAX, rendezvous blocks up to NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P members. */
static int nm_a2a_oversub_linear(int p, nm_len_t block)
{
  if (block < NM_COLL_ALLTOALL_OVERSUB_RDV_FROM)
    return (uint64_t)(p - 1) * block <= NM_COLL_ALLTOALL_OVERSUB_BURST_MAX;
  return p <= NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P;
}

/* nm_coll_alltoall_choose_net() with the override of @p group (NULL: the environment's). */
static int nm_a2a_choose(const struct nm_coll_group_s *group, int p, nm_len_t block, int job_oversubscribed,
                         uint32_t latency_ns, enum nm_coll_alltoall_algo_e *algo)
{
  int forced,
      err = nm_coll_algo_forced(group, NM_COLL_FAMILY_ALLTOALL, nm_a2a_names, NM_COLL_ALLTOALL_NALGOS, &forced);
  if (err)
    return err;
  if (forced)
    *algo = (enum nm_coll_alltoall_algo_e)forced;
  else if (job_oversubscribed && latency_ns >= NM_COLL_NET_LAT_NS)
    *algo = block > 0 && block <= NM_COLL_ALLTOALL_OVERSUB_BRUCK_UPTO && p >= 4 ? NM_COLL_ALLTOALL_BRUCK
                                                                                : NM_COLL_ALLTOALL_LINEAR;
  else if (job_oversubscribed)
    *algo = nm_a2a_oversub_linear(p, block) ? NM_COLL_ALLTOALL_LINEAR : NM_COLL_ALLTOALL_PAIRWISE;
  else
    *algo = block > 0 && block <= 256 && p >= 4 ? NM_COLL_ALLTOALL_BRUCK : NM_COLL_ALLTOALL_PAIRWISE;
  return 0;
}

int nm_coll_alltoall_choose_net(int p, nm_len_t block, int job_oversubscribed, uint32_t latency_ns,
                                enum nm_coll_alltoall_algo_e *algo)
{
  return nm_a2a_choose(NULL, p, block, job_oversubscribed, latency_ns, algo);
}

int nm_coll_alltoall_choose_job(int p, nm_len_t block, int job_oversubscribed, enum nm_coll_alltoall_algo_e *algo)
{
  return nm_a2a_choose(NULL, p, block, job_oversubscribed, 0, algo);
}

int nm_coll_alltoall_choose(int p, nm_len_t block, enum nm_coll_alltoall_algo_e *algo)
{
  return nm_coll_alltoall_choose_job(p, block, 0, algo);
}

/* Pairwise: round k - 1 sends to self + k and receives from self - k (one partner each way per round).
 * Linear (@p one_round): the same messages, all in one round. */
static int nm_a2a_pairwise(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                           const void *const sbufs[], const nm_len_t slens[], void *const rbufs[],
                           const nm_len_t rlens[], int one_round)
{
  int p = group->n;
  for (int k = 1; k < p; k++, round += !one_round) {
    int dst = (self + k) % p, src = (self - k + p) % p;
    if (slens[dst] > 0)
      nm_coll_sched_send(s, round, nm_coll_algo_gate(group, dst), sbufs[dst], slens[dst], 0);
    if (rlens[src] > 0)
      nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, src), rbufs[src], rlens[src]);
  }
  return round + one_round;
}

/* Bruck (blocks of b bytes): position j of a work buffer holds the block for member self + j; in the round of
 * bit d the positions with that bit go to self + d (packed into one message) and arrive from self - d at the same
 * positions; at the end position j holds the block from member self - j. */
static int nm_a2a_bruck(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                        const void *const sbufs[], void *const rbufs[], nm_len_t b)
{
  int p = group->n, half = p / 2 + 1;
  char *w = nm_coll_sched_alloc(s, (nm_len_t)p * b);
  char *out = nm_coll_sched_alloc(s, (nm_len_t)half * b), *in = nm_coll_sched_alloc(s, (nm_len_t)half * b);
  if (!w || !out || !in)
    return round; /* recorded: start fails */
  for (int j = 1; j < p; j++)
    nm_coll_sched_copy(s, round, w + (nm_len_t)j * b, sbufs[(self + j) % p], b);
  for (int d = 1; d < p; d <<= 1) {
    nm_len_t n = 0;
    for (int j = 1; j < p; j++)
      if (j & d)
        nm_coll_sched_copy(s, round, out + (n++) * b, w + (nm_len_t)j * b, b);
    nm_coll_sched_send(s, round, nm_coll_algo_gate(group, (self + d) % p), out, n * b, 0);
    nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, (self - d + p) % p), in, n * b);
    round++;
    n = 0;
    for (int j = 1; j < p; j++)
      if (j & d)
        nm_coll_sched_copy(s, round, w + (nm_len_t)j * b, in + (n++) * b, b);
  }
  for (int j = 1; j < p; j++)
    nm_coll_sched_copy(s, round, rbufs[(self - j + p) % p], w + (nm_len_t)j * b, b);
  return round;
}

int nm_coll_alltoallv_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                            const void *const sbufs[], const nm_len_t slens[], void *const rbufs[],
                            const nm_len_t rlens[], nm_len_t block, enum nm_coll_alltoall_algo_e algo,
                            int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self) || !sbufs || !slens || !rbufs || !rlens ||
      (int)algo < 0 || algo >= NM_COLL_ALLTOALL_NALGOS)
    return -NM_EINVAL;
  int p = group->n;
  for (int i = 0; i < p; i++)
    if ((slens[i] > 0 && sbufs[i] == NULL) || (rlens[i] > 0 && rbufs[i] == NULL))
      return -NM_EINVAL;
  if (algo == NM_COLL_ALLTOALL_AUTO) {
    int err = nm_a2a_choose(group, p, block, nm_coll_algo_oversubscribed(s),
                            nm_coll_algo_latency_ns(nm_coll_sched_session(s)), &algo);
    if (err)
      return err;
  }
  if (slens[self] > rlens[self])
    nm_coll_sched_set_error(s, -NM_ETRUNCATED);
  else if (slens[self] > 0)
    nm_coll_sched_copy(s, round, rbufs[self], sbufs[self], slens[self]);
  if (p > 1) {
    if (algo == NM_COLL_ALLTOALL_BRUCK && block > 0)
      round = nm_a2a_bruck(s, round, group, self, sbufs, rbufs, block);
    else
      round = nm_a2a_pairwise(s, round, group, self, sbufs, slens, rbufs, rlens, algo == NM_COLL_ALLTOALL_LINEAR);
  }
  if (next_round)
    *next_round = round;
  return 0;
}

int nm_coll_ialltoall(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                      void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_alltoall_algo_e algo,
                      nm_coll_sched_t **req)
{
  int err, ok = nm_coll_algo_group_ok(group, self) && (len == 0 || (sendbuf && recvbuf));
  nm_coll_sched_t *s = ok ? nm_coll_algo_new(session, tag, req, &err) : NULL;
  if (s == NULL)
    return ok ? err : -NM_EINVAL;
  int p = group->n;
  const void **sbufs = nm_coll_sched_alloc(s, sizeof(void *) * (size_t)p);
  void **rbufs = nm_coll_sched_alloc(s, sizeof(void *) * (size_t)p);
  nm_len_t *lens = nm_coll_sched_alloc(s, sizeof(nm_len_t) * (size_t)p);
  if (sbufs && rbufs && lens) {
    for (int i = 0; i < p; i++) {
      sbufs[i] = (const char *)sendbuf + (nm_len_t)i * len;
      rbufs[i] = (char *)recvbuf + (nm_len_t)i * len;
      lens[i] = len;
    }
    err = nm_coll_alltoallv_build(s, 0, group, self, sbufs, lens, rbufs, lens, len, algo, NULL);
  }
  return nm_coll_algo_start(s, err, req);
}

int nm_coll_alltoall(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                     void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_alltoall_algo_e algo)
{
  nm_coll_sched_t *s;
  int err = nm_coll_ialltoall(session, group, self, sendbuf, recvbuf, len, tag, algo, &s);
  return err ? err : nm_coll_sched_wait(s);
}

/* ---- blocking, small equal blocks: without a schedule (nm_coll_alltoall_eager()) ---- */

int nm_coll_alltoall_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                           void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_alltoall_algo_e algo,
                           nm_coll_wait_fn_t wait, void *wait_ref)
{
  if (!nm_coll_algo_eager_ok(session, group, self, NM_COLL_EAGER_PEERS / 2) || len == 0 || len > NM_COLL_EAGER_MAX ||
      (int)algo < 0 || algo >= NM_COLL_ALLTOALL_NALGOS ||
      (algo == NM_COLL_ALLTOALL_AUTO &&
       nm_a2a_choose(group, group->n, len, nm_core_job_oversubscribed(nm_session_get_core(session)),
                     nm_coll_algo_latency_ns(session), &algo)) ||
      (algo != NM_COLL_ALLTOALL_LINEAR && algo != NM_COLL_ALLTOALL_PAIRWISE))
    return NM_COLL_NOT_TAKEN; /* (an invalid override: the builder reports it) */
  if (!sendbuf || !recvbuf)
    return -NM_EINVAL;
  if (sendbuf == recvbuf)
    return NM_COLL_NOT_TAKEN; /* in place: the receives would overwrite blocks still to send */
  int p = group->n, err = 0;
  const char *in = sendbuf;
  char *out = recvbuf;
  nm_gate_t to[NM_COLL_EAGER_PEERS / 2], from[NM_COLL_EAGER_PEERS / 2];
  for (int k = 1; k < p; k++) /* every gate first: a bad group posts nothing, as a schedule */
    if (!(to[k - 1] = nm_coll_algo_gate(group, (self + k) % p)) ||
        !(from[k - 1] = nm_coll_algo_gate(group, (self - k + p) % p)))
      return -NM_EINVAL;
  memcpy(out + (nm_len_t)self * len, in + (nm_len_t)self * len, len);
  /* nm_a2a_pairwise()'s messages: step k sends to self + k and receives from self - k; linear posts every step at
   * once (receives first, so that arrivals find them), pairwise waits for each step before the next */
  int linear = algo == NM_COLL_ALLTOALL_LINEAR;
  nm_sr_request_t req[NM_COLL_EAGER_PEERS];
  int posted = 0;
  for (int k = 1; k < p; k++) {
    int src = (self - k + p) % p, dst = (self + k) % p;
    if (!linear) {
      nm_coll_algo_exchange(session, tag, to[k - 1], in + (nm_len_t)dst * len, len, from[k - 1],
                            out + (nm_len_t)src * len, len, wait, wait_ref, &err);
      continue;
    }
    posted += nm_coll_algo_recv(session, from[k - 1], tag, out + (nm_len_t)src * len, len, &req[posted], &err);
  }
  for (int k = 1; linear && k < p; k++)
    posted += nm_coll_algo_send_eager(session, to[k - 1], tag, in + (nm_len_t)((self + k) % p) * len, len,
                                      &req[posted], &err);
  nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
  nm_coll_algo_end(session);
  return err;
}
