/* Outgoing path: queue sends on gates, let the strategy build packets when a rail is ready, post them. */
#include "nm_core_private.h"
#include <string.h>

/* Whether a message of @p total bytes goes by rendezvous on @p gate whatever its flags: above the threshold, or
 * too little eager credit left. */
static int nm_len_rdv(const struct nm_gate_s *gate, nm_len_t total)
{
  return total > gate->core->cfg.rdv_threshold || nm_credit_short(gate, total);
}

/* Whether @p req leaves by rendezvous: asked to, too large for eager, or its gate's eager credit is short
 * (nm_credit.c). */
static int nm_pw_req_rdv(const struct nm_gate_s *gate, const struct nm_req_s *req)
{
  return (req->flags & NM_REQF_RDV) || nm_len_rdv(gate, nm_req_total(req));
}

/* Bytes @p req takes in a packet, going by rendezvous (@p rdv) or eager. */
static size_t nm_pw_req_size(const struct nm_req_s *req, int rdv)
{
  if (rdv)
    return NM_WIRE_RDV_LEN + req->hdr_len; /* the header travels inline with the RDV */
  return nm_wire_data_size(nm_req_total(req), req->flags & NM_REQF_SYNC, req->hdr_len > 0);
}

static size_t nm_ctrl_size(const struct nm_ctrl_s *c)
{
  switch (c->type) {
  case NM_WIRE_RTR:
    return NM_WIRE_RTR_LEN;
  case NM_WIRE_ACK:
    return NM_WIRE_ACK_LEN;
  case NM_WIRE_CREDIT:
    return NM_WIRE_CREDIT_LEN;
  default:
    return NM_WIRE_CANCEL_LEN;
  }
}

_Static_assert(2 * NM_PW_GAPS + 1 <= NM_DRV_SENDV_MAX, "a packet's pieces fit a driver's sendv()");

void nm_pw_put_payload(struct nm_pw_s *pw, uint8_t *dst, const void *src, size_t len)
{
  if (len >= NM_PW_GAP_MIN && pw->n_gaps < NM_PW_GAPS && pw->gate->rails[pw->rail].drv->ops->sendv) {
    pw->gaps[pw->n_gaps++] = (struct nm_pw_gap_s){(uint32_t)(dst - pw->buf), (uint32_t)len, src};
    return;
  }
  memcpy(dst, src, len);
}

/* Copy the payloads left in their senders' buffers into the packet: it is then whole in buf. */
static void nm_pw_fill_gaps(struct nm_pw_s *pw)
{
  for (int i = 0; i < pw->n_gaps; i++)
    memcpy(pw->buf + pw->gaps[i].off, pw->gaps[i].src, pw->gaps[i].len);
  pw->n_gaps = 0;
}

/* @p pw in pieces into @p iov (NM_DRV_SENDV_MAX entries): the core's bytes around the gaps, the gaps from the
 * senders' buffers. @return the number of pieces. */
static int nm_pw_iov(const struct nm_pw_s *pw, struct iovec *iov)
{
  int n = 0;
  size_t at = 0;
  for (int i = 0; i < pw->n_gaps; i++) {
    const struct nm_pw_gap_s *g = &pw->gaps[i];
    if (g->off > at)
      iov[n++] = (struct iovec){(void *)(pw->buf + at), g->off - at};
    iov[n++] = (struct iovec){(void *)g->src, g->len};
    at = (size_t)g->off + g->len;
  }
  if (pw->len > at)
    iov[n++] = (struct iovec){(void *)(pw->buf + at), pw->len - at};
  return n;
}

/* Hand @p pw to its driver: an urgent packet by the driver's send_urgent if it has one and room; else in pieces
 * (nm_pw_iov()) to a driver with sendv(), or whole. */
static int nm_pw_send(struct nm_drv_s *drv, uint64_t peer, struct nm_pw_s *pw)
{
  drv->quiet_calls = 0; /* polled every pass for a while: an injected packet may be leaving (NM_DRV_QUIET_AFTER) */
  struct iovec iov[NM_DRV_SENDV_MAX];
  if (pw->urgent) {
    if (drv->ops->send_urgent && pw->len <= drv->props.urgent_max) {
      int rc = drv->ops->send_urgent(drv, peer, iov, nm_pw_iov(pw, iov), pw->len, pw);
      if (rc != -NM_EAGAIN)
        return rc;
    }
    if (drv->ops->backlog) { /* urgent traffic in the peer's main queue: keep bulk short behind it a while */
      uint64_t now = nm_core_time_ns(pw->gate->core);
      pw->gate->urgent_ns = now ? now : 1;
    }
  }
  if (!pw->n_gaps)
    return drv->ops->send(drv, peer, pw->buf, pw->len, pw);
  return drv->ops->sendv(drv, peer, iov, nm_pw_iov(pw, iov), pw->len, pw);
}

int nm_pw_pack_ctrl(struct nm_pw_s *pw)
{
  struct nm_gate_s *gate = pw->gate;
  struct nm_ctrl_s *c = gate->ctrl_head;
  if (!c || nm_ctrl_size(c) > nm_pw_room(pw))
    return 0;
  gate->ctrl_head = c->next;
  if (!gate->ctrl_head)
    gate->ctrl_tail = NULL;
  uint8_t *p = pw->buf + pw->len;
  if (c->type == NM_WIRE_RTR)
    pw->len += nm_wire_put_rtr_n(p, c->rail, c->cookie, c->offset, c->len, c->rtag, c->n_rtr);
  else if (c->type == NM_WIRE_ACK)
    pw->len += nm_wire_put_ack(p, c->cookie);
  else if (c->type == NM_WIRE_CREDIT)
    pw->len += nm_wire_put_credit(p, c->cookie);
  else
    pw->len += nm_wire_put_cancel(p, c->type, c->result, c->session, c->tag, c->seq);
  pw->n_chunks++;
  nm_pool_put(&gate->core->ctrl_pool, c);
  return 1;
}

int nm_pw_pack_req(struct nm_pw_s *pw, struct nm_req_s *req)
{
  struct nm_gate_s *gate = pw->gate;
  struct nm_core_s *core = gate->core;
  int rdv = !req->frag_off && nm_pw_req_rdv(gate, req); /* a message being cut went eager at its first piece */
  if (!rdv && nm_frag_wanted(pw, req))
    return nm_frag_pack(pw, req);
  size_t size = nm_pw_req_size(req, rdv);
  if (size > nm_pw_room(pw) || pw->n_chunks == UINT16_MAX)
    return 0;
  if (gate->core->cfg.strategy->dequeued)
    gate->core->cfg.strategy->dequeued(gate, req);
  nm_req_list_remove(&gate->send_queue, req);
  uint8_t *p = pw->buf + pw->len;
  uint32_t sid = req->session->id;
  nm_len_t total = nm_req_total(req);
  if (rdv) {
    if (total <= core->cfg.rdv_threshold)
      core->stats.rdv_for_credit++;
    req->flags |= NM_REQF_RDV;
    /* Large: only the RDV (and the header, if any) travels now; the rest goes when the receiver's RTR names
     * where (nm_rdv.c). */
    req->cookie = core->next_cookie++;
    if (nm_rdv_get_wanted(gate, req)) { /* the data announced with the RDV (nm_rdv.c); on failure, asked by RTR */
      req->cookie |= NM_COOKIE_GET;
      if (nm_rdv_get_announce(gate, req))
        req->cookie &= ~NM_COOKIE_GET;
    }
    size_t h = nm_wire_put_rdv(p, sid, req->tag, req->seq, total, req->cookie, (uint32_t)req->hdr_len);
    if (req->hdr_len)
      memcpy(p + h, req->hdr, req->hdr_len);
    req->state = NM_RS_RDV;
    if (req->flags & NM_REQF_CANCELLED) /* withdrawn before it left: the RDV still goes, for its sequence number */
      nm_req_complete(req, -NM_ECANCELED);
    else
      nm_req_list_append(&gate->rdv_sends, req);
  } else {
    nm_credit_charge(gate, total);
    int sync = req->flags & NM_REQF_SYNC;
    if (sync) {
      req->cookie = core->next_cookie++;
      nm_req_list_append(&gate->rdv_sends, req); /* found there by its ACK */
    }
    size_t h = nm_wire_put_data_hdr(p, sid, req->tag, req->seq, (uint32_t)total, sync, req->cookie,
                                    (uint32_t)req->hdr_len);
    if (req->hdr_len)
      memcpy(p + h, req->hdr, req->hdr_len);
    if (req->len)
      nm_pw_put_payload(pw, p + h + req->hdr_len, req->buf, req->len);
    req->state = NM_RS_PACKED;
    req->pw_next = NULL;
    if (pw->reqs_tail)
      pw->reqs_tail->pw_next = req;
    else
      pw->reqs = req;
    pw->reqs_tail = req;
  }
  pw->len += size;
  pw->n_chunks++;
  return 1;
}

/* The packet left (or failed): complete the sends it carried. Sync sends also wait for their ACK. */
static void nm_pw_complete(struct nm_pw_s *pw, int err)
{
  struct nm_gate_s *gate = pw->gate;
  struct nm_req_s *r = pw->reqs;
  pw->reqs = pw->reqs_tail = NULL;
  while (r) {
    struct nm_req_s *next = r->pw_next;
    if (!err && (r->flags & (NM_REQF_CANCEL | NM_REQF_CANCELLED))) {
      nm_cancel_data_left(gate, r); /* its completion waits for the cancel's outcome (nm_cancel.c) */
    } else if (!(r->flags & NM_REQF_SYNC)) {
      nm_req_complete(r, err);
    } else if (err) {
      /* left to nm_gate_fail(), which completes everything in rdv_sends */
    } else {
      r->flags |= NM_REQF_SENT;
      if (r->flags & NM_REQF_ACKED) {
        nm_req_list_remove(&gate->rdv_sends, r);
        nm_req_complete(r, NM_ESUCCESS);
      }
    }
    r = next;
  }
  nm_pool_put(&gate->core->pw_pool, pw);
}

static void nm_gate_unlink_pw(struct nm_gate_s *gate, struct nm_pw_s *pw)
{
  for (struct nm_pw_s **pp = &gate->inflight_pws; *pp; pp = &(*pp)->next)
    if (*pp == pw) {
      *pp = pw->next;
      return;
    }
}

void nm_core_send_done(void *ref, void *ctx, int err)
{
  struct nm_pw_s *pw = ctx;
  struct nm_gate_s *gate = pw->gate;
  gate->rails[pw->rail].inflight--;
  nm_gate_unlink_pw(gate, pw);
  if (err) {
    nm_pw_complete(pw, -NM_ECLOSED);
    nm_gate_fail(gate, -NM_ECLOSED);
    return;
  }
  nm_pw_complete(pw, NM_ESUCCESS);
  if (nm_gate_has_work(gate))
    nm_gate_mark_work(gate);
}

struct nm_pw_s *nm_strat_pw_new(struct nm_gate_s *gate, int rail)
{
  struct nm_core_s *core = gate->core;
  struct nm_pw_s *pw = nm_pool_get(&core->pw_pool);
  if (!pw)
    return NULL;
  pw->gate = gate;
  pw->rail = rail;
  pw->n_chunks = 0;
  pw->urgent = 0;
  pw->len = NM_WIRE_PKT_HDR_LEN;
  pw->cap = core->pw_cap;
  pw->n_gaps = 0;
  pw->reqs = pw->reqs_tail = NULL;
  pw->next = NULL;
  return pw;
}

void nm_strat_pw_drop(struct nm_pw_s *pw)
{
  nm_pool_put(&pw->gate->core->pw_pool, pw);
}

/* A packet of @p gate completed at post on @p rail: the gate's rail counts as busy until the next progress pass, so
 * that a burst of sends to it between two passes is aggregated instead of going one by one; so does the whole
 * driver if its peers share one queue (NM_DRV_F_PACED), so that the next pass picks the most urgent gate's packet.
 * The pieces of a message being cut are one message: they go on at once. */
static void nm_rail_done_at_post(struct nm_gate_s *gate, struct nm_rail_s *rail)
{
  if (nm_frag_cutting(gate))
    return;
  const uint64_t busy = gate->core->pass + 1;
  rail->inject_pass = busy;
  if (rail->drv->props.flags & NM_DRV_F_PACED)
    rail->drv->inject_pass = busy;
}

int nm_strat_pw_post(struct nm_pw_s *pw)
{
  struct nm_gate_s *gate = pw->gate;
  struct nm_core_s *core = gate->core;
  struct nm_rail_s *rail = &gate->rails[pw->rail];
  struct nm_drv_s *drv = rail->drv;
  /* Sealed again on a retry: harmless, the header depends on the packet only. */
  nm_wire_put_pkt_hdr_key(pw->buf, pw->n_chunks, (uint32_t)core->rank, (uint32_t)pw->len, core->door.job_key);
  int rc = nm_pw_send(drv, rail->peer, pw);
  if (rc == 1) {
    nm_rail_done_at_post(gate, rail);
    nm_pw_complete(pw, NM_ESUCCESS);
  } else if (rc == 0) {
    rail->inflight++;
    pw->next = gate->inflight_pws;
    gate->inflight_pws = pw;
  } else if (rc == -NM_EAGAIN) {
    nm_pw_fill_gaps(pw); /* it waits whole: nothing of it refers to the senders' buffers any more */
    rail->retry = pw;
    core->n_retry++;
    return 0;
  } else {
    nm_pw_complete(pw, -NM_ECLOSED);
    nm_gate_fail(gate, -NM_ECLOSED);
  }
  return 1;
}

int nm_core_schedule_gate(struct nm_gate_s *gate)
{
  if (gate->status)
    return 0;
  return gate->core->cfg.strategy->try_and_commit(gate);
}

/* The priority the work list orders a gate by: its strategy's view of its most urgent pending work. */
nm_prio_t nm_work_prio(const struct nm_gate_s *gate)
{
  const struct nm_strategy_ops_s *st = gate->core->cfg.strategy;
  return st->gate_prio && (gate->send_queue.head || gate->ctrl_head) ? st->gate_prio(gate) : 0;
}

/* Serve the gates with pending work in decreasing priority of their most urgent work (FIFO among equals), so
 * that when the drivers free up, the urgent traffic of one peer goes before the bulk of another (a forwarder's
 * urgent child first). The list is re-sorted at each pass: priorities change as queues drain. Equal priorities,
 * the common case, insert at the tail in O(1). */
int nm_core_schedule(nm_core_t core)
{
  struct nm_gate_s *g = core->work_head, *head = NULL, *tail = NULL;
  core->work_head = core->work_tail = NULL;
  core->work_prio_max = NM_PRIO_LOWEST;
  while (g) {
    struct nm_gate_s *next = g->work_next;
    g->work_prio = nm_work_prio(g);
    if (!tail || tail->work_prio >= g->work_prio) {
      g->work_next = NULL;
      if (tail)
        tail->work_next = g;
      else
        head = g;
      tail = g;
    } else {
      struct nm_gate_s **pp = &head;
      while ((*pp)->work_prio >= g->work_prio)
        pp = &(*pp)->work_next;
      g->work_next = *pp;
      *pp = g;
    }
    g = next;
  }
  int n = 0;
  for (g = head; g;) {
    struct nm_gate_s *next = g->work_next;
    /* Cleared only now: a gate further down that gets work meanwhile (a monitor posting from a completion) stays
     * marked, so it is not linked into the new list while this loop still walks it. */
    g->in_work_list = 0;
    n += nm_core_schedule_gate(g);
    if (nm_gate_has_work(g))
      nm_gate_mark_work(g);
    g = next;
  }
  return n;
}

/* Largest message nm_send_direct() takes: above it the copy, not the packet's set-up, is the cost. */
#define NM_SEND_DIRECT_MAX 4096

/* The message nm_send_direct_msg() writes: a request's fields, or nm_core_send_now()'s arguments. */
struct nm_direct_msg_s {
  uint32_t session;
  nm_tag_t tag;
  nm_seq_t seq;
  const void *hdr;
  nm_len_t hdr_len;
  const void *buf;
  nm_len_t len;
};

/* The packet of nm_send_direct_msg() for a driver without sendv() that injects whole packets (NM_DRV_F_SEND_AT_POST:
 * libfabric's fi_inject, up to the provider's inject size): gathered on the stack, in a frame of its own so that
 * sm's path keeps a small one. @return as the driver's send() with a NULL context: 1, -NM_EAGAIN or an error. */
static __attribute__((noinline)) int nm_send_direct_copy(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov,
                                                         int n, size_t len)
{
  uint8_t pkt[NM_WIRE_PKT_HDR_LEN + NM_WIRE_MSG_HDR_LEN + NM_WIRE_PREFIX_LEN + NM_SEND_DIRECT_MAX];
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    memcpy(pkt + off, iov[i].iov_base, iov[i].iov_len);
    off += iov[i].iov_len;
  }
  return drv->ops->send(drv, peer, pkt, len, NULL);
}

/* A small eager message to an idle gate whose one rail copies packets at post (NM_DRV_F_SEND_AT_POST: sm, and
 * libfabric with fi_inject) leaves at once in a packet of its own, written around the caller's bytes, without the
 * send queue, a packet wrapper and the strategy's loop: with nothing queued on the gate, nothing more urgent waiting anywhere, no
 * refused packet and the rail free in this pass, that loop would build exactly this packet (one DATA chunk), at
 * about twice the instructions (issue 18: a small collective's cost is its sends; doc/performance.md, "A lone
 * small send goes straight to sm"). The rail then counts as busy until the next pass, as after any packet that
 * completed at post, so that a burst behind this message aggregates as before. The caller rules out what must
 * take the usual path: sync, urgent (prio > 0: the strategy's express path) and forced-rendezvous sends.
 * @return 1 if it left, 0 if not taken (nothing was done), -NM_ECLOSED if the driver failed (the gate failed). */
static int nm_send_direct_msg(struct nm_gate_s *gate, const struct nm_direct_msg_s *m)
{
  struct nm_core_s *core = gate->core;
  struct nm_rail_s *rail = &gate->rails[0];
  struct nm_drv_s *drv = rail->drv;
  if (gate->n_rails != 1 || !(drv->props.flags & NM_DRV_F_SEND_AT_POST) || gate->send_queue.head || gate->ctrl_head ||
      gate->urgent_ns || core->n_retry || core->work_head)
    return 0;
  const uint64_t busy = core->pass + 1; /* the stamp nm_rail_done_at_post() leaves for this pass */
  nm_len_t total = m->hdr_len + m->len;
  if (rail->inflight || rail->retry || rail->inject_pass == busy || drv->inject_pass == busy ||
      total > NM_SEND_DIRECT_MAX || nm_len_rdv(gate, total))
    return 0;
  size_t len = NM_WIRE_PKT_HDR_LEN + nm_wire_data_size(total, 0, m->hdr_len > 0);
  if (len > core->pw_cap || len > drv->props.inject_size)
    return 0; /* the strategy would cut it (nm_frag_wanted()) */
  uint8_t head[NM_WIRE_PKT_HDR_LEN + NM_WIRE_MSG_HDR_LEN + NM_WIRE_PREFIX_LEN];
  size_t h = NM_WIRE_PKT_HDR_LEN + nm_wire_put_data_hdr(head + NM_WIRE_PKT_HDR_LEN, m->session, m->tag, m->seq,
                                                        (uint32_t)total, 0, 0, (uint32_t)m->hdr_len);
  nm_wire_put_pkt_hdr_key(head, 1, (uint32_t)core->rank, (uint32_t)len, core->door.job_key);
  struct iovec iov[3];
  int n = 0;
  iov[n++] = (struct iovec){head, h};
  if (m->hdr_len)
    iov[n++] = (struct iovec){(void *)m->hdr, m->hdr_len};
  if (m->len)
    iov[n++] = (struct iovec){(void *)m->buf, m->len};
  drv->quiet_calls = 0;
  int rc = drv->ops->sendv ? drv->ops->sendv(drv, rail->peer, iov, n, len, NULL)
                           : nm_send_direct_copy(drv, rail->peer, iov, n, len);
  if (rc == -NM_EAGAIN)
    return 0;
  if (rc < 0) {
    nm_gate_fail(gate, -NM_ECLOSED);
    return -NM_ECLOSED;
  }
  nm_credit_charge(gate, total);
  nm_rail_done_at_post(gate, rail);
  return 1;
}

/* nm_send_direct_msg() for a posted send request: @return 1 if @p req completed (left, or failed with its gate),
 * 0 if the caller queues it (nothing was done). */
static int nm_send_direct(struct nm_gate_s *gate, struct nm_req_s *req)
{
  if (req->prio > 0 || (req->flags & (NM_REQF_SYNC | NM_REQF_RDV)))
    return 0;
  struct nm_direct_msg_s m = {req->session->id, req->tag, req->seq, req->hdr, req->hdr_len, req->buf, req->len};
  int rc = nm_send_direct_msg(gate, &m);
  if (rc == 0)
    return 0;
  if (rc < 0) {
    nm_req_complete(req, rc);
    return 1;
  }
  req->state = NM_RS_PACKED;
  nm_req_complete(req, NM_ESUCCESS);
  return 1;
}

int nm_core_send_now(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len)
{
  if (!session || !gate || gate->core != session->core || (len && !buf))
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  if (gate->status)
    return 0; /* the usual path reports it on its request */
  struct nm_seq_s *s = nm_gate_seq(gate, session->id, tag);
  if (!s)
    return 0;
  struct nm_direct_msg_s m = {session->id, tag, s->next_send, NULL, 0, buf, len};
  int rc = nm_send_direct_msg(gate, &m);
  if (rc == 1)
    s->next_send++;
  return rc == 1; /* a driver failure failed the gate: the usual path completes its request with the error */
}

int nm_core_post_send(struct nm_req_s *req)
{
  struct nm_gate_s *gate = req->gate;
  if (gate->status) {
    int err = gate->status;
    nm_req_complete(req, err);
    return err;
  }
  struct nm_seq_s *s = nm_gate_seq(gate, req->session->id, req->tag);
  if (!s) {
    nm_req_complete(req, -NM_ENOMEM);
    return -NM_ENOMEM;
  }
  req->seq = s->next_send++;
  req->frag_off = 0;
  if (nm_send_direct(gate, req))
    return NM_ESUCCESS;
  req->state = NM_RS_QUEUED;
  struct nm_core_s *core = gate->core;
  core->cfg.strategy->pack_data(gate, req);
  /* Post now unless gates with more urgent work wait for the drivers: they go first, at the next pass. */
  if (!core->work_head || core->work_prio_max <= req->prio)
    nm_core_schedule_gate(gate);
  /* what the rails could not take now leaves at a later progress pass */
  if (nm_gate_has_work(gate))
    nm_gate_mark_work(gate);
  return NM_ESUCCESS;
}
