/**
 * @file allgather.c
 * @brief Allgather as native non-blocking collectives (nm_coll_allgather.h): ring, recursive doubling, Bruck,
 * linear (every block to everyone at once), and the choice between them (MPICH's thresholds; issue 18, deliverable 1).
 */
#include <nmad/nm_coll_allgather.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <string.h>
#include "nm_coll_algo.h"

static const char *const nm_ag_names[NM_COLL_ALLGATHER_NALGOS] = {"auto", "ring", "recursive_doubling", "bruck",
                                                                  "linear"};

/** One build. */
struct nm_ag_s {
  nm_coll_sched_t *s;
  const struct nm_coll_group_s *group;
  int p, r;
  void *const *rbufs;
  const nm_len_t *lens;
  int round;
};

static void nm_ag_sendrecv(struct nm_ag_s *a, int to, const void *sbuf, nm_len_t slen, int from, void *rbuf,
                           nm_len_t rlen)
{
  if (slen > 0)
    nm_coll_sched_send(a->s, a->round, nm_coll_algo_gate(a->group, to), sbuf, slen, 0);
  if (rlen > 0)
    nm_coll_sched_recv(a->s, a->round, nm_coll_algo_gate(a->group, from), rbuf, rlen);
  a->round++;
}

/* ---- ring: in round k send block r - k to the right, receive block r - k - 1 from the left, in place ---- */

static void nm_ag_ring(struct nm_ag_s *a)
{
  int p = a->p, r = a->r;
  for (int k = 0; k < p - 1; k++) {
    int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
    nm_ag_sendrecv(a, (r + 1) % p, a->rbufs[sb], a->lens[sb], (r - 1 + p) % p, a->rbufs[rb], a->lens[rb]);
  }
}

/* ---- recursive doubling (p a power of two): blocks in member order in one buffer w ---- */

static void nm_ag_rd(struct nm_ag_s *a, char *w, const nm_len_t *off)
{
  for (int mask = 1; mask < a->p; mask <<= 1) {
    int partner = a->r ^ mask, mine = a->r & ~(mask - 1), theirs = partner & ~(mask - 1);
    nm_ag_sendrecv(a, partner, w + off[mine], off[mine + mask] - off[mine], partner, w + off[theirs],
                   off[theirs + mask] - off[theirs]);
  }
}

/* ---- Bruck: w holds position j = block of member (r + j) % p; in the round of distance d the first
 * min(d, p - d) positions go to r - d, and those of r + d arrive at positions d, d + 1, ... ---- */

static void nm_ag_bruck(struct nm_ag_s *a, char *w, const nm_len_t *off)
{
  int p = a->p, r = a->r;
  for (int d = 1; d < p; d <<= 1) {
    int cnt = d < p - d ? d : p - d;
    nm_ag_sendrecv(a, (r - d + p) % p, w, off[cnt], (r + d) % p, w + off[d], off[d + cnt] - off[d]);
  }
}

/* ---- linear: one round, our block @p own to every other member, theirs straight into place ---- */

static void nm_ag_linear(struct nm_ag_s *a, const void *own)
{
  int p = a->p, r = a->r;
  for (int k = 1; k < p; k++) {
    int to = (r + k) % p, from = (r - k + p) % p;
    if (a->lens[r] > 0)
      nm_coll_sched_send(a->s, a->round, nm_coll_algo_gate(a->group, to), own, a->lens[r], 0);
    if (a->lens[from] > 0)
      nm_coll_sched_recv(a->s, a->round, nm_coll_algo_gate(a->group, from), a->rbufs[from], a->lens[from]);
  }
  a->round++;
}

const char *nm_coll_allgather_algo_name(enum nm_coll_allgather_algo_e algo)
{
  return (int)algo >= 0 && algo < NM_COLL_ALLGATHER_NALGOS ? nm_ag_names[algo] : NULL;
}

/* nm_coll_allgather_choose_net() with the override of @p group (NULL: the environment's). */
static int nm_ag_choose(const struct nm_coll_group_s *group, int p, nm_len_t total, int job_oversubscribed,
                        uint32_t latency_ns, enum nm_coll_allgather_algo_e *algo)
{
  int forced,
      err = nm_coll_algo_forced(group, NM_COLL_FAMILY_ALLGATHER, nm_ag_names, NM_COLL_ALLGATHER_NALGOS, &forced);
  if (err)
    return err;
  /* an oversubscribed job over a network: log2 p messages per member, each of them costing the shared cores,
   * rather than the ring's p - 1 (doc/collectives.md) */
  const int net_oversub = job_oversubscribed && latency_ns >= NM_COLL_NET_LAT_NS;
  if (forced)
    *algo = (enum nm_coll_allgather_algo_e)forced;
  else if ((total < 524288 || net_oversub) && nm_coll_algo_pof2(p) == p)
    *algo = NM_COLL_ALLGATHER_RD;
  else if (total < 81920)
    *algo = NM_COLL_ALLGATHER_BRUCK;
  else
    *algo = NM_COLL_ALLGATHER_RING;
  return 0;
}

int nm_coll_allgather_choose(int p, nm_len_t total, enum nm_coll_allgather_algo_e *algo)
{
  return nm_ag_choose(NULL, p, total, 0, 0, algo);
}

int nm_coll_allgather_choose_net(int p, nm_len_t total, int job_oversubscribed, uint32_t latency_ns,
                                 enum nm_coll_allgather_algo_e *algo)
{
  return nm_ag_choose(NULL, p, total, job_oversubscribed, latency_ns, algo);
}

int nm_coll_allgatherv_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                             const void *sendbuf, void *const rbufs[], const nm_len_t lens[],
                             enum nm_coll_allgather_algo_e algo, int *next_round)
{
  if (next_round)
    *next_round = round;
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self) || rbufs == NULL || lens == NULL ||
      (int)algo < 0 || algo >= NM_COLL_ALLGATHER_NALGOS)
    return -NM_EINVAL;
  int p = group->n;
  nm_len_t total = 0;
  for (int i = 0; i < p; i++) {
    if (lens[i] > 0 && rbufs[i] == NULL)
      return -NM_EINVAL;
    total += lens[i];
  }
  if (algo == NM_COLL_ALLGATHER_AUTO) {
    int err = nm_ag_choose(group, p, total, nm_coll_algo_oversubscribed(s),
                           nm_coll_algo_latency_ns(nm_coll_sched_session(s)), &algo);
    if (err)
      return err;
  }
  if (algo == NM_COLL_ALLGATHER_RD && nm_coll_algo_pof2(p) != p)
    algo = NM_COLL_ALLGATHER_BRUCK;
  struct nm_ag_s a = {s, group, p, self, rbufs, lens, round};
  if (sendbuf && lens[self] > 0)
    nm_coll_sched_copy(s, round, rbufs[self], sendbuf, lens[self]);
  if (p > 1 && total > 0) {
    if (algo == NM_COLL_ALLGATHER_LINEAR) {
      nm_ag_linear(&a, sendbuf ? sendbuf : rbufs[self]);
    } else if (algo == NM_COLL_ALLGATHER_RING) {
      nm_ag_ring(&a);
    } else {
      /* offsets of the blocks in the work buffer: member order (recursive doubling) or rotated (Bruck) */
      int bruck = algo == NM_COLL_ALLGATHER_BRUCK, adjacent = !bruck;
      nm_len_t *off = nm_coll_sched_alloc(s, sizeof(nm_len_t) * (size_t)(p + 1));
      if (off == NULL)
        return 0; /* recorded: start fails */
      off[0] = 0;
      for (int j = 0; j < p; j++) {
        int m = bruck ? (self + j) % p : j;
        off[j + 1] = off[j] + lens[m];
        if (j > 0 && (char *)rbufs[j] != (char *)rbufs[j - 1] + lens[j - 1])
          adjacent = 0;
      }
      char *w = adjacent ? rbufs[0] : nm_coll_sched_alloc(s, total);
      if (w == NULL)
        return 0;
      if (!adjacent) {
        int pos = bruck ? 0 : self;
        nm_coll_sched_copy(s, a.round, w + off[pos], rbufs[self], lens[self]);
      }
      if (bruck)
        nm_ag_bruck(&a, w, off);
      else
        nm_ag_rd(&a, w, off);
      if (!adjacent)
        for (int j = 0; j < p; j++) {
          int m = bruck ? (self + j) % p : j;
          if (m != self)
            nm_coll_sched_copy(s, a.round, rbufs[m], w + off[j], lens[m]);
        }
    }
  }
  if (next_round)
    *next_round = a.round;
  return 0;
}

int nm_coll_iallgather(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                       void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_allgather_algo_e algo,
                       nm_coll_sched_t **req)
{
  int err;
  nm_coll_sched_t *s = nm_coll_algo_group_ok(group, self) ? nm_coll_algo_new(session, tag, req, &err) : NULL;
  if (s == NULL)
    return nm_coll_algo_group_ok(group, self) ? err : -NM_EINVAL;
  int p = group->n;
  void **rbufs = nm_coll_sched_alloc(s, sizeof(void *) * (size_t)p);
  nm_len_t *lens = nm_coll_sched_alloc(s, sizeof(nm_len_t) * (size_t)p);
  if (rbufs && lens) {
    for (int i = 0; i < p; i++) {
      rbufs[i] = (char *)recvbuf + (nm_len_t)i * len;
      lens[i] = len;
    }
    err = nm_coll_allgatherv_build(s, 0, group, self, sendbuf, rbufs, lens, algo, NULL);
  }
  return nm_coll_algo_start(s, err, req);
}

int nm_coll_allgather(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                      void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_allgather_algo_e algo)
{
  nm_coll_sched_t *s;
  int err = nm_coll_iallgather(session, group, self, sendbuf, recvbuf, len, tag, algo, &s);
  return err ? err : nm_coll_sched_wait(s);
}

/* ---- blocking, small equal blocks: without a schedule (nm_coll_allgather_eager()) ---- */

int nm_coll_allgather_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                            void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_allgather_algo_e algo,
                            nm_coll_wait_fn_t wait, void *wait_ref)
{
  if (!nm_coll_algo_eager_ok(session, group, self, NM_COLL_EAGER_PEERS) || len == 0 || len > NM_COLL_EAGER_MAX ||
      (int)algo < 0 || algo >= NM_COLL_ALLGATHER_NALGOS ||
      (algo == NM_COLL_ALLGATHER_AUTO &&
       nm_ag_choose(group, group->n, (nm_len_t)group->n * len, nm_core_job_oversubscribed(nm_session_get_core(session)),
                    nm_coll_algo_latency_ns(session), &algo)))
    return NM_COLL_NOT_TAKEN; /* (an invalid override: the builder reports it) */
  int p = group->n, r = self, err = 0;
  if (algo == NM_COLL_ALLGATHER_RD && nm_coll_algo_pof2(p) != p)
    algo = NM_COLL_ALLGATHER_BRUCK; /* as the builder */
  if (algo == NM_COLL_ALLGATHER_BRUCK)
    return NM_COLL_NOT_TAKEN; /* its rotated work buffer stays on the schedule */
  if (!recvbuf)
    return -NM_EINVAL;
  char *w = recvbuf;
  nm_gate_t gate[NM_COLL_EAGER_PEERS];
  for (int m = 0, i = 0; m < p; m++) /* every gate first: a bad group posts nothing, as a schedule */
    if (m != r && !(gate[i++] = nm_coll_algo_gate(group, m)))
      return -NM_EINVAL;
#define NM_AG_GATE(m) gate[(m) < r ? (m) : (m) - 1]
  if (sendbuf && sendbuf != w + (nm_len_t)r * len)
    memmove(w + (nm_len_t)r * len, sendbuf, len);
  /* the builders' messages (nm_ag_rd(), nm_ag_ring(), nm_ag_linear() over equal adjacent blocks) */
  if (algo == NM_COLL_ALLGATHER_RD) {
    for (int mask = 1; mask < p; mask <<= 1) {
      int partner = r ^ mask, mine = r & ~(mask - 1), theirs = partner & ~(mask - 1);
      nm_coll_algo_exchange(session, tag, NM_AG_GATE(partner), w + (nm_len_t)mine * len, (nm_len_t)mask * len,
                            NM_AG_GATE(partner), w + (nm_len_t)theirs * len, (nm_len_t)mask * len, wait, wait_ref,
                            &err);
    }
  } else if (algo == NM_COLL_ALLGATHER_RING) {
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int k = 0; k < p - 1; k++) {
      int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
      nm_coll_algo_exchange(session, tag, NM_AG_GATE(right), w + (nm_len_t)sb * len, len, NM_AG_GATE(left),
                            w + (nm_len_t)rb * len, len, wait, wait_ref, &err);
    }
  } else { /* linear: every receive, then every send, one wait */
    nm_sr_request_t req[2 * NM_COLL_EAGER_PEERS];
    int posted = 0;
    for (int k = 1; k < p; k++) {
      int from = (r - k + p) % p;
      posted += nm_coll_algo_recv(session, NM_AG_GATE(from), tag, w + (nm_len_t)from * len, len, &req[posted], &err);
    }
    for (int k = 1; k < p; k++)
      posted += nm_coll_algo_send_eager(session, NM_AG_GATE((r + k) % p), tag, w + (nm_len_t)r * len, len,
                                        &req[posted], &err);
    nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
  }
#undef NM_AG_GATE
  nm_coll_algo_end(session);
  return err;
}
