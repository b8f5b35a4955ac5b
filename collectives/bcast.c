/**
 * @file bcast.c
 * @brief Static broadcasts over a group of gates (nm_coll.h): the binomial tree and the naive (flat) broadcast.
 *
 * Both are built on the sendrecv interface only (DESIGN.md: interface -> core, one-way) and keep no state
 * between calls (rule 1); requests live on the caller's stack (rule 4: no allocation).
 *
 * Costs, with p members, m bytes, latency alpha and inverse bandwidth beta (Hasanov & Lastovetsky 2015,
 * section 2.1): flat tree (section 2.1.1) (p - 1)(alpha + m beta) at the root; binomial tree (section 2.1.6)
 * ceil(log2 p)(alpha + m beta).
 */
#include <nmad/nm_coll.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>

#include <stddef.h>

/** Children of one node of the binomial tree: at most ceil(log2 n) <= 31 for an int-sized group. */
#define NM_COLL_MAX_CHILDREN 32
/** Sends the naive broadcast keeps in flight at once (so its requests fit on the stack). */
#define NM_COLL_NAIVE_WINDOW 64

/** A node of the binomial tree, in virtual ranks (vrank 0 is the root). */
struct nm_coll_tree_node {
  int parent;                          /**< parent vrank, -1 for the root */
  int n_children;                      /**< number of children */
  int children[NM_COLL_MAX_CHILDREN];  /**< children vranks, largest subtree first */
};

/**
 * Binomial tree of Denis 2020, section 3.2 and fig. 1, in virtual ranks 0..n-1. A node owns the range of
 * vranks [v, hi) (the root owns [0, n)). While its range holds more than itself, it hands the upper half,
 * [v + ceil(size / 2), hi), to the first vrank of that half and keeps the lower half: so it sends first to
 * the child with the largest subtree, then to smaller and smaller ones, and the broadcast takes
 * ceil(log2 n) steps (Hasanov 2015, section 2.1.6). For n = 7: 0 sends to 4, 2, 1; 4 sends to 6, 5;
 * 2 sends to 3 — exactly fig. 1 (root 0, recipients 1..6). O(log n), no allocation.
 */
static void nm_coll_binomial_node(int n, int v, struct nm_coll_tree_node *node)
{
  int lo = 0, hi = n;

  node->parent = -1;
  node->n_children = 0;
  /* Walk down from the root to v: this finds v's parent and the range v owns. */
  while (lo != v) {
    int mid = lo + (hi - lo + 1) / 2;
    if (v >= mid) {
      node->parent = lo;
      lo = mid;
    } else {
      hi = mid;
    }
  }
  /* Split v's range: upper halves go to children, the largest first. */
  while (hi - lo > 1 && node->n_children < NM_COLL_MAX_CHILDREN) {
    int mid = lo + (hi - lo + 1) / 2;
    node->children[node->n_children++] = mid;
    hi = mid;
  }
}

/** Arguments common to both broadcasts; returns 0 or -NM_EINVAL. */
static int nm_coll_check_args(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                              const void *buf, nm_len_t len)
{
  int n = group ? group->n : 0;
  if (session == NULL || group == NULL || group->gate_of == NULL || n < 1 || self < 0 || self >= n || root < 0 ||
      root >= n)
    return -NM_EINVAL;
  if (len > 0 && buf == NULL)
    return -NM_EINVAL;
  return 0;
}

/** Keep the first error seen. */
static inline void nm_coll_keep_err(int *err, int rc)
{
  if (*err == 0 && rc != 0)
    *err = rc;
}

/**
 * Send @p len bytes to the group members @p members[0..count) (indices in @p group): all sends are posted first
 * (in the given order, so the strategy sees the first one first), then all are waited for. A send that fails to
 * post has already completed with its error (nm_sr_isend()), so it is not waited for.
 * @return 0 or the first error.
 */
static int nm_coll_send_all(nm_session_t session, const struct nm_coll_group_s *group, const int *members, int count,
                            const void *buf, nm_len_t len, nm_tag_t tag, nm_sr_request_t *reqs)
{
  int posted[NM_COLL_NAIVE_WINDOW > NM_COLL_MAX_CHILDREN ? NM_COLL_NAIVE_WINDOW : NM_COLL_MAX_CHILDREN];
  int err = 0, i;

  for (i = 0; i < count; i++) {
    int rc = nm_sr_isend(session, group->gate_of(group->ref, members[i]), tag, buf, len, &reqs[i]);
    posted[i] = (rc == 0);
    nm_coll_keep_err(&err, rc);
  }
  for (i = 0; i < count; i++)
    if (posted[i])
      nm_coll_keep_err(&err, nm_sr_swait(session, &reqs[i]));
  return err;
}

/**
 * Binomial-tree broadcast (nm_coll.h). Denis 2020, section 3.2 and fig. 1 (the tree), Hasanov 2015,
 * section 2.1.6 (its cost): each member computes its node in the tree rooted at @p root over virtual ranks
 * vrank = (self - root + n) % n, receives from its parent first, then sends to its children one after the other,
 * largest subtree first (each send completes before the next starts).
 *
 * A receive that fails with -NM_ETRUNCATED (the parent sent more than @p len bytes) still holds @p len valid
 * bytes: they are forwarded, so the subtree completes, and the error is returned. Any other receive error
 * (-NM_ECLOSED: the parent died; -NM_EPROTO, -NM_ECANCELED) stops this member: nothing is forwarded, since there
 * is no data to forward, and its subtree does not complete (the job has lost a process anyway).
 */
int nm_coll_bcast_binomial_group(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                                 void *buf, nm_len_t len, nm_tag_t tag)
{
  struct nm_coll_tree_node node;
  nm_sr_request_t reqs[1];
  int err, vself, i;

  err = nm_coll_check_args(session, group, self, root, buf, len);
  if (err != 0)
    return err;
  int n = group->n;
  if (n == 1)
    return 0;
  vself = (self - root + n) % n;
  nm_coll_binomial_node(n, vself, &node);

  if (node.parent >= 0) {
    nm_sr_request_t rreq;
    int rc = nm_sr_irecv(session, group->gate_of(group->ref, (node.parent + root) % n), tag, buf, len, &rreq);
    if (rc == 0)
      rc = nm_sr_rwait(session, &rreq);
    if (rc != 0 && rc != -NM_ETRUNCATED)
      return rc;
    err = rc;
  }
  /* One child at a time, largest subtree first: the single-port tree of Hasanov 2015, section 2.1.6, whose cost
   * is ceil(log2 n) (alpha + m beta). Sent all at once, the k copies would share this node's link, the largest
   * subtree's copy would arrive after k m beta, and the broadcast would take k(k+1)/2 m beta (doc/nmad-sim.md). */
  for (i = 0; i < node.n_children; i++) {
    int child = (node.children[i] + root) % n; /* vrank -> group index */
    nm_coll_keep_err(&err, nm_coll_send_all(session, group, &child, 1, buf, len, tag, reqs));
  }
  return err;
}

/**
 * Naive broadcast (nm_coll.h): the flat tree of Hasanov 2015, section 2.1.1, and the "naive broadcast (a loop
 * of point-to-point requests to the recipient nodes)" that Denis 2020, section 5.1 compares the dynamic
 * broadcast with. The root posts non-blocking sends to root+1, root+2, ... (mod n), NM_COLL_NAIVE_WINDOW at a
 * time, and waits for them; every other member receives from the root.
 */
int nm_coll_bcast_naive_group(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                              void *buf, nm_len_t len, nm_tag_t tag)
{
  nm_sr_request_t reqs[NM_COLL_NAIVE_WINDOW];
  int members[NM_COLL_NAIVE_WINDOW];
  int err, next;

  err = nm_coll_check_args(session, group, self, root, buf, len);
  if (err != 0)
    return err;
  int n = group->n;
  if (self != root) {
    nm_sr_request_t rreq;
    int rc = nm_sr_irecv(session, group->gate_of(group->ref, root), tag, buf, len, &rreq);
    return rc != 0 ? rc : nm_sr_rwait(session, &rreq);
  }
  for (next = 1; next < n;) {
    int count = 0;
    while (next < n && count < NM_COLL_NAIVE_WINDOW)
      members[count++] = (root + next++) % n;
    nm_coll_keep_err(&err, nm_coll_send_all(session, group, members, count, buf, len, tag, reqs));
  }
  return err;
}

/* The array form of a group. */
static nm_gate_t nm_coll_array_gate(void *ref, int member) { return ((const nm_gate_t *)ref)[member]; }

int nm_coll_bcast_binomial(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                           nm_len_t len, nm_tag_t tag)
{
  struct nm_coll_group_s g = {n, nm_coll_array_gate, (void *)group};
  return nm_coll_bcast_binomial_group(session, group ? &g : NULL, self, root, buf, len, tag);
}

int nm_coll_bcast_naive(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag)
{
  struct nm_coll_group_s g = {n, nm_coll_array_gate, (void *)group};
  return nm_coll_bcast_naive_group(session, group ? &g : NULL, self, root, buf, len, tag);
}
