/**
 * @file bcast_hier.c
 * @brief The hierarchical transformation of Hasanov & Lastovetsky 2015, section 3 (Algorithm 1): G groups of
 * consecutive members, a broadcast among the group leaders, then one inside every group, any of the eight
 * broadcasts of bcast_classic.c at each level (issue 17, deliverable 3). nm_coll_bcast_hier_s in nm_coll_bcast.h
 * documents the layout (where the root and the leaders are) and what is kept between calls.
 *
 * Both levels are groups given by a function of the caller's group (struct nm_coll_group_s): no array of p gates
 * or members is ever made, so at 6,142 simulated ranks a member makes only the gates it talks to (rule 8).
 */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_coll_sched.h>
#include <nmad/nm_errno.h>

#include <stddef.h>

/* Member of the caller's group that is member @p i of this member's group. */
static nm_gate_t nm_bh_inner_gate(void *ref, int i)
{
  const struct nm_coll_bcast_hier_s *h = ref;
  return h->parent->gate_of(h->parent->ref, h->inner_first + i);
}

int nm_coll_bcast_hier_init(struct nm_coll_bcast_hier_s *h, const struct nm_coll_group_s *group, int self, int groups)
{
  if (h == NULL || group == NULL || group->gate_of == NULL || group->n < 1 || self < 0 || self >= group->n)
    return -NM_EINVAL;
  int p = group->n, g = groups < 1 ? 1 : groups > p ? p : groups;
  h->parent = group;
  h->p = p;
  h->gsize = (p + g - 1) / g;
  h->groups = (p + h->gsize - 1) / h->gsize; /* ceil(p / s) <= G: p = 10, G = 6 gives s = 2 and 5 groups */
  h->self = self;
  h->my_group = self / h->gsize;
  h->inner_first = h->my_group * h->gsize;
  h->inner_n = p - h->inner_first < h->gsize ? p - h->inner_first : h->gsize;
  return NM_ESUCCESS;
}

/* The leader group of one call: leader of group g is its first member, the root for the root's group. */
struct nm_bh_outer_s {
  const struct nm_coll_bcast_hier_s *h;
  int root;
};

static int nm_bh_leader(const struct nm_coll_bcast_hier_s *h, int root, int g)
{
  return g == root / h->gsize ? root : g * h->gsize;
}

static nm_gate_t nm_bh_outer_gate(void *ref, int g)
{
  const struct nm_bh_outer_s *o = ref;
  return o->h->parent->gate_of(o->h->parent->ref, nm_bh_leader(o->h, o->root, g));
}

static int nm_bh_algo_ok(enum nm_coll_bcast_algo_e a) { return (int)a >= 0 && a < NM_COLL_BCAST_NALGOS; }

int nm_coll_bcast_hier_build(nm_coll_sched_t *s, int round, const struct nm_coll_bcast_hier_s *h, int root,
                             void *buf, nm_len_t len, const struct nm_coll_bcast_opts_s *opts, int *next_round)
{
  if (s == NULL || h == NULL || opts == NULL || root < 0 || root >= h->p || (len > 0 && buf == NULL) ||
      !nm_bh_algo_ok(opts->algo) || !nm_bh_algo_ok(opts->inner_algo))
    return -NM_EINVAL;
  const int root_group = root / h->gsize, first = h->inner_first;
  const int leader = nm_bh_leader(h, root, h->my_group);
  int err = 0;
  /* The two groups live on the stack: the builders resolve every gate while they append (nm_coll_sched.h). */
  /* Step 1 (Algorithm 1, line 7): the outer broadcast among the G' leaders, from the root's group. */
  if (h->self == leader && h->groups > 1) {
    struct nm_bh_outer_s o = {h, root};
    struct nm_coll_group_s outer = {h->groups, nm_bh_outer_gate, &o, NULL, NULL};
    struct nm_coll_bcast_opts_s oo = {opts->algo, opts->segment, 0, NM_COLL_BCAST_FLAT, 0};
    err = nm_coll_bcast_build(s, round, &outer, h->my_group, root_group, buf, len, &oo, &round);
  }
  /* Step 2 (line 8): inside every group, from its leader, once the leader has the data (its next rounds). */
  if (err == 0 && h->inner_n > 1) {
    struct nm_coll_group_s inner = {h->inner_n, nm_bh_inner_gate, (void *)h, NULL, NULL};
    struct nm_coll_bcast_opts_s io = {opts->inner_algo, opts->inner_segment, 0, NM_COLL_BCAST_FLAT, 0};
    err = nm_coll_bcast_build(s, round, &inner, h->self - first, leader - first, buf, len, &io, &round);
  }
  if (next_round)
    *next_round = round;
  return err;
}

int nm_coll_bcast_hier(nm_session_t session, const struct nm_coll_bcast_hier_s *h, int root, void *buf,
                       nm_len_t len, nm_tag_t tag, const struct nm_coll_bcast_opts_s *opts)
{
  if (session == NULL)
    return -NM_EINVAL;
  nm_coll_sched_t *s = nm_coll_sched_new(session, tag);
  if (s == NULL)
    return -NM_ENOMEM;
  int err = nm_coll_bcast_hier_build(s, 0, h, root, buf, len, opts, NULL);
  if (err) {
    nm_coll_sched_destroy(s);
    return err;
  }
  return nm_coll_sched_wait(s);
}
