/* Rendezvous (RDV -> RTR -> data) and synchronous-send acknowledgements.
 * Large data moves as driver "large" transfers straight from the send buffer into the receive buffer (tagged
 * messages matched by a receiver-chosen rendezvous tag): no intermediate copy in nmad.
 *
 * The receiver decides how a message moves (issue 15, parts 2 and 3): the strategy's rdv_accept cuts it into
 * pieces across the gate's rails (split_balance), and each piece is asked for in chunks of at most
 * NMAD_RDV_CHUNK bytes, one RTR (rail, offset, len, rendezvous tag) per chunk, at most NM_RDV_CHUNKS_PER_RAIL
 * chunks in flight per (gate, rail), the chunks of higher-priority receives first. Between two chunks of a bulk
 * transfer the rail is free for the packets and chunks of more urgent messages. Every RTR carries the number of
 * RTRs of its message, so that the sender knows when the last chunk left. A request completes when all its
 * chunks are done; a chunk that fails fails the gate, which completes everything bound to it. */
#include "nm_core_private.h"
#include <stdlib.h>
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
  l->rdv = NULL;
  l->deferred = 0;
  l->uncounted = 0;
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
  if (!l->uncounted)
    gate->core->n_large--;
  nm_pool_put(&gate->core->large_pool, l);
}

/* Hand large send @p l to its rail's driver. @return 0, -NM_EAGAIN (no room now) or the driver's error. */
static int nm_large_send_post(struct nm_large_s *l)
{
  struct nm_rail_s *rail = &l->gate->rails[l->rail];
  return rail->drv->ops->large_send(rail->drv, rail->peer, l->buf, l->len, l->rtag, l);
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

/* ---- chunked rendezvous records (struct nm_rdv_s) ---- */

static void nm_rdv_link(struct nm_gate_s *gate, struct nm_rdv_s *x)
{
  /* Receivers by decreasing priority (FIFO among equals), so that the pump serves the most urgent first;
   * senders at the tail (their order does not matter). */
  struct nm_rdv_s *pos = gate->rdv.tail;
  while (!x->is_send && pos && (pos->is_send || pos->prio < x->prio))
    pos = pos->prev;
  x->prev = pos;
  x->next = pos ? pos->next : gate->rdv.head;
  if (x->next)
    x->next->prev = x;
  else
    gate->rdv.tail = x;
  if (pos)
    pos->next = x;
  else
    gate->rdv.head = x;
}

static void nm_rdv_free(struct nm_rdv_s *x)
{
  struct nm_gate_s *gate = x->gate;
  if (x->prev)
    x->prev->next = x->next;
  else
    gate->rdv.head = x->next;
  if (x->next)
    x->next->prev = x->prev;
  else
    gate->rdv.tail = x->prev;
  if (x->is_send) {
    HASH_DEL(gate->rdv.by_cookie, x);
    if (x->rtr_done < x->n_rtr)
      gate->core->n_large--; /* see nm_rdv_handle_rtr() */
  }
  free(x);
}

/* Whether every chunk of x was asked for (receiver) or announced (sender) and has left the driver. */
static int nm_rdv_finished(const struct nm_rdv_s *x)
{
  return x->inflight == 0 && x->rtr_done == x->n_rtr;
}

/* Receiver: ask for the next chunk of x on a rail with room. @return 1 asked, 0 no room, <0 error. */
static int nm_rdv_ask_chunk(struct nm_rdv_s *x)
{
  struct nm_gate_s *gate = x->gate;
  struct nm_core_s *core = gate->core;
  for (int k = 0; k < x->n_pieces; k++) {
    int i = (x->next_piece + k) % x->n_pieces;
    struct nm_rdv_chunk_s *p = &x->pieces[i];
    if (p->len == 0 || gate->rdv.inflight[p->rail] >= NM_RDV_CHUNKS_PER_RAIL)
      continue;
    nm_len_t n = p->len < x->chunk ? p->len : x->chunk;
    uint64_t rtag = core->next_rtag++;
    struct nm_large_s *l = nm_large_new(gate, x->req, p->rail, 0);
    if (!l)
      return -NM_ENOMEM;
    l->rdv = x;
    struct nm_drv_s *drv = gate->rails[p->rail].drv;
    int err = drv->ops->large_recv(drv, gate->rails[p->rail].peer, x->buf + p->offset, n, rtag, l);
    if (err == -NM_EAGAIN) { /* the driver's queue is full: no RTR without its receive; ask again later */
      nm_large_release(l);
      if (!gate->rdv.pump_retry++)
        core->rdv_pump_retry++;
      return 0;
    }
    if (err) {
      nm_large_release(l);
      return err;
    }
    x->inflight++;
    gate->rdv.inflight[p->rail]++;
    /* The receive is posted before the RTR leaves, so the data always finds it. */
    struct nm_ctrl_s *c = nm_gate_new_ctrl(gate, NM_WIRE_RTR);
    if (!c)
      return -NM_ENOMEM;
    c->prio = x->prio; /* the strategy orders the control queue by it: RTRs carry their message's priority */
    c->rail = (uint8_t)p->rail;
    c->cookie = x->cookie;
    c->offset = x->base + p->offset;
    c->len = n;
    c->rtag = rtag;
    c->n_rtr = x->n_rtr;
    nm_gate_push_ctrl(gate, c);
    x->rtr_done++;
    p->offset += n;
    p->len -= n;
    x->next_piece = (i + 1) % x->n_pieces;
    return 1;
  }
  return 0;
}

/* Receiver: ask for chunks while rails have room, the most urgent messages first. A failure fails the gate. */
static void nm_rdv_pump(struct nm_gate_s *gate)
{
  for (struct nm_rdv_s *x = gate->rdv.head; x && !x->is_send && !gate->status;) {
    struct nm_rdv_s *next = x->next;
    int rc = x->req ? nm_rdv_ask_chunk(x) : 0;
    if (rc < 0) {
      nm_gate_fail(gate, rc);
      return;
    }
    if (rc == 0)
      x = next; /* no room for this one (its rails are full): a later one may use another rail */
  }
}

/* A chunk of x left the driver (err: its status). */
static void nm_rdv_chunk_done(struct nm_rdv_s *x, int rail, int err)
{
  struct nm_gate_s *gate = x->gate;
  x->inflight--;
  if (!x->is_send)
    gate->rdv.inflight[rail]--;
  struct nm_req_s *req = x->req;
  int is_send = x->is_send;
  if (req && err) {
    x->req = NULL;
    nm_req_complete(req, -NM_ECLOSED);
    nm_gate_fail(gate, -NM_ECLOSED); /* frees x unless other chunks of it are in a driver */
    return;
  }
  if (!req) { /* detached by a gate failure: wait for the last chunk */
    if (x->inflight == 0)
      nm_rdv_free(x);
    return;
  }
  if (nm_rdv_finished(x)) {
    int status = (!x->is_send && (req->flags & NM_REQF_TRUNC)) ? -NM_ETRUNCATED : NM_ESUCCESS;
    nm_rdv_free(x);
    nm_req_complete(req, status);
  }
  if (!is_send) /* a rail slot is free */
    nm_rdv_pump(gate);
}

void nm_rdv_gate_fail(struct nm_gate_s *gate, int err)
{
  for (struct nm_large_s *l = gate->large; l; l = l->next)
    if (l->rdv)
      l->req = NULL; /* completed once below, not once per chunk by nm_gate_fail() */
  for (struct nm_rdv_s *x = gate->rdv.head, *next; x; x = next) {
    next = x->next;
    struct nm_req_s *req = x->req;
    x->req = NULL;
    x->n_pieces = 0;
    if (x->inflight == 0)
      nm_rdv_free(x);
    if (req)
      nm_req_complete(req, err);
  }
}

void nm_rdv_gate_destroy(struct nm_gate_s *gate)
{
  while (gate->rdv.head)
    nm_rdv_free(gate->rdv.head);
}

/* Receiver: the pieces the strategy chose, checked (a strategy is code of ours, but a wrong split would write
 * outside the buffer): in order, contiguous, on existing rails, covering [0, n). */
static int nm_rdv_plan(struct nm_gate_s *gate, nm_len_t n, int prio, struct nm_rdv_chunk_s *pieces)
{
  const struct nm_strategy_ops_s *st = gate->core->cfg.strategy;
  int k = st && st->rdv_accept ? st->rdv_accept(gate, n, prio, pieces, gate->n_rails) : 0;
  nm_len_t off = 0;
  int ok = k >= 1 && k <= gate->n_rails;
  for (int i = 0; ok && i < k; i++) {
    ok = pieces[i].offset == off && pieces[i].len > 0 && pieces[i].len <= n - off && pieces[i].rail >= 0 &&
         pieces[i].rail < gate->n_rails;
    off += pieces[i].len;
  }
  if (ok && off == n)
    return k;
  pieces[0] = (struct nm_rdv_chunk_s){.rail = 0, .offset = 0, .len = n};
  return 1;
}

/* ---- get rendezvous ----
 * Over a driver whose receiver pulls (NM_DRV_F_RDV_GET: sm's CMA), the sender posts the large send with the RDV
 * (the driver's LRTS follows the RDV, or passes it), and the receiver, once it matched the message, posts the large
 * receive for the announced tag: two hops (RDV + LRTS, then LFIN) instead of four (RDV, RTR, LRTS, LFIN). Where
 * ranks outnumber cores each hop waits for a rank to be scheduled; a flat broadcast's root no longer has to run
 * again between its children's RTRs and their copies. The message is one chunk (at most NMAD_RDV_CHUNK), so
 * nothing of the chunked path's prioritised order is lost: that path asks for one chunk at a time too. As UCX's
 * rndv get and Open MPI vader's RGET. A discarded or truncated message posts a receive of what it keeps (0 bytes
 * for a discard), which releases the sender like the empty RTR of the other path. */

/* The rail of @p gate that carries its get rendezvous, on either side, or -1: its only rail if that driver's
 * receiver pulls; with several rails, a pulling one that would carry the whole message anyway: on one host without
 * NMAD_SPLIT_LOCAL (no message is split there) a rail of the lowest latency and the highest bandwidth, the cheapest
 * single rail at every length for split_balance. sm+tcp took the four-hop path for every large message on sm
 * (64-128 KiB ping-pong 1.05-1.07x sm's alone; doc/performance.md, "A get rendezvous beside another rail"). Both
 * ends find the same rail: the job's drivers and their nominal figures are the same everywhere. */
static int nm_rdv_pull_rail(const struct nm_gate_s *gate)
{
  if (gate->n_rails == 1)
    return (gate->rails[0].drv->props.flags & NM_DRV_F_RDV_GET) ? 0 : -1;
  if (!gate->core->one_host || gate->core->cfg.split_local)
    return -1;
  for (int i = 0; i < gate->n_rails; i++) {
    const struct nm_drv_props_s *p = &gate->rails[i].drv->props;
    if (!(p->flags & NM_DRV_F_RDV_GET))
      continue;
    int dominates = 1;
    for (int j = 0; j < gate->n_rails && dominates; j++) {
      const struct nm_drv_props_s *q = &gate->rails[j].drv->props;
      dominates = q->latency_ns >= p->latency_ns && q->bandwidth_MBps <= p->bandwidth_MBps;
    }
    if (dominates)
      return i;
  }
  return -1;
}

int nm_rdv_get_wanted(const struct nm_gate_s *gate, const struct nm_req_s *req)
{
  nm_len_t chunk = nm_core_rdv_chunk(gate->core);
  return req->len > 0 && req->len <= chunk && !(req->flags & NM_REQF_CANCELLED) && nm_rdv_pull_rail(gate) >= 0;
}

int nm_rdv_get_announce(struct nm_gate_s *gate, struct nm_req_s *req)
{
  struct nm_large_s *l = nm_large_new(gate, req, nm_rdv_pull_rail(gate), 1);
  if (!l)
    return -NM_ENOMEM;
  /* Not counted as a large transfer in flight: the receiver copies, and the LFIN wakes a sender that sleeps.
   * Counted, a sender whose receiver posts late would spin instead of blocking until then. */
  l->uncounted = 1;
  gate->core->n_large--;
  l->buf = req->buf;
  l->len = req->len;
  l->rtag = req->cookie;
  int err = nm_large_send_post(l);
  if (err)
    nm_large_release(l);
  return err;
}

void nm_rdv_get_withdraw(struct nm_gate_s *gate, struct nm_req_s *req)
{
  for (struct nm_large_s *l = gate->large; l; l = l->next)
    if (l->req == req && l->is_send) {
      l->req = NULL; /* completed by the caller; the driver reports the cancel, which releases l */
      gate->rails[l->rail].drv->ops->large_cancel(gate->rails[l->rail].drv, l);
      return;
    }
}

/* Receiver: post the receive of a get rendezvous' data (n bytes at buf, n == 0 for a discard). */
static void nm_rdv_get_post(struct nm_req_s *req, struct nm_gate_s *gate, uint64_t cookie, void *buf, nm_len_t n)
{
  /* Only a peer that shares our driver sends one: else the sender is confused or forged (DESIGN.md rule 5). */
  int r = nm_rdv_pull_rail(gate);
  int err = r >= 0 ? NM_ESUCCESS : -NM_EPROTO;
  struct nm_large_s *l = NULL;
  if (!err && !(l = nm_large_new(gate, req, r, 0)))
    err = -NM_ENOMEM;
  if (!err) {
    struct nm_rail_s *rail = &gate->rails[r];
    err = rail->drv->ops->large_recv(rail->drv, rail->peer, buf, n, cookie, l);
    if (err)
      nm_large_release(l);
  }
  if (err) {
    if (req)
      nm_req_complete(req, err);
    nm_gate_fail(gate, err);
  }
}

void nm_rdv_post(struct nm_req_s *req, struct nm_gate_s *gate, uint64_t cookie, nm_len_t offset, void *buf,
                 nm_len_t n)
{
  if (req)
    req->state = NM_RS_RDV;
  if (cookie & NM_COOKIE_GET) {
    nm_rdv_get_post(req, gate, cookie, buf, n);
    return;
  }
  if (n == 0) { /* nothing to move (all inline, or discarded): one empty RTR tells the sender it is over */
    if (nm_gate_queue_ctrl(gate, NM_WIRE_RTR, 0, cookie, offset, 0, 0, req ? req->prio : 0)) {
      nm_gate_fail(gate, -NM_ENOMEM);
      return;
    }
    if (req)
      nm_req_complete(req, (req->flags & NM_REQF_TRUNC) ? -NM_ETRUNCATED : NM_ESUCCESS);
    return;
  }
  struct nm_rdv_s *x = calloc(1, sizeof(*x));
  if (!x) {
    if (req)
      nm_req_complete(req, -NM_ENOMEM);
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  x->req = req;
  x->gate = gate;
  x->cookie = cookie;
  x->buf = buf;
  x->base = offset;
  x->prio = req ? req->prio : 0;
  x->n_pieces = nm_rdv_plan(gate, n, x->prio, x->pieces);
  nm_len_t chunk = nm_core_rdv_chunk(gate->core);
  uint64_t n_rtr = 0;
  for (int i = 0; i < x->n_pieces; i++)
    n_rtr += (x->pieces[i].len + chunk - 1) / chunk;
  if (n_rtr > NM_WIRE_RTR_MAX) { /* a message of more than 2^24 chunks: fewer, larger ones */
    chunk = (n + NM_WIRE_RTR_MAX / 2 - 1) / (NM_WIRE_RTR_MAX / 2);
    n_rtr = 0;
    for (int i = 0; i < x->n_pieces; i++)
      n_rtr += (x->pieces[i].len + chunk - 1) / chunk;
  }
  x->n_rtr = (uint32_t)n_rtr;
  x->chunk = chunk;
  nm_rdv_link(gate, x);
  nm_rdv_pump(gate);
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

/* Park large send @p l until a progress pass finds room for it (nm_rdv_retry()), after those parked before. */
static void nm_large_defer(struct nm_large_s *l)
{
  struct nm_core_s *core = l->gate->core;
  l->deferred = 1;
  l->retry_next = NULL;
  if (core->large_retry_tail)
    core->large_retry_tail->retry_next = l;
  else
    core->large_retry = l;
  core->large_retry_tail = l;
}

int nm_rdv_handle_rtr(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  uint64_t len = c->msg_len; /* RTR: bytes requested */
  uint32_t n_rtr = c->n_rtr ? c->n_rtr : 1;
  struct nm_rdv_s *x = NULL;
  struct nm_req_s *req;
  if (c->cookie & NM_COOKIE_GET)
    return -NM_EPROTO; /* its data was announced: nobody asks for it */
  HASH_FIND(hh, gate->rdv.by_cookie, &c->cookie, sizeof(c->cookie), x);
  if (x) { /* a later RTR of a message cut in chunks: it must announce the same count, and not one too many */
    req = x->req;
    if (n_rtr != x->n_rtr || x->rtr_done >= x->n_rtr)
      return -NM_EPROTO;
  } else {
    req = nm_rdv_find(gate, c->cookie);
  }
  /* Only the part after the inline header can be asked for; a chunk of a cut message is never empty. */
  if (!req || !nm_req_is_rdv(gate->core, req) || c->offset < req->hdr_len ||
      c->offset > nm_req_total(req) || len > nm_req_total(req) - c->offset || c->rail >= gate->n_rails ||
      (n_rtr > 1 && len == 0))
    return -NM_EPROTO;
  if (!x) {
    nm_req_list_remove(&gate->rdv_sends, req); /* matched: a cancel comes too late from now on */
    if (n_rtr > 1) {
      if (!(x = calloc(1, sizeof(*x)))) {
        nm_req_complete(req, -NM_ENOMEM);
        return -NM_ENOMEM;
      }
      x->req = req;
      x->gate = gate;
      x->cookie = c->cookie;
      x->is_send = 1;
      x->prio = req->prio;
      x->n_rtr = n_rtr;
      HASH_ADD(hh, gate->rdv.by_cookie, cookie, sizeof(x->cookie), x);
      nm_rdv_link(gate, x);
      /* Counted as a large transfer until its last RTR came: between two chunks the sender may have no data
       * in a driver, and a waiter that sees no large transfer blocks or backs off (nm_core_wait_flag()),
       * answering the next RTR late. */
      gate->core->n_large++;
    }
  }
  if (x && ++x->rtr_done == x->n_rtr)
    gate->core->n_large--;
  if (len == 0) {
    nm_req_complete(req, NM_ESUCCESS);
    return NM_ESUCCESS;
  }
  struct nm_large_s *l = nm_large_new(gate, req, c->rail, 1);
  int err = l ? 0 : -NM_ENOMEM;
  if (l) {
    l->buf = (const char *)req->buf + (c->offset - req->hdr_len);
    l->len = len;
    l->rtag = c->rtag;
    /* Counted in flight before the driver sees it: a driver may complete the message's other chunks meanwhile,
     * and x must not look finished then. */
    l->rdv = x;
    if (x)
      x->inflight++;
    err = nm_large_send_post(l);
  }
  if (err == -NM_EAGAIN) { /* the driver's queue is full: posted again at the next progress pass */
    nm_large_defer(l);
    return NM_ESUCCESS;
  }
  if (err) {
    if (l)
      nm_large_release(l);
    if (x) {
      x->inflight--;
      x->req = NULL;
      if (x->inflight == 0)
        nm_rdv_free(x);
    }
    nm_req_complete(req, err);
    return err;
  }
  return NM_ESUCCESS;
}

int nm_rdv_retry(struct nm_core_s *core)
{
  int n = 0;
  while (core->large_retry) {
    struct nm_large_s *l = core->large_retry;
    int err = nm_large_send_post(l);
    if (err == -NM_EAGAIN)
      break; /* still full: the rest waits too, in order */
    core->large_retry = l->retry_next;
    if (!core->large_retry)
      core->large_retry_tail = NULL;
    l->deferred = 0;
    if (err)
      nm_core_large_done(core, l, err, 0); /* fails the transfer as if the driver had reported it */
    else
      n++;
  }
  if (core->rdv_pump_retry) {
    NM_CORE_FOR_GATES(core, g) {
      if (!g->rdv.pump_retry)
        continue;
      g->rdv.pump_retry = 0;
      core->rdv_pump_retry--;
      nm_rdv_pump(g); /* may set the flag again: the queue is still full */
      n++;
    }
  }
  return n;
}

void nm_rdv_retry_gate_fail(struct nm_gate_s *gate, int err)
{
  /* Called after nm_gate_fail() detached every large transfer of the gate (l->req == NULL). */
  struct nm_core_s *core = gate->core;
  if (gate->rdv.pump_retry) {
    gate->rdv.pump_retry = 0;
    core->rdv_pump_retry--;
  }
  struct nm_large_s **pp = &core->large_retry, *last = NULL;
  while (*pp) {
    struct nm_large_s *l = *pp;
    if (l->gate != gate) {
      last = l;
      pp = &l->retry_next;
      continue;
    }
    *pp = l->retry_next;
    /* Its request was detached and completed with the gate's other large transfers: report it as a driver
     * would, which releases it (and frees its chunked message once no chunk is left). */
    nm_core_large_done(core, l, err, 0);
  }
  core->large_retry_tail = last;
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
  struct nm_rdv_s *x = l->rdv;
  int is_send = l->is_send, rail = l->rail;
  nm_large_release(l);
  if (x) {
    nm_rdv_chunk_done(x, rail, err);
    return;
  }
  if (!req)
    return; /* detached: the gate failed meanwhile */
  if (is_send && (req->cookie & NM_COOKIE_GET) && nm_req_index_has(&gate->rdv_sends, req))
    nm_req_list_remove(&gate->rdv_sends, req); /* a get rendezvous: its data is in, the send is over */
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
