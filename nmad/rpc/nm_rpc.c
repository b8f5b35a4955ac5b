/* Active messages (rpc) over a session hook: the rpc channel of a session is an internal session
 * "<name>/rpc" whose in-order messages go to nm_rpc_hook() instead of tag matching. A message is one core
 * message whose first bytes are the header (eager with it, or inline in the RDV for a large body), so the
 * handler always runs on arrival of the header and the body can be received straight into the buffer it
 * chooses (Denis 2020, sections 4.2-4.3). */
#include "nmad/core/nm_core_interface.h"
#include <nmad/nm_rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nm_rpc_service_s {
  struct nm_rpc_service_s *next;
  struct nm_rpc_channel_s *channel;
  nm_tag_t tag, mask;
  nm_len_t hlen_max;
  nm_rpc_handler_t handler;
  nm_rpc_finalizer_t finalizer;
  void *ref;
  int n_pending; /* tokens waiting for their body */
};

struct nm_rpc_channel_s {
  nm_session_t user; /* the session the application sees */
  nm_session_t chan; /* the internal session carrying rpc messages */
  struct nm_rpc_service_s *services;
  struct nm_pool_s token_pool;
};

struct nm_rpc_token_s {
  struct nm_rpc_service_s *service;
  nm_gate_t gate;
  nm_tag_t tag;
  nm_len_t body_len;
  void *ref;
  int status;
  int accepted;
  struct nm_core_incoming_s *in; /* during the handler only */
  struct nm_req_s req;           /* the body receive */
};

static int nm_rpc_tags_overlap(nm_tag_t t1, nm_tag_t m1, nm_tag_t t2, nm_tag_t m2)
{
  return ((t1 ^ t2) & m1 & m2) == 0; /* some tag satisfies both */
}

static struct nm_rpc_service_s *nm_rpc_find(struct nm_rpc_channel_s *ch, nm_tag_t tag)
{
  for (struct nm_rpc_service_s *s = ch->services; s; s = s->next)
    if (((tag ^ s->tag) & s->mask) == 0)
      return s;
  return NULL;
}

static void nm_rpc_finalize(struct nm_rpc_token_s *t)
{
  struct nm_rpc_service_s *s = t->service;
  t->status = t->accepted ? t->req.status : NM_ESUCCESS;
  if (s->finalizer)
    s->finalizer(t, s->ref);
  nm_pool_put(&s->channel->token_pool, t);
}

static void nm_rpc_body_done(struct nm_req_s *req, unsigned event, void *ref)
{
  struct nm_rpc_token_s *t = ref;
  t->service->n_pending--;
  nm_rpc_finalize(t);
}

static int nm_rpc_hook(void *ref, struct nm_core_incoming_s *in)
{
  struct nm_rpc_channel_s *ch = ref;
  struct nm_rpc_service_s *s = nm_rpc_find(ch, in->tag);
  if (!s)
    return 0; /* no service yet: keep it on the channel */
  if (in->prefix_len > s->hlen_max)
    return -NM_EPROTO;
  struct nm_rpc_token_s *t = nm_pool_get(&ch->token_pool);
  if (!t)
    return -NM_ENOMEM;
  memset(t, 0, sizeof(*t));
  t->service = s;
  t->gate = in->gate;
  t->tag = in->tag;
  t->body_len = in->body_len;
  t->in = in;
  int rc = s->handler(t, in->prefix, in->prefix_len, s->ref);
  t->in = NULL;
  if (rc < 0) {
    nm_pool_put(&ch->token_pool, t);
    return rc;
  }
  if (!t->accepted || t->req.completed) {
    nm_rpc_finalize(t);
  } else {
    /* the body comes by rendezvous: finalize on its completion */
    s->n_pending++;
    nm_core_req_set_monitor(&t->req, NM_EVENT_RECV_COMPLETED, nm_rpc_body_done, t); /* not complete: cannot fail */
  }
  return 1;
}

static void nm_rpc_channel_close(void *p)
{
  struct nm_rpc_channel_s *ch = p;
  while (ch->services) {
    struct nm_rpc_service_s *s = ch->services;
    ch->services = s->next;
    free(s);
  }
  nm_session_close(ch->chan);
  nm_pool_destroy(&ch->token_pool);
  free(ch);
}

static int nm_rpc_channel(nm_session_t session, struct nm_rpc_channel_s **out)
{
  struct nm_rpc_channel_s *ch = nm_core_session_get_rpc(session);
  if (ch) {
    *out = ch;
    return NM_ESUCCESS;
  }
  ch = calloc(1, sizeof(*ch));
  if (!ch)
    return -NM_ENOMEM;
  int err = nm_core_session_open_child(session, "/rpc", &ch->chan); /* -NM_EINVAL: session name too long */
  if (err) {
    free(ch);
    return err;
  }
  ch->user = session;
  nm_pool_init(&ch->token_pool, sizeof(struct nm_rpc_token_s));
  nm_core_session_set_hook(ch->chan, nm_rpc_hook, ch);
  nm_core_session_set_rpc(session, ch, nm_rpc_channel_close);
  *out = ch;
  return NM_ESUCCESS;
}

int nm_rpc_register(nm_session_t session, nm_tag_t tag, nm_tag_t mask, nm_len_t hlen_max,
                    nm_rpc_handler_t handler, nm_rpc_finalizer_t finalizer, void *ref, nm_rpc_service_t *out)
{
  if (!session || !handler || !out || hlen_max > NM_RPC_HLEN_MAX)
    return -NM_EINVAL;
  NM_CORE_LOCKED(nm_session_get_core(session));
  struct nm_rpc_channel_s *ch;
  int err = nm_rpc_channel(session, &ch);
  if (err)
    return err;
  for (struct nm_rpc_service_s *s = ch->services; s; s = s->next)
    if (nm_rpc_tags_overlap(tag, mask, s->tag, s->mask))
      return -NM_EINVAL;
  struct nm_rpc_service_s *s = calloc(1, sizeof(*s));
  if (!s)
    return -NM_ENOMEM;
  *s = (struct nm_rpc_service_s){.next = ch->services, .channel = ch, .tag = tag, .mask = mask,
                                 .hlen_max = hlen_max, .handler = handler, .finalizer = finalizer, .ref = ref};
  ch->services = s;
  *out = s;
  nm_core_session_replay(ch->chan); /* messages that arrived before the service */
  return NM_ESUCCESS;
}

int nm_rpc_unregister(nm_rpc_service_t service)
{
  struct nm_rpc_channel_s *ch = service->channel;
  NM_CORE_LOCKED(nm_session_get_core(ch->user));
  if (service->n_pending)
    return -NM_EBUSY;
  for (struct nm_rpc_service_s **pp = &ch->services; *pp; pp = &(*pp)->next)
    if (*pp == service) {
      *pp = service->next;
      break;
    }
  free(service);
  return NM_ESUCCESS;
}

nm_gate_t nm_rpc_get_source(nm_rpc_token_t token) { return token->gate; }
nm_tag_t nm_rpc_get_tag(nm_rpc_token_t token) { return token->tag; }
nm_len_t nm_rpc_get_body_size(nm_rpc_token_t token) { return token->body_len; }
nm_session_t nm_rpc_get_session(nm_rpc_token_t token) { return token->service->channel->user; }
void nm_rpc_token_set_ref(nm_rpc_token_t token, void *ref) { token->ref = ref; }
void *nm_rpc_token_get_ref(nm_rpc_token_t token) { return token->ref; }
int nm_rpc_token_status(nm_rpc_token_t token) { return token->status; }

int nm_rpc_irecv_body(nm_rpc_token_t token, void *buf, nm_len_t len)
{
  if (!token->in || token->accepted || (len && !buf))
    return -NM_EINVAL; /* token->in exists only inside the handler, which runs under the core lock */
  nm_core_req_init(&token->req, token->service->channel->chan, NM_REQ_RECV);
  token->accepted = 1;
  return nm_core_incoming_accept(token->in, &token->req, buf, len);
}

int nm_rpc_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *header, nm_len_t hlen,
                 const void *body, nm_len_t blen, nm_rpc_req_t *req)
{
  if (!session || !req || hlen > NM_RPC_HLEN_MAX || (hlen && !header) || (blen && !body) ||
      !gate || nm_gate_get_core(gate) != nm_session_get_core(session))
    return -NM_EINVAL;
  NM_CORE_LOCKED(nm_session_get_core(session));
  struct nm_rpc_channel_s *ch;
  int err = nm_rpc_channel(session, &ch);
  if (err)
    return err;
  if (req->kind == NM_REQ_NONE)
    nm_core_req_init(req, ch->chan, NM_REQ_SEND);
  /* -NM_EINVAL for a request that is not a fresh send; the message goes on the channel, not the user session */
  return nm_core_req_isend(req, ch->chan, gate, tag, header, hlen, body, blen, 0);
}

int nm_rpc_send(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *header, nm_len_t hlen,
                const void *body, nm_len_t blen)
{
  nm_rpc_req_t req;
  memset(&req, 0, sizeof(req));
  int err = nm_rpc_isend(session, gate, tag, header, hlen, body, blen, &req);
  if (err && !req.completed)
    return err;
  return nm_core_req_wait(session, &req, 0);
}
