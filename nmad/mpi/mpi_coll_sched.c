/**
 * @file mpi_coll_sched.c
 * @brief The schedule engine of the MPI shim's collectives (see mpi_coll_sched.h): rounds of local operations
 * and nmad point-to-point messages, advanced from request monitors.
 *
 * Advancing: each posted nmad request carries a monitor (nm_sr_request_set_monitor) whose callback decrements
 * the round's pending count; when it reaches zero the next round starts, from inside nmad's progress. A request
 * may complete while it is being posted (a receive that matches an unexpected message, a send on a failed gate):
 * the round holds one extra "guard" count while it posts, and nm_mpi_coll_sched_advance() runs as a loop guarded
 * against re-entry, so rounds that complete at once never recurse.
 *
 * Lifetime: the MPI request may be released (MPI_Request_free) before the schedule is done; the schedule then
 * frees itself when its last round completes, since nmad still holds pointers to its requests until then.
 */
#include "mpi_coll_sched.h"
#include <stdlib.h>
#include <string.h>

/** Blocking collectives: wait on their completion flag this long (spin, then yield), then block in the drivers
 *  by slices of NM_MPI_COLL_SLICE_NS, polling the requests of other families in between. */
#define NM_MPI_COLL_FAST_WAIT_NS 10000000ULL
#define NM_MPI_COLL_SLICE_NS 1000000ULL

enum nm_mpi_coll_op_kind_e {
  NM_MPI_COLL_SEND = 1,
  NM_MPI_COLL_RECV,
  NM_MPI_COLL_COPY,
  NM_MPI_COLL_PACK,
  NM_MPI_COLL_UNPACK,
  NM_MPI_COLL_REDUCE,
  NM_MPI_COLL_INT_MAX
};

struct nm_mpi_coll_op_s {
  int kind;
  nm_gate_t gate;                 /* send / recv: resolved when built (the communicator may be freed meanwhile) */
  const void *src;                /* send buffer, copy/pack/unpack source, reduction `in` */
  void *dst;                      /* recv buffer, copy/pack/unpack destination, reduction `inout` */
  size_t len;                     /* bytes: send, recv, copy, unpack input */
  MPI_Count count;                /* elements: pack, unpack, reduce */
  struct nm_mpi_datatype_s *d;    /* pack, unpack */
  MPI_Datatype dt;                /* reduce */
  MPI_Op op;                      /* reduce */
  nm_sr_request_t req;            /* send / recv (stays in place: ops are never moved once started) */
};

struct nm_mpi_coll_mem_s {
  void *p;
  size_t len;
};

struct nm_mpi_coll_round_s {
  struct nm_mpi_coll_op_s *ops;
  int n, cap;
};

struct nm_mpi_coll_sched_s {
  struct nm_mpi_comm_s *c;        /* used while building only */
  MPI_Comm comm;
  nm_tag_t tag;
  struct nm_mpi_coll_round_s *rounds;
  int n_rounds, cap_rounds;
  struct nm_mpi_coll_mem_s *mem;  /* scratch buffers, given back with the schedule */
  int n_mem, cap_mem;
  MPI_Datatype *types;            /* datatypes referenced until release */
  int n_types, cap_types;
  int build_err;                  /* first error while building (MPI class) */
  int err;                        /* first error while running (MPI class) */
  int started;
  int cur;                        /* next round to start */
  int pending;                    /* communications of the current round not yet completed (+1 while posting) */
  int in_advance;
  int orphan;                     /* the MPI request was released: free when done */
  volatile int done;
};

/* ---------------------------------------------------------------- building */

static void nm_mpi_coll_sched_fail(nm_mpi_coll_sched_t *s, int err)
{
  if (!s->build_err)
    s->build_err = err;
}

void nm_mpi_coll_sched_set_error(nm_mpi_coll_sched_t *s, int err)
{
  nm_mpi_coll_sched_fail(s, err);
}

/** Grow an array to hold @p need elements. @return 0 or -1. */
static int nm_mpi_coll_grow(void **arr, int *cap, int need, size_t elem)
{
  if (need <= *cap)
    return 0;
  int ncap = *cap ? *cap * 2 : 8;
  while (ncap < need)
    ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * elem);
  if (!p)
    return -1;
  memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
  *arr = p;
  *cap = ncap;
  return 0;
}

nm_mpi_coll_sched_t *nm_mpi_coll_sched_new(struct nm_mpi_comm_s *c, MPI_Comm comm)
{
  nm_mpi_coll_sched_t *s = calloc(1, sizeof(*s));
  if (!s)
    return NULL;
  s->c = c;
  s->comm = comm;
  s->tag = nm_mpi_coll_tag(c, c->coll_seq++ & 0x7fffffffu); /* tags >= 2^31 belong to mpi_comm.c */
  return s;
}

static void nm_mpi_coll_sched_free(nm_mpi_coll_sched_t *s)
{
  for (int i = 0; i < s->n_rounds; i++) {
    for (int j = 0; j < s->rounds[i].n; j++)
      if (s->rounds[i].ops[j].kind == NM_MPI_COLL_REDUCE)
        nm_mpi_op_release(s->rounds[i].ops[j].op);
    free(s->rounds[i].ops);
  }
  free(s->rounds);
  for (int i = 0; i < s->n_mem; i++)
    nm_mpi_scratch_put(s->mem[i].p, s->mem[i].len);
  free(s->mem);
  for (int i = 0; i < s->n_types; i++)
    nm_mpi_datatype_unref(s->types[i]);
  free(s->types);
  free(s);
}

void nm_mpi_coll_sched_destroy(nm_mpi_coll_sched_t *s)
{
  if (s)
    nm_mpi_coll_sched_free(s);
}

void *nm_mpi_coll_sched_alloc(nm_mpi_coll_sched_t *s, size_t len)
{
  if (len == 0)
    return NULL;
  if (nm_mpi_coll_grow((void **)&s->mem, &s->cap_mem, s->n_mem + 1, sizeof(*s->mem))) {
    nm_mpi_coll_sched_fail(s, MPI_ERR_NO_MEM);
    return NULL;
  }
  void *p = nm_mpi_scratch_get(len);
  if (!p) {
    nm_mpi_coll_sched_fail(s, MPI_ERR_NO_MEM);
    return NULL;
  }
  s->mem[s->n_mem].p = p;
  s->mem[s->n_mem++].len = len;
  return p;
}

void nm_mpi_coll_sched_hold_type(nm_mpi_coll_sched_t *s, MPI_Datatype dt)
{
  if (nm_mpi_coll_grow((void **)&s->types, &s->cap_types, s->n_types + 1, sizeof(MPI_Datatype))) {
    nm_mpi_coll_sched_fail(s, MPI_ERR_NO_MEM);
    return;
  }
  nm_mpi_datatype_ref(dt);
  s->types[s->n_types++] = dt;
}

/** A new zeroed operation at the end of round @p round, or NULL (failure recorded). */
static struct nm_mpi_coll_op_s *nm_mpi_coll_sched_op(nm_mpi_coll_sched_t *s, int round, int kind)
{
  if (s->started || round < 0) {
    nm_mpi_coll_sched_fail(s, MPI_ERR_INTERN);
    return NULL;
  }
  if (nm_mpi_coll_grow((void **)&s->rounds, &s->cap_rounds, round + 1, sizeof(*s->rounds))) {
    nm_mpi_coll_sched_fail(s, MPI_ERR_NO_MEM);
    return NULL;
  }
  if (round >= s->n_rounds)
    s->n_rounds = round + 1;
  struct nm_mpi_coll_round_s *r = &s->rounds[round];
  if (nm_mpi_coll_grow((void **)&r->ops, &r->cap, r->n + 1, sizeof(*r->ops))) {
    nm_mpi_coll_sched_fail(s, MPI_ERR_NO_MEM);
    return NULL;
  }
  struct nm_mpi_coll_op_s *op = &r->ops[r->n++];
  memset(op, 0, sizeof(*op));
  op->kind = kind;
  return op;
}

/** Gate of a member, or NULL (failure recorded). */
static nm_gate_t nm_mpi_coll_sched_gate(nm_mpi_coll_sched_t *s, int peer)
{
  nm_gate_t gate = nm_mpi_comm_gate(s->c, peer);
  if (!gate)
    nm_mpi_coll_sched_fail(s, MPI_ERR_RANK);
  return gate;
}

void nm_mpi_coll_sched_send(nm_mpi_coll_sched_t *s, int round, int peer, const void *buf, size_t len)
{
  nm_gate_t gate = nm_mpi_coll_sched_gate(s, peer);
  struct nm_mpi_coll_op_s *op = gate ? nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_SEND) : NULL;
  if (op) {
    op->gate = gate;
    op->src = buf;
    op->len = len;
  }
}

void nm_mpi_coll_sched_recv(nm_mpi_coll_sched_t *s, int round, int peer, void *buf, size_t len)
{
  nm_gate_t gate = nm_mpi_coll_sched_gate(s, peer);
  struct nm_mpi_coll_op_s *op = gate ? nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_RECV) : NULL;
  if (op) {
    op->gate = gate;
    op->dst = buf;
    op->len = len;
  }
}

void nm_mpi_coll_sched_copy(nm_mpi_coll_sched_t *s, int round, void *dst, const void *src, size_t len)
{
  if (len == 0 || dst == src)
    return;
  struct nm_mpi_coll_op_s *op = nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_COPY);
  if (op) {
    op->dst = dst;
    op->src = src;
    op->len = len;
  }
}

void nm_mpi_coll_sched_pack(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d, const void *buf,
                            MPI_Count count, void *out)
{
  if (count == 0)
    return;
  struct nm_mpi_coll_op_s *op = nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_PACK);
  if (op) {
    op->d = d;
    op->src = buf;
    op->count = count;
    op->dst = out;
  }
}

void nm_mpi_coll_sched_unpack(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d, const void *in,
                              MPI_Count bytes, void *buf, MPI_Count count)
{
  if (count == 0 || bytes == 0)
    return;
  struct nm_mpi_coll_op_s *op = nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_UNPACK);
  if (op) {
    op->d = d;
    op->src = in;
    op->len = (size_t)bytes;
    op->dst = buf;
    op->count = count;
  }
}

void nm_mpi_coll_sched_reduce(nm_mpi_coll_sched_t *s, int round, MPI_Op mop, const void *in, void *inout,
                              int count, MPI_Datatype dt)
{
  if (count == 0)
    return;
  struct nm_mpi_coll_op_s *op = nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_REDUCE);
  if (op) {
    nm_mpi_op_hold(mop); /* the application may free a user op before the collective completes */
    op->op = mop;
    op->src = in;
    op->dst = inout;
    op->count = count;
    op->dt = dt;
  }
}

void nm_mpi_coll_sched_int_max(nm_mpi_coll_sched_t *s, int round, const int *in, int *inout, int count)
{
  if (count == 0)
    return;
  struct nm_mpi_coll_op_s *op = nm_mpi_coll_sched_op(s, round, NM_MPI_COLL_INT_MAX);
  if (op) {
    op->src = in;
    op->dst = inout;
    op->count = count;
  }
}

/* ---------------------------------------------------------------- running */

static void nm_mpi_coll_sched_advance(nm_mpi_coll_sched_t *s);

static void nm_mpi_coll_sched_keep_err(nm_mpi_coll_sched_t *s, int err)
{
  if (!s->err && err)
    s->err = err;
}

static int nm_mpi_coll_err_of_nm(int status)
{
  if (status == -NM_ETRUNCATED)
    return MPI_ERR_TRUNCATE;
  return nm_mpi_from_nm_err(status);
}

/** Request monitor of every send and receive of a schedule (runs inside nmad's progress). */
static void nm_mpi_coll_sched_notify(struct nm_req_s *req, unsigned event, void *ref)
{
  nm_mpi_coll_sched_t *s = ref;
  (void)event;
  if (req->status)
    nm_mpi_coll_sched_keep_err(s, nm_mpi_coll_err_of_nm(req->status));
  if (--s->pending == 0)
    nm_mpi_coll_sched_advance(s);
}

/** Post one communication; it completes through the monitor (even on most errors). */
static void nm_mpi_coll_sched_post(nm_mpi_coll_sched_t *s, struct nm_mpi_coll_op_s *op)
{
  nm_session_t session = nm_mpi.session;
  nm_gate_t gate = op->gate;
  int rc;

  s->pending++;
  if (op->kind == NM_MPI_COLL_SEND) {
    nm_sr_send_init(session, &op->req);
    nm_sr_request_set_monitor(session, &op->req, NM_EVENT_SEND_COMPLETED, nm_mpi_coll_sched_notify, s);
    rc = nm_sr_send_isend(session, &op->req, gate, s->tag, op->src, op->len);
  } else {
    nm_sr_recv_init(session, &op->req);
    nm_sr_request_set_monitor(session, &op->req, NM_EVENT_RECV_COMPLETED, nm_mpi_coll_sched_notify, s);
    rc = nm_sr_recv_irecv(session, &op->req, gate, s->tag, NM_TAG_MASK_FULL, op->dst, op->len);
  }
  if (rc == -NM_EINVAL) {
    /* refused before posting: the monitor will never run */
    s->pending--;
    nm_mpi_coll_sched_keep_err(s, MPI_ERR_INTERN);
  }
  /* other errors (failed gate, no memory) completed the request, and ran the monitor, already */
}

static void nm_mpi_coll_sched_local(nm_mpi_coll_sched_t *s, struct nm_mpi_coll_op_s *op)
{
  switch (op->kind) {
  case NM_MPI_COLL_COPY:
    memmove(op->dst, op->src, op->len);
    break;
  case NM_MPI_COLL_PACK:
    nm_mpi_datatype_pack(op->d, op->src, op->count, op->dst);
    break;
  case NM_MPI_COLL_UNPACK:
    nm_mpi_datatype_unpack(op->d, op->src, (MPI_Count)op->len, op->dst, op->count);
    break;
  case NM_MPI_COLL_REDUCE:
    nm_mpi_coll_sched_keep_err(s, nm_mpi_op_apply(op->op, op->src, op->dst, (int)op->count, op->dt));
    break;
  case NM_MPI_COLL_INT_MAX: {
    const int *in = op->src;
    int *inout = op->dst;
    for (MPI_Count i = 0; i < op->count; i++)
      if (in[i] > inout[i])
        inout[i] = in[i];
    break;
  }
  default:
    nm_mpi_coll_sched_keep_err(s, MPI_ERR_INTERN);
  }
}

/** Start rounds until one has communications in flight, or the schedule is done. Never re-entered: a monitor
 *  that fires while a round is being posted only decrements the count; the loop here sees it. */
static void nm_mpi_coll_sched_advance(nm_mpi_coll_sched_t *s)
{
  if (s->in_advance)
    return;
  s->in_advance = 1;
  while (s->pending == 0 && s->cur < s->n_rounds) {
    struct nm_mpi_coll_round_s *r = &s->rounds[s->cur++];
    s->pending = 1; /* guard while posting */
    for (int i = 0; i < r->n; i++) {
      struct nm_mpi_coll_op_s *op = &r->ops[i];
      if (op->kind == NM_MPI_COLL_SEND || op->kind == NM_MPI_COLL_RECV)
        nm_mpi_coll_sched_post(s, op);
      else
        nm_mpi_coll_sched_local(s, op);
    }
    s->pending--;
  }
  s->in_advance = 0;
  if (s->pending == 0 && s->cur >= s->n_rounds && !s->done) {
    s->done = 1;
    if (s->orphan)
      nm_mpi_coll_sched_free(s);
  }
}

int nm_mpi_coll_sched_start(nm_mpi_coll_sched_t *s)
{
  if (s->build_err) {
    int err = s->build_err;
    nm_mpi_coll_sched_free(s);
    return err;
  }
  s->started = 1;
  nm_mpi_coll_sched_advance(s);
  return MPI_SUCCESS;
}

static int nm_mpi_coll_request_progress(struct nm_mpi_request_s *r);

/** Progress the requests of other families that advance only when polled (MPI_Imrecv, MPIX_Dynamic_bcast...):
 *  MPI's progress rule (MPI-3.1 section 3.7.4) wants a blocking call to advance every pending operation.
 *  Schedules do not need it: their monitors run within nmad's progress. */
static void nm_mpi_coll_poll_others(void)
{
  for (int h = nm_mpi.requests.first; h < nm_mpi.requests.n; h++) {
    struct nm_mpi_request_s *r = nm_mpi_request_get(h);
    if (r && r->kind == NM_MPI_REQ_COLL && r->active && !r->completed && r->progress &&
        r->progress != nm_mpi_coll_request_progress)
      nm_mpi_request_test(r);
  }
}

int nm_mpi_coll_sched_run(nm_mpi_coll_sched_t *s)
{
  int err;
  if (!s->started) {
    err = nm_mpi_coll_sched_start(s);
    if (err)
      return err;
  }
  /* spin then yield on the completion flag (nm_core.h), then block in the drivers by short slices, polling the
   * other families' requests between them (DESIGN.md rule 2) */
  if (!s->done)
    nm_core_wait_flag(nm_mpi.core, &s->done, nm_core_time_ns(nm_mpi.core) + NM_MPI_COLL_FAST_WAIT_NS);
  while (!s->done) {
    nm_mpi_coll_poll_others();
    if (!s->done)
      nm_core_wait(nm_mpi.core, nm_core_time_ns(nm_mpi.core) + NM_MPI_COLL_SLICE_NS);
  }
  err = s->err;
  nm_mpi_coll_sched_free(s);
  return err;
}

/* ---------------------------------------------------------------- as an MPI request */

static void nm_mpi_coll_request_status(struct nm_mpi_request_s *r, int err)
{
  /* a collective's status is empty (MPI-3.1 section 5.12) */
  r->status.MPI_SOURCE = MPI_ANY_SOURCE;
  r->status.MPI_TAG = MPI_ANY_TAG;
  r->status.MPI_ERROR = err;
  r->status.nm_cancelled = 0;
  r->status.nm_count = 0;
}

static int nm_mpi_coll_request_progress(struct nm_mpi_request_s *r)
{
  nm_mpi_coll_sched_t *s = r->state;
  if (!s)
    return 1;
  if (!s->done)
    nm_core_progress(nm_mpi.core);
  if (!s->done)
    return 0;
  nm_mpi_coll_request_status(r, s->err);
  return s->err ? -s->err : 1;
}

static void nm_mpi_coll_request_release(struct nm_mpi_request_s *r)
{
  nm_mpi_coll_sched_t *s = r->state;
  r->state = NULL;
  if (!s)
    return;
  if (s->done)
    nm_mpi_coll_sched_free(s);
  else
    s->orphan = 1; /* nmad still holds its requests: it frees itself when done */
}

int nm_mpi_coll_sched_request(nm_mpi_coll_sched_t *s, MPI_Request *req)
{
  struct nm_mpi_request_s *r = NULL;
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_COLL, &r);
  int err;

  *req = MPI_REQUEST_NULL;
  if (h == MPI_REQUEST_NULL || !r) {
    nm_mpi_coll_sched_free(s);
    return MPI_ERR_NO_MEM;
  }
  err = nm_mpi_coll_sched_start(s);
  if (err) {
    r->state = NULL;
    r->progress = NULL;
    r->release = NULL;
    nm_mpi_request_release(&h);
    return err;
  }
  r->kind = NM_MPI_REQ_COLL;
  r->comm = s->comm;
  r->active = 1;
  r->persistent = 0;
  r->state = s;
  r->progress = nm_mpi_coll_request_progress;
  r->release = nm_mpi_coll_request_release;
  nm_mpi_coll_request_status(r, MPI_SUCCESS);
  *req = h;
  return MPI_SUCCESS;
}
