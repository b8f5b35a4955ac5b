/**
 * @file mpi_coll_sched.c
 * @brief The schedule engine of the MPI shim's collectives (see mpi_coll_sched.h): rounds of local operations
 * and nmad point-to-point messages, advanced from request monitors.
 *
 * The rounds run on collectives' native schedule engine (nm_coll_sched.h: advancing from request monitors, the
 * guard count, self-freeing when orphaned); this file adds what MPI needs: gates from communicator ranks, the
 * shim's scratch pool, datatype and operator references held until release, pack / unpack / reduction as local
 * operations, MPI error classes, and the MPI request wrapper.
 *
 * Lifetime: the MPI request may be released (MPI_Request_free) before the schedule is done; the native schedule
 * then frees itself, and through its free hook this wrapper, when its last round completes.
 */
#include "mpi_coll_sched.h"
#include <stdlib.h>
#include <string.h>

/** Blocking collectives: wait on their completion flag this long (spin, then yield), then block in the drivers
 *  by slices of NM_MPI_COLL_SLICE_NS, polling the requests of other families in between. */
#define NM_MPI_COLL_FAST_WAIT_NS 10000000ULL
#define NM_MPI_COLL_SLICE_NS 1000000ULL

/** What an MPI schedule holds until it is freed: a scratch buffer of the shim's pool, a datatype reference or a
 *  reduction operator reference. Nodes come from the native schedule's own memory (nm_coll_sched_alloc()), which
 *  it frees after the free hook ran. */
struct nm_mpi_coll_hold_s {
  struct nm_mpi_coll_hold_s *next;
  void *scratch;   /* with len: nm_mpi_scratch_get() buffer */
  size_t len;
  MPI_Datatype dt; /* MPI_DATATYPE_NULL or a held reference */
  MPI_Op op;       /* MPI_OP_NULL or a held reference */
};

/** An MPI schedule: a native one (collectives/nm_coll_sched.c) plus what MPI attaches to it, released by the
 *  native schedule's free hook, so that an orphaned schedule (MPI_Request_free) takes it along when done. The
 *  struct itself lives in the native schedule's memory. */
struct nm_mpi_coll_sched_s {
  nm_coll_sched_t *ns;
  struct nm_mpi_comm_s *c;  /* used while building only */
  MPI_Comm comm;
  struct nm_mpi_coll_hold_s *holds;
};

/* ---------------------------------------------------------------- building */

void nm_mpi_coll_sched_set_error(nm_mpi_coll_sched_t *s, int err)
{
  nm_coll_sched_set_error(s->ns, err);
}

/** A new hold node (NULL on failure, then recorded as MPI_ERR_NO_MEM). */
static struct nm_mpi_coll_hold_s *nm_mpi_coll_hold(nm_mpi_coll_sched_t *s)
{
  struct nm_mpi_coll_hold_s *h = nm_coll_sched_alloc(s->ns, sizeof(*h));
  if (!h) {
    nm_mpi_coll_sched_set_error(s, MPI_ERR_NO_MEM);
    return NULL;
  }
  *h = (struct nm_mpi_coll_hold_s){s->holds, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL};
  s->holds = h;
  return h;
}

/** Free hook of the native schedule: give back what MPI holds. */
static void nm_mpi_coll_sched_free(void *ref)
{
  nm_mpi_coll_sched_t *s = ref;
  for (struct nm_mpi_coll_hold_s *h = s->holds; h; h = h->next) {
    if (h->op != MPI_OP_NULL)
      nm_mpi_op_release(h->op);
    if (h->scratch)
      nm_mpi_scratch_put(h->scratch, h->len);
    if (h->dt != MPI_DATATYPE_NULL)
      nm_mpi_datatype_unref(h->dt);
  }
}

nm_mpi_coll_sched_t *nm_mpi_coll_sched_new(struct nm_mpi_comm_s *c, MPI_Comm comm, int blocking)
{
  /* tags >= 2^31 belong to mpi_comm.c */
  uint32_t tag = blocking ? NM_MPI_COLL_TAG_BLOCKING : c->coll_seq % NM_MPI_COLL_TAG_BLOCKING;
  nm_coll_sched_t *ns = nm_coll_sched_new_cached(nm_mpi.session, nm_mpi_coll_tag(c, tag), &nm_mpi.sched_cache);
  nm_mpi_coll_sched_t *s = ns ? nm_coll_sched_alloc(ns, sizeof(*s)) : NULL;
  if (!s) {
    nm_coll_sched_destroy(ns);
    return NULL;
  }
  if (!blocking)
    c->coll_seq++; /* the sequence tag is taken only once the schedule exists */
  *s = (nm_mpi_coll_sched_t){ns, c, comm, NULL};
  nm_coll_sched_on_free(ns, nm_mpi_coll_sched_free, s);
  return s;
}

void nm_mpi_coll_sched_destroy(nm_mpi_coll_sched_t *s)
{
  if (s)
    nm_coll_sched_destroy(s->ns);
}

nm_coll_sched_t *nm_mpi_coll_sched_native(nm_mpi_coll_sched_t *s) { return s->ns; }

void *nm_mpi_coll_sched_alloc(nm_mpi_coll_sched_t *s, size_t len)
{
  if (len == 0)
    return NULL;
  struct nm_mpi_coll_hold_s *h = nm_mpi_coll_hold(s);
  void *p = h ? nm_mpi_scratch_get(len) : NULL;
  if (!p) {
    nm_mpi_coll_sched_set_error(s, MPI_ERR_NO_MEM);
    return NULL;
  }
  h->scratch = p;
  h->len = len;
  return p;
}

void nm_mpi_coll_sched_hold_type(nm_mpi_coll_sched_t *s, MPI_Datatype dt)
{
  struct nm_mpi_coll_hold_s *h = nm_mpi_coll_hold(s);
  if (h) {
    nm_mpi_datatype_ref(dt);
    h->dt = dt;
  }
}

/** Gate of a member, or NULL (failure recorded). */
static nm_gate_t nm_mpi_coll_sched_gate(nm_mpi_coll_sched_t *s, int peer)
{
  nm_gate_t gate = nm_mpi_comm_gate(s->c, peer);
  if (!gate)
    nm_mpi_coll_sched_set_error(s, MPI_ERR_RANK);
  return gate;
}

void nm_mpi_coll_sched_send(nm_mpi_coll_sched_t *s, int round, int peer, const void *buf, size_t len)
{
  nm_gate_t gate = nm_mpi_coll_sched_gate(s, peer);
  if (gate)
    nm_coll_sched_send(s->ns, round, gate, buf, len, 0);
}

void nm_mpi_coll_sched_recv(nm_mpi_coll_sched_t *s, int round, int peer, void *buf, size_t len)
{
  nm_gate_t gate = nm_mpi_coll_sched_gate(s, peer);
  if (gate)
    nm_coll_sched_recv(s->ns, round, gate, buf, len);
}

void nm_mpi_coll_sched_copy(nm_mpi_coll_sched_t *s, int round, void *dst, const void *src, size_t len)
{
  nm_coll_sched_copy(s->ns, round, dst, src, len);
}

/* The MPI shim's local operations (nm_coll_local_s fields: see each builder below). Errors are MPI classes. */
static int nm_mpi_coll_do_pack(const struct nm_coll_local_s *a)
{
  nm_mpi_datatype_pack(a->p, a->src, a->count, a->dst);
  return 0;
}

static int nm_mpi_coll_do_unpack(const struct nm_coll_local_s *a)
{
  nm_mpi_datatype_unpack(a->p, a->src, (MPI_Count)a->len, a->dst, a->count);
  return 0;
}

static int nm_mpi_coll_do_reduce(const struct nm_coll_local_s *a)
{
  return nm_mpi_op_apply((MPI_Op)a->i[0], a->src, a->dst, (int)a->count, (MPI_Datatype)a->i[1]);
}

void nm_mpi_coll_sched_pack(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d, const void *buf,
                            MPI_Count count, void *out)
{
  if (count == 0)
    return;
  struct nm_coll_local_s a = {.src = buf, .dst = out, .count = count, .p = d};
  nm_coll_sched_local(s->ns, round, nm_mpi_coll_do_pack, &a);
}

void nm_mpi_coll_sched_unpack(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d, const void *in,
                              MPI_Count bytes, void *buf, MPI_Count count)
{
  if (count == 0 || bytes == 0)
    return;
  struct nm_coll_local_s a = {.src = in, .dst = buf, .len = (size_t)bytes, .count = count, .p = d};
  nm_coll_sched_local(s->ns, round, nm_mpi_coll_do_unpack, &a);
}

void nm_mpi_coll_sched_reduce(nm_mpi_coll_sched_t *s, int round, MPI_Op mop, const void *in, void *inout,
                              int count, MPI_Datatype dt)
{
  if (count == 0)
    return;
  struct nm_mpi_coll_hold_s *h = nm_mpi_coll_hold(s);
  if (!h)
    return;
  nm_mpi_op_hold(mop); /* the application may free a user op before the collective completes */
  h->op = mop;
  struct nm_coll_local_s a = {.src = in, .dst = inout, .count = count, .i = {(intptr_t)mop, (intptr_t)dt}};
  nm_coll_sched_local(s->ns, round, nm_mpi_coll_do_reduce, &a);
}

void nm_mpi_coll_sched_hold_op(nm_mpi_coll_sched_t *s, MPI_Op mop)
{
  struct nm_mpi_coll_hold_s *h = nm_mpi_coll_hold(s);
  if (h) {
    nm_mpi_op_hold(mop);
    h->op = mop;
  }
}

/* ---------------------------------------------------------------- running */

int nm_mpi_coll_err_of(int err)
{
  if (err >= 0)
    return err;
  if (err == -NM_ETRUNCATED)
    return MPI_ERR_TRUNCATE;
  return nm_mpi_from_nm_err(err);
}

int nm_mpi_coll_sched_start(nm_mpi_coll_sched_t *s)
{
  return nm_mpi_coll_err_of(nm_coll_sched_start(s->ns)); /* frees s on error */
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

void nm_mpi_coll_wait_flag(volatile int *done, uint64_t spin_ns)
{
  /* spin then yield on the completion flag (nm_core.h), then block in the drivers by short slices, polling the
   * other families' requests between them (DESIGN.md rule 2) */
  if (!*done)
    nm_core_wait_flag_for(nm_mpi.core, done, NM_MPI_COLL_FAST_WAIT_NS, spin_ns);
  while (!*done) {
    nm_mpi_coll_poll_others();
    if (!*done)
      nm_core_wait(nm_mpi.core, nm_core_time_ns(nm_mpi.core) + NM_MPI_COLL_SLICE_NS);
  }
}

int nm_mpi_coll_sched_run(nm_mpi_coll_sched_t *s)
{
  nm_coll_sched_t *ns = s->ns;
  int err = nm_mpi_coll_sched_start(s);
  if (err)
    return err;
  nm_mpi_coll_wait_flag(nm_coll_sched_done_flag(ns), nm_coll_sched_spin(ns));
  nm_core_end_burst(nm_mpi.core); /* its last sends may have left at post: the next collective's go at post too */
  err = nm_mpi_coll_err_of(nm_coll_sched_error(ns));
  nm_coll_sched_release(ns); /* done: frees it and s */
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
  volatile int *done = nm_coll_sched_done_flag(s->ns);
  if (!*done)
    nm_core_progress(nm_mpi.core);
  if (!*done)
    return 0;
  int err = nm_mpi_coll_err_of(nm_coll_sched_error(s->ns));
  nm_mpi_coll_request_status(r, err);
  return err ? -err : 1;
}

static void nm_mpi_coll_request_release(struct nm_mpi_request_s *r)
{
  nm_mpi_coll_sched_t *s = r->state;
  r->state = NULL;
  if (s)
    nm_coll_sched_release(s->ns); /* if not done, nmad still holds its requests: it frees itself when done */
}

int nm_mpi_coll_sched_request(nm_mpi_coll_sched_t *s, MPI_Request *req)
{
  struct nm_mpi_request_s *r = NULL;
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_COLL, &r);
  int err;

  *req = MPI_REQUEST_NULL;
  if (h == MPI_REQUEST_NULL || !r) {
    nm_mpi_coll_sched_destroy(s);
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
