/* Tag matching: posted receives vs in-order arrivals; unexpected messages kept until a receive matches. */
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

struct nm_unexp_s *nm_unexp_from_chunk(nm_core_t core, struct nm_gate_s *gate, uint32_t session,
                                       const struct nm_wire_chunk_s *c)
{
  struct nm_unexp_s *u = nm_pool_get(&core->unexp_pool);
  if (!u)
    return NULL;
  u->next = NULL;
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
    u->data = malloc(c->len);
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

static void nm_unexp_append(struct nm_session_s *s, struct nm_unexp_s *u)
{
  u->next = NULL;
  if (s->unexp_tail)
    s->unexp_tail->next = u;
  else
    s->unexp_head = u;
  s->unexp_tail = u;
}

static void nm_store_unexpected(struct nm_session_s *session, struct nm_gate_s *gate,
                                const struct nm_wire_chunk_s *c, struct nm_unexp_s *owned)
{
  struct nm_unexp_s *u = owned ? owned : nm_unexp_from_chunk(session->core, gate, session->id, c);
  if (!u) {
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  nm_unexp_append(session, u);
}

void nm_match_incoming(struct nm_session_s *session, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c,
                       struct nm_unexp_s *owned)
{
  for (struct nm_req_s *r = session->posted.head; r; r = r->next) {
    if (nm_req_matches(r, gate, c->tag)) {
      nm_req_list_remove(&session->posted, r);
      nm_deliver(r, gate, c);
      if (owned)
        nm_unexp_free(session->core, owned);
      return;
    }
  }
  nm_store_unexpected(session, gate, c, owned);
}

void nm_match_post_recv(struct nm_session_s *session, struct nm_req_s *req)
{
  struct nm_unexp_s **pp = &session->unexp_head, *prev = NULL;
  for (struct nm_unexp_s *u = *pp; u; prev = u, pp = &u->next, u = u->next) {
    if ((req->gate == NULL || req->gate == u->gate) && nm_match_tag(u->tag, req->tag, req->mask)) {
      *pp = u->next;
      if (session->unexp_tail == u)
        session->unexp_tail = prev;
      struct nm_wire_chunk_s c;
      nm_unexp_to_chunk(u, &c);
      nm_deliver(req, u->gate, &c);
      nm_unexp_free(session->core, u);
      return;
    }
  }
  if (req->gate && req->gate->status) {
    nm_req_complete(req, req->gate->status);
    return;
  }
  req->state = NM_RS_POSTED;
  nm_req_list_append(&session->posted, req);
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
  struct nm_unexp_s **pp = &core->orphans;
  while (*pp)
    pp = &(*pp)->next;
  *pp = u;
}

/* A session just opened: adopt the messages that arrived for it, in arrival order. */
void nm_match_adopt_orphans(struct nm_session_s *session)
{
  struct nm_unexp_s **pp = &session->core->orphans;
  while (*pp) {
    struct nm_unexp_s *u = *pp;
    if (u->session_id == session->id) {
      *pp = u->next;
      nm_unexp_append(session, u);
    } else {
      pp = &u->next;
    }
  }
}
