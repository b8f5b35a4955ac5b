/* Rendezvous (RDV -> RTR -> data) and synchronous-send acknowledgements.
 * Large data moves as one driver "large" transfer straight from the send buffer into the receive buffer
 * (tagged messages matched by a receiver-chosen rendezvous tag): no intermediate copy in nmad. */
#include "nm_core_private.h"
#include <string.h>

/* rdv_sends is indexed by cookie (nm_match_hash.c): one lookup, whatever the number of sends in flight. */
static struct nm_req_s *nm_rdv_find(struct nm_gate_s *gate, uint64_t cookie)
{
  return nm_req_index_find(&gate->rdv_sends, cookie);
}

static struct nm_large_s *nm_large_new(struct nm_gate_s *gate, struct nm_req_s *req, int rail, int is_send)
{
  struct nm_large_s *l = nm_pool_get(&gate->core->large_pool);
  if (!l)
    return NULL;
  l->req = req;
  l->gate = gate;
  l->rail = rail;
  l->is_send = is_send;
  gate->core->n_large++;
  l->prev = NULL;
  l->next = gate->large;
  if (gate->large)
    gate->large->prev = l;
  gate->large = l;
  return l;
}

static void nm_large_release(struct nm_large_s *l)
{
  struct nm_gate_s *gate = l->gate;
  if (l->prev)
    l->prev->next = l->next;
  else
    gate->large = l->next;
  if (l->next)
    l->next->prev = l->prev;
  gate->core->n_large--;
  nm_pool_put(&gate->core->large_pool, l);
}

static int nm_gate_queue_ctrl(struct nm_gate_s *gate, uint8_t type, uint8_t rail, uint64_t cookie,
                              uint64_t offset, uint64_t len, uint64_t rtag, nm_prio_t prio)
{
  struct nm_ctrl_s *c = nm_gate_new_ctrl(gate, type);
  if (!c)
    return -NM_ENOMEM;
  c->prio = prio; /* the strategy orders the control queue by it (issue 15: RTRs carry their message's priority) */
  c->rail = rail;
  c->cookie = cookie;
  c->offset = offset;
  c->len = len;
  c->rtag = rtag;
  nm_gate_push_ctrl(gate, c);
  return NM_ESUCCESS;
}

void nm_rdv_send_ack(struct nm_gate_s *gate, uint64_t cookie)
{
  if (nm_gate_queue_ctrl(gate, NM_WIRE_ACK, 0, cookie, 0, 0, 0, 0))
    nm_gate_fail(gate, -NM_ENOMEM);
}

void nm_rdv_post(struct nm_req_s *req, struct nm_gate_s *gate, uint64_t cookie, nm_len_t offset, void *buf,
                 nm_len_t n)
{
  struct nm_core_s *core = gate->core;
  const int rail = 0;
  uint64_t rtag = core->next_rtag++;
  if (req)
    req->state = NM_RS_RDV;
  if (n > 0) {
    struct nm_large_s *l = nm_large_new(gate, req, rail, 0);
    struct nm_drv_s *drv = gate->rails[rail].drv;
    int err = l ? drv->ops->large_recv(drv, gate->rails[rail].peer, buf, n, rtag, l) : -NM_ENOMEM;
    if (err) {
      if (l)
        nm_large_release(l);
      if (req)
        nm_req_complete(req, err);
      nm_gate_fail(gate, err);
      return;
    }
  }
  /* The receive is posted before the RTR leaves, so the data always finds it. */
  if (nm_gate_queue_ctrl(gate, NM_WIRE_RTR, rail, cookie, offset, n, rtag, req ? req->prio : 0)) {
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  if (n == 0 && req)
    nm_req_complete(req, (req->flags & NM_REQF_TRUNC) ? -NM_ETRUNCATED : NM_ESUCCESS);
}

void nm_rdv_accept(struct nm_req_s *req, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  /* The message is [inline prefix][rest]; the receive buffer takes as much of it as fits. */
  nm_len_t n = c->msg_len < req->len ? c->msg_len : req->len;
  if (c->msg_len > req->len)
    req->flags |= NM_REQF_TRUNC;
  nm_len_t p = c->len < n ? c->len : n;
  if (p)
    memcpy(req->buf, c->payload, p);
  nm_rdv_post(req, gate, c->cookie, c->len, (char *)req->buf + c->len, n > c->len ? n - c->len : 0);
}

int nm_rdv_handle_rtr(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  struct nm_req_s *req = nm_rdv_find(gate, c->cookie);
  uint64_t len = c->msg_len; /* RTR: bytes requested */
  /* Only the part after the inline header can be asked for. */
  if (!req || !nm_req_is_rdv(gate->core, req) || c->offset < req->hdr_len ||
      c->offset > nm_req_total(req) || len > nm_req_total(req) - c->offset || c->rail >= gate->n_rails)
    return -NM_EPROTO;
  nm_req_list_remove(&gate->rdv_sends, req);
  if (len == 0) {
    nm_req_complete(req, NM_ESUCCESS);
    return NM_ESUCCESS;
  }
  struct nm_large_s *l = nm_large_new(gate, req, c->rail, 1);
  if (!l) {
    nm_req_complete(req, -NM_ENOMEM);
    return -NM_ENOMEM;
  }
  struct nm_rail_s *rail = &gate->rails[c->rail];
  const char *src = (const char *)req->buf + (c->offset - req->hdr_len);
  int err = rail->drv->ops->large_send(rail->drv, rail->peer, src, len, c->rtag, l);
  if (err) {
    nm_large_release(l);
    nm_req_complete(req, err);
    return err;
  }
  return NM_ESUCCESS;
}

int nm_rdv_handle_ack(struct nm_gate_s *gate, uint64_t cookie)
{
  struct nm_req_s *req = nm_rdv_find(gate, cookie);
  if (!req || !(req->flags & NM_REQF_SYNC) || (req->flags & NM_REQF_ACKED))
    return -NM_EPROTO;
  req->flags |= NM_REQF_ACKED;
  if (req->flags & NM_REQF_SENT) {
    nm_req_list_remove(&gate->rdv_sends, req);
    nm_req_complete(req, NM_ESUCCESS);
  }
  return NM_ESUCCESS;
}

void nm_core_large_done(void *ref, void *ctx, int err, size_t len)
{
  struct nm_large_s *l = ctx;
  struct nm_gate_s *gate = l->gate;
  struct nm_req_s *req = l->req;
  int is_send = l->is_send;
  nm_large_release(l);
  if (!req)
    return; /* detached: the gate failed meanwhile */
  if (err) {
    nm_req_complete(req, -NM_ECLOSED);
    nm_gate_fail(gate, -NM_ECLOSED);
    return;
  }
  if (is_send)
    nm_req_complete(req, NM_ESUCCESS);
  else
    nm_req_complete(req, (req->flags & NM_REQF_TRUNC) ? -NM_ETRUNCATED : NM_ESUCCESS);
}
