/**
 * @file bcast_eager.c
 * @brief A blocking broadcast of a small message without a schedule (nm_coll_bcast_eager(), issue 18,
 * deliverable 3): the whole-message trees of Hasanov & Lastovetsky 2015, section 2.1 (flat 2.1.1, chain 2.1.2,
 * binary 2.1.4, binomial 2.1.6) posted as plain sends and one receive.
 *
 * Why: a schedule (nm_coll_sched.c) is what a non-blocking collective needs, rounds advanced from request
 * monitors, but for a small blocking broadcast it was a third of the root's instructions (a 4-member MPI_Bcast
 * of 8 B: 2,955 instructions at its root, of which building, starting and freeing the schedule ~1,000;
 * doc/performance.md, "A small blocking broadcast without a schedule"), the difference between Open MPI's
 * 0.11 us and nmad's 0.2-0.28. Open MPI's and MPICH's blocking broadcasts are plain sends and receives too.
 *
 * The messages are those of nm_coll_bcast_build() for the same algorithm, tag and order (a member receives once
 * from its parent, then sends to its children in the tree's sending order), so members that take the schedule
 * (a longer message, another algorithm) and members that take this path pair their messages alike. The one
 * difference: the sends to the children are all posted before any is waited for, where the schedule waits for
 * each before the next (single-port rounds); for an eager message a send completes when it is handed to the
 * driver, so the order on the wire is the same.
 */
#include "nm_coll_algo.h"
#include "nm_coll_tree.h"
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_core.h>
#include <nmad/nm_sendrecv.h>
#include <limits.h>

/** The tree of a whole-message algorithm. @return 0, or -1 for the others (pipelined, split, scatter-based). */
static int nm_be_tree_kind(enum nm_coll_bcast_algo_e algo, enum nm_coll_tree_kind_e *kind)
{
  switch (algo) {
  case NM_COLL_BCAST_FLAT:
    *kind = NM_COLL_TREE_FLAT;
    return 0;
  case NM_COLL_BCAST_CHAIN:
    *kind = NM_COLL_TREE_CHAIN;
    return 0;
  case NM_COLL_BCAST_BINARY:
    *kind = NM_COLL_TREE_BINARY;
    return 0;
  case NM_COLL_BCAST_BINOMIAL:
    *kind = NM_COLL_TREE_BINOMIAL;
    return 0;
  default:
    return -1;
  }
}

int nm_coll_bcast_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts, nm_coll_wait_fn_t wait,
                        void *wait_ref)
{
  enum nm_coll_tree_kind_e kind;
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  /* (the peers bound is the children's, checked once the tree is known) */
  if (!nm_coll_algo_eager_ok(session, group, self, INT_MAX) || !opts || root < 0 || root >= group->n || (len && !buf) ||
      len > NM_COLL_EAGER_MAX || opts->groups > 1 || nm_be_tree_kind(opts->algo, &kind) ||
      nm_coll_tree_init(&t, kind, group->n, 0))
    return NM_COLL_NOT_TAKEN;
  int n = group->n;
  nm_coll_tree_node(&t, (self - root + n) % n, &node);
  if (node.n_children > NM_COLL_EAGER_PEERS)
    return NM_COLL_NOT_TAKEN;
  /* every gate first: a bad group posts nothing, as a schedule that recorded a NULL gate never starts */
  nm_gate_t parent = NULL, child[NM_COLL_EAGER_PEERS];
  if (node.parent >= 0 && !(parent = group->gate_of(group->ref, (node.parent + root) % n)))
    return -NM_EINVAL;
  for (int i = 0; i < node.n_children; i++) {
    /* (a flat root's children are vranks 1..n-1: no walk, a third of the root's tree instructions) */
    int v = kind == NM_COLL_TREE_FLAT ? 1 + i : nm_coll_tree_child(&t, &node, i, NULL);
    if (!(child[i] = group->gate_of(group->ref, (v + root) % n)))
      return -NM_EINVAL;
  }

  int err = 0;
  if (parent) {
    nm_sr_request_t rreq;
    int rc = nm_sr_irecv(session, parent, tag, buf, len, &rreq);
    if (rc)
      return rc; /* refused before posting (-NM_EINVAL): nothing is pending */
    if (!rreq.completed) /* (the spin's figures cost a fifth of a receive that matched at post) */
      nm_coll_algo_wait(session, wait, wait_ref, &rreq.completed,
                        nm_coll_bcast_recv_spin_ns(session, opts->algo, n, len));
    /* on an error the children still get their message, as from a schedule (which runs all its rounds): they
     * wait for it */
    nm_coll_algo_keep(&err, rreq.status);
  }
  nm_sr_request_t sreq[NM_COLL_EAGER_PEERS];
  int posted = 0;
  for (int i = 0; i < node.n_children; i++)
    posted += nm_coll_algo_send_eager(session, child[i], tag, buf, len, &sreq[posted], &err);
  nm_coll_algo_wait_all(session, wait, wait_ref, sreq, posted, &err);
  nm_coll_algo_end(session);
  return err;
}
