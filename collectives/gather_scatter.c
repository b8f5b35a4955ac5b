/**
 * @file gather_scatter.c
 * @brief Gather and scatter of equal blocks as native non-blocking collectives (nm_coll_gather.h): binomial tree
 * (small blocks) and flat (large ones), and the choice between them (issue 18, deliverable 1).
 *
 * In the binomial tree (root-relative vranks, collectives/nm_coll_tree.h) the subtree of vrank v is [v, hi), so
 * its blocks are one contiguous run in vrank order: an inner node gathers them in one buffer (its own block first)
 * and sends them to its parent in one message. The root's buffer is in vrank order; with root 0 it is the user's
 * buffer itself, otherwise the blocks are rotated into member order by copies.
 */
#include <nmad/nm_coll_gather.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <string.h>
#include "nm_coll_algo.h"
#include "nm_coll_tree.h"

static const char *const nm_gs_names[NM_COLL_GATHER_NALGOS] = {"auto", "binomial", "flat"};

/* The rule once the override is known (@p forced, 0: auto). With 2 members the binomial tree's one message is the
 * flat algorithm's, which a blocking call sends without a schedule (nm_gs_eager()): 2 ranks bound, Gather and
 * Scatter of 8 B-1 KiB took 0.33-0.41 us on the tree against Open MPI's 0.23-0.24 (doc/performance.md, issue 18). */
static enum nm_coll_gather_algo_e nm_gs_rule(int forced, int p, nm_len_t len, int job_oversubscribed)
{
  return forced ? (enum nm_coll_gather_algo_e)forced
                : len < 16384 && !job_oversubscribed && p > 2 ? NM_COLL_GATHER_BINOMIAL : NM_COLL_GATHER_FLAT;
}

int nm_coll_gather_choose_job(const char *var, int p, nm_len_t len, int job_oversubscribed,
                              enum nm_coll_gather_algo_e *algo)
{
  int forced, err = nm_coll_algo_env(var, nm_gs_names, NM_COLL_GATHER_NALGOS, &forced);
  if (err)
    return err;
  *algo = nm_gs_rule(forced, p, len, job_oversubscribed);
  return 0;
}

int nm_coll_gather_choose(const char *var, int p, nm_len_t len, enum nm_coll_gather_algo_e *algo)
{
  return nm_coll_gather_choose_job(var, p, len, 0, algo);
}

static int nm_gs_check(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                       enum nm_coll_gather_algo_e *algo, enum nm_coll_family_e family, nm_len_t len)
{
  if (s == NULL || round < 0 || !nm_coll_algo_group_ok(group, self) || root < 0 || root >= group->n ||
      (int)*algo < 0 || *algo >= NM_COLL_GATHER_NALGOS)
    return -NM_EINVAL;
  if (*algo != NM_COLL_GATHER_AUTO)
    return 0;
  int forced, err = nm_coll_algo_forced(group, family, nm_gs_names, NM_COLL_GATHER_NALGOS, &forced);
  if (err)
    return err;
  *algo = nm_gs_rule(forced, group->n, len, nm_coll_algo_oversubscribed(s));
  return 0;
}

/** The node of this member in the root-relative binomial tree. */
static void nm_gs_node(const struct nm_coll_group_s *group, int self, int root, struct nm_coll_tree_s *t,
                       struct nm_coll_tree_node_s *node)
{
  nm_coll_tree_init(t, NM_COLL_TREE_BINOMIAL, group->n, 0); /* n >= 1: cannot fail */
  nm_coll_tree_node(t, (self - root + group->n) % group->n, node);
}

int nm_coll_gather_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t len, enum nm_coll_gather_algo_e algo,
                         int *next_round)
{
  int err = nm_gs_check(s, round, group, self, root, &algo, NM_COLL_FAMILY_GATHER, len);
  if (next_round)
    *next_round = round;
  if (err || len == 0)
    return err;
  int p = group->n;
  char *out = recvbuf;
  if ((self == root && recvbuf == NULL) || (self != root && sendbuf == NULL))
    return -NM_EINVAL;
  if (self == root && sendbuf)
    nm_coll_sched_copy(s, round, out + (nm_len_t)self * len, sendbuf, len);
  if (algo == NM_COLL_GATHER_FLAT) {
    if (self == root) {
      for (int i = 0; i < p; i++)
        if (i != root)
          nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, i), out + (nm_len_t)i * len, len);
    } else {
      nm_coll_sched_send(s, round, nm_coll_algo_gate(group, root), sendbuf, len, 0);
    }
    round++;
  } else {
    struct nm_coll_tree_s t;
    struct nm_coll_tree_node_s node;
    nm_gs_node(group, self, root, &t, &node);
    nm_len_t nsub = (nm_len_t)(node.hi - node.vrank);
    if (nsub == 1 && self != root) {
      nm_coll_sched_send(s, round++, nm_coll_algo_gate(group, (node.parent + root) % p), sendbuf, len, 0);
    } else {
      /* the subtree's blocks in vrank order: the user's buffer at root 0, else scratch */
      char *w = self == root && root == 0 ? out : nm_coll_sched_alloc(s, nsub * len);
      if (w == NULL)
        return 0; /* recorded: start fails */
      if (w != out)
        nm_coll_sched_copy(s, round, w, self == root ? out + (nm_len_t)self * len : sendbuf, len);
      for (int i = 0; i < node.n_children; i++) {
        int chi, c = nm_coll_tree_child(&t, &node, i, &chi);
        nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, (c + root) % p), w + (nm_len_t)(c - node.vrank) * len,
                           (nm_len_t)(chi - c) * len);
      }
      round++;
      if (self != root)
        nm_coll_sched_send(s, round++, nm_coll_algo_gate(group, (node.parent + root) % p), w, nsub * len, 0);
      else if (w != out)
        for (int v = 1; v < p; v++)
          nm_coll_sched_copy(s, round, out + (nm_len_t)((v + root) % p) * len, w + (nm_len_t)v * len, len);
    }
  }
  if (next_round)
    *next_round = round + (self == root && algo != NM_COLL_GATHER_FLAT && root != 0);
  return 0;
}

int nm_coll_scatter_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t len, enum nm_coll_gather_algo_e algo,
                          int *next_round)
{
  int err = nm_gs_check(s, round, group, self, root, &algo, NM_COLL_FAMILY_SCATTER, len);
  if (next_round)
    *next_round = round;
  if (err || len == 0)
    return err;
  int p = group->n;
  const char *in = sendbuf;
  if ((self == root && sendbuf == NULL) || (self != root && recvbuf == NULL))
    return -NM_EINVAL;
  if (self == root && recvbuf)
    nm_coll_sched_copy(s, round, recvbuf, in + (nm_len_t)self * len, len);
  if (algo == NM_COLL_GATHER_FLAT) {
    if (self == root) {
      for (int i = 0; i < p; i++)
        if (i != root)
          nm_coll_sched_send(s, round, nm_coll_algo_gate(group, i), in + (nm_len_t)i * len, len, 0);
    } else {
      nm_coll_sched_recv(s, round, nm_coll_algo_gate(group, root), recvbuf, len);
    }
    round++;
  } else {
    struct nm_coll_tree_s t;
    struct nm_coll_tree_node_s node;
    nm_gs_node(group, self, root, &t, &node);
    nm_len_t nsub = (nm_len_t)(node.hi - node.vrank);
    if (nsub == 1 && self != root) {
      nm_coll_sched_recv(s, round++, nm_coll_algo_gate(group, (node.parent + root) % p), recvbuf, len);
    } else {
      /* the subtree's blocks in vrank order: the user's buffer at root 0, else scratch */
      const char *w = in;
      if (!(self == root && root == 0)) {
        char *tmp = nm_coll_sched_alloc(s, nsub * len);
        if (tmp == NULL)
          return 0; /* recorded: start fails */
        if (self == root)
          for (int v = 1; v < p; v++)
            nm_coll_sched_copy(s, round, tmp + (nm_len_t)v * len, in + (nm_len_t)((v + root) % p) * len, len);
        else
          nm_coll_sched_recv(s, round++, nm_coll_algo_gate(group, (node.parent + root) % p), tmp, nsub * len);
        w = tmp;
      }
      for (int i = 0; i < node.n_children; i++) {
        int chi, c = nm_coll_tree_child(&t, &node, i, &chi);
        nm_coll_sched_send(s, round, nm_coll_algo_gate(group, (c + root) % p), w + (nm_len_t)(c - node.vrank) * len,
                           (nm_len_t)(chi - c) * len, 0);
      }
      if (self != root)
        nm_coll_sched_copy(s, round, recvbuf, w, len);
      round++;
    }
  }
  if (next_round)
    *next_round = round;
  return 0;
}

int nm_coll_igather(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                    const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_gather_algo_e algo,
                    nm_coll_sched_t **req)
{
  int err;
  nm_coll_sched_t *s = nm_coll_algo_new(session, tag, req, &err);
  if (s == NULL)
    return err;
  err = nm_coll_gather_build(s, 0, group, self, root, sendbuf, recvbuf, len, algo, NULL);
  return nm_coll_algo_start(s, err, req);
}

int nm_coll_iscatter(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                     const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_gather_algo_e algo,
                     nm_coll_sched_t **req)
{
  int err;
  nm_coll_sched_t *s = nm_coll_algo_new(session, tag, req, &err);
  if (s == NULL)
    return err;
  err = nm_coll_scatter_build(s, 0, group, self, root, sendbuf, recvbuf, len, algo, NULL);
  return nm_coll_algo_start(s, err, req);
}

/* ---- blocking, small blocks, flat: without a schedule (nm_coll_gather_eager(), nm_coll_scatter_eager()) ---- */

/* The flat algorithm's messages posted as plain receives and sends (each send leaving at once without a request
 * where the driver allows: nm_sr_send_now()), in the order of the builders above, so that members on this path
 * and members on a schedule pair alike. Why: for small blocks the schedule was most of a blocking collective's
 * cost (bcast_eager.c's file comment; doc/performance.md, "Small blocking collectives without a schedule").
 * @return NM_COLL_NOT_TAKEN (nothing posted), 0 done, or an error as the builders' (-NM_EINVAL) or the messages'. */
static int nm_gs_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                       const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag,
                       enum nm_coll_gather_algo_e algo, enum nm_coll_family_e family, nm_coll_wait_fn_t wait,
                       void *wait_ref)
{
  int gather = family == NM_COLL_FAMILY_GATHER;
  if (!nm_coll_algo_eager_ok(session, group, self, NM_COLL_EAGER_PEERS) || root < 0 || root >= group->n || len == 0 ||
      len > NM_COLL_EAGER_MAX || (int)algo < 0 || algo >= NM_COLL_GATHER_NALGOS)
    return NM_COLL_NOT_TAKEN;
  if (algo == NM_COLL_GATHER_AUTO) {
    int forced;
    if (nm_coll_algo_forced(group, family, nm_gs_names, NM_COLL_GATHER_NALGOS, &forced))
      return NM_COLL_NOT_TAKEN; /* the builder reports the invalid override */
    algo = nm_gs_rule(forced, group->n, len, nm_core_job_oversubscribed(nm_session_get_core(session)));
  }
  if (algo != NM_COLL_GATHER_FLAT)
    return NM_COLL_NOT_TAKEN;
  const char *in = sendbuf;
  char *out = recvbuf;
  if (self == root ? (gather ? !out : !in) : (gather ? !in : !out))
    return -NM_EINVAL;
  int p = group->n, npeers = self == root ? p - 1 : 1;
  nm_gate_t gate[NM_COLL_EAGER_PEERS];
  int member[NM_COLL_EAGER_PEERS];
  for (int i = 0, k = 0; k < npeers; i++) { /* every gate first: a bad group posts nothing, as a schedule */
    member[k] = self == root ? i : root;
    if (member[k] == self)
      continue;
    if (!(gate[k] = nm_coll_algo_gate(group, member[k])))
      return -NM_EINVAL;
    k++;
  }
  if (self == root && gather && in && in != out + (nm_len_t)self * len)
    memmove(out + (nm_len_t)self * len, in, len);
  if (self == root && !gather && out && out != in + (nm_len_t)self * len)
    memmove(out, in + (nm_len_t)self * len, len);
  nm_sr_request_t req[NM_COLL_EAGER_PEERS];
  int posted = 0, err = 0;
  for (int k = 0; k < npeers; k++) {
    if (gather ? self == root : self != root) { /* receive */
      posted += nm_coll_algo_recv(session, gate[k], tag, self == root ? out + (nm_len_t)member[k] * len : out, len,
                                  &req[posted], &err);
    } else {
      posted += nm_coll_algo_send_eager(session, gate[k], tag, self == root ? in + (nm_len_t)member[k] * len : in,
                                        len, &req[posted], &err);
    }
  }
  nm_coll_algo_wait_all(session, wait, wait_ref, req, posted, &err);
  nm_coll_algo_end(session);
  return err;
}

int nm_coll_gather_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                         const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag,
                         enum nm_coll_gather_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref)
{
  return nm_gs_eager(session, group, self, root, sendbuf, recvbuf, len, tag, algo, NM_COLL_FAMILY_GATHER, wait,
                     wait_ref);
}

int nm_coll_scatter_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t len, nm_tag_t tag,
                          enum nm_coll_gather_algo_e algo, nm_coll_wait_fn_t wait, void *wait_ref)
{
  return nm_gs_eager(session, group, self, root, sendbuf, recvbuf, len, tag, algo, NM_COLL_FAMILY_SCATTER, wait,
                     wait_ref);
}
