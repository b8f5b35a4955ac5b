/**
 * @file nm_coll_sched.c
 * @brief The schedule engine of nmad's collectives (nm_coll_sched.h): rounds of local operations and
 * point-to-point messages, advanced from request monitors.
 *
 * Advancing: each posted request carries a monitor (nm_sr_request_set_monitor) whose callback decrements the
 * round's pending count; when it reaches zero the next round starts, from inside the core's progress. A request may
 * complete while it is being posted (a receive that matches an unexpected message, a send on a failed gate): the
 * round holds one extra "guard" count while it posts, and nm_coll_sched_advance() runs as a loop guarded against
 * re-entry, so rounds that complete at once never recurse.
 *
 * Lifetime: the owner may release the schedule before it is done (an MPI request freed by MPI_Request_free); the
 * schedule then frees itself when its last round completes, since the core still holds pointers to its requests.
 */
#include <nmad/nm_coll_sched.h>
#include <nmad/nm_core.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum nm_coll_op_kind_e { NM_COLL_OP_SEND = 1, NM_COLL_OP_RECV, NM_COLL_OP_COPY, NM_COLL_OP_LOCAL };

struct nm_coll_op_s {
  int kind;
  unsigned flags;              /* send: NM_COLL_SEND_* */
  int next;                    /* next operation of its round (index in the schedule's ops), -1: last */
  nm_gate_t gate;              /* send / recv */
  nm_coll_local_fn_t fn;       /* local */
  struct nm_coll_local_s args; /* send: src, len; recv: dst, len; copy: dst, src, len; local: the caller's */
  nm_sr_request_t req;         /* send / recv: initialised when posted (ops never move once started) */
};

/* A round: its operations in the order they were added, chained through op->next (a builder may add to an
 * earlier round after a later one, so one array per schedule holds them all). */
struct nm_coll_round_s {
  int head, tail; /* indices in the schedule's ops, -1: empty */
};

/* What a small collective needs lives in the schedule itself, so that building one costs a single allocation
 * (issue 18: malloc and free were 8% of a small MPI collective, building and freeing a 4-member allreduce
 * 374 ns). Larger ones grow onto the heap. */
#define NM_COLL_SCHED_ROUNDS 8
#define NM_COLL_SCHED_OPS 12
#define NM_COLL_SCHED_MEM 8
#define NM_COLL_SCHED_SCRATCH 512

struct nm_coll_sched_s {
  nm_session_t session;
  struct nm_coll_sched_cache_s *cache; /* where its memory goes back when freed, or NULL (the heap) */
  nm_tag_t tag;
  struct nm_coll_round_s *rounds; /* rounds_inline, or the heap once grown */
  int n_rounds, cap_rounds;
  struct nm_coll_op_s *ops;       /* ops_inline, or the heap once grown */
  int n_ops, cap_ops;
  void **mem;                     /* scratch buffers on the heap, freed with the schedule */
  int n_mem, cap_mem;
  size_t scratch_used;            /* bytes of scratch[] handed out */
  nm_coll_free_fn_t on_free;
  void *on_free_ref;
  int build_err;  /* first error while building */
  int err;        /* first error while running */
  int started;
  int cur;        /* next round to start */
  int pending;    /* communications of the current round not yet completed (+1 while posting) */
  int in_advance;
  int orphan;     /* released by its owner: free when done */
  uint64_t spin_ns; /* a builder's hint: how long a waiter should spin before it yields (nm_coll_sched_set_spin()) */
  volatile int done;
  /* not zeroed at creation: */
  struct nm_coll_round_s rounds_inline[NM_COLL_SCHED_ROUNDS];
  struct nm_coll_op_s ops_inline[NM_COLL_SCHED_OPS];
  void *mem_inline[NM_COLL_SCHED_MEM];
  _Alignas(16) unsigned char scratch[NM_COLL_SCHED_SCRATCH];
};

/* ---------------------------------------------------------------- building */

void nm_coll_sched_set_error(nm_coll_sched_t *s, int err)
{
  if (!s->build_err)
    s->build_err = err;
}

/** Grow an array (in the schedule at @p inline_buf, or on the heap) to hold @p need elements; the elements past
 *  the old capacity are left for the caller to set. @return 0 or -1. */
static int nm_coll_grow(void **arr, int *cap, int need, size_t elem, void *inline_buf)
{
  if (need <= *cap)
    return 0;
  int ncap = *cap * 2;
  while (ncap < need)
    ncap *= 2;
  void *p = *arr == inline_buf ? malloc((size_t)ncap * elem) : realloc(*arr, (size_t)ncap * elem);
  if (!p)
    return -1;
  if (*arr == inline_buf)
    memcpy(p, inline_buf, (size_t)*cap * elem);
  *arr = p;
  *cap = ncap;
  return 0;
}

nm_coll_sched_t *nm_coll_sched_new_cached(nm_session_t session, nm_tag_t tag, struct nm_coll_sched_cache_s *cache)
{
  nm_coll_sched_t *s;
  if (cache && cache->spare) {
    s = cache->spare;
    cache->spare = NULL;
  } else if (!(s = malloc(sizeof(*s)))) {
    return NULL;
  }
  memset(s, 0, offsetof(struct nm_coll_sched_s, rounds_inline));
  s->cache = cache;
  s->session = session;
  s->tag = tag;
  s->rounds = s->rounds_inline;
  s->cap_rounds = NM_COLL_SCHED_ROUNDS;
  s->ops = s->ops_inline;
  s->cap_ops = NM_COLL_SCHED_OPS;
  s->mem = s->mem_inline;
  s->cap_mem = NM_COLL_SCHED_MEM;
  return s;
}

/* Scratch blocks on the heap carry their usable length in a header of NM_COLL_BLOCK_HDR bytes (malloc's alignment
 * kept), so that a cache can give one again to a request it fits. */
#define NM_COLL_BLOCK_HDR 16u

static size_t nm_coll_block_len(const void *base) { return *(const size_t *)base; }

/* A block of at least @p len usable bytes: the smallest that fits among @p cache's, else a new one. @return its
 * base (the header), or NULL without memory. */
static void *nm_coll_block_get(struct nm_coll_sched_cache_s *cache, size_t len)
{
  int best = -1;
  for (int i = 0; cache && i < NM_COLL_SCHED_CACHE_BLOCKS; i++)
    if (cache->blocks[i] && cache->block_len[i] >= len && (best < 0 || cache->block_len[i] < cache->block_len[best]))
      best = i;
  if (best >= 0) {
    void *base = cache->blocks[best];
    cache->blocks[best] = NULL;
    return base;
  }
  if (len > SIZE_MAX - NM_COLL_BLOCK_HDR)
    return NULL;
  void *base = malloc(NM_COLL_BLOCK_HDR + len);
  if (base)
    *(size_t *)base = len;
  return base;
}

/* Give back a block of nm_coll_block_get(): kept in an empty slot of @p cache if it is not too large, else freed. */
static void nm_coll_block_put(struct nm_coll_sched_cache_s *cache, void *base)
{
  size_t len = nm_coll_block_len(base);
  if (cache && len <= NM_COLL_SCHED_CACHE_BLOCK_MAX)
    for (int i = 0; i < NM_COLL_SCHED_CACHE_BLOCKS; i++)
      if (!cache->blocks[i]) {
        cache->blocks[i] = base;
        cache->block_len[i] = len;
        return;
      }
  free(base);
}

static void nm_coll_sched_free(nm_coll_sched_t *s)
{
  if (s->on_free)
    s->on_free(s->on_free_ref);
  if (s->rounds != s->rounds_inline)
    free(s->rounds);
  if (s->ops != s->ops_inline)
    free(s->ops);
  for (int i = 0; i < s->n_mem; i++)
    nm_coll_block_put(s->cache, s->mem[i]);
  if (s->mem != s->mem_inline)
    free(s->mem);
  if (s->cache && !s->cache->spare)
    s->cache->spare = s;
  else
    free(s);
}

nm_coll_sched_t *nm_coll_sched_new(nm_session_t session, nm_tag_t tag)
{
  return nm_coll_sched_new_cached(session, tag, NULL);
}

void nm_coll_sched_cache_drain(struct nm_coll_sched_cache_s *cache)
{
  if (cache) {
    free(cache->spare);
    cache->spare = NULL;
    for (int i = 0; i < NM_COLL_SCHED_CACHE_BLOCKS; i++) {
      free(cache->blocks[i]);
      cache->blocks[i] = NULL;
    }
  }
}

void nm_coll_sched_destroy(nm_coll_sched_t *s)
{
  if (s)
    nm_coll_sched_free(s);
}

void nm_coll_sched_on_free(nm_coll_sched_t *s, nm_coll_free_fn_t fn, void *ref)
{
  s->on_free = fn;
  s->on_free_ref = ref;
}

void *nm_coll_sched_alloc(nm_coll_sched_t *s, size_t len)
{
  if (len == 0)
    return NULL;
  size_t aligned = (len + 15) & ~(size_t)15;
  if (aligned >= len && aligned <= NM_COLL_SCHED_SCRATCH - s->scratch_used) { /* in the schedule */
    void *p = s->scratch + s->scratch_used;
    s->scratch_used += aligned;
    return p;
  }
  void *base = NULL;
  if (nm_coll_grow((void **)&s->mem, &s->cap_mem, s->n_mem + 1, sizeof(*s->mem), s->mem_inline) == 0)
    base = nm_coll_block_get(s->cache, len);
  if (!base) {
    nm_coll_sched_set_error(s, -NM_ENOMEM);
    return NULL;
  }
  s->mem[s->n_mem++] = base;
  return (char *)base + NM_COLL_BLOCK_HDR;
}

/** A new operation at the end of round @p round (zeroed but for its request), or NULL (failure recorded). */
static struct nm_coll_op_s *nm_coll_sched_op(nm_coll_sched_t *s, int round, int kind)
{
  if (s->started || round < 0) {
    nm_coll_sched_set_error(s, -NM_EINVAL);
    return NULL;
  }
  /* (the capacity tests inline: a small collective's ops fit in the schedule, and a call per op was 60 of the
   * ~115 instructions an op cost) */
  if ((round >= s->cap_rounds &&
       nm_coll_grow((void **)&s->rounds, &s->cap_rounds, round + 1, sizeof(*s->rounds), s->rounds_inline)) ||
      (s->n_ops >= s->cap_ops &&
       nm_coll_grow((void **)&s->ops, &s->cap_ops, s->n_ops + 1, sizeof(*s->ops), s->ops_inline))) {
    nm_coll_sched_set_error(s, -NM_ENOMEM);
    return NULL;
  }
  for (; s->n_rounds <= round; s->n_rounds++)
    s->rounds[s->n_rounds] = (struct nm_coll_round_s){-1, -1};
  struct nm_coll_round_s *r = &s->rounds[round];
  int i = s->n_ops++;
  struct nm_coll_op_s *op = &s->ops[i];
  /* every field but the request (initialised when posted), by stores the compiler can vectorise: a memset of
   * them cost 40 instructions an op (rep stos) */
  op->kind = kind;
  op->flags = 0;
  op->next = -1;
  op->gate = NULL;
  op->fn = NULL;
  op->args = (struct nm_coll_local_s){0};
  if (r->tail >= 0)
    s->ops[r->tail].next = i;
  else
    r->head = i;
  r->tail = i;
  return op;
}

/** A send or receive operation on @p gate, or NULL (a NULL gate is recorded as -NM_EINVAL). */
static struct nm_coll_op_s *nm_coll_sched_comm(nm_coll_sched_t *s, int round, int kind, nm_gate_t gate)
{
  if (gate == NULL) {
    nm_coll_sched_set_error(s, -NM_EINVAL);
    return NULL;
  }
  struct nm_coll_op_s *op = nm_coll_sched_op(s, round, kind);
  if (op)
    op->gate = gate;
  return op;
}

void nm_coll_sched_send(nm_coll_sched_t *s, int round, nm_gate_t gate, const void *buf, nm_len_t len,
                        unsigned flags)
{
  struct nm_coll_op_s *op = nm_coll_sched_comm(s, round, NM_COLL_OP_SEND, gate);
  if (op) {
    op->flags = flags;
    op->args.src = buf;
    op->args.len = len;
  }
}

void nm_coll_sched_recv(nm_coll_sched_t *s, int round, nm_gate_t gate, void *buf, nm_len_t len)
{
  struct nm_coll_op_s *op = nm_coll_sched_comm(s, round, NM_COLL_OP_RECV, gate);
  if (op) {
    op->args.dst = buf;
    op->args.len = len;
  }
}

void nm_coll_sched_copy(nm_coll_sched_t *s, int round, void *dst, const void *src, size_t len)
{
  if (len == 0 || dst == src)
    return;
  struct nm_coll_op_s *op = nm_coll_sched_op(s, round, NM_COLL_OP_COPY);
  if (op) {
    op->args.dst = dst;
    op->args.src = src;
    op->args.len = len;
  }
}

void nm_coll_sched_local(nm_coll_sched_t *s, int round, nm_coll_local_fn_t fn, const struct nm_coll_local_s *args)
{
  struct nm_coll_op_s *op = nm_coll_sched_op(s, round, NM_COLL_OP_LOCAL);
  if (op) {
    op->fn = fn;
    op->args = *args;
  }
}

int nm_coll_sched_rounds(const nm_coll_sched_t *s) { return s->n_rounds; }

nm_session_t nm_coll_sched_session(const nm_coll_sched_t *s) { return s->session; }

void nm_coll_sched_set_spin(nm_coll_sched_t *s, uint64_t ns)
{
  if (ns > s->spin_ns)
    s->spin_ns = ns;
}

uint64_t nm_coll_sched_spin(const nm_coll_sched_t *s) { return s->spin_ns; }

/* ---------------------------------------------------------------- running */

static void nm_coll_sched_advance(nm_coll_sched_t *s);

static void nm_coll_sched_keep_err(nm_coll_sched_t *s, int err)
{
  if (!s->err && err)
    s->err = err;
}

/** Request monitor of every send and receive of a schedule (runs inside the core's progress). */
static void nm_coll_sched_notify(struct nm_req_s *req, unsigned event, void *ref)
{
  nm_coll_sched_t *s = ref;
  (void)event;
  nm_coll_sched_keep_err(s, req->status);
  if (--s->pending == 0)
    nm_coll_sched_advance(s);
}

/** Post one communication; it completes through the monitor (even on most errors). */
static void nm_coll_sched_post(nm_coll_sched_t *s, struct nm_coll_op_s *op)
{
  nm_session_t session = s->session;
  int rc;

  /* A small eager send that can leave in this call goes without a request: no monitor to run, nothing pending
   * (half of such a send's instructions were its request: issue 18, doc/performance.md "A small collective's
   * sends leave without a request"). */
  if (op->kind == NM_COLL_OP_SEND && !(op->flags & NM_COLL_SEND_SYNC) &&
      nm_sr_send_now(session, op->gate, s->tag, op->args.src, op->args.len) == 1)
    return;
  s->pending++;
  if (op->kind == NM_COLL_OP_SEND) {
    nm_sr_send_init(session, &op->req);
    nm_sr_request_set_monitor(session, &op->req, NM_EVENT_SEND_COMPLETED, nm_coll_sched_notify, s);
    if (op->flags & NM_COLL_SEND_SYNC)
      rc = nm_sr_send_issend(session, &op->req, op->gate, s->tag, op->args.src, op->args.len);
    else
      rc = nm_sr_send_isend(session, &op->req, op->gate, s->tag, op->args.src, op->args.len);
  } else {
    nm_sr_recv_init(session, &op->req);
    nm_sr_request_set_monitor(session, &op->req, NM_EVENT_RECV_COMPLETED, nm_coll_sched_notify, s);
    rc = nm_sr_recv_irecv(session, &op->req, op->gate, s->tag, NM_TAG_MASK_FULL, op->args.dst, op->args.len);
  }
  if (rc == -NM_EINVAL) {
    /* refused before posting: the monitor will never run */
    s->pending--;
    nm_coll_sched_keep_err(s, rc);
  }
  /* other errors (failed gate, no memory) completed the request, and ran the monitor, already */
}

/** Start rounds until one has communications in flight, or the schedule is done. Never re-entered: a monitor
 *  that fires while a round is being posted only decrements the count; the loop here sees it. */
static void nm_coll_sched_advance(nm_coll_sched_t *s)
{
  if (s->in_advance)
    return;
  s->in_advance = 1;
  while (s->pending == 0 && s->cur < s->n_rounds) {
    struct nm_coll_round_s *r = &s->rounds[s->cur++];
    s->pending = 1; /* guard while posting */
    for (int i = r->head; i >= 0; i = s->ops[i].next) {
      struct nm_coll_op_s *op = &s->ops[i];
      if (op->kind == NM_COLL_OP_SEND || op->kind == NM_COLL_OP_RECV)
        nm_coll_sched_post(s, op);
      else if (op->kind == NM_COLL_OP_COPY)
        memmove(op->args.dst, op->args.src, op->args.len);
      else
        nm_coll_sched_keep_err(s, op->fn(&op->args));
    }
    s->pending--;
  }
  s->in_advance = 0;
  if (s->pending == 0 && s->cur >= s->n_rounds && !s->done) {
    s->done = 1;
    if (s->orphan)
      nm_coll_sched_free(s);
  }
}

int nm_coll_sched_start(nm_coll_sched_t *s)
{
  if (s->build_err) {
    int err = s->build_err;
    nm_coll_sched_free(s);
    return err;
  }
  /* The core lock (recursive): with a progress thread, the requests of the first round may complete, and their
   * monitors advance this schedule, while it is still posting them. */
  nm_core_t core = nm_session_get_core(s->session);
  nm_core_lock(core);
  s->started = 1;
  nm_coll_sched_advance(s);
  nm_core_unlock(core);
  return 0;
}

volatile int *nm_coll_sched_done_flag(nm_coll_sched_t *s) { return &s->done; }

int nm_coll_sched_error(const nm_coll_sched_t *s) { return s->err; }

void nm_coll_sched_release(nm_coll_sched_t *s)
{
  nm_core_t core = nm_session_get_core(s->session);
  nm_core_lock(core); /* the last monitor reads the schedule after setting done (progress thread) */
  if (s->done)
    nm_coll_sched_free(s);
  else
    s->orphan = 1; /* the core still holds its requests: it frees itself when done */
  nm_core_unlock(core);
}

int nm_coll_sched_wait(nm_coll_sched_t *s)
{
  int err;
  if (!s->started) {
    err = nm_coll_sched_start(s);
    if (err)
      return err;
  }
  nm_core_t core = nm_session_get_core(s->session);
  while (!s->done)
    nm_core_wait_flag_spin(core, &s->done, 0, s->spin_ns);
  nm_core_lock(core); /* the last monitor may still be reading the schedule after setting done */
  err = s->err;
  nm_coll_sched_free(s);
  nm_core_unlock(core);
  return err;
}
