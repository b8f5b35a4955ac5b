/* Tag matching: posted receives vs in-order arrivals; unexpected messages kept until a receive matches.
 * Constant-time (issue 15, part 5): receives and unexpected messages are found in their session's (gate, tag)
 * bucket; any-source and masked receives wait in a wildcard list in post order (nm_match_hash.h, the model is UCX's
 * expected/unexpected tag matching). MPI order: among matching receives the first posted wins, among matching
 * messages the first arrived. */
#include "nm_core_private.h"
#include <stdlib.h>
#include <string.h>

int nm_match_tag(nm_tag_t msg_tag, nm_tag_t want_tag, nm_tag_t mask)
{
  return ((msg_tag ^ want_tag) & mask) == 0;
}

static int nm_req_matches(const struct nm_req_s *r, const struct nm_gate_s *gate, nm_tag_t tag)
{
  return (r->gate == NULL || r->gate == gate) && nm_match_tag(tag, r->tag, r->mask);
}

struct nm_session_s *nm_core_find_session(nm_core_t core, uint32_t id)
{
  for (struct nm_session_s *s = core->sessions; s; s = s->next)
    if (s->id == id)
      return s;
  return NULL;
}

/* A buffer of NM_UNEXP_MEDIUM bytes: one the core kept (core->unexp_bufs, linked through their first word), or a
 * new one. NULL without memory. */
static void *nm_unexp_buf_get(nm_core_t core)
{
  void *b = core->unexp_bufs;
  if (!b)
    return malloc(NM_UNEXP_MEDIUM);
  core->unexp_bufs = *(void **)b;
  core->n_unexp_bufs--;
  return b;
}

/* Give back a buffer of nm_unexp_buf_get(): kept for the next one, up to NM_UNEXP_MEDIUM_KEEP, else freed. */
static void nm_unexp_buf_put(nm_core_t core, void *b)
{
  if (core->n_unexp_bufs >= NM_UNEXP_MEDIUM_KEEP) {
    free(b);
    return;
  }
  *(void **)b = core->unexp_bufs;
  core->unexp_bufs = b;
  core->n_unexp_bufs++;
}

void nm_unexp_bufs_free(nm_core_t core)
{
  while (core->unexp_bufs)
    free(nm_unexp_buf_get(core));
}

struct nm_unexp_s *nm_unexp_from_chunk(nm_core_t core, struct nm_gate_s *gate, uint32_t session,
                                       const struct nm_wire_chunk_s *c)
{
  struct nm_unexp_s *u = nm_pool_get(&core->unexp_pool);
  if (!u)
    return NULL;
  memset(u, 0, offsetof(struct nm_unexp_s, small)); /* not in any list, bucket or set yet */
  u->gate = gate;
  u->session_id = session;
  u->type = c->type;
  u->flags = c->flags;
  u->tag = c->tag;
  u->seq = c->seq;
  u->msg_len = c->msg_len;
  u->len = c->len;
  u->prefix_len = c->prefix_len;
  u->cookie = c->cookie;
  u->credit = 0;
  u->data = NULL;
  if (c->len) {
    u->medium = c->len > NM_UNEXP_SMALL && c->len <= NM_UNEXP_MEDIUM;
    u->data = c->len <= NM_UNEXP_SMALL ? u->small : u->medium ? nm_unexp_buf_get(core) : malloc(c->len);
    if (!u->data) {
      nm_pool_put(&core->unexp_pool, u);
      return NULL;
    }
    memcpy(u->data, c->payload, c->len);
  }
  if (c->type == NM_WIRE_DATA && nm_credit_on(gate)) { /* only chunks from the network come here */
    u->credit = (uint32_t)nm_wire_credit_cost(c->len);
    nm_credit_stored(gate, u->credit);
  }
  return u;
}

void nm_unexp_free(nm_core_t core, struct nm_unexp_s *u)
{
  nm_credit_release(u);
  if (u->medium)
    nm_unexp_buf_put(core, u->data);
  else if (u->data != u->small)
    free(u->data);
  nm_pool_put(&core->unexp_pool, u);
}

void nm_unexp_to_chunk(const struct nm_unexp_s *u, struct nm_wire_chunk_s *c)
{
  memset(c, 0, sizeof(*c));
  c->type = u->type;
  c->flags = u->flags;
  c->session = u->session_id;
  c->tag = u->tag;
  c->seq = u->seq;
  c->msg_len = u->msg_len;
  c->len = u->len;
  c->prefix_len = u->prefix_len;
  c->cookie = u->cookie;
  c->payload = u->data;
}

static void nm_deliver(struct nm_req_s *req, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  req->gate = gate;
  req->tag = c->tag;
  req->msg_len = c->msg_len;
  req->flags |= NM_REQF_MATCHED;
  if (c->flags & NM_FLAG_LOCAL_LOST) { /* its place in the order, without data (nm_core_inject_lost()) */
    req->msg_len = 0;
    nm_req_complete_events(req, (int)(int64_t)c->cookie, NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED);
    return;
  }
  if (c->type == NM_WIRE_RDV) {
    nm_rdv_accept(req, gate, c);
    return;
  }
  nm_len_t n = c->len < req->len ? c->len : req->len;
  if (n)
    memcpy(req->buf, c->payload, n);
  if (c->flags & NM_WIRE_FLAG_SYNC)
    nm_rdv_send_ack(gate, c->cookie);
  int status = c->len > req->len ? -NM_ETRUNCATED : NM_ESUCCESS;
  if (c->flags & NM_FLAG_LOCAL_BCAST) {
    /* a broadcast kept until this receive: same events as one received in place (nm_mcast.h) */
    nm_req_notify(req, NM_EVENT_RECV_DATA);
    nm_req_complete_events(req, status, NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED);
    return;
  }
  nm_req_complete(req, status);
}

/* ---- posted receives ---- */

/* An exact receive names one source and every tag bit: it lives in the (gate, tag) bucket. Any other (any-source,
 * tag mask) lives in the wildcard list. The class never changes while the receive is posted. */
static inline int nm_req_is_exact(const struct nm_req_s *r)
{
  return r->gate != NULL && r->mask == NM_TAG_MASK_FULL;
}

/* The receive a message (gate, tag) goes to: the earliest posted (post number in req->cookie) of its bucket's head
 * and the matching wildcard receives. The wildcard list is in post order, so its scan stops at the bucket head's
 * number: exact receives never pay for wildcards posted after them. */
static inline struct nm_req_s *nm_match_find_posted(struct nm_session_s *session, struct nm_gate_s *gate, nm_tag_t tag,
                                             struct nm_match_bucket_s **bp)
{
  struct nm_match_s *m = session->match;
  struct nm_match_bucket_s *b = nm_match_bucket_find(m, gate, tag);
  struct nm_req_s *e = b ? b->posted.head : NULL;
  *bp = b;
  for (struct nm_req_s *r = m->wild.head; r; r = r->next) {
    if (e && r->cookie > e->cookie)
      break;
    if (nm_req_matches(r, gate, tag))
      return r;
  }
  return e;
}

/* Take posted @p req out: from bucket @p b (its own, when it is exact; NULL: looked up) or the wildcard list. */
static inline void nm_match_take(struct nm_session_s *session, struct nm_req_s *req, struct nm_match_bucket_s *b)
{
  struct nm_match_s *m = session->match;
  if (!nm_req_is_exact(req)) {
    nm_req_list_remove(&m->wild, req);
    return;
  }
  if (!b)
    b = nm_match_bucket_find(m, req->gate, req->tag);
  nm_req_list_remove(&b->posted, req);
  if (!b->posted.head)
    nm_match_bucket_release(m, b);
}

void nm_match_remove_posted(struct nm_session_s *session, struct nm_req_s *req)
{
  nm_match_take(session, req, NULL);
}

/* Append a receive that found no message; @p b is its bucket if the caller found it already. @return 0 or
 * -NM_ENOMEM (no bucket). */
static inline int nm_match_add_posted(struct nm_session_s *session, struct nm_req_s *req, struct nm_match_bucket_s *b)
{
  struct nm_match_s *m = session->match;
  struct nm_req_list_s *l = &m->wild;
  if (nm_req_is_exact(req)) {
    if (!b)
      b = nm_match_bucket_get(m, req->gate, req->tag);
    else if (b->in_empty)
      nm_match_empty_unlink(m, b);
    if (!b)
      return -NM_ENOMEM;
    l = &b->posted;
  }
  req->cookie = m->next_post++;
  req->state = NM_RS_POSTED;
  nm_req_list_append(l, req);
  return NM_ESUCCESS;
}

/* ---- unexpected messages: the session's arrival list (next/prev) and their (gate, tag) bucket (bnext/bprev) ---- */

static int nm_match_unexp_store(struct nm_session_s *session, struct nm_unexp_s *u)
{
  struct nm_match_bucket_s *b = nm_match_bucket_get(session->match, u->gate, u->tag);
  if (!b)
    return -NM_ENOMEM;
  u->bucket = b;
  u->bnext = NULL;
  u->bprev = b->unexp_tail;
  if (b->unexp_tail)
    b->unexp_tail->bnext = u;
  else
    b->unexp_head = u;
  b->unexp_tail = u;
  u->next = NULL;
  u->prev = session->unexp_tail;
  if (session->unexp_tail)
    session->unexp_tail->next = u;
  else
    session->unexp_head = u;
  session->unexp_tail = u;
  return NM_ESUCCESS;
}

void nm_match_unexp_remove(struct nm_session_s *session, struct nm_unexp_s *u)
{
  if (u->prev)
    u->prev->next = u->next;
  else
    session->unexp_head = u->next;
  if (u->next)
    u->next->prev = u->prev;
  else
    session->unexp_tail = u->prev;
  struct nm_match_bucket_s *b = u->bucket;
  if (u->bprev)
    u->bprev->bnext = u->bnext;
  else
    b->unexp_head = u->bnext;
  if (u->bnext)
    u->bnext->bprev = u->bprev;
  else
    b->unexp_tail = u->bprev;
  u->next = u->prev = u->bnext = u->bprev = NULL;
  u->bucket = NULL;
  nm_match_bucket_release(session->match, b);
}

struct nm_unexp_s *nm_match_unexp_find_seq(struct nm_session_s *session, struct nm_gate_s *gate, nm_tag_t tag,
                                           nm_seq_t seq)
{
  struct nm_match_bucket_s *b = nm_match_bucket_find(session->match, gate, tag);
  for (struct nm_unexp_s *u = b ? b->unexp_head : NULL; u; u = u->bnext)
    if (u->seq == seq)
      return u;
  return NULL;
}

static void nm_store_unexpected(struct nm_session_s *session, struct nm_gate_s *gate,
                                const struct nm_wire_chunk_s *c, struct nm_unexp_s *owned)
{
  struct nm_unexp_s *u = owned ? owned : nm_unexp_from_chunk(session->core, gate, session->id, c);
  if (!u) {
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  if (nm_match_unexp_store(session, u)) {
    nm_unexp_free(session->core, u);
    nm_gate_fail(gate, -NM_ENOMEM);
  }
}

void nm_match_incoming(struct nm_session_s *session, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c,
                       struct nm_unexp_s *owned)
{
  struct nm_match_bucket_s *b;
  struct nm_req_s *r = nm_match_find_posted(session, gate, c->tag, &b);
  if (!r) {
    nm_store_unexpected(session, gate, c, owned);
    return;
  }
  nm_match_take(session, r, b);
  nm_deliver(r, gate, c);
  if (owned)
    nm_unexp_free(session->core, owned);
}

/* An exact receive finds its message at its bucket's head (the first arrived of that (gate, tag)); a wildcard one
 * scans the arrival list, as UCX does: wildcards are the rare case. */
void nm_match_post_recv(struct nm_session_s *session, struct nm_req_s *req)
{
  struct nm_unexp_s *u = NULL;
  struct nm_match_bucket_s *b = NULL;
  if (nm_req_is_exact(req)) {
    b = nm_match_bucket_find(session->match, req->gate, req->tag);
    u = b ? b->unexp_head : NULL;
  } else {
    for (u = session->unexp_head; u; u = u->next)
      if ((req->gate == NULL || req->gate == u->gate) && nm_match_tag(u->tag, req->tag, req->mask))
        break;
  }
  if (u) {
    nm_match_unexp_remove(session, u);
    struct nm_wire_chunk_s c;
    nm_unexp_to_chunk(u, &c);
    nm_deliver(req, u->gate, &c);
    nm_unexp_free(session->core, u);
    return;
  }
  if (req->gate && req->gate->status) {
    nm_req_complete(req, req->gate->status);
    return;
  }
  if (nm_match_add_posted(session, req, b))
    nm_req_complete(req, -NM_ENOMEM);
}

struct nm_req_s *nm_match_claim(struct nm_session_s *session, struct nm_gate_s *gate, nm_tag_t tag,
                                nm_len_t min_len)
{
  struct nm_match_bucket_s *b;
  struct nm_req_s *r = nm_match_find_posted(session, gate, tag, &b);
  if (!r || r->len < min_len)
    return NULL; /* none, or it would truncate: let the data come as unexpected and be copied */
  nm_match_take(session, r, b);
  return r;
}

void nm_match_gate_fail(struct nm_session_s *session, struct nm_gate_s *gate, int err)
{
  struct nm_match_s *m = session->match;
  struct nm_req_list_s dead = {NULL, NULL, NULL};
  /* Collected first, completed after: a monitor may post receives, which must not change the table we walk. */
  struct nm_match_bucket_s *b, *tmp;
  HASH_ITER(hh, m->buckets, b, tmp) {
    if (b->key.gate != gate)
      continue;
    while (b->posted.head) {
      struct nm_req_s *r = b->posted.head;
      nm_req_list_remove(&b->posted, r);
      nm_req_list_append(&dead, r);
    }
    nm_match_bucket_release(m, b);
  }
  for (struct nm_req_s *r = m->wild.head, *next; r; r = next) {
    next = r->next;
    if (r->gate == gate) {
      nm_req_list_remove(&m->wild, r);
      nm_req_list_append(&dead, r);
    }
  }
  while (dead.head) {
    struct nm_req_s *r = dead.head;
    nm_req_list_remove(&dead, r);
    nm_req_complete(r, err);
  }
}

int nm_match_session_open(struct nm_session_s *session)
{
  session->match = nm_match_new();
  return session->match ? NM_ESUCCESS : -NM_ENOMEM;
}

void nm_match_session_close(struct nm_session_s *session)
{
  struct nm_match_s *m = session->match;
  while (session->unexp_head) {
    struct nm_unexp_s *u = session->unexp_head;
    nm_match_unexp_remove(session, u);
    nm_unexp_free(session->core, u);
  }
  struct nm_req_list_s dead = {NULL, NULL, NULL}; /* wildcards and exact receives, then completed */
  while (m->wild.head) {
    struct nm_req_s *r = m->wild.head;
    nm_req_list_remove(&m->wild, r);
    nm_req_list_append(&dead, r);
  }
  struct nm_match_bucket_s *b, *tmp;
  HASH_ITER(hh, m->buckets, b, tmp) {
    while (b->posted.head) {
      struct nm_req_s *r = b->posted.head;
      nm_req_list_remove(&b->posted, r);
      nm_req_list_append(&dead, r);
    }
  }
  while (dead.head) {
    struct nm_req_s *r = dead.head;
    nm_req_list_remove(&dead, r);
    nm_req_complete(r, -NM_ECANCELED);
  }
  nm_match_free(m);
  session->match = NULL;
}

/* A hooked session (rpc channel): the hook decides; what it does not take is kept as unexpected. */
static void nm_match_hook(struct nm_session_s *session, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c,
                          struct nm_unexp_s *owned)
{
  struct nm_core_incoming_s in = {
    .gate = gate, .tag = c->tag, .prefix = c->payload, .prefix_len = c->prefix_len,
    .is_rdv = c->type == NM_WIRE_RDV, .cookie = c->cookie, .accepted = 0};
  in.body_len = c->msg_len - c->prefix_len;
  in.body = in.is_rdv ? NULL : c->payload + c->prefix_len;
  int rc = session->hook(session->hook_ref, &in);
  if (rc == 0) {
    nm_store_unexpected(session, gate, c, owned);
    return;
  }
  if (owned)
    nm_unexp_free(session->core, owned);
  if (rc < 0) {
    nm_gate_fail(gate, rc);
    return;
  }
  if (!in.is_rdv && (c->flags & NM_WIRE_FLAG_SYNC))
    nm_rdv_send_ack(gate, c->cookie);
  if (in.is_rdv && !in.accepted) /* discarded: release the sender with an empty RTR */
    nm_rdv_post(NULL, gate, c->cookie, c->prefix_len, NULL, 0);
}

void nm_match_in_order(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c, struct nm_unexp_s *owned)
{
  struct nm_core_s *core = gate->core;
  if (gate->tombstones && nm_cancel_take_tombstone(gate, c->session, c->tag, c->seq)) {
    if (owned) /* its sender withdrew it (nm_cancel.c): dropped, no ACK nor RTR */
      nm_unexp_free(core, owned);
    return;
  }
  struct nm_session_s *session = nm_core_find_session(core, c->session);
  if (session && session->hook) {
    nm_match_hook(session, gate, c, owned);
    return;
  }
  if (session) {
    nm_match_incoming(session, gate, c, owned);
    return;
  }
  /* The peer opened the session before us: keep the message until we open it. */
  struct nm_unexp_s *u = owned ? owned : nm_unexp_from_chunk(core, gate, c->session, c);
  if (!u) {
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  u->next = NULL;
  if (core->orphans_tail)
    core->orphans_tail->next = u;
  else
    core->orphans = u;
  core->orphans_tail = u;
}

/* A session just opened: adopt the messages that arrived for it, in arrival order. */
void nm_match_adopt_orphans(struct nm_session_s *session)
{
  struct nm_core_s *core = session->core;
  struct nm_unexp_s **pp = &core->orphans, *last = NULL;
  while (*pp) {
    struct nm_unexp_s *u = *pp;
    if (u->session_id != session->id) {
      last = u;
      pp = &u->next;
      continue;
    }
    *pp = u->next;
    if (nm_match_unexp_store(session, u)) {
      struct nm_gate_s *gate = u->gate;
      nm_unexp_free(core, u);
      nm_gate_fail(gate, -NM_ENOMEM);
    }
  }
  core->orphans_tail = last;
}

int nm_match_orphan_withdraw(struct nm_core_s *core, struct nm_gate_s *gate, uint32_t session, nm_tag_t tag,
                             nm_seq_t seq)
{
  struct nm_unexp_s *prev = NULL;
  for (struct nm_unexp_s **pp = &core->orphans; *pp; prev = *pp, pp = &(*pp)->next) {
    struct nm_unexp_s *u = *pp;
    if (u->gate == gate && u->session_id == session && u->tag == tag && u->seq == seq) {
      *pp = u->next;
      if (core->orphans_tail == u)
        core->orphans_tail = prev;
      nm_unexp_free(core, u);
      return 1;
    }
  }
  return 0;
}
