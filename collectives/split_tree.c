/**
 * @file split_tree.c
 * @brief The split-tree non-blocking collectives of Denis et al. 2019, section 6 (nm_coll_split.h): broadcast,
 * reduce, gather and scatter on the binomial tree of the one tree module, cut at level S into a part run in the
 * caller's context and a part run in the core's progress (the progress thread when NMAD_PROGRESS=thread).
 *
 * Each member builds two schedules (nm_coll_sched.h) of its own operations: "lower" holds those on the edges of
 * levels 1..S (levels numbered from the leaves, fig. 8), "upper" those of levels S+1..H. Within a part a member
 * serves one edge per round, in level order: farthest child first going down (broadcast, scatter), nearest first
 * going up (reduce, gather), as in the paper where each level is one step. When each part runs (section 6.3):
 *  - one-to-all: upper is started by the call and advances in progress; the wait waits for it, then runs lower
 *    (a node receives at level L and forwards at levels L-1..1, so lower's sends need upper's receive);
 *  - all-to-one: lower runs to its end in the call (blocking, the caller's context), then upper is started and
 *    advances in progress until the wait.
 * Both parts use the collective's tag: one message per tree edge, so per-(gate, tag) order never mixes them.
 *
 * Root-relative ranks: vrank v is member (v + root) mod n; a subtree is the contiguous vrank range [v, hi)
 * (nm_coll_tree.h), so gather and scatter move one contiguous run of blocks per edge, and the root rotates its
 * blocks between vrank and member order.
 */
#include <nmad/nm_coll_split.h>
#include <nmad/nm_coll_sched.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include "nm_coll_tree.h"
#include "split_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum nm_split_kind_e { NM_SPLIT_BCAST, NM_SPLIT_REDUCE, NM_SPLIT_GATHER, NM_SPLIT_SCATTER };

struct nm_coll_split_s {
  enum nm_split_kind_e kind;
  nm_session_t session;
  nm_coll_sched_t *lower; /* levels 1..S: the caller's context */
  nm_coll_sched_t *upper; /* levels S+1..H: the core's progress */
  int S;
  int err;       /* first error so far (the lower part of an all-to-one collective ran in the call) */
  char *scratch; /* reduce: the partial result (not at the root); gather, scatter: the subtree's blocks */
  char *tmp;     /* reduce: one child's partial result */
  void *out;     /* gather: the root's recvbuf; scatter: this member's recvbuf */
  nm_len_t block;
  int n, root;
  nm_coll_split_combine_t combine;
  void *ref;
};

/* ---------------------------------------------------------------- tree helpers */

int nm_split_edge_level(int parent, int child)
{
  int level = 1;
  for (int d = child - parent; d > 1; d >>= 1)
    level++;
  return level;
}

int nm_split_place_shared_edges(int n, int k, int level_min)
{
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  int shared = 0;
  if (k < 1 || nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, n, 0) != 0)
    return 0;
  for (int v = 1; v < n; v++) {
    nm_coll_tree_node(&t, v, &node);
    if (nm_split_edge_level(node.parent, v) >= level_min && node.parent % k == v % k)
      shared++;
  }
  return shared;
}

/* ---------------------------------------------------------------- choice of S */

/** S for a collective of @p n members: forced by the caller, else NMAD_SPLIT_S, else the model. */
static int nm_split_choose(const struct nm_coll_split_opts_s *opts, int n, int variable, int *S)
{
  int h = nm_coll_split_depth(n);
  if (opts && opts->S >= 0) {
    *S = opts->S > h ? h : opts->S;
    return 0;
  }
  if (opts && opts->S != NM_COLL_SPLIT_AUTO)
    return -NM_EINVAL;
  const char *e = getenv("NMAD_SPLIT_S");
  if (e && *e && strcmp(e, "model") != 0) {
    char *end;
    long v = strtol(e, &end, 10);
    if (*end != '\0' || v < 0) {
      fprintf(stderr, "nmad: NMAD_SPLIT_S='%s' is invalid; accepted values: an integer >= 0 (tree levels run in "
                      "the caller's context), model\n", e);
      return -NM_EINVAL;
    }
    *S = v > h ? h : (int)v;
    return 0;
  }
  struct nm_coll_split_model_s m = opts && opts->model ? *opts->model : nm_coll_split_model_host(n, variable);
  int s = nm_coll_split_model_best(&m);
  if (s < 0)
    return s;
  *S = s > h ? h : s; /* a caller's model may describe another N */
  return 0;
}

/* ---------------------------------------------------------------- building */

/** One member's build: its node in the tree and the next round of each part. */
struct nm_split_build_s {
  nm_coll_split_t *r;
  const struct nm_coll_group_s *group;
  int n, root, v;
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s node;
  int L; /* level of the edge to the parent (H + 1 at the root) */
  int round[2]; /* next round of lower (0), upper (1) */
};

static nm_gate_t nm_split_gate(const struct nm_split_build_s *b, int vrank)
{
  return b->group->gate_of(b->group->ref, (vrank + b->root) % b->n);
}

static nm_coll_sched_t *nm_split_part(struct nm_split_build_s *b, int level, int **round)
{
  int upper = level > b->r->S;
  *round = &b->round[upper];
  return upper ? b->r->upper : b->r->lower;
}

static void nm_split_recv(struct nm_split_build_s *b, int level, int vrank, void *buf, nm_len_t len)
{
  int *round;
  nm_coll_sched_t *s = nm_split_part(b, level, &round);
  nm_coll_sched_recv(s, (*round)++, nm_split_gate(b, vrank), buf, len);
}

static void nm_split_send(struct nm_split_build_s *b, int level, int vrank, const void *buf, nm_len_t len)
{
  int *round;
  nm_coll_sched_t *s = nm_split_part(b, level, &round);
  nm_coll_sched_send(s, (*round)++, nm_split_gate(b, vrank), buf, len, 0);
}

static int nm_split_combine_op(const struct nm_coll_local_s *args)
{
  const nm_coll_split_t *r = args->p;
  return r->combine(args->dst, args->src, args->len, r->ref);
}

/** Combine r->tmp into @p acc at the start of the part's next round, before what is appended to it next (the
 *  next child's receive into tmp, or the send to the parent). */
static void nm_split_combine(struct nm_split_build_s *b, int level, void *acc, nm_len_t len)
{
  int *round;
  nm_coll_sched_t *s = nm_split_part(b, level, &round);
  struct nm_coll_local_s a = {.src = b->r->tmp, .dst = acc, .len = len, .p = b->r};
  nm_coll_sched_local(s, *round, nm_split_combine_op, &a);
}

/* Bytes of the subtree [v, hi) of a gather or scatter (@p blocks), or the whole @p len (broadcast, reduce). */
static nm_len_t nm_split_span(int blocks, int v, int hi, nm_len_t unit, nm_len_t len)
{
  return blocks ? (nm_len_t)(hi - v) * unit : len;
}

/** One-to-all: receive this subtree's data from the parent, then serve the children farthest first.
 *  @p blocks: scatter (@p unit bytes per member, a child gets its subtree's blocks); else broadcast (every edge
 *  carries @p len bytes of @p base). */
static void nm_split_down(struct nm_split_build_s *b, char *base, int blocks, nm_len_t unit, nm_len_t len)
{
  if (b->node.parent >= 0)
    nm_split_recv(b, b->L, b->node.parent, base, nm_split_span(blocks, b->v, b->node.hi, unit, len));
  for (int i = 0; i < b->node.n_children; i++) {
    int chi, c = nm_coll_tree_child(&b->t, &b->node, i, &chi);
    char *at = blocks && base ? base + (nm_len_t)(c - b->v) * unit : base;
    nm_split_send(b, nm_split_edge_level(b->v, c), c, at, nm_split_span(blocks, c, chi, unit, len));
  }
}

/** All-to-one: receive from the children nearest first, then send to the parent. @p blocks: gather (a child's
 *  blocks land at their place in @p base); else reduce (each child's result is combined into @p base). */
static void nm_split_up(struct nm_split_build_s *b, char *base, int blocks, nm_len_t unit, nm_len_t len)
{
  for (int i = b->node.n_children - 1; i >= 0; i--) {
    int chi, c = nm_coll_tree_child(&b->t, &b->node, i, &chi);
    int level = nm_split_edge_level(b->v, c);
    if (blocks) {
      nm_split_recv(b, level, c, base ? base + (nm_len_t)(c - b->v) * unit : NULL, (nm_len_t)(chi - c) * unit);
    } else {
      nm_split_recv(b, level, c, b->r->tmp, len);
      if (len > 0)
        nm_split_combine(b, level, base, len);
    }
  }
  if (b->node.parent >= 0)
    nm_split_send(b, b->L, b->node.parent, base, nm_split_span(blocks, b->v, b->node.hi, unit, len));
}

static void nm_split_free(nm_coll_split_t *r)
{
  free(r->scratch);
  free(r->tmp);
  free(r);
}

static int nm_split_check(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          nm_coll_split_t **req)
{
  if (req)
    *req = NULL;
  if (!session || !group || !group->gate_of || !req || group->n < 1 || self < 0 || self >= group->n || root < 0 ||
      root >= group->n)
    return -NM_EINVAL;
  return 0;
}

/** A new collective with its two empty schedules and its node in the tree; @p b filled. */
static int nm_split_new(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, nm_tag_t tag,
                        const struct nm_coll_split_opts_s *opts, enum nm_split_kind_e kind,
                        struct nm_split_build_s *b, nm_coll_split_t **out)
{
  int S, variable = kind == NM_SPLIT_GATHER || kind == NM_SPLIT_SCATTER;
  int err = nm_split_choose(opts, group->n, variable, &S);
  if (err)
    return err;
  nm_coll_split_t *r = calloc(1, sizeof(*r));
  if (!r)
    return -NM_ENOMEM;
  r->kind = kind;
  r->session = session;
  r->S = S;
  r->n = group->n;
  r->root = root;
  r->lower = nm_coll_sched_new(session, tag);
  r->upper = nm_coll_sched_new(session, tag);
  memset(b, 0, sizeof(*b));
  b->r = r;
  b->group = group;
  b->n = group->n;
  b->root = root;
  b->v = (self - root + group->n) % group->n;
  if (!r->lower || !r->upper || nm_coll_tree_init(&b->t, NM_COLL_TREE_BINOMIAL, b->n, 0) != 0) {
    nm_coll_sched_destroy(r->lower);
    nm_coll_sched_destroy(r->upper);
    nm_split_free(r);
    return -NM_ENOMEM;
  }
  nm_coll_tree_node(&b->t, b->v, &b->node);
  b->L = b->node.parent >= 0 ? nm_split_edge_level(b->node.parent, b->v) : nm_coll_split_depth(b->n) + 1;
  *out = r;
  return 0;
}

static void nm_split_abort(nm_coll_split_t *r)
{
  nm_coll_sched_destroy(r->lower);
  nm_coll_sched_destroy(r->upper);
  nm_split_free(r);
}

/* ---------------------------------------------------------------- running */

/** Start @p s (if @p start), progress until it is done, release it. @return its first error. */
static int nm_split_run(nm_core_t core, nm_coll_sched_t *s, int start)
{
  int err = 0;
  if (start) {
    nm_core_lock(core); /* the progress thread may advance the schedule as soon as its first request is posted */
    err = nm_coll_sched_start(s); /* frees s on error */
    nm_core_unlock(core);
    if (err)
      return err;
  }
  volatile int *done = nm_coll_sched_done_flag(s);
  while (!*done)
    nm_core_wait_flag(core, done, 0);
  nm_core_lock(core); /* whoever set done held the lock: once we have it, it has left the schedule */
  err = nm_coll_sched_error(s);
  nm_coll_sched_release(s);
  nm_core_unlock(core);
  return err;
}

static void nm_split_keep(nm_coll_split_t *r, int err)
{
  if (!r->err && err)
    r->err = err;
}

/** Start a built collective: one-to-all, upper now; all-to-one, lower to its end now, then upper. */
static int nm_split_start(nm_coll_split_t *r, nm_coll_split_t **req)
{
  nm_core_t core = nm_session_get_core(r->session);
  if (r->kind == NM_SPLIT_REDUCE || r->kind == NM_SPLIT_GATHER) {
    nm_split_keep(r, nm_split_run(core, r->lower, 1));
    r->lower = NULL;
  }
  nm_core_lock(core);
  int err = nm_coll_sched_start(r->upper); /* frees it on error */
  nm_core_unlock(core);
  if (err) {
    r->upper = NULL;
    nm_split_abort(r);
    return err;
  }
  *req = r;
  return 0;
}

int nm_coll_split_ibcast(nm_session_t session, const struct nm_coll_group_s *group, int self, int root, void *buf,
                         nm_len_t len, nm_tag_t tag, const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req)
{
  int err = nm_split_check(session, group, self, root, req);
  if (err || (buf == NULL && len > 0))
    return err ? err : -NM_EINVAL;
  struct nm_split_build_s b;
  nm_coll_split_t *r;
  err = nm_split_new(session, group, self, root, tag, opts, NM_SPLIT_BCAST, &b, &r);
  if (err)
    return err;
  nm_split_down(&b, buf, 0, 0, len);
  return nm_split_start(r, req);
}

int nm_coll_split_ireduce(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t len, nm_coll_split_combine_t combine,
                          void *ref, nm_tag_t tag, const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req)
{
  int err = nm_split_check(session, group, self, root, req);
  if (err || !combine || (len > 0 && (!sendbuf || (self == root && !recvbuf))))
    return err ? err : -NM_EINVAL;
  struct nm_split_build_s b;
  nm_coll_split_t *r;
  err = nm_split_new(session, group, self, root, tag, opts, NM_SPLIT_REDUCE, &b, &r);
  if (err)
    return err;
  r->combine = combine;
  r->ref = ref;
  char *acc = self == root ? recvbuf : NULL;
  if (len > 0) {
    if (!acc)
      acc = r->scratch = malloc(len);
    if (b.node.n_children > 0)
      r->tmp = malloc(len);
    if (!acc || (b.node.n_children > 0 && !r->tmp)) {
      nm_split_abort(r);
      return -NM_ENOMEM;
    }
    if (acc != sendbuf)
      memcpy(acc, sendbuf, len);
  }
  nm_split_up(&b, acc, 0, 0, len);
  return nm_split_start(r, req);
}

int nm_coll_split_igather(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                          const void *sendbuf, void *recvbuf, nm_len_t block, nm_tag_t tag,
                          const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req)
{
  int err = nm_split_check(session, group, self, root, req);
  if (err || (block > 0 && (!sendbuf || (self == root && !recvbuf))))
    return err ? err : -NM_EINVAL;
  struct nm_split_build_s b;
  nm_coll_split_t *r;
  err = nm_split_new(session, group, self, root, tag, opts, NM_SPLIT_GATHER, &b, &r);
  if (err)
    return err;
  r->block = block;
  r->out = self == root ? recvbuf : NULL;
  nm_len_t bytes = (nm_len_t)(b.node.hi - b.v) * block;
  if (bytes > 0) {
    r->scratch = malloc(bytes);
    if (!r->scratch) {
      nm_split_abort(r);
      return -NM_ENOMEM;
    }
    memcpy(r->scratch, sendbuf, block);
  }
  nm_split_up(&b, r->scratch, 1, block, 0);
  return nm_split_start(r, req);
}

int nm_coll_split_iscatter(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                           const void *sendbuf, void *recvbuf, nm_len_t block, nm_tag_t tag,
                           const struct nm_coll_split_opts_s *opts, nm_coll_split_t **req)
{
  int err = nm_split_check(session, group, self, root, req);
  if (err || (block > 0 && (!recvbuf || (self == root && !sendbuf))))
    return err ? err : -NM_EINVAL;
  struct nm_split_build_s b;
  nm_coll_split_t *r;
  err = nm_split_new(session, group, self, root, tag, opts, NM_SPLIT_SCATTER, &b, &r);
  if (err)
    return err;
  r->block = block;
  r->out = recvbuf;
  nm_len_t bytes = (nm_len_t)(b.node.hi - b.v) * block;
  if (bytes > 0) {
    r->scratch = malloc(bytes);
    if (!r->scratch) {
      nm_split_abort(r);
      return -NM_ENOMEM;
    }
    if (self == root) { /* member order -> vrank order: vrank u is member (u + root) mod n */
      size_t head = (size_t)(r->n - root) * block;
      memcpy(r->scratch, (const char *)sendbuf + (size_t)root * block, head);
      memcpy(r->scratch + head, sendbuf, (size_t)root * block);
    }
  }
  nm_split_down(&b, r->scratch, 1, block, 0);
  return nm_split_start(r, req);
}

int nm_coll_split_get_S(const nm_coll_split_t *req) { return req->S; }

int nm_coll_split_wait(nm_coll_split_t *r)
{
  nm_core_t core = nm_session_get_core(r->session);
  nm_split_keep(r, nm_split_run(core, r->upper, 0));
  if (r->lower) /* one-to-all: the lower levels, in the caller's context, after the upper ones delivered */
    nm_split_keep(r, nm_split_run(core, r->lower, 1));
  if (r->kind == NM_SPLIT_GATHER && r->out && r->block > 0) { /* vrank order -> member order */
    size_t head = (size_t)(r->n - r->root) * r->block;
    memcpy((char *)r->out + (size_t)r->root * r->block, r->scratch, head);
    memcpy(r->out, r->scratch + head, (size_t)r->root * r->block);
  }
  if (r->kind == NM_SPLIT_SCATTER && r->block > 0)
    memcpy(r->out, r->scratch, r->block);
  int err = r->err;
  nm_split_free(r);
  return err;
}
