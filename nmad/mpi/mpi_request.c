/**
 * @file mpi_request.c
 * @brief MPI requests: the request table, starting point-to-point transfers on nmad's sendrecv interface,
 *        completion (status, unpacking), and every wait/test variant, cancel, free, persistent start.
 *
 * Waiting never busy-polls forever (DESIGN.md rule 2): a single request is waited for with nm_core_wait_flag()
 * on its nmad request's completion flag (spin briefly, yield, then block in the drivers); several requests
 * (Waitany/Waitsome) with one flag that every request's monitor raises; while non-blocking collectives are
 * active, with nm_core_wait() (returns at every nmad event) followed by a pass over their progress functions,
 * so that they advance while the application blocks in any MPI call (MPI-3.1 3.7.4, progress rule).
 * See nm_mpi_p2p.h for the life cycle of a request.
 */
#include "nm_mpi_p2p.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define NM_MPI_FIRST_REQUEST 1
#define NM_MPI_FIRST_MESSAGE (MPI_MESSAGE_NO_PROC + 1)
/* Waits that must call progress functions (nm_mpi_wait_event): spin this long, then yield, then block in the
 * drivers at most NM_MPI_COLL_POLL_NS at a time (progress functions also run after every nmad event). */
#define NM_MPI_SPIN_NS 20000ULL
#define NM_MPI_YIELD_NS 10000000ULL
#define NM_MPI_COLL_POLL_NS 1000000ULL

/* ---------------------------------------------------------------- statuses */

void nm_mpi_status_empty(MPI_Status *s)
{
  s->MPI_SOURCE = MPI_ANY_SOURCE;
  s->MPI_TAG = MPI_ANY_TAG;
  s->MPI_ERROR = MPI_SUCCESS;
  s->nm_cancelled = 0;
  s->nm_count = 0;
}

void nm_mpi_status_proc_null(MPI_Status *s)
{
  nm_mpi_status_empty(s);
  s->MPI_SOURCE = MPI_PROC_NULL;
}

int nm_mpi_source_rank(MPI_Comm comm, nm_gate_t gate)
{
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  int rank = -1;
  if (c)
    rank = nm_mpi_comm_rank_of_gate(c, gate);
  else if (nm_launcher_get_rank_of_gate(nm_mpi.launcher, gate, &rank))
    rank = -1;
  return rank < 0 ? MPI_ANY_SOURCE : rank;
}

/* ---------------------------------------------------------------- the table */

/* Request objects are recycled: a released request keeps its slot with kind 0 (free) and goes on the free list
 * nm_mpi.request_free, so that the next claim takes it in O(1) without malloc/free on the fast path (DESIGN.md
 * rule 4), last freed first (its cache lines are still warm), and a stale handle is still recognized as invalid
 * (nm_mpi_request_get() returns NULL for a free object). The objects are freed by nm_mpi_request_finalize(). */

static inline struct nm_mpi_request_s *nm_mpi_request_slot(int h)
{
  return (struct nm_mpi_request_s *)nm_mpi.requests.obj[h];
}

MPI_Request nm_mpi_request_new(int kind, struct nm_mpi_request_s **out)
{
  struct nm_mpi_request_s *r = nm_mpi_request_take(kind);
  if (out)
    *out = r;
  if (!r)
    return MPI_REQUEST_NULL;
  /* Every field but the nmad request is set here, once: nreq (192 bytes) is initialised by
   * nm_mpi_request_post(), and read only while the request is posted (active, not completed). A recycled
   * object's tmp is NULL already (nm_mpi_request_destroy). */
  r->persistent = 0;
  r->active = 1;
  r->user_freed = 0;
  r->mode = NM_MPI_MODE_STANDARD;
  r->comm = MPI_COMM_NULL;
  r->datatype = MPI_DATATYPE_NULL;
  r->count = 0;
  r->buf = NULL;
  r->peer = MPI_PROC_NULL;
  r->tag = 0;
  r->prio = 0;
  nm_mpi_status_empty(&r->status);
  r->completed = kind == NM_MPI_REQ_DONE;
  r->plain = 0;
  r->progress = NULL;
  r->release = NULL;
  r->state = NULL;
  return r->handle;
}

/* The table is read directly (it is ours): no call on the fast path. */
static inline struct nm_mpi_request_s *nm_mpi_request_lookup(MPI_Request h)
{
  if (h < NM_MPI_FIRST_REQUEST || h >= nm_mpi.requests.n)
    return NULL;
  struct nm_mpi_request_s *r = nm_mpi_request_slot(h);
  return r && r->kind ? r : NULL;
}

struct nm_mpi_request_s *nm_mpi_request_get(MPI_Request h)
{
  return nm_mpi_request_lookup(h);
}

static inline int nm_mpi_request_is_p2p(const struct nm_mpi_request_s *r)
{
  return r->kind == NM_MPI_REQ_SEND || r->kind == NM_MPI_REQ_RECV;
}

/* A buffered send's detached transfer linked with its application request (MPI_Ibsend; see below). */
static int nm_mpi_bsend_is_linked(const struct nm_mpi_request_s *t)
{
  const struct nm_mpi_request_s *u = t->state;
  return t->kind == NM_MPI_REQ_SEND && t->mode == NM_MPI_MODE_BUFFERED && u && u->state == t;
}

/* Release what a request holds besides its transfer (r->release: a buffered send's link), once. */
static inline void nm_mpi_request_let_go(struct nm_mpi_request_s *r)
{
  if (r->release) {
    r->release(r);
    r->release = NULL; /* never run twice, and a recycled object never carries a stale one */
  }
}

/* Give a request object back (no nmad request refers to it any more). */
static inline __attribute__((always_inline)) void nm_mpi_request_destroy(struct nm_mpi_request_s *r)
{
  if (r->kind == NM_MPI_REQ_COLL)
    nm_mpi.n_coll_reqs--;
  if (r->mode == NM_MPI_MODE_BUFFERED && nm_mpi_bsend_is_linked(r))
    ((struct nm_mpi_request_s *)r->state)->state = NULL; /* finalize: its application request goes after it */
  nm_mpi_request_let_go(r);
  /* Point-to-point and persistent requests (MPI_Bsend_init's is of kind DONE) hold a reference on a derived
   * datatype; predefined types are not counted. */
  if ((nm_mpi_request_is_p2p(r) || r->persistent) && r->datatype >= NM_MPI_PREDEFINED_TYPES)
    nm_mpi_datatype_unref(r->datatype);
  if (r->tmp) {
    free(r->tmp);
    r->tmp = NULL;
  }
  nm_mpi_request_recycle(r);
}

/* nm_mpi_request_release() of a request whose object the caller holds (no second look-up). */
static inline __attribute__((always_inline)) void nm_mpi_request_put(MPI_Request *handle,
                                                                     struct nm_mpi_request_s *r)
{
  if (r->persistent && !r->user_freed) {
    r->active = 0; /* inactive, handle kept (MPI-3.1 3.9) */
    return;
  }
  nm_mpi_request_destroy(r);
  *handle = MPI_REQUEST_NULL;
}

void nm_mpi_request_release(MPI_Request *handle)
{
  struct nm_mpi_request_s *r = nm_mpi_request_lookup(*handle);
  if (r)
    nm_mpi_request_put(handle, r);
  else
    *handle = MPI_REQUEST_NULL;
}

/* ---------------------------------------------------------------- completion */

/* Status of the completed transfer of point-to-point request @p r, every field (MPI-3.1 3.2.5; a cancelled send or
 * receive completes successfully with nothing transferred, 3.8.4). @return the received length (0 for sends). */
static inline __attribute__((always_inline)) nm_len_t nm_mpi_transfer_status(struct nm_mpi_request_s *r,
                                                                             MPI_Status *s)
{
  int err = r->nreq.status;
  nm_len_t len = 0;
  s->MPI_ERROR = __builtin_expect(err == 0, 1) ? MPI_SUCCESS : nm_mpi_from_nm_err(err);
  s->MPI_SOURCE = r->peer;
  s->MPI_TAG = r->tag;
  s->nm_cancelled = 0;
  if (__builtin_expect(err == -NM_ECANCELED, 0)) {
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    s->nm_cancelled = 1;
  } else if (r->kind == NM_MPI_REQ_RECV) {
    nm_gate_t gate = NULL;
    nm_tag_t tag = 0;
    if (r->peer == MPI_ANY_SOURCE && nm_sr_recv_source(nm_mpi.session, &r->nreq, &gate) == 0 && gate)
      s->MPI_SOURCE = nm_mpi_source_rank(r->comm, gate);
    if (r->tag == MPI_ANY_TAG && nm_sr_recv_get_tag(nm_mpi.session, &r->nreq, &tag) == 0)
      s->MPI_TAG = (int)(uint32_t)tag;
    if (__builtin_expect(err == 0, 1))
      len = r->nreq.msg_len; /* matched and not truncated: the whole message arrived */
    else
      nm_sr_get_size(nm_mpi.session, &r->nreq, &len);
  }
  s->nm_count = (long long)len;
  return len;
}

/* The nmad request of a point-to-point MPI request completed: fill the status, unpack, free temporaries. */
static inline __attribute__((always_inline)) void nm_mpi_request_complete(struct nm_mpi_request_s *r)
{
  nm_len_t len = nm_mpi_transfer_status(r, &r->status);
  if (r->tmp) {
    if (len) {
      struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(r->datatype);
      if (d)
        nm_mpi_datatype_unpack(d, r->tmp, (MPI_Count)len, r->buf, r->count);
    }
    free(r->tmp);
    r->tmp = NULL;
  }
  r->completed = 1;
  r->plain = 0;
}

/* The latency path of the waits: a point-to-point request that holds nothing but its transfer (not persistent, no
 * packed temporary) and is not complete yet, waited for while no collective needs driving. When its transfer
 * succeeds, its status goes straight to the application (nm_mpi_plain_status) and the request is released. */
static inline int nm_mpi_request_is_plain(const struct nm_mpi_request_s *r)
{
  return !nm_mpi.n_coll_reqs && r->plain;
}

/* Wait for the transfer of a plain request. @return 1 when it succeeded (the plain completion applies). */
static inline __attribute__((always_inline)) int nm_mpi_plain_wait(struct nm_mpi_request_s *r)
{
  if (!r->nreq.completed)
    nm_core_wait_flag(nm_mpi.core, &r->nreq.completed, 0); /* no deadline: returns once it is set */
  return __builtin_expect(r->nreq.status == 0, 1);
}

/* Status of a plain request whose transfer succeeded, into @p st (may be MPI_STATUS_IGNORE); MPI_ERROR is left
 * alone (MPI-3.1 3.2.5 and 3.7.5: only set when an operation fails). r->status is not filled: the caller
 * releases the request. */
static inline __attribute__((always_inline)) void nm_mpi_plain_status(struct nm_mpi_request_s *r, MPI_Status *st)
{
  if (st != MPI_STATUS_IGNORE) {
    int err = st->MPI_ERROR;
    nm_mpi_transfer_status(r, st);
    st->MPI_ERROR = err;
  }
}

/* The object of handle @p h when it is a plain request (no check of the handle beyond that: other requests, and
 * invalid handles, go the general way, which checks them). The caller has seen no collective to drive. */
static inline __attribute__((always_inline)) struct nm_mpi_request_s *nm_mpi_plain_lookup(MPI_Request h)
{
  if (h < NM_MPI_FIRST_REQUEST || h >= nm_mpi.requests.n)
    return NULL;
  struct nm_mpi_request_s *r = nm_mpi_request_slot(h);
  return r && r->plain ? r : NULL;
}

/* Release a plain request after nm_mpi_plain_status(): it holds a datatype reference at most. */
static inline __attribute__((always_inline)) void nm_mpi_plain_release(MPI_Request *handle,
                                                                       struct nm_mpi_request_s *r)
{
  if (r->datatype >= NM_MPI_PREDEFINED_TYPES)
    nm_mpi_datatype_unref(r->datatype);
  nm_mpi_request_recycle(r);
  *handle = MPI_REQUEST_NULL;
}

/* ---- buffered sends: the application's request and the detached transfer (MPI-3.1 3.6) ----
 * MPI_Ibsend's request completes once the data is copied; the transfer goes on in a detached request (its monitor
 * destroys it). The two are linked (u->state = t, t->state = u) so that MPI_Cancel can still withdraw the
 * transfer: a linked transfer outlives its completion until u is released. */

static void nm_mpi_bsend_unlink(struct nm_mpi_request_s *u)
{
  struct nm_mpi_request_s *t = u->state;
  u->state = NULL;
  if (t && t->state == u) {
    t->state = NULL;
    if (t->completed)
      nm_mpi_request_destroy(t); /* kept for u only; else its monitor destroys it when it completes */
  }
}

void nm_mpi_bsend_link(struct nm_mpi_request_s *u, struct nm_mpi_request_s *t)
{
  u->state = t;
  t->state = u;
  u->release = nm_mpi_bsend_unlink;
}

/* Progress of a buffered send's request whose transfer is being withdrawn: done once the outcome is known. */
static int nm_mpi_bsend_outcome(struct nm_mpi_request_s *u)
{
  struct nm_mpi_request_s *t = u->state;
  if (!t->completed)
    return 0;
  u->status.nm_cancelled = t->status.nm_cancelled;
  return 1;
}

/* MPI_Cancel of a buffered send's request: withdraw its transfer if no receive matched it yet. */
static void nm_mpi_bsend_cancel(struct nm_mpi_request_s *u)
{
  struct nm_mpi_request_s *t = u->state;
  if (!t || !nm_mpi_bsend_is_linked(t) || u->progress || nm_sr_scancel(nm_mpi.session, &t->nreq) != 0)
    return; /* not linked, asked before, or too late (matched): the send stands */
  t->completed = 0; /* its monitor processes the completion again, with the outcome */
  nm_mpi_request_watch(t);
  u->completed = 0;
  u->progress = nm_mpi_bsend_outcome;
}

/* Monitor of the point-to-point nmad requests that need one (nm_mpi_request_watch): wakes a multi-request wait,
 * destroys freed requests. */
static void nm_mpi_request_notify(nm_sr_request_t *req, unsigned event, void *ref)
{
  (void)event;
  struct nm_mpi_request_s *r = ref;
  volatile int *waiter = nm_sr_request_get_ref(req);
  if (waiter)
    *waiter = 1;
  if (r->user_freed) {
    nm_mpi_request_complete(r);
    if (!nm_mpi_bsend_is_linked(r))
      nm_mpi_request_destroy(r);
    else if (((struct nm_mpi_request_s *)r->state)->user_freed)
      nm_mpi_request_destroy(r->state); /* its application request was freed meanwhile: both go (unlink) */
  }
}

void nm_mpi_request_watch(struct nm_mpi_request_s *r)
{
  unsigned event = r->kind == NM_MPI_REQ_SEND ? NM_EVENT_SEND_COMPLETED : NM_EVENT_RECV_COMPLETED;
  /* Cannot be refused (-NM_EALREADY): the caller saw the transfer incomplete and no progress ran since. */
  nm_sr_request_set_monitor(nm_mpi.session, &r->nreq, event, nm_mpi_request_notify, r);
}

void nm_mpi_request_detach(struct nm_mpi_request_s *r)
{
  if (nm_mpi_request_check(r)) {
    if (nm_mpi_bsend_is_linked(r))
      r->user_freed = 1; /* kept until its application request is released */
    else
      nm_mpi_request_destroy(r);
    return;
  }
  r->user_freed = 1; /* the transfer goes on; its monitor destroys the request when it completes */
  if (nm_mpi_request_is_p2p(r))
    nm_mpi_request_watch(r);
  /* else a buffered send's request waiting for its withdrawn transfer: destroyed with it (notify) */
}

int nm_mpi_request_check(struct nm_mpi_request_s *r)
{
  if (r->completed || !r->active)
    return 1;
  switch (r->kind) {
  case NM_MPI_REQ_SEND:
  case NM_MPI_REQ_RECV:
    if (!r->nreq.completed)
      return 0;
    nm_mpi_request_complete(r);
    return 1;
  case NM_MPI_REQ_COLL: {
    int rc = r->progress ? r->progress(r) : 1;
    if (rc == 0)
      return 0;
    if (rc < 0)
      r->status.MPI_ERROR = -rc;
    r->completed = 1;
    return 1;
  }
  default:
    if (r->progress && !r->progress(r)) /* a buffered send whose transfer is being withdrawn */
      return 0;
    r->completed = 1;
    return 1;
  }
}

/* Progress every active non-blocking collective once. @return how many are still running. */
static int nm_mpi_progress_colls(void)
{
  int running = 0;
  if (!nm_mpi.n_coll_reqs) /* the common case: point-to-point only, no scan of the table */
    return 0;
  /* The table may grow while progress functions run (they create requests): index it afresh each time. */
  for (int h = NM_MPI_FIRST_REQUEST; h < nm_mpi.requests.n; h++) {
    struct nm_mpi_request_s *r = nm_mpi_request_slot(h);
    if (r && r->kind == NM_MPI_REQ_COLL && r->active && !r->completed && !nm_mpi_request_check(r))
      running++;
  }
  return running;
}

void nm_mpi_poll(void)
{
  nm_core_progress(nm_mpi.core);
  nm_mpi_progress_colls();
}

/* One step of a wait that cannot sleep on a single flag (collectives to drive, probes, drains): a progress pass;
 * when nothing happened, spin for a while, then yield the processor between passes, then block in the drivers
 * until an event or a short deadline (DESIGN.md rule 2: never busy-poll forever). */
void nm_mpi_wait_event(struct nm_mpi_waiter_s *w)
{
  int n = nm_core_progress(nm_mpi.core);
  nm_mpi_progress_colls();
  if (n > 0) {
    w->idle_since = 0;
    return;
  }
  uint64_t now = nm_core_time_ns(nm_mpi.core);
  if (!w->idle_since) {
    w->idle_since = now;
    return;
  }
  uint64_t idle = now - w->idle_since;
  /* MPI_THREAD_MULTIPLE: no spin with the lock held (the other threads could not post meanwhile) */
  if (idle < NM_MPI_SPIN_NS && nm_mpi.thread_level < MPI_THREAD_MULTIPLE)
    return;
  if (idle < NM_MPI_YIELD_NS) {
    nm_core_yield(nm_mpi.core); /* ranks sharing this core run meanwhile; other threads too (it lets the lock go) */
    return;
  }
  nm_core_wait(nm_mpi.core, now + NM_MPI_COLL_POLL_NS);
}

int nm_mpi_request_test(struct nm_mpi_request_s *r)
{
  if (!r->completed && r->active && nm_mpi_request_is_p2p(r) && !r->nreq.completed)
    nm_core_progress(nm_mpi.core);
  return nm_mpi_request_check(r);
}

/* The general wait: collectives to drive meanwhile, or a request that is not a transfer. */
static void nm_mpi_request_wait_driving(struct nm_mpi_request_s *r)
{
  struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
  while (!nm_mpi_request_check(r)) {
    int colls = nm_mpi_progress_colls();
    if (nm_mpi_request_check(r))
      break;
    if (colls || !nm_mpi_request_is_p2p(r))
      nm_mpi_wait_event(&w);
    else /* the common case: sleep on the request's own completion flag */
      nm_core_wait_flag(nm_mpi.core, &r->nreq.completed, 0);
  }
}

/* nm_mpi_request_wait(), inlined into Wait and Waitall. */
static inline __attribute__((always_inline)) void nm_mpi_request_wait_inline(struct nm_mpi_request_s *r)
{
  if (__builtin_expect(!nm_mpi.n_coll_reqs && nm_mpi_request_is_p2p(r), 1)) {
    /* The latency path: no collective to drive, sleep on the transfer's own completion flag. */
    if (r->completed || !r->active)
      return;
    if (!r->nreq.completed)
      nm_core_wait_flag(nm_mpi.core, &r->nreq.completed, 0); /* no deadline: returns once it is set */
    nm_mpi_request_complete(r);
    return;
  }
  nm_mpi_request_wait_driving(r);
}

void nm_mpi_request_wait(struct nm_mpi_request_s *r)
{
  nm_mpi_request_wait_inline(r);
}

int nm_mpi_request_wait_status(struct nm_mpi_request_s *r, MPI_Status *status)
{
  if (nm_mpi_request_is_plain(r) && nm_mpi_plain_wait(r)) { /* the latency path */
    nm_mpi_plain_status(r, status);
    return MPI_SUCCESS;
  }
  nm_mpi_request_wait_inline(r);
  nm_mpi_status_out(status, &r->status, 0);
  return r->status.MPI_ERROR;
}

/* None of the @p n requests is complete: block until one of them may be. */
static void nm_mpi_wait_any_event(struct nm_mpi_request_s **rs, int n, struct nm_mpi_waiter_s *w)
{
  if (nm_mpi_progress_colls()) {
    nm_mpi_wait_event(w);
    return;
  }
  volatile int flag = 0;
  int armed = 0;
  for (int i = 0; i < n; i++) {
    struct nm_mpi_request_s *r = rs[i];
    if (!r || !r->active)
      continue;
    /* Completed meanwhile (a collective in the pass above, a monitor), or not a transfer of ours: let the caller
     * check again rather than sleep on a flag nobody will raise. */
    if (r->completed || !nm_mpi_request_is_p2p(r) || r->nreq.completed) {
      flag = 1;
      break;
    }
    nm_mpi_request_watch(r); /* its monitor raises the flag */
    nm_sr_request_set_ref(&r->nreq, (void *)&flag);
    armed++;
  }
  if (!flag && armed)
    nm_core_wait_flag(nm_mpi.core, &flag, 0);
  for (int i = 0; i < n; i++)
    if (rs[i] && nm_mpi_request_is_p2p(rs[i]))
      nm_sr_request_set_ref(&rs[i]->nreq, NULL);
}

/* ---------------------------------------------------------------- starting */

int nm_mpi_request_start(struct nm_mpi_request_s *r)
{
  if (!nm_mpi_request_is_p2p(r)) {
    r->active = 1;
    return MPI_SUCCESS;
  }
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(r->comm);
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(r->datatype);
  if (!c)
    return MPI_ERR_COMM;
  if (!d)
    return MPI_ERR_TYPE;
  return nm_mpi_request_post(r, c, d); /* r->tmp is NULL: a completion frees it, and only inactive requests start */
}

NM_MPI_ALIAS(Start)
int PMPI_Start(MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_request_s *r = nm_mpi_request_get(*request);
  if (!r || !r->persistent || r->active)
    return nm_mpi_error(r ? r->comm : MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  int err;
  if (r->kind == NM_MPI_REQ_DONE && r->mode == NM_MPI_MODE_BUFFERED) { /* MPI_Bsend_init */
    /* The copy travels on a detached request linked with this one (for MPI_Cancel), which completes as soon as
     * the data is buffered. The previous start's transfer, if still linked, is let go first. */
    nm_mpi_request_let_go(r);
    r->progress = NULL;
    err = nm_mpi_bsend_post(r->buf, r->count, r->datatype, r->peer, r->tag, r->comm, r);
    if (err == MPI_SUCCESS) {
      r->active = 1;
      nm_mpi_status_empty(&r->status);
      r->completed = 1;
    }
  } else {
    err = nm_mpi_request_start(r);
  }
  return err ? nm_mpi_error(r->comm, err, __func__) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Startall)
int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
  NM_MPI_LOCKED();
  if (count < 0 || (count && !array_of_requests))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  for (int i = 0; i < count; i++) {
    int err = PMPI_Start(&array_of_requests[i]);
    if (err)
      return err;
  }
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- wait and test */

/* Hand a completed request back: status, release, error handler. */
static inline int nm_mpi_request_return(MPI_Request *handle, struct nm_mpi_request_s *r, MPI_Status *status,
                                 const char *fn)
{
  int err = r->status.MPI_ERROR;
  MPI_Comm comm = r->comm;
  nm_mpi_status_out(status, &r->status, 0);
  nm_mpi_request_put(handle, r);
  return err ? nm_mpi_error(comm, err, fn) : MPI_SUCCESS;
}

/* The request object of an array entry: NULL for MPI_REQUEST_NULL and inactive persistent requests (both
 * count as "null" for the wait/test functions); *bad set for invalid handles. */
static inline __attribute__((always_inline)) struct nm_mpi_request_s *nm_mpi_request_entry(MPI_Request h,
                                                                                            int *bad)
{
  if (h == MPI_REQUEST_NULL)
    return NULL;
  struct nm_mpi_request_s *r = nm_mpi_request_lookup(h);
  if (!r) {
    *bad = 1;
    return NULL;
  }
  return r->active ? r : NULL;
}

NM_MPI_ALIAS(Wait)
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
  NM_MPI_LOCKED();
  if (!request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_request_s *r = nm_mpi.n_coll_reqs ? NULL : nm_mpi_plain_lookup(*request);
  if (r && nm_mpi_plain_wait(r)) { /* the latency path */
    nm_mpi_plain_status(r, status);
    nm_mpi_plain_release(request, r);
    return MPI_SUCCESS;
  }
  int bad = 0;
  r = nm_mpi_request_entry(*request, &bad);
  if (bad)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  if (!r) {
    if (status != MPI_STATUS_IGNORE)
      nm_mpi_status_empty(status);
    return MPI_SUCCESS;
  }
  nm_mpi_request_wait_inline(r);
  return nm_mpi_request_return(request, r, status, __func__);
}

NM_MPI_ALIAS(Test)
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
  NM_MPI_LOCKED();
  if (!request || !flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  int bad = 0;
  struct nm_mpi_request_s *r = nm_mpi_request_entry(*request, &bad);
  if (bad)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  if (!r) {
    *flag = 1;
    if (status != MPI_STATUS_IGNORE)
      nm_mpi_status_empty(status);
    return MPI_SUCCESS;
  }
  nm_mpi_progress_colls();
  *flag = nm_mpi_request_test(r);
  if (!*flag) {
    nm_core_idle(nm_mpi.core); /* polled in a loop: let the peer run when ranks share cores */
    return MPI_SUCCESS;
  }
  return nm_mpi_request_return(request, r, status, __func__);
}

NM_MPI_ALIAS(Request_get_status)
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
  NM_MPI_LOCKED();
  if (!flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  int bad = 0;
  struct nm_mpi_request_s *r = nm_mpi_request_entry(request, &bad);
  if (bad)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  if (!r) {
    *flag = 1;
    if (status != MPI_STATUS_IGNORE)
      nm_mpi_status_empty(status);
    return MPI_SUCCESS;
  }
  nm_mpi_progress_colls();
  *flag = nm_mpi_request_test(r);
  if (*flag) {
    nm_mpi_status_out(status, &r->status, 0);
    if (r->status.MPI_ERROR)
      return nm_mpi_error(r->comm, r->status.MPI_ERROR, __func__);
  } else {
    nm_core_idle(nm_mpi.core);
  }
  return MPI_SUCCESS;
}

/* Multiple completions: fill each completed entry's status with its error, release it; collect the first
 * failing communicator. */
static int nm_mpi_complete_entry(MPI_Request *handle, struct nm_mpi_request_s *r, MPI_Status *status,
                                 MPI_Comm *err_comm)
{
  int err = r->status.MPI_ERROR;
  if (err && *err_comm == MPI_COMM_NULL)
    *err_comm = r->comm != MPI_COMM_NULL ? r->comm : MPI_COMM_WORLD;
  if (status != MPI_STATUSES_IGNORE)
    *status = r->status;
  nm_mpi_request_put(handle, r);
  return err;
}

/* When no request failed, the MPI_ERROR fields of multiple statuses are left alone (as for single ones). */
static void nm_mpi_keep_errors(int n, MPI_Status *statuses, const int *saved)
{
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < n; i++)
      statuses[i].MPI_ERROR = saved[i];
}

static int nm_mpi_array_args(int count, MPI_Request *reqs, const char *fn)
{
  if (count < 0 || (count > 0 && !reqs))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  return MPI_SUCCESS;
}

/* Collect the request objects of an array; allocate only for large arrays. */
#define NM_MPI_SMALL_ARRAY 32
struct nm_mpi_reqs_s {
  struct nm_mpi_request_s *small[NM_MPI_SMALL_ARRAY];
  int small_int[2 * NM_MPI_SMALL_ARRAY];
  struct nm_mpi_request_s **r;
  int *done, *saved;
};

static int nm_mpi_reqs_get(struct nm_mpi_reqs_s *a, int count, MPI_Request *reqs, int *n_active)
{
  a->r = a->small;
  a->done = a->small_int;
  if (count > NM_MPI_SMALL_ARRAY) {
    struct nm_mpi_request_s **r = malloc(sizeof(*r) * (size_t)count);
    int *done = malloc(sizeof(int) * 2 * (size_t)count);
    if (!r || !done) {
      free(r);
      free(done);
      return MPI_ERR_NO_MEM;
    }
    a->r = r;
    a->done = done;
  }
  a->saved = a->done + count;
  int bad = 0;
  *n_active = 0;
  for (int i = 0; i < count; i++) {
    a->r[i] = nm_mpi_request_entry(reqs[i], &bad);
    a->done[i] = 0;
    if (a->r[i])
      (*n_active)++;
  }
  return bad ? MPI_ERR_REQUEST : MPI_SUCCESS;
}

static void nm_mpi_reqs_put(struct nm_mpi_reqs_s *a)
{
  if (a->r && a->r != a->small) {
    free(a->r);
    free(a->done);
  }
}

/* Hand back every entry of a completed Waitall/Testall. MPI_ERR_IN_STATUS semantics (MPI-3.1 3.7.5): when no
 * request failed, the MPI_ERROR fields are left alone (as for single statuses); when one did, every status
 * carries its own code (all entries completed: none is MPI_ERR_PENDING). */
static inline __attribute__((always_inline)) int nm_mpi_complete_all(int count, MPI_Request *reqs,
                                                                    struct nm_mpi_request_s **rs,
                                                                    MPI_Status *statuses, const char *fn)
{
  MPI_Comm err_comm = MPI_COMM_NULL;
  for (int i = 0; i < count; i++)
    if (rs[i] && rs[i]->status.MPI_ERROR) {
      err_comm = rs[i]->comm != MPI_COMM_NULL ? rs[i]->comm : MPI_COMM_WORLD;
      break;
    }
  const int with_error = err_comm != MPI_COMM_NULL;
  for (int i = 0; i < count; i++) {
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (rs[i]) {
      nm_mpi_status_out(st, &rs[i]->status, with_error);
      nm_mpi_request_put(&reqs[i], rs[i]);
    } else if (st != MPI_STATUS_IGNORE) {
      int e = st->MPI_ERROR;
      nm_mpi_status_empty(st);
      st->MPI_ERROR = with_error ? MPI_SUCCESS : e;
    }
  }
  return with_error ? nm_mpi_error(err_comm, MPI_ERR_IN_STATUS, fn) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Waitall)
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
  NM_MPI_LOCKED();
  int err = nm_mpi_array_args(count, array_of_requests, __func__);
  if (err)
    return err;
  /* Waiting for each in turn is enough: the core progresses all of them meanwhile, and collectives are driven
   * by every wait. Small arrays (the latency path: a receive and a send) need no bookkeeping arrays. */
  if (count <= NM_MPI_SMALL_ARRAY) {
    struct nm_mpi_request_s *rs[NM_MPI_SMALL_ARRAY];
    /* The latency path: plain requests only, whose transfers all succeed; their statuses are written straight
     * from the transfers. Anything else (or a failure) goes the general way below, which checks every handle. */
    if (!nm_mpi.n_coll_reqs) {
      int i = 0;
      while (i < count && (rs[i] = nm_mpi_plain_lookup(array_of_requests[i])))
        i++;
      if (i == count) {
        int ok = 1;
        for (i = 0; i < count; i++)
          ok &= nm_mpi_plain_wait(rs[i]);
        if (ok) {
          for (i = 0; i < count; i++) {
            nm_mpi_plain_status(rs[i], array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                                               : &array_of_statuses[i]);
            nm_mpi_plain_release(&array_of_requests[i], rs[i]);
          }
          return MPI_SUCCESS;
        }
      }
    }
    int bad = 0;
    for (int i = 0; i < count; i++)
      rs[i] = nm_mpi_request_entry(array_of_requests[i], &bad);
    if (bad)
      return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
    for (int i = 0; i < count; i++)
      if (rs[i])
        nm_mpi_request_wait_inline(rs[i]);
    return nm_mpi_complete_all(count, array_of_requests, rs, array_of_statuses, __func__);
  }
  struct nm_mpi_reqs_s a;
  int n_active;
  err = nm_mpi_reqs_get(&a, count, array_of_requests, &n_active);
  if (err) {
    nm_mpi_reqs_put(&a);
    return nm_mpi_error(MPI_COMM_WORLD, err, __func__);
  }
  for (int i = 0; i < count; i++)
    if (a.r[i])
      nm_mpi_request_wait(a.r[i]);
  err = nm_mpi_complete_all(count, array_of_requests, a.r, array_of_statuses, __func__);
  nm_mpi_reqs_put(&a);
  return err;
}

NM_MPI_ALIAS(Testall)
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
  NM_MPI_LOCKED();
  int err = nm_mpi_array_args(count, array_of_requests, __func__);
  if (err)
    return err;
  if (!flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_reqs_s a;
  int n_active;
  err = nm_mpi_reqs_get(&a, count, array_of_requests, &n_active);
  if (err) {
    nm_mpi_reqs_put(&a);
    return nm_mpi_error(MPI_COMM_WORLD, err, __func__);
  }
  nm_mpi_poll();
  int all = 1;
  for (int i = 0; i < count; i++)
    if (a.r[i] && !nm_mpi_request_check(a.r[i]))
      all = 0;
  *flag = all;
  if (!all) { /* nothing is released nor reported until everything completed (MPI-3.1 3.7.5) */
    nm_mpi_reqs_put(&a);
    nm_core_idle(nm_mpi.core);
    return MPI_SUCCESS;
  }
  err = nm_mpi_complete_all(count, array_of_requests, a.r, array_of_statuses, __func__);
  nm_mpi_reqs_put(&a);
  return err;
}

/* Shared by Waitany and Testany: @p blocking selects the wait. */
static int nm_mpi_any(int count, MPI_Request reqs[], int *indx, int *flag, MPI_Status *status, int blocking,
                      const char *fn)
{
  int err = nm_mpi_array_args(count, reqs, fn);
  if (err)
    return err;
  if (!indx || (!blocking && !flag))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  struct nm_mpi_reqs_s a;
  int n_active;
  err = nm_mpi_reqs_get(&a, count, reqs, &n_active);
  if (err) {
    nm_mpi_reqs_put(&a);
    return nm_mpi_error(MPI_COMM_WORLD, err, fn);
  }
  *indx = MPI_UNDEFINED;
  if (flag)
    *flag = 0;
  if (n_active == 0) { /* MPI-3.1 3.7.5: no active request: index MPI_UNDEFINED, empty status, flag true */
    if (flag)
      *flag = 1;
    if (status != MPI_STATUS_IGNORE)
      nm_mpi_status_empty(status);
    nm_mpi_reqs_put(&a);
    return MPI_SUCCESS;
  }
  if (!blocking)
    nm_mpi_poll();
  struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
  for (;;) {
    for (int i = 0; i < count; i++)
      if (a.r[i] && nm_mpi_request_check(a.r[i])) {
        *indx = i;
        break;
      }
    if (*indx != MPI_UNDEFINED || !blocking)
      break;
    nm_mpi_wait_any_event(a.r, count, &w);
  }
  struct nm_mpi_request_s *r = *indx != MPI_UNDEFINED ? a.r[*indx] : NULL;
  nm_mpi_reqs_put(&a);
  if (!r) { /* Testany found nothing */
    nm_core_idle(nm_mpi.core);
    return MPI_SUCCESS;
  }
  if (flag)
    *flag = 1;
  return nm_mpi_request_return(&reqs[*indx], r, status, fn);
}

NM_MPI_ALIAS(Waitany)
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
  NM_MPI_LOCKED();
  return nm_mpi_any(count, array_of_requests, indx, NULL, status, 1, __func__);
}

NM_MPI_ALIAS(Testany)
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status)
{
  NM_MPI_LOCKED();
  return nm_mpi_any(count, array_of_requests, indx, flag, status, 0, __func__);
}

/* Shared by Waitsome and Testsome. */
static int nm_mpi_some(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                       int blocking, const char *fn)
{
  int err = nm_mpi_array_args(incount, reqs, fn);
  if (err)
    return err;
  if (!outcount || (incount > 0 && !indices))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  struct nm_mpi_reqs_s a;
  int n_active;
  err = nm_mpi_reqs_get(&a, incount, reqs, &n_active);
  if (err) {
    nm_mpi_reqs_put(&a);
    return nm_mpi_error(MPI_COMM_WORLD, err, fn);
  }
  if (n_active == 0) {
    *outcount = MPI_UNDEFINED;
    nm_mpi_reqs_put(&a);
    return MPI_SUCCESS;
  }
  if (!blocking)
    nm_mpi_poll();
  int n = 0;
  struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
  for (;;) {
    for (int i = 0; i < incount; i++)
      if (a.r[i] && !a.done[i] && nm_mpi_request_check(a.r[i])) {
        a.done[i] = 1;
        n++;
      }
    if (n || !blocking)
      break;
    nm_mpi_wait_any_event(a.r, incount, &w);
  }
  /* Statuses are packed: the k-th completed request's status goes to statuses[k]. */
  MPI_Comm err_comm = MPI_COMM_NULL;
  int k = 0;
  for (int i = 0; i < incount; i++) {
    if (!a.done[i])
      continue;
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : &statuses[k];
    if (st)
      a.saved[k] = st->MPI_ERROR;
    indices[k++] = i;
    nm_mpi_complete_entry(&reqs[i], a.r[i], st, &err_comm);
  }
  *outcount = n;
  if (n == 0) /* Testsome found nothing */
    nm_core_idle(nm_mpi.core);
  if (err_comm == MPI_COMM_NULL) {
    nm_mpi_keep_errors(n, statuses, a.saved);
    nm_mpi_reqs_put(&a);
    return MPI_SUCCESS;
  }
  nm_mpi_reqs_put(&a);
  return nm_mpi_error(err_comm, MPI_ERR_IN_STATUS, fn);
}

NM_MPI_ALIAS(Waitsome)
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[])
{
  NM_MPI_LOCKED();
  return nm_mpi_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1, __func__);
}

NM_MPI_ALIAS(Testsome)
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[])
{
  NM_MPI_LOCKED();
  return nm_mpi_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0, __func__);
}

/* ---------------------------------------------------------------- free, cancel, statuses */

NM_MPI_ALIAS(Request_free)
int PMPI_Request_free(MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_request_s *r = nm_mpi_request_get(*request);
  if (!r)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  if (r->kind == NM_MPI_REQ_COLL && r->active && !nm_mpi_request_check(r))
    return nm_mpi_error(r->comm, MPI_ERR_REQUEST, __func__); /* MPI-3.1 5.12: erroneous for collectives */
  nm_mpi_request_detach(r); /* still in flight: the operation goes on, its monitor destroys it on completion */
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Cancel)
int PMPI_Cancel(MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_request_s *r = nm_mpi_request_get(*request);
  if (!r || !r->active)
    return nm_mpi_error(r ? r->comm : MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  /* A receive that has not matched yet is withdrawn from the matching engine. A send is withdrawn from its
   * receiver if no receive matched it there (nm_sr_scancel: the outcome comes back by message, the request
   * completes then, with MPI_Test_cancelled true or false). Either way a matched operation completes normally
   * (MPI-3.1 3.8.4); so does one whose completion the shim already processed. */
  if (r->kind == NM_MPI_REQ_DONE) {
    nm_mpi_bsend_cancel(r); /* MPI_Ibsend's request: its transfer, if linked */
  } else if (!r->completed && r->peer != MPI_PROC_NULL) {
    if (r->kind == NM_MPI_REQ_RECV && !r->nreq.completed)
      nm_sr_rcancel(nm_mpi.session, &r->nreq);
    else if (r->kind == NM_MPI_REQ_SEND)
      nm_sr_scancel(nm_mpi.session, &r->nreq); /* -NM_EBUSY (matched already), -NM_EALREADY: nothing to do */
  }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
  NM_MPI_LOCKED();
  if (!status || !flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *flag = status->nm_cancelled != 0;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
  NM_MPI_LOCKED();
  if (!status)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  status->nm_cancelled = flag != 0;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- init / finalize */

int nm_mpi_request_init(void)
{
  nm_mpi_table_init(&nm_mpi.requests, NM_MPI_FIRST_REQUEST);
  nm_mpi.request_free = NULL;
  nm_mpi_table_init(&nm_mpi.messages, NM_MPI_FIRST_MESSAGE);
  nm_mpi.bsend_buf = NULL;
  nm_mpi.bsend_size = 0;
  return MPI_SUCCESS;
}

/* Sends the application freed while active still have to deliver their data; so do buffered sends. (Freed
 * receives that never matched are withdrawn below.) */
static int nm_mpi_freed_pending(void)
{
  int n = 0;
  for (int h = NM_MPI_FIRST_REQUEST; h < nm_mpi.requests.n; h++) {
    struct nm_mpi_request_s *r = nm_mpi_request_slot(h);
    if (r && r->kind == NM_MPI_REQ_SEND && r->user_freed && !r->nreq.completed)
      n++;
  }
  return n;
}

void nm_mpi_request_finalize(void)
{
  struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
  while (nm_mpi_freed_pending())
    nm_mpi_wait_event(&w);
  /* Whatever the application left active: withdraw unmatched receives; leave the rest to nm_launcher_exit(),
   * which flushes sends. Objects whose nmad request is still queued are not freed (the core still points at
   * them). */
  for (int h = NM_MPI_FIRST_REQUEST; h < nm_mpi.requests.n; h++) {
    struct nm_mpi_request_s *r = nm_mpi_request_slot(h);
    if (!r)
      continue;
    if (r->kind) {
      int in_flight = nm_mpi_request_is_p2p(r) && r->active && !r->completed && !r->nreq.completed;
      if (in_flight && r->kind == NM_MPI_REQ_RECV)
        in_flight = nm_sr_rcancel(nm_mpi.session, &r->nreq) != 0;
      if (in_flight)
        continue; /* leaked on purpose */
      r->user_freed = 0;
      nm_mpi_request_destroy(r);
    }
    free(r);
  }
  nm_mpi_table_destroy(&nm_mpi.requests);
  nm_mpi.request_free = NULL; /* its objects were freed with the table's */
  /* Matched messages nobody received (MPI_Mprobe without MPI_Mrecv) are released with their data. */
  for (int h = NM_MPI_FIRST_MESSAGE; h < nm_mpi.messages.n; h++) {
    void *m = nm_mpi_table_get(&nm_mpi.messages, h);
    if (m)
      nm_mpi_message_free(m);
  }
  nm_mpi_table_destroy(&nm_mpi.messages);
}
