/**
 * @file mpi_comm.c
 * @brief MPI communicators (MPI-3.1 chapter 6): the communicator table, creation (dup, split, split_type, create,
 * create_group), intercommunicators (create, merge), comparison, names and attributes (caching, 6.7).
 *
 * Contexts. Each communicator owns the context pair (context, context + 1) (nm_mpi_private.h). A process never
 * reuses a context: nm_mpi.next_context only grows. A new communicator's context is agreed by every process
 * taking part in its creation: each proposes its next_context, the maximum is taken and everyone moves its
 * next_context past it. Since each member's proposal is at least its own next_context, the agreed context is
 * new to every member, so two communicators that share a process never share a context on that process: tags
 * (context << 32 | tag) of different communicators never match (the isolation MPI requires).
 *
 * MPI_Comm_idup, and MPI_Comm_dup likewise, need no agreement: the members compute its context alike, from the parent's context and the
 * number of idups already made of the parent (every member calls them in the same order, MPI-3.1 5.12): idup
 * number s of a communicator of context p gets NM_MPI_IDUP_SPACE + 2 (p / 2 * NM_MPI_IDUP_PER_COMM + s). The
 * agreed contexts stay below NM_MPI_IDUP_SPACE, and different (p, s) give different contexts, so this context too
 * is new to every member. So an idup never waits for the other members: idups of overlapping communicators,
 * started in different orders on different processes, cannot deadlock. A communicator that has no such context
 * left (it comes from an idup itself, its context is too large, or it already made NM_MPI_IDUP_PER_COMM idups)
 * is duplicated with the agreement of MPI_Comm_dup, which waits for the members (doc/mpi.md).
 *
 * Internal exchanges. The agreements (and the (color, key) lists of split) travel on the parent's collective
 * context (context + 1) with reserved tags, so they never match the application's receives, and never the
 * collectives of mpi_coll.c, which keep their tags below 0x80000000:
 *  - NM_MPI_COMM_TAG (0xffffffff) for the collective creations (dup, split, create, intercommunicators);
 *  - 0x80000000 | tag for MPI_Comm_create_group (only the group's members exchange; the tag tells concurrent
 *    calls apart, as MPI-3.1 6.4.2 intends).
 * Each exchange is deterministic (every message sent in a call is received in the same call, from a named
 * gate), so consecutive calls may share a tag: nmad keeps per-(gate, tag) order.
 * An exchange is an allgather of a few ints: linear gather to member 0, then nm_coll_bcast_binomial().
 */
#include "nm_mpi_private.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/** A communicator attribute key (MPI-3.1 6.7.2). Handles below NM_MPI_KEYVAL_FIRST are the predefined keys. */
struct nm_mpi_keyval_s {
  MPI_Comm_copy_attr_function *copy_fn;
  MPI_Comm_delete_attr_function *delete_fn;
  void *extra_state;
  int refcount; /* 1 for the user's handle (until Comm_free_keyval) + 1 per attribute using it */
  int freed;    /* Comm_free_keyval called: the handle is no longer valid for the user */
};
#define NM_MPI_KEYVAL_FIRST (MPI_LASTUSEDCODE + 1)

#define NM_MPI_COMM_FIRST (MPI_COMM_SELF + 1)
#define NM_MPI_COMM_TAG 0xffffffffu
#define NM_MPI_COMM_GROUP_TAG(tag) (0x80000000u | (uint32_t)(tag))
/** Host names compared by MPI_Comm_split_type (Linux HOST_NAME_MAX is 64), in ints. */
#define NM_MPI_HOST_INTS 17

/* Values of the predefined attributes (constants: DESIGN.md rule 1). */
static const int nm_mpi_attr_tag_ub = NM_MPI_TAG_UB;
static const int nm_mpi_attr_host = MPI_PROC_NULL;
static const int nm_mpi_attr_io = MPI_ANY_SOURCE;
static const int nm_mpi_attr_zero = 0;
static const int nm_mpi_attr_lastusedcode = MPI_ERR_LASTCODE;

/* ---------------------------------------------------------------- objects */

nm_gate_t nm_mpi_world_gate(int w)
{
  if (w < 0 || w >= nm_mpi.world_size)
    return NULL;
  if (!nm_mpi.gates[w])
    nm_mpi.gates[w] = nm_launcher_gate_of(nm_mpi.launcher, w);
  return nm_mpi.gates[w];
}

nm_gate_t nm_mpi_comm_gate_resolve(const struct nm_mpi_comm_s *c, int rank)
{
  const int *from = c->is_inter ? c->remote_world : c->world;
  /* peer_gates is a cache of what the group says: filling it does not change the communicator. */
  return c->peer_gates[rank] = nm_mpi_world_gate(from[rank]);
}

int nm_mpi_comm_rank_of_gate(const struct nm_mpi_comm_s *c, nm_gate_t gate)
{
  int w = -1;
  if (nm_launcher_get_rank_of_gate(nm_mpi.launcher, gate, &w) != 0 || w < 0 || w >= nm_mpi.world_size)
    return -1;
  return c->rank_of_world[w];
}

static void nm_mpi_comm_destroy(struct nm_mpi_comm_s *c)
{
  if (!c)
    return;
  free(c->world);
  free(c->remote_world);
  free(c->rank_of_world);
  free(c->peer_gates);
  free(c->dims);
  free(c->periods);
  free(c);
}

/** Fill the point-to-point view of @p c from the group sends go to and receives come from (the remote one for
 *  intercommunicators): peer_size, peer_gates and rank_of_world. @return 0 or -1 (no memory). */
static int nm_mpi_comm_map_ranks(struct nm_mpi_comm_s *c)
{
  const int *from = c->is_inter ? c->remote_world : c->world;
  int n = c->is_inter ? c->remote_size : c->size;
  nm_gate_t *gates = malloc(sizeof(nm_gate_t) * (size_t)(n > 0 ? n : 1));
  if (!gates)
    return -1;
  free(c->peer_gates);
  c->peer_gates = gates;
  c->peer_size = n;
  for (int w = 0; w < nm_mpi.world_size; w++)
    c->rank_of_world[w] = -1;
  for (int i = 0; i < n; i++) {
    int valid = from[i] >= 0 && from[i] < nm_mpi.world_size;
    gates[i] = NULL; /* made on first use (nm_mpi_comm_gate()) */
    if (valid)
      c->rank_of_world[from[i]] = i;
  }
  return 0;
}

static struct nm_mpi_comm_s *nm_mpi_comm_alloc(uint32_t context, int size, const int *world, int rank)
{
  struct nm_mpi_comm_s *c = calloc(1, sizeof(*c));
  if (!c)
    return NULL;
  c->world = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
  c->rank_of_world = malloc(sizeof(int) * (size_t)(nm_mpi.world_size > 0 ? nm_mpi.world_size : 1));
  if (!c->world || !c->rank_of_world) {
    nm_mpi_comm_destroy(c);
    return NULL;
  }
  memcpy(c->world, world, sizeof(int) * (size_t)size);
  c->context = context;
  c->size = size;
  c->rank = rank;
  if (rank < 0) /* not given: find this process */
    for (int i = 0; i < size; i++)
      if (world[i] == nm_mpi.world_rank)
        c->rank = i;
  c->errhandler = MPI_ERRORS_ARE_FATAL;
  c->topo = MPI_UNDEFINED;
  if (nm_mpi_comm_map_ranks(c)) {
    nm_mpi_comm_destroy(c);
    return NULL;
  }
  return c;
}

/** Turn @p c into an intercommunicator with the given remote group (copied). @return 0 or -1 (no memory). */
static int nm_mpi_comm_set_remote(struct nm_mpi_comm_s *c, int remote_size, const int *remote_world)
{
  c->remote_world = malloc(sizeof(int) * (size_t)(remote_size > 0 ? remote_size : 1));
  if (!c->remote_world)
    return -1;
  memcpy(c->remote_world, remote_world, sizeof(int) * (size_t)remote_size);
  c->remote_size = remote_size;
  c->is_inter = 1;
  return nm_mpi_comm_map_ranks(c);
}

static MPI_Comm nm_mpi_comm_register(struct nm_mpi_comm_s *c)
{
  int h = nm_mpi_table_add(&nm_mpi.comms, c);
  if (h < 0) {
    nm_mpi_comm_destroy(c);
    return MPI_COMM_NULL;
  }
  return h;
}

MPI_Comm nm_mpi_comm_new(uint32_t context, int size, const int *world, int rank)
{
  struct nm_mpi_comm_s *c = nm_mpi_comm_alloc(context, size, world, rank);
  return c ? nm_mpi_comm_register(c) : MPI_COMM_NULL;
}

/** A new communicator inherits its parent's error handler (MPI-3.1 8.3). The handle is copied without a
 *  reference: mpi_env.c keeps handlers alive until MPI_Finalize. */
static void nm_mpi_comm_inherit_errhandler(MPI_Comm newcomm, MPI_Errhandler eh)
{
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(newcomm);
  if (c)
    c->errhandler = eh;
}

/** A communicator handle that must be valid (MPI_ERR_COMM otherwise, through WORLD's handler). */
#define NM_MPI_COMM_GET_OR_FAIL(c, comm)                                                                        \
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);                                                             \
  if (!c)                                                                                                      \
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);

/* ---------------------------------------------------------------- internal exchanges */

/** MPI error class of an nmad status. */
static int nm_mpi_comm_nm_err(int rc)
{
  return rc == 0 ? MPI_SUCCESS : nm_mpi_from_nm_err(rc);
}

/**
 * Allgather of @p k ints among the processes @p world[0..n) (the same list, same order, on each), where this
 * process is @p world[self]: all[i * k + j] = value j of member i. Linear gather to member 0, then a binomial
 * broadcast. Blocking. @return MPI code.
 */
static int nm_mpi_comm_allgather(const int *world, int n, int self, nm_tag_t tag, const int *mine, int k, int *all)
{
  memcpy(all + (size_t)self * (size_t)k, mine, sizeof(int) * (size_t)k);
  if (n == 1)
    return MPI_SUCCESS;
  nm_gate_t *gates = malloc(sizeof(nm_gate_t) * (size_t)n);
  nm_sr_request_t *reqs = malloc(sizeof(nm_sr_request_t) * (size_t)n);
  if (!gates || !reqs) {
    free(gates);
    free(reqs);
    return MPI_ERR_NO_MEM;
  }
  for (int i = 0; i < n; i++)
    gates[i] = nm_mpi_world_gate(world[i]);
  const nm_len_t len = sizeof(int) * (nm_len_t)k;
  int rc = 0;
  if (self == 0) {
    int posted = 0;
    for (int i = 1; i < n && rc == 0; i++, posted++)
      rc = nm_sr_irecv(nm_mpi.session, gates[i], tag, all + (size_t)i * (size_t)k, len, &reqs[i]);
    for (int i = 1; i <= posted; i++) {
      int r = nm_sr_rwait(nm_mpi.session, &reqs[i]);
      if (rc == 0)
        rc = r;
    }
  } else {
    rc = nm_sr_isend(nm_mpi.session, gates[0], tag, mine, len, &reqs[0]);
    if (rc == 0)
      rc = nm_sr_swait(nm_mpi.session, &reqs[0]);
  }
  if (rc == 0)
    rc = nm_coll_bcast_binomial(nm_mpi.session, gates, n, self, 0, all, len * (nm_len_t)n, tag);
  free(gates);
  free(reqs);
  return nm_mpi_comm_nm_err(rc);
}

/** Binomial broadcast of @p len bytes from member @p root among @p world[0..n). @return MPI code. */
static int nm_mpi_comm_bcast(const int *world, int n, int self, int root, nm_tag_t tag, void *buf, size_t len)
{
  if (n == 1)
    return MPI_SUCCESS;
  nm_gate_t *gates = malloc(sizeof(nm_gate_t) * (size_t)n);
  if (!gates)
    return MPI_ERR_NO_MEM;
  for (int i = 0; i < n; i++)
    gates[i] = nm_mpi_world_gate(world[i]);
  int rc = nm_coll_bcast_binomial(nm_mpi.session, gates, n, self, root, buf, len, tag);
  free(gates);
  return nm_mpi_comm_nm_err(rc);
}

/* ---- Context agreement with several threads (MPI_THREAD_MULTIPLE, doc/mpi.md "Threads").
 * Two threads of a process may agree on contexts at once, for communicators with different members, and each
 * agreement releases the lock while it waits for the others: a context taken as "the maximum of the proposals"
 * could then be the same for both on this process, or differ between members (next_context moved meanwhile).
 * So each proposal is reserved until its agreement ends (nm_mpi.ctx_resv), and a context is taken only when
 * every member proposed it, that is when it was free and reserved on each of them; otherwise the members propose
 * again, from the maximum up (round 2 gives it at once unless a member has it reserved or used). Without threads
 * the proposals only differ after creations that left some ranks out (MPI_Comm_split, MPI_Comm_create), and then
 * cost one more exchange of one int. The rounds are MPICH's idea for its multi-threaded context allocation
 * (mask allreduce, retried). */

/** Propose the smallest context >= @p cand that this process has neither used nor reserved, and reserve it. */
static int nm_mpi_ctx_propose(struct nm_mpi_ctx_resv_s *r, uint32_t cand)
{
  uint32_t c = (cand + 1) & ~1u;
  if (c < nm_mpi.next_context)
    c = nm_mpi.next_context;
  for (int again = 1; again;) {
    again = 0;
    for (struct nm_mpi_ctx_resv_s *o = nm_mpi.ctx_resv; o; o = o->next)
      if (o->ctx == c) {
        c += 2;
        again = 1;
      }
  }
  r->ctx = c;
  r->next = nm_mpi.ctx_resv;
  nm_mpi.ctx_resv = r;
  return (int)c;
}

static void nm_mpi_ctx_unreserve(struct nm_mpi_ctx_resv_s *r)
{
  for (struct nm_mpi_ctx_resv_s **p = &nm_mpi.ctx_resv; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      return;
    }
}

/** Exchange of one more round: @p mine from this process, the n proposals out in @p all (n ints). */
typedef int (*nm_mpi_ctx_exchange_t)(void *arg, int mine, int *all);

struct nm_mpi_ctx_members_s { /* the members of an agreement by nm_mpi_comm_allgather() */
  const int *world;
  int n, self;
  nm_tag_t tag;
};
static int nm_mpi_ctx_exchange_members(void *arg, int mine, int *all)
{
  struct nm_mpi_ctx_members_s *m = arg;
  return nm_mpi_comm_allgather(m->world, m->n, m->self, m->tag, &mine, 1, all);
}

/**
 * Settle an agreement whose first proposals (reserved by @p r) are at @p all[i * stride + off], i < n: the context
 * every member proposed, after further rounds through @p exch when they differ. Ends @p r's reservation and moves
 * next_context past the result. @return MPI code; the context in *ctx.
 */
static int nm_mpi_ctx_settle(struct nm_mpi_ctx_resv_s *r, const int *all, int n, int stride, int off,
                             nm_mpi_ctx_exchange_t exch, void *arg, uint32_t *ctx)
{
  int *round = NULL, rc = MPI_SUCCESS;
  for (;;) {
    uint32_t m = 0;
    int same = 1;
    for (int i = 0; i < n; i++) {
      uint32_t v = (uint32_t)all[(size_t)i * (size_t)stride + (size_t)off];
      same &= i == 0 || v == m;
      m = v > m ? v : m;
    }
    nm_mpi_ctx_unreserve(r);
    if (same) {
      *ctx = m;
      if (m + 2 > nm_mpi.next_context)
        nm_mpi.next_context = m + 2;
      break;
    }
    if (!round && !(round = malloc(sizeof(int) * (size_t)n))) {
      rc = MPI_ERR_NO_MEM; /* every member leaves here alike only if all fail: report it */
      break;
    }
    int mine = nm_mpi_ctx_propose(r, m);
    if ((rc = exch(arg, mine, round)) != MPI_SUCCESS) {
      nm_mpi_ctx_unreserve(r);
      break;
    }
    all = round;
    stride = 1;
    off = 0;
  }
  free(round);
  return rc;
}

/** Maximum of the context proposals at @p all[i * stride + off], i < n; moves next_context past it. */
static uint32_t nm_mpi_comm_agree(const int *all, int n, int stride, int off)
{
  uint32_t ctx = nm_mpi.next_context;
  for (int i = 0; i < n; i++) {
    uint32_t v = (uint32_t)all[(size_t)i * (size_t)stride + (size_t)off];
    if (v > ctx)
      ctx = v;
  }
  ctx = (ctx + 1) & ~1u; /* even */
  nm_mpi.next_context = ctx + 2;
  return ctx;
}

/**
 * The two groups of an intercommunicator in one canonical order, the same on both sides: first the group
 * whose first member has the smaller world rank (the groups are disjoint). @p *local_off and @p *remote_off
 * are where each group starts in the list, @p *self this process's index. Caller frees *out.
 */
static int nm_mpi_comm_inter_union(const struct nm_mpi_comm_s *c, int **out, int *local_off, int *remote_off,
                                   int *self)
{
  int n = c->size + c->remote_size;
  int *u = malloc(sizeof(int) * (size_t)n);
  if (!u)
    return MPI_ERR_NO_MEM;
  int local_first = c->world[0] < c->remote_world[0];
  *local_off = local_first ? 0 : c->remote_size;
  *remote_off = local_first ? c->size : 0;
  memcpy(u + *local_off, c->world, sizeof(int) * (size_t)c->size);
  memcpy(u + *remote_off, c->remote_world, sizeof(int) * (size_t)c->remote_size);
  *self = *local_off + c->rank;
  *out = u;
  return MPI_SUCCESS;
}

/** Allgather among all members of @p c (both groups for an intercommunicator) on its collective context.
 *  @p *all (malloc'd) is in c's rank order for intracommunicators, in the union order otherwise. */
static int nm_mpi_comm_allgather_all(const struct nm_mpi_comm_s *c, const int *mine, int k, int **all, int *n,
                                     int *local_off, int *remote_off)
{
  int *world = c->world, self = c->rank, rc;
  *n = c->size;
  *local_off = 0;
  *remote_off = 0;
  if (c->is_inter) {
    rc = nm_mpi_comm_inter_union(c, &world, local_off, remote_off, &self);
    if (rc != MPI_SUCCESS)
      return rc;
    *n = c->size + c->remote_size;
  }
  *all = malloc(sizeof(int) * (size_t)k * (size_t)*n);
  if (!*all)
    rc = MPI_ERR_NO_MEM;
  else
    rc = nm_mpi_comm_allgather(world, *n, self, nm_mpi_coll_tag(c, NM_MPI_COMM_TAG), mine, k, *all);
  if (c->is_inter)
    free(world);
  if (rc != MPI_SUCCESS) {
    free(*all);
    *all = NULL;
  }
  return rc;
}

/** One more round of a context agreement among the members of @p arg (a struct nm_mpi_comm_s *), as
 *  nm_mpi_comm_allgather_all() exchanged the first. */
static int nm_mpi_ctx_exchange_comm(void *arg, int mine, int *all)
{
  int *got = NULL, n, loff, roff;
  int rc = nm_mpi_comm_allgather_all(arg, &mine, 1, &got, &n, &loff, &roff);
  if (rc == MPI_SUCCESS)
    memcpy(all, got, sizeof(int) * (size_t)n);
  free(got);
  return rc;
}

/* ---------------------------------------------------------------- attributes (MPI-3.1 6.7) */

static struct nm_mpi_keyval_s *nm_mpi_keyval_get(int keyval)
{
  if (keyval < NM_MPI_KEYVAL_FIRST)
    return NULL;
  struct nm_mpi_keyval_s *k = nm_mpi_table_get(&nm_mpi.keyvals, keyval);
  return (k && !k->freed) ? k : NULL;
}

/** The keyval object of a handle the user may still name: also one already freed by Comm_free_keyval whose
 *  attributes still keep it alive (MPI-3.1 6.7.2: the free "does not transpire" until they are gone), so that
 *  their values can still be read and deleted through it, as MPICH allows. NULL if gone or predefined. */
static struct nm_mpi_keyval_s *nm_mpi_keyval_get_alive(int keyval)
{
  if (keyval < NM_MPI_KEYVAL_FIRST)
    return NULL;
  return nm_mpi_table_get(&nm_mpi.keyvals, keyval);
}

static void nm_mpi_keyval_unref(int keyval)
{
  struct nm_mpi_keyval_s *k = nm_mpi_table_get(&nm_mpi.keyvals, keyval);
  if (k && --k->refcount <= 0) {
    nm_mpi_table_remove(&nm_mpi.keyvals, keyval);
    free(k);
  }
}

/** Calls the delete callback of one attribute. @return its MPI code. */
static int nm_mpi_attr_call_delete(MPI_Comm comm, const struct nm_mpi_attr_s *a)
{
  struct nm_mpi_keyval_s *k = nm_mpi_table_get(&nm_mpi.keyvals, a->keyval);
  if (k && k->delete_fn != MPI_COMM_NULL_DELETE_FN)
    return k->delete_fn(comm, a->keyval, a->value, k->extra_state);
  return MPI_SUCCESS;
}

/** Deletes every attribute of @p comm, most recent first, calling the delete callbacks. @return the first
 *  callback error, or MPI_SUCCESS. */
static int nm_mpi_attr_delete_all(MPI_Comm comm, struct nm_mpi_comm_s *c)
{
  int err = MPI_SUCCESS;
  while (c->attrs) {
    struct nm_mpi_attr_s *a = c->attrs;
    c->attrs = a->next; /* unlinked first: a callback may look at (or delete) the other attributes */
    int rc = nm_mpi_attr_call_delete(comm, a);
    if (err == MPI_SUCCESS)
      err = rc;
    nm_mpi_keyval_unref(a->keyval);
    free(a);
  }
  return err;
}

/** Copies the attributes of @p oldcomm to @p newc through the copy callbacks (MPI_Comm_dup). */
static int nm_mpi_attr_copy_all(MPI_Comm oldcomm, const struct nm_mpi_comm_s *oldc, struct nm_mpi_comm_s *newc)
{
  struct nm_mpi_attr_s **tail = &newc->attrs;
  for (const struct nm_mpi_attr_s *a = oldc->attrs; a; a = a->next) {
    struct nm_mpi_keyval_s *k = nm_mpi_table_get(&nm_mpi.keyvals, a->keyval);
    if (!k || k->copy_fn == MPI_COMM_NULL_COPY_FN)
      continue;
    void *out = NULL;
    int flag = 0;
    if (k->copy_fn == MPI_COMM_DUP_FN) {
      out = a->value;
      flag = 1;
    } else {
      int rc = k->copy_fn(oldcomm, a->keyval, k->extra_state, a->value, &out, &flag);
      if (rc != MPI_SUCCESS)
        return rc;
    }
    if (!flag)
      continue;
    struct nm_mpi_attr_s *na = malloc(sizeof(*na));
    if (!na)
      return MPI_ERR_NO_MEM;
    na->keyval = a->keyval;
    na->value = out;
    na->next = NULL;
    *tail = na;
    tail = &na->next;
    k->refcount++;
  }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                            int *keyval, void *extra_state)
{
  NM_MPI_LOCKED();
  if (!keyval)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_keyval_s *k = malloc(sizeof(*k));
  if (!k)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  k->copy_fn = copy_fn;
  k->delete_fn = delete_fn;
  k->extra_state = extra_state;
  k->refcount = 1;
  k->freed = 0;
  int h = nm_mpi_table_add(&nm_mpi.keyvals, k);
  if (h < 0) {
    free(k);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  }
  *keyval = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *keyval)
{
  NM_MPI_LOCKED();
  if (!keyval)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_keyval_s *k = nm_mpi_keyval_get_alive(*keyval);
  if (!k)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, __func__);
  if (!k->freed) { /* a second free of a key still alive through attributes is a no-op (as in MPICH) */
    k->freed = 1; /* attributes still using it keep it alive (MPI-3.1 6.7.2) */
    nm_mpi_keyval_unref(*keyval);
  }
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

/** Value of a predefined attribute (a pointer to an int, MPI-3.1 8.1.2), or NULL for other keys. */
static void *nm_mpi_attr_predefined(int keyval)
{
  switch (keyval) {
  case MPI_TAG_UB: return (void *)&nm_mpi_attr_tag_ub;
  case MPI_HOST: return (void *)&nm_mpi_attr_host;
  case MPI_IO: return (void *)&nm_mpi_attr_io;
  case MPI_WTIME_IS_GLOBAL: return (void *)&nm_mpi_attr_zero;
  case MPI_UNIVERSE_SIZE: return &nm_mpi.world_size;
  case MPI_APPNUM: return (void *)&nm_mpi_attr_zero;
  case MPI_LASTUSEDCODE: return (void *)&nm_mpi_attr_lastusedcode;
  default: return NULL;
  }
}

NM_MPI_ALIAS(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  struct nm_mpi_keyval_s *k = nm_mpi_keyval_get(keyval);
  if (!k) /* unknown, freed, or predefined (read-only) */
    return nm_mpi_error(comm, MPI_ERR_KEYVAL, __func__);
  for (struct nm_mpi_attr_s *a = c->attrs; a; a = a->next)
    if (a->keyval == keyval) {
      int rc = nm_mpi_attr_call_delete(comm, a); /* the old value goes first (6.7.3) */
      if (rc != MPI_SUCCESS)
        return nm_mpi_error(comm, rc, __func__);
      a->value = attribute_val;
      return MPI_SUCCESS;
    }
  struct nm_mpi_attr_s *a = malloc(sizeof(*a));
  if (!a)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  a->keyval = keyval;
  a->value = attribute_val;
  a->next = c->attrs; /* most recent first: deletion runs in reverse order of creation */
  c->attrs = a;
  k->refcount++;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!attribute_val || !flag)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  void *pre = nm_mpi_attr_predefined(keyval);
  if (pre) {
    *(void **)attribute_val = pre;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (!nm_mpi_keyval_get_alive(keyval))
    return nm_mpi_error(comm, MPI_ERR_KEYVAL, __func__);
  *flag = 0;
  for (struct nm_mpi_attr_s *a = c->attrs; a; a = a->next)
    if (a->keyval == keyval) {
      *(void **)attribute_val = a->value;
      *flag = 1;
      break;
    }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!nm_mpi_keyval_get_alive(keyval))
    return nm_mpi_error(comm, MPI_ERR_KEYVAL, __func__);
  for (struct nm_mpi_attr_s **p = &c->attrs; *p; p = &(*p)->next)
    if ((*p)->keyval == keyval) {
      struct nm_mpi_attr_s *a = *p;
      int rc = nm_mpi_attr_call_delete(comm, a);
      if (rc != MPI_SUCCESS) /* the attribute stays (6.7.3: the delete failed) */
        return nm_mpi_error(comm, rc, __func__);
      *p = a->next;
      nm_mpi_keyval_unref(keyval);
      free(a);
      return MPI_SUCCESS;
    }
  return nm_mpi_error(comm, MPI_ERR_KEYVAL, __func__); /* no such attribute on comm */
}

/* ---------------------------------------------------------------- names */

NM_MPI_ALIAS(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!name)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
  c->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!name || !resultlen)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  size_t len = strnlen(c->name, MPI_MAX_OBJECT_NAME - 1);
  memcpy(name, c->name, len);
  name[len] = '\0';
  *resultlen = (int)len;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

NM_MPI_ALIAS(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!size)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  *size = c->size;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!rank)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  *rank = c->rank;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!flag)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  *flag = c->is_inter;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  if (!size)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  *size = c->remote_size;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!group)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  MPI_Group g = nm_mpi_group_new(c->size, c->world);
  if (g == MPI_GROUP_NULL)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  *group = g;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  if (!group)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  MPI_Group g = nm_mpi_group_new(c->remote_size, c->remote_world);
  if (g == MPI_GROUP_NULL)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  *group = g;
  return MPI_SUCCESS;
}

/** Compare two member lists: MPI_IDENT (same order), MPI_SIMILAR (same members) or MPI_UNEQUAL. */
static int nm_mpi_comm_compare_lists(const int *a, int na, const int *b, int nb)
{
  if (na != nb)
    return MPI_UNEQUAL;
  if (!memcmp(a, b, sizeof(int) * (size_t)na))
    return MPI_IDENT;
  char *in = calloc((size_t)nm_mpi.world_size, 1);
  if (!in)
    return MPI_UNEQUAL;
  for (int i = 0; i < nb; i++)
    in[b[i]] = 1;
  int res = MPI_SIMILAR;
  for (int i = 0; i < na; i++)
    if (!in[a[i]])
      res = MPI_UNEQUAL;
  free(in);
  return res;
}

NM_MPI_ALIAS(Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c1 = nm_mpi_comm_get(comm1), *c2 = nm_mpi_comm_get(comm2);
  if (!c1 || !c2)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (!result)
    return nm_mpi_error(comm1, MPI_ERR_ARG, __func__);
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (c1->is_inter != c2->is_inter) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  int res = nm_mpi_comm_compare_lists(c1->world, c1->size, c2->world, c2->size);
  if (c1->is_inter) {
    int r2 = nm_mpi_comm_compare_lists(c1->remote_world, c1->remote_size, c2->remote_world, c2->remote_size);
    if (r2 > res)
      res = r2;
  }
  *result = res == MPI_IDENT ? MPI_CONGRUENT : res; /* different contexts: at best congruent */
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- creation */

/** Members of one color, sorted by (key, index): the new rank order of MPI_Comm_split (MPI-3.1 6.4.2).
 *  @p all holds (color, key, ...) with @p stride ints per process; entries [from, from + n) are scanned, and
 *  @p world_of[i] is the world rank of entry from + i. @return malloc'd world ranks (*count of them) and in
 *  *pos the new rank of entry @p self (or -1); NULL if out of memory. */
struct nm_mpi_split_s {
  int key, idx;
};
static int nm_mpi_split_cmp(const void *a, const void *b)
{
  const struct nm_mpi_split_s *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}
static int *nm_mpi_split_members(const int *all, int stride, int from, int n, const int *world_of, int color,
                                 int self, int *count, int *pos)
{
  struct nm_mpi_split_s *m = malloc(sizeof(*m) * (size_t)(n > 0 ? n : 1));
  int *world = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!m || !world) {
    free(m);
    free(world);
    return NULL;
  }
  int k = 0;
  for (int i = 0; i < n; i++) {
    const int *e = all + (size_t)(from + i) * (size_t)stride;
    if (e[0] == color) {
      m[k].key = e[1];
      m[k].idx = i;
      k++;
    }
  }
  qsort(m, (size_t)k, sizeof(*m), nm_mpi_split_cmp);
  *pos = -1;
  for (int i = 0; i < k; i++) {
    world[i] = world_of[m[i].idx];
    if (from + m[i].idx == self)
      *pos = i;
  }
  free(m);
  *count = k;
  return world;
}

/** Registers a new communicator built by a creation function on @p parent, with its inherited state. */
static int nm_mpi_comm_finish(MPI_Comm parent, struct nm_mpi_comm_s *pc, struct nm_mpi_comm_s *nc,
                              MPI_Comm *newcomm, const char *fn)
{
  MPI_Comm h = nm_mpi_comm_register(nc);
  if (h == MPI_COMM_NULL)
    return nm_mpi_error(parent, MPI_ERR_NO_MEM, fn);
  nm_mpi_comm_inherit_errhandler(h, pc->errhandler);
  *newcomm = h;
  return MPI_SUCCESS;
}

/** Builds (context, local group, remote group or NULL) and registers it. */
static int nm_mpi_comm_build(MPI_Comm parent, struct nm_mpi_comm_s *pc, uint32_t ctx, int size, const int *world,
                             int rank, int remote_size, const int *remote_world, MPI_Comm *newcomm,
                             const char *fn)
{
  struct nm_mpi_comm_s *nc = nm_mpi_comm_alloc(ctx, size, world, rank);
  if (!nc || (remote_world && nm_mpi_comm_set_remote(nc, remote_size, remote_world))) {
    nm_mpi_comm_destroy(nc);
    return nm_mpi_error(parent, MPI_ERR_NO_MEM, fn);
  }
  return nm_mpi_comm_finish(parent, pc, nc, newcomm, fn);
}

/** The duplicate of @p c (groups, topology, attributes through their copy callbacks, MPI-3.1 6.4.2) with context
 *  @p ctx, in *newcomm. @return MPI code (through @p comm's error handler). */
static int nm_mpi_comm_dup_ctx(MPI_Comm comm, struct nm_mpi_comm_s *c, uint32_t ctx, MPI_Comm *newcomm,
                               const char *fn)
{
  struct nm_mpi_comm_s *nc = nm_mpi_comm_alloc(ctx, c->size, c->world, c->rank);
  if (!nc || (c->is_inter && nm_mpi_comm_set_remote(nc, c->remote_size, c->remote_world))) {
    nm_mpi_comm_destroy(nc);
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, fn);
  }
  if (c->topo == MPI_CART) { /* the topology is duplicated too (MPI-3.1 6.4.2) */
    size_t nd = (size_t)(c->ndims > 0 ? c->ndims : 1);
    nc->dims = malloc(sizeof(int) * nd);
    nc->periods = malloc(sizeof(int) * nd);
    if (!nc->dims || !nc->periods) {
      nm_mpi_comm_destroy(nc);
      return nm_mpi_error(comm, MPI_ERR_NO_MEM, fn);
    }
    memcpy(nc->dims, c->dims, sizeof(int) * (size_t)c->ndims);
    memcpy(nc->periods, c->periods, sizeof(int) * (size_t)c->ndims);
    nc->topo = MPI_CART;
    nc->ndims = c->ndims;
  }
  int rc = nm_mpi_attr_copy_all(comm, c, nc);
  if (rc != MPI_SUCCESS) {
    /* A copy callback failed: the new communicator is dropped; values already copied are deleted. */
    MPI_Comm h = nm_mpi_comm_register(nc);
    if (h != MPI_COMM_NULL) {
      nm_mpi_attr_delete_all(h, nc);
      nm_mpi_table_remove(&nm_mpi.comms, h);
      nm_mpi_comm_destroy(nc);
    }
    return nm_mpi_error(comm, rc, fn);
  }
  return nm_mpi_comm_finish(comm, c, nc, newcomm, fn);
}

/** The context of the next MPI_Comm_idup of @p c, the same on every member (see the top of this file), or 0 when
 *  @p c has none left. Counts the idup either way, as every member does. */
static uint32_t nm_mpi_comm_idup_context(struct nm_mpi_comm_s *c)
{
  unsigned seq = c->idup_seq++;
  uint64_t slot = (uint64_t)(c->context / 2) * NM_MPI_IDUP_PER_COMM + seq;
  if (c->context >= NM_MPI_IDUP_SPACE || seq >= NM_MPI_IDUP_PER_COMM || slot >= NM_MPI_IDUP_SPACE / 2)
    return 0;
  return NM_MPI_IDUP_SPACE + 2 * (uint32_t)slot;
}

/** The agreement of MPI_Comm_dup (and of an idup without a computed context left): every member waits. */
static int nm_mpi_comm_dup_agreed(MPI_Comm comm, struct nm_mpi_comm_s *c, MPI_Comm *newcomm)
{
  struct nm_mpi_ctx_resv_s resv;
  int mine = nm_mpi_ctx_propose(&resv, 0), *all = NULL, n, loff, roff;
  uint32_t ctx = 0;
  int rc = nm_mpi_comm_allgather_all(c, &mine, 1, &all, &n, &loff, &roff);
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_ctx_settle(&resv, all, n, 1, 0, nm_mpi_ctx_exchange_comm, c, &ctx);
  else
    nm_mpi_ctx_unreserve(&resv);
  free(all);
  if (rc != MPI_SUCCESS)
    return nm_mpi_error(comm, rc, "MPI_Comm_dup");
  return nm_mpi_comm_dup_ctx(comm, c, ctx, newcomm, "MPI_Comm_dup");
}

/* MPI_Comm_dup takes the context an idup would (computed alike by every member, no exchange) while the parent has
 * one left: so concurrent dups of different communicators by different threads (MPI_THREAD_MULTIPLE) never
 * interleave two agreements on next_context, which could give two communicators one context on a process
 * (doc/mpi.md, "Threads"). Dups and idups of one communicator are ordered alike on every member (MPI-3.1 5.12). */
NM_MPI_ALIAS(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!newcomm)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  uint32_t ctx = nm_mpi_comm_idup_context(c);
  if (ctx)
    return nm_mpi_comm_dup_ctx(comm, c, ctx, newcomm, __func__);
  return nm_mpi_comm_dup_agreed(comm, c, newcomm);
}

NM_MPI_ALIAS(Comm_idup)
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!newcomm || !request)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  /* No exchange with the other members (a context computed alike by all), so the duplicate exists at once and
   * the request is complete at creation; without such a context left, the agreement of MPI_Comm_dup. */
  uint32_t ctx = nm_mpi_comm_idup_context(c);
  int rc = ctx ? nm_mpi_comm_dup_ctx(comm, c, ctx, newcomm, __func__) : nm_mpi_comm_dup_agreed(comm, c, newcomm);
  if (rc != MPI_SUCCESS)
    return rc;
  struct nm_mpi_request_s *r = NULL;
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_DONE, &r);
  if (h == MPI_REQUEST_NULL)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  r->comm = comm; /* complete at creation, with an empty status (mpi_request.c) */
  *request = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (!newcomm)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  if (color < 0 && color != MPI_UNDEFINED)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  struct nm_mpi_ctx_resv_s resv;
  int mine[3] = { color, key, nm_mpi_ctx_propose(&resv, 0) }, *all = NULL, n, loff, roff;
  uint32_t ctx = 0;
  int rc = nm_mpi_comm_allgather_all(c, mine, 3, &all, &n, &loff, &roff);
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_ctx_settle(&resv, all, n, 3, 2, nm_mpi_ctx_exchange_comm, c, &ctx);
  else
    nm_mpi_ctx_unreserve(&resv);
  if (rc != MPI_SUCCESS) {
    free(all);
    return nm_mpi_error(comm, rc, __func__);
  }
  *newcomm = MPI_COMM_NULL;
  if (color == MPI_UNDEFINED) {
    free(all);
    return MPI_SUCCESS;
  }
  int lsize, rsize = 0, rank, rpos;
  int *lworld = nm_mpi_split_members(all, 3, loff, c->size, c->world, color, loff + c->rank, &lsize, &rank);
  int *rworld = NULL;
  if (c->is_inter) /* the remote side's members of the same color form the remote group */
    rworld = nm_mpi_split_members(all, 3, roff, c->remote_size, c->remote_world, color, -1, &rsize, &rpos);
  free(all);
  if (!lworld || (c->is_inter && !rworld)) {
    free(lworld);
    free(rworld);
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  }
  rc = MPI_SUCCESS;
  if (!c->is_inter || rsize > 0)
    rc = nm_mpi_comm_build(comm, c, ctx, lsize, lworld, rank, rsize, rworld, newcomm, __func__);
  free(lworld);
  free(rworld);
  return rc;
}

NM_MPI_ALIAS(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  (void)info;
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  if (!newcomm || (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED))
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  /* Shared memory domain = host: exchange host names; the color is the lowest rank on the same host. */
  int mine[NM_MPI_HOST_INTS];
  char host[sizeof(mine)];
  memset(host, 0, sizeof(host));
  if (gethostname(host, sizeof(host) - 1) != 0)
    strcpy(host, "localhost");
  host[sizeof(host) - 1] = '\0';
  memcpy(mine, host, sizeof(mine));
  int *all = malloc(sizeof(mine) * (size_t)c->size);
  if (!all)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  int rc = nm_mpi_comm_allgather(c->world, c->size, c->rank, nm_mpi_coll_tag(c, NM_MPI_COMM_TAG), mine,
                                 NM_MPI_HOST_INTS, all);
  if (rc != MPI_SUCCESS) {
    free(all);
    return nm_mpi_error(comm, rc, __func__);
  }
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED)
    for (int i = 0; i < c->size; i++)
      if (!memcmp(all + (size_t)i * NM_MPI_HOST_INTS, mine, sizeof(mine))) {
        color = i;
        break;
      }
  free(all);
  return PMPI_Comm_split(comm, color, key, newcomm);
}

NM_MPI_ALIAS(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_error(comm, MPI_ERR_GROUP, __func__);
  if (!newcomm)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  /* The group must be a subset of the (local) group of comm. */
  int pos = -1;
  for (int i = 0; i < g->size; i++) {
    int w = g->world[i], found = 0;
    for (int j = 0; j < c->size && !found; j++)
      found = c->world[j] == w;
    if (!found)
      return nm_mpi_error(comm, MPI_ERR_GROUP, __func__);
    if (w == nm_mpi.world_rank)
      pos = i;
  }
  /* Each process gives its position in its side's group (intercommunicators: each side passes a subgroup
   * of its own group, and learns the other side's from the exchange). */
  struct nm_mpi_ctx_resv_s resv;
  int mine[2] = { pos, nm_mpi_ctx_propose(&resv, 0) }, *all = NULL, n, loff, roff;
  uint32_t ctx = 0;
  int rc = nm_mpi_comm_allgather_all(c, mine, 2, &all, &n, &loff, &roff);
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_ctx_settle(&resv, all, n, 2, 1, nm_mpi_ctx_exchange_comm, c, &ctx);
  else
    nm_mpi_ctx_unreserve(&resv);
  if (rc != MPI_SUCCESS) {
    free(all);
    return nm_mpi_error(comm, rc, __func__);
  }
  *newcomm = MPI_COMM_NULL;
  rc = MPI_SUCCESS;
  if (pos >= 0 && !c->is_inter) {
    rc = nm_mpi_comm_build(comm, c, ctx, g->size, g->world, pos, 0, NULL, newcomm, __func__);
  } else if (pos >= 0) {
    int *rworld = malloc(sizeof(int) * (size_t)c->remote_size), rsize = 0;
    if (!rworld) {
      free(all);
      return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
    }
    for (int i = 0; i < c->remote_size; i++)
      rsize += all[(size_t)(roff + i) * 2] >= 0;
    for (int i = 0; i < c->remote_size; i++) { /* positions 0..rsize-1, each once (same group on a side) */
      int p = all[(size_t)(roff + i) * 2];
      if (p >= rsize)
        rc = MPI_ERR_GROUP;
      else if (p >= 0)
        rworld[p] = c->remote_world[i];
    }
    if (rc != MPI_SUCCESS)
      rc = nm_mpi_error(comm, rc, __func__);
    else if (rsize > 0)
      rc = nm_mpi_comm_build(comm, c, ctx, g->size, g->world, pos, rsize, rworld, newcomm, __func__);
    free(rworld);
  }
  free(all);
  return rc;
}

NM_MPI_ALIAS(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  if (c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_error(comm, MPI_ERR_GROUP, __func__);
  if (!newcomm)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  if (tag < 0 || tag > NM_MPI_TAG_UB)
    return nm_mpi_error(comm, MPI_ERR_TAG, __func__);
  int pos = -1;
  for (int i = 0; i < g->size; i++) {
    if (g->world[i] < 0 || g->world[i] >= nm_mpi.world_size || c->rank_of_world[g->world[i]] < 0)
      return nm_mpi_error(comm, MPI_ERR_GROUP, __func__);
    if (g->world[i] == nm_mpi.world_rank)
      pos = i;
  }
  *newcomm = MPI_COMM_NULL;
  if (pos < 0) /* not a member: nothing to agree on */
    return MPI_SUCCESS;
  /* Only the members call: they agree among themselves, on comm's collective context. */
  int *all = malloc(sizeof(int) * (size_t)g->size);
  if (!all)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  struct nm_mpi_ctx_resv_s resv;
  struct nm_mpi_ctx_members_s members = { g->world, g->size, pos, nm_mpi_coll_tag(c, NM_MPI_COMM_GROUP_TAG(tag)) };
  int mine = nm_mpi_ctx_propose(&resv, 0);
  uint32_t ctx = 0;
  int rc = nm_mpi_ctx_exchange_members(&members, mine, all);
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_ctx_settle(&resv, all, g->size, 1, 0, nm_mpi_ctx_exchange_members, &members, &ctx);
  else
    nm_mpi_ctx_unreserve(&resv);
  free(all);
  if (rc != MPI_SUCCESS)
    return nm_mpi_error(comm, rc, __func__);
  return nm_mpi_comm_build(comm, c, ctx, g->size, g->world, pos, 0, NULL, newcomm, __func__);
}

NM_MPI_ALIAS(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
  NM_MPI_LOCKED();
  if (!comm)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(*comm);
  if (!c || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return nm_mpi_error(c ? *comm : MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  int rc = nm_mpi_attr_delete_all(*comm, c);
  nm_mpi_table_remove(&nm_mpi.comms, *comm);
  nm_mpi_comm_destroy(c);
  *comm = MPI_COMM_NULL;
  return rc == MPI_SUCCESS ? MPI_SUCCESS : nm_mpi_error(MPI_COMM_WORLD, rc, __func__);
}

/* ---------------------------------------------------------------- intercommunicators (MPI-3.1 6.6) */

NM_MPI_ALIAS(Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(lc, local_comm);
  if (lc->is_inter)
    return nm_mpi_error(local_comm, MPI_ERR_COMM, __func__);
  if (local_leader < 0 || local_leader >= lc->size)
    return nm_mpi_error(local_comm, MPI_ERR_RANK, __func__);
  if (!newintercomm)
    return nm_mpi_error(local_comm, MPI_ERR_ARG, __func__);
  const int leader = lc->rank == local_leader;
  struct nm_mpi_comm_s *pc = NULL;
  if (leader) { /* peer_comm and remote_leader only matter at the leaders */
    pc = nm_mpi_comm_get(peer_comm);
    if (!pc)
      return nm_mpi_error(local_comm, MPI_ERR_COMM, __func__);
    if (!nm_mpi_comm_gate(pc, remote_leader))
      return nm_mpi_error(local_comm, MPI_ERR_RANK, __func__);
    if (tag < 0 || tag > NM_MPI_TAG_UB)
      return nm_mpi_error(local_comm, MPI_ERR_TAG, __func__);
  }
  const nm_tag_t ltag = nm_mpi_coll_tag(lc, NM_MPI_COMM_TAG);

  /* 1. The local group's context proposals, so its leader knows their maximum. */
  int mine = (int)nm_mpi.next_context;
  int *all = malloc(sizeof(int) * (size_t)lc->size);
  if (!all)
    return nm_mpi_error(local_comm, MPI_ERR_NO_MEM, __func__);
  int rc = nm_mpi_comm_allgather(lc->world, lc->size, lc->rank, ltag, &mine, 1, all);
  uint32_t lmax = 0;
  for (int i = 0; i < lc->size; i++)
    if ((uint32_t)all[i] > lmax)
      lmax = (uint32_t)all[i];
  free(all);
  if (rc != MPI_SUCCESS)
    return nm_mpi_error(local_comm, rc, __func__);

  /* 2. The leaders swap (max context, group size) then their groups' world ranks over peer_comm, with tag.
   * 3. Each leader broadcasts (context, remote size) then the remote world ranks in its local group. */
  int hdr[2] = { 0, 0 }; /* agreed context, remote size */
  int *rworld = NULL;
  if (leader) {
    nm_gate_t peer = nm_mpi_comm_gate(pc, remote_leader);
    nm_tag_t ptag = nm_mpi_p2p_tag(pc, tag);
    int out[2] = { (int)lmax, lc->size }, in[2] = { 0, 0 };
    nm_sr_request_t sreq[2], rreq;
    int r1 = nm_sr_isend(nm_mpi.session, peer, ptag, out, sizeof(out), &sreq[0]);
    int r2 = nm_sr_isend(nm_mpi.session, peer, ptag, lc->world, sizeof(int) * (nm_len_t)lc->size, &sreq[1]);
    int r3 = nm_sr_irecv(nm_mpi.session, peer, ptag, in, sizeof(in), &rreq);
    if (r3 == 0)
      r3 = nm_sr_rwait(nm_mpi.session, &rreq);
    if (r3 == 0 && (in[1] <= 0 || in[1] > nm_mpi.world_size)) /* a bad size from the peer */
      r3 = -NM_EPROTO;
    if (r3 == 0) {
      rworld = malloc(sizeof(int) * (size_t)in[1]);
      if (!rworld)
        r3 = -NM_ENOMEM;
      else {
        r3 = nm_sr_irecv(nm_mpi.session, peer, ptag, rworld, sizeof(int) * (nm_len_t)in[1], &rreq);
        if (r3 == 0)
          r3 = nm_sr_rwait(nm_mpi.session, &rreq);
      }
    }
    if (r1 == 0)
      r1 = nm_sr_swait(nm_mpi.session, &sreq[0]);
    if (r2 == 0)
      r2 = nm_sr_swait(nm_mpi.session, &sreq[1]);
    rc = r1 ? r1 : r2 ? r2 : r3;
    for (int i = 0; rc == 0 && i < in[1]; i++)
      if (rworld[i] < 0 || rworld[i] >= nm_mpi.world_size || lc->rank_of_world[rworld[i]] >= 0)
        rc = -NM_EPROTO; /* out of range, or the groups overlap */
    if (rc != 0) {
      free(rworld);
      hdr[0] = -1; /* tells the local group that the leaders failed */
      hdr[1] = 0;
    } else {
      hdr[0] = (int)((uint32_t)in[0] > lmax ? (uint32_t)in[0] : lmax);
      hdr[1] = in[1];
    }
  }
  int brc = nm_mpi_comm_bcast(lc->world, lc->size, lc->rank, local_leader, ltag, hdr, sizeof(hdr));
  if (brc != MPI_SUCCESS || hdr[0] < 0 || hdr[1] <= 0 || hdr[1] > nm_mpi.world_size) {
    free(rworld);
    return nm_mpi_error(local_comm, brc != MPI_SUCCESS ? brc : rc ? nm_mpi_comm_nm_err(rc) : MPI_ERR_INTERN,
                        __func__);
  }
  if (!leader) {
    rworld = malloc(sizeof(int) * (size_t)hdr[1]);
    if (!rworld) /* cannot leave the broadcast half done: the others would wait forever */
      return nm_mpi_error(local_comm, MPI_ERR_NO_MEM, __func__);
  }
  brc = nm_mpi_comm_bcast(lc->world, lc->size, lc->rank, local_leader, ltag, rworld,
                          sizeof(int) * (size_t)hdr[1]);
  if (brc != MPI_SUCCESS) {
    free(rworld);
    return nm_mpi_error(local_comm, brc, __func__);
  }
  uint32_t ctx = nm_mpi_comm_agree(hdr, 1, 1, 0);
  rc = nm_mpi_comm_build(local_comm, lc, ctx, lc->size, lc->world, lc->rank, hdr[1], rworld, newintercomm,
                         __func__);
  free(rworld);
  return rc;
}

NM_MPI_ALIAS(Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, intercomm);
  if (!c->is_inter)
    return nm_mpi_error(intercomm, MPI_ERR_COMM, __func__);
  if (!newintracomm)
    return nm_mpi_error(intercomm, MPI_ERR_ARG, __func__);
  struct nm_mpi_ctx_resv_s resv;
  int mine[2] = { high ? 1 : 0, nm_mpi_ctx_propose(&resv, 0) }, *all = NULL, n, loff, roff;
  uint32_t ctx = 0;
  int rc = nm_mpi_comm_allgather_all(c, mine, 2, &all, &n, &loff, &roff);
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_ctx_settle(&resv, all, n, 2, 1, nm_mpi_ctx_exchange_comm, c, &ctx);
  else
    nm_mpi_ctx_unreserve(&resv);
  if (rc != MPI_SUCCESS) {
    free(all);
    return nm_mpi_error(intercomm, rc, __func__);
  }
  /* The "low" group comes first; when both sides pass the same value, the canonical union order decides
   * (MPI-3.1 6.6.2 leaves that order arbitrary). Each group's value is its first member's. */
  int lhigh = all[(size_t)loff * 2], rhigh = all[(size_t)roff * 2];
  free(all);
  int local_first = lhigh != rhigh ? !lhigh : loff == 0;
  int *world = malloc(sizeof(int) * (size_t)n);
  if (!world)
    return nm_mpi_error(intercomm, MPI_ERR_NO_MEM, __func__);
  int lo = local_first ? 0 : c->remote_size, ro = local_first ? c->size : 0;
  memcpy(world + lo, c->world, sizeof(int) * (size_t)c->size);
  memcpy(world + ro, c->remote_world, sizeof(int) * (size_t)c->remote_size);
  rc = nm_mpi_comm_build(intercomm, c, ctx, n, world, lo + c->rank, 0, NULL, newintracomm, __func__);
  free(world);
  return rc;
}

/* ---------------------------------------------------------------- init / finalize */

int nm_mpi_comm_init(void)
{
  nm_mpi_table_init(&nm_mpi.comms, NM_MPI_COMM_FIRST);
  nm_mpi_table_init(&nm_mpi.keyvals, NM_MPI_KEYVAL_FIRST);
  if (nm_mpi_group_init() != MPI_SUCCESS)
    return MPI_ERR_NO_MEM;
  int n = nm_mpi.world_size, me = nm_mpi.world_rank;
  int *ids = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!ids)
    return MPI_ERR_NO_MEM;
  for (int i = 0; i < n; i++)
    ids[i] = i;
  struct nm_mpi_comm_s *world = nm_mpi_comm_alloc(0, n, ids, me);
  struct nm_mpi_comm_s *self = nm_mpi_comm_alloc(2, 1, &me, 0);
  free(ids);
  if (!world || !self || nm_mpi_table_set(&nm_mpi.comms, MPI_COMM_WORLD, world) ||
      nm_mpi_table_set(&nm_mpi.comms, MPI_COMM_SELF, self)) {
    nm_mpi_comm_destroy(world);
    nm_mpi_comm_destroy(self);
    return MPI_ERR_NO_MEM;
  }
  strcpy(world->name, "MPI_COMM_WORLD");
  strcpy(self->name, "MPI_COMM_SELF");
  nm_mpi.next_context = 4;
  return MPI_SUCCESS;
}

void nm_mpi_comm_finalize(void)
{
  /* MPI-3.1 8.7.1: MPI_COMM_SELF's attributes are deleted first (their callbacks run), then WORLD's. */
  struct nm_mpi_comm_s *c;
  if ((c = nm_mpi_comm_get(MPI_COMM_SELF)))
    nm_mpi_attr_delete_all(MPI_COMM_SELF, c);
  if ((c = nm_mpi_comm_get(MPI_COMM_WORLD)))
    nm_mpi_attr_delete_all(MPI_COMM_WORLD, c);
  for (int h = 1; h < nm_mpi.comms.n; h++) {
    c = nm_mpi_comm_get(h);
    if (!c)
      continue;
    for (struct nm_mpi_attr_s *a = c->attrs, *next; a; a = next) { /* leaked communicators: no callbacks */
      next = a->next;
      free(a);
    }
    nm_mpi_table_remove(&nm_mpi.comms, h);
    nm_mpi_comm_destroy(c);
  }
  nm_mpi_table_destroy(&nm_mpi.comms);
  for (int h = nm_mpi.keyvals.first; h < nm_mpi.keyvals.n; h++) {
    free(nm_mpi_table_get(&nm_mpi.keyvals, h));
    nm_mpi_table_remove(&nm_mpi.keyvals, h);
  }
  nm_mpi_table_destroy(&nm_mpi.keyvals);
  nm_mpi_group_finalize();
}

/* ---------------------------------------------------------------- deprecated MPI-1 attribute names
 * (removed in MPI-3.0; test suites still call them): same semantics as the MPI-2 functions they became. */

NM_MPI_ALIAS(Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
  NM_MPI_LOCKED();
  /* Same prototypes as MPI_Comm_copy/delete_attr_function, and MPI_NULL_COPY_FN / MPI_DUP_FN have the values
   * of MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN. */
  return PMPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                 (MPI_Comm_delete_attr_function *)delete_fn, keyval, extra_state);
}

NM_MPI_ALIAS(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_free_keyval(keyval);
}

NM_MPI_ALIAS(Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

NM_MPI_ALIAS(Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

NM_MPI_ALIAS(Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_delete_attr(comm, keyval);
}

/* ---------------------------------------------------------------- communicator info, parent */

NM_MPI_ALIAS(Comm_get_parent)
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
  NM_MPI_LOCKED();
  if (!parent)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *parent = MPI_COMM_NULL; /* never started by MPI_Comm_spawn (MPI-3.1 10.3.2) */
  return MPI_SUCCESS;
}

/** A valid info argument: MPI_INFO_NULL or an existing info object. */
static int nm_mpi_comm_info_ok(MPI_Info info)
{
  return info == MPI_INFO_NULL || nm_mpi_table_get(&nm_mpi.infos, info) != NULL;
}

NM_MPI_ALIAS(Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  (void)c;
  if (!nm_mpi_comm_info_ok(info))
    return nm_mpi_error(comm, MPI_ERR_INFO, __func__);
  /* No communicator hint changes the shim's behaviour: hints may be ignored (MPI-3.1 6.4.4). */
  return PMPI_Comm_dup(comm, newcomm);
}

NM_MPI_ALIAS(Comm_set_info)
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  (void)c;
  if (!nm_mpi_comm_info_ok(info))
    return nm_mpi_error(comm, MPI_ERR_INFO, __func__);
  return MPI_SUCCESS; /* ignored hints (6.4.4) */
}

NM_MPI_ALIAS(Comm_get_info)
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
  NM_MPI_LOCKED();
  NM_MPI_COMM_GET_OR_FAIL(c, comm);
  (void)c;
  if (!info_used)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  /* A new object the user frees: the hints actually in use, i.e. none. */
  return PMPI_Info_create(info_used);
}
