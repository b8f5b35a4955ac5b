/* Eager messages cut to the rail's inject size (issue 15, part 4; spec: doc/protocol.md, DATA_FRAG).
 *
 * A provider sends a packet of up to its inject size from its own bounce buffer and completes it at post; above
 * that size shm, for one, switches protocol (the receiver copies the data out of the sender's memory) and the
 * send completes only once the peer has progressed. So an eager message of 4 KiB, whose packet is 4 KiB plus
 * headers, cost 2.5 times raw fi_pingpong. The sender here cuts such a message into DATA_FRAG pieces (session,
 * tag, seq, offset, len, msg_len), each packet within the inject size; the receiver puts the pieces together,
 * in any order, and delivers the whole as if one DATA had come: straight into a posted receive when the message
 * is the next one due and a receive large enough matches (no copy), else into a buffer that then follows the
 * path of any DATA (order, matching, unexpected storage, hooks, truncation, sync ACK, cancel tombstones).
 * Which messages are cut is nm_frag_wanted()'s policy, chosen from measurements (doc/performance.md): a message
 * alone in its gate's queue, of at most NMAD_EAGER_FRAG_MAX bytes (default: 3 inject sizes), on a rail that
 * injects at least 1 KiB. */
#include "nm_core_private.h"
#include <stdlib.h>
#include <string.h>

/* A piece smaller than this does not start a message in a packet that already holds other chunks: the message
 * starts in the next packet instead (one more packet for a few bytes is not worth it). */
#define NM_FRAG_MIN_PIECE 256

/* The message a piece belongs to, on its gate. */
struct nm_frag_key_s {
  uint64_t tag;
  uint32_t session;
  uint32_t seq;
};

/* A message being reassembled: into a claimed receive (req) or into the buffer of a stored message (u). */
struct nm_frag_s {
  struct nm_frag_key_s key;
  uint32_t msg_len;
  uint32_t got;     /* payload bytes placed so far */
  int head;         /* the piece at offset 0 (flags, cookie, prefix length) arrived */
  uint8_t flags;
  uint32_t prefix_len;
  uint64_t cookie;
  uint64_t cost;    /* flow-control cost of the whole message */
  struct nm_req_s *req;
  struct nm_unexp_s *u;
  UT_hash_handle hh;
};

/* ---------------------------------------------------------------- sender */

/* An inject size below this (tcp;ofi_rxm: 64 B) would cut a message into dozens of packets, each paying the
 * per-packet cost the cut was meant to save: such a rail takes whole packets. */
#define NM_FRAG_MIN_INJECT 1024

/* Without NMAD_EAGER_FRAG_MAX, messages up to this many inject sizes are cut: over shm the cut saved 55% at
 * 4 KiB and 7% at 12 KiB, and cost 10% at 16 KiB, where the extra packets outweigh the slow path they avoid
 * (doc/performance.md, "Eager messages cut to the inject size"). */
#define NM_FRAG_AUTO_PIECES 3

/* Largest packet for a piece on the rail of @p pw: its inject size, or its largest packet when it injects too
 * little (a message whose cut began on another rail goes on in pieces that size). */
static size_t nm_frag_limit(const struct nm_pw_s *pw)
{
  size_t inject = pw->gate->rails[pw->rail].drv->props.inject_size;
  return inject >= NM_FRAG_MIN_INJECT && inject < pw->cap ? inject : pw->cap;
}

nm_len_t nm_frag_eager_max(const struct nm_core_s *core)
{
  nm_len_t cap = 0;
  for (int i = 0; i < core->n_drvs; i++) {
    const struct nm_drv_props_s *p = &core->drvs[i].props;
    if (!(p->flags & NM_DRV_F_EAGER_INJECT_ONLY) || p->inject_size < NM_FRAG_MIN_INJECT)
      continue;
    uint64_t max = core->cfg.frag_max;
    if (max == NM_FRAG_MAX_AUTO)
      max = (uint64_t)NM_FRAG_AUTO_PIECES * p->inject_size;
    nm_len_t one = p->inject_size - NM_WIRE_PKT_HDR_LEN - NM_WIRE_MSG_HDR_LEN; /* fits one packet, uncut */
    if (max < one)
      max = one;
    if (cap == 0 || max < cap)
      cap = max;
  }
  return cap;
}

int nm_frag_wanted(const struct nm_pw_s *pw, const struct nm_req_s *req)
{
  if (req->frag_off)
    return 1;
  /* Only a message with nothing queued behind it: one alone pays its packet's latency, which the cut saves,
   * while a stream of messages is faster aggregated in packets of up to 64 KiB (window of 64 over shm: the cut
   * halved the message rate at 8-12 KiB). */
  if (req->next)
    return 0;
  nm_len_t total = nm_req_total(req);
  size_t limit = nm_frag_limit(pw);
  uint64_t max = pw->gate->core->cfg.frag_max;
  if (max == NM_FRAG_MAX_AUTO)
    max = (uint64_t)NM_FRAG_AUTO_PIECES * limit;
  if (total > max)
    return 0;
  return NM_WIRE_PKT_HDR_LEN + nm_wire_data_size(total, req->flags & NM_REQF_SYNC, req->hdr_len > 0) > limit;
}

/* Put message bytes [off, off + n) of @p req (its header, then its body) at @p dst in @p pw. */
static void nm_frag_copy(struct nm_pw_s *pw, uint8_t *dst, const struct nm_req_s *req, nm_len_t off, nm_len_t n)
{
  if (off < req->hdr_len) {
    nm_len_t h = req->hdr_len - off < n ? req->hdr_len - off : n;
    memcpy(dst, (const uint8_t *)req->hdr + off, h);
    dst += h;
    off += h;
    n -= h;
  }
  if (n)
    nm_pw_put_payload(pw, dst, (const uint8_t *)req->buf + (off - req->hdr_len), n);
}

/* The last piece is in @p pw: the send leaves the queue and completes with that packet (as an eager send). */
static void nm_frag_last(struct nm_pw_s *pw, struct nm_req_s *req)
{
  struct nm_gate_s *gate = pw->gate;
  if (gate->core->cfg.strategy->dequeued)
    gate->core->cfg.strategy->dequeued(gate, req);
  nm_req_list_remove(&gate->send_queue, req);
  if (req->flags & NM_REQF_SYNC) /* found there by its ACK, which needs the whole message at the receiver */
    nm_req_list_append(&gate->rdv_sends, req);
  req->state = NM_RS_PACKED;
  req->pw_next = NULL;
  if (pw->reqs_tail)
    pw->reqs_tail->pw_next = req;
  else
    pw->reqs = req;
  pw->reqs_tail = req;
}

int nm_frag_pack(struct nm_pw_s *pw, struct nm_req_s *req)
{
  struct nm_gate_s *gate = pw->gate;
  struct nm_core_s *core = gate->core;
  nm_len_t total = nm_req_total(req), off = req->frag_off;
  int first = off == 0;
  int sync = first && (req->flags & NM_REQF_SYNC);
  size_t hdr = nm_wire_frag_hdr_size(sync, first && req->hdr_len > 0);
  size_t limit = nm_frag_limit(pw);
  if (pw->len + hdr >= limit || pw->n_chunks == UINT16_MAX)
    return 0;
  nm_len_t n = limit - pw->len - hdr;
  if (n > total - off)
    n = total - off;
  /* In an empty packet the first piece never holds the whole message: nm_frag_wanted() found that its DATA
   * packet, whose header is shorter than DATA_FRAG's, exceeds the limit. */
  if (pw->n_chunks && n < total - off && n < NM_FRAG_MIN_PIECE)
    return 0;
  if (first) {
    nm_credit_charge(gate, total); /* the whole message's cost, once */
    if (sync)
      req->cookie = core->next_cookie++;
  }
  uint8_t *p = pw->buf + pw->len;
  size_t h = nm_wire_put_frag_hdr(p, req->session->id, req->tag, req->seq, (uint32_t)n, (uint32_t)off,
                                  (uint32_t)total, sync, req->cookie, first ? (uint32_t)req->hdr_len : 0);
  nm_frag_copy(pw, p + h, req, off, n);
  pw->len += h + n;
  pw->n_chunks++;
  req->frag_off = off + n;
  if (req->frag_off == total)
    nm_frag_last(pw, req);
  return 1;
}

/* ---------------------------------------------------------------- receiver */

/* The gate's messages in reassembly: the first in gate->frag_one, any others in the uthash gate->frags. uthash
 * allocates its table with its first element and frees it with its last, so one message at a time (the usual
 * case: a message is cut when it is alone in its sender's queue) cost two mallocs and two frees in the hash
 * alone, some 640 of the 1,190 instructions a cut message added at its receiver (doc/performance.md, "A cut
 * message's reassembly without the hash"). */
static struct nm_frag_s *nm_frag_find(struct nm_gate_s *gate, const struct nm_frag_key_s *key)
{
  struct nm_frag_s *f = gate->frag_one;
  if (f && f->key.tag == key->tag && f->key.session == key->session && f->key.seq == key->seq)
    return f;
  HASH_FIND(hh, gate->frags, key, sizeof(*key), f); /* NULL when the hash is empty */
  return f;
}

static void nm_frag_insert(struct nm_gate_s *gate, struct nm_frag_s *f)
{
  if (!gate->frag_one)
    gate->frag_one = f;
  else
    HASH_ADD(hh, gate->frags, key, sizeof(f->key), f);
}

static void nm_frag_remove(struct nm_gate_s *gate, struct nm_frag_s *f)
{
  if (gate->frag_one == f)
    gate->frag_one = NULL;
  else
    HASH_DEL(gate->frags, f);
  gate->frag_bytes -= f->cost;
  nm_pool_put(&gate->core->frag_pool, f);
}

/* The first piece of a message that is the next one due, for a session matching by tag, found a posted receive
 * large enough: the pieces go straight into it. @return the receive (out of the posted list), or NULL. */
static struct nm_req_s *nm_frag_claim(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  struct nm_session_s *session = nm_core_find_session(gate->core, c->session);
  if (!session || session->hook || gate->tombstones) /* hooks and withdrawals decide on the whole message */
    return NULL;
  return nm_core_claim_recv(session, gate, c->tag, c->seq, c->msg_len);
}

/* The first piece of a message (at any offset) arrived: check the bounds, then claim a receive or store. */
size_t nm_frag_record_size(void) { return sizeof(struct nm_frag_s); }

static int nm_frag_new(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c, struct nm_frag_s **out)
{
  struct nm_core_s *core = gate->core;
  struct nm_seq_s *s = nm_gate_seq(gate, c->session, c->tag);
  if (!s)
    return -NM_ENOMEM;
  if ((int32_t)(c->seq - s->next_recv) < 0)
    return -NM_EPROTO; /* delivered already: a duplicate */
  /* Memory bounded by the peer's eager window: it charged every message it started against its credit. */
  uint64_t cost = nm_wire_credit_cost(c->msg_len);
  uint64_t bound = nm_credit_on(gate) ? core->cfg.eager_credit : core->cfg.peer_alloc_max;
  if (c->msg_len > core->cfg.peer_alloc_max || cost > bound || gate->frag_bytes > bound - cost)
    return -NM_EPROTO;
  /* From a pool, not malloc: a cut message is a small one, whose latency is the point of the cut. */
  struct nm_frag_s *f = nm_pool_get(&core->frag_pool);
  if (!f)
    return -NM_ENOMEM;
  *f = (struct nm_frag_s){.key = {.tag = c->tag, .session = c->session, .seq = c->seq},
                          .msg_len = (uint32_t)c->msg_len, .cost = cost};
  f->req = nm_frag_claim(gate, c);
  if (gate->status) { /* delivering the successors the claim released failed the gate */
    if (f->req)
      nm_req_complete(f->req, gate->status);
    nm_pool_put(&core->frag_pool, f);
    return gate->status;
  }
  if (!f->req) {
    f->u = nm_pool_get(&core->unexp_pool);
    /* zeroed: pieces of a lying peer that overlap leave holes, which must not show another message's bytes */
    uint8_t *data = f->u ? calloc(1, c->msg_len) : NULL;
    if (!data) {
      if (f->u)
        nm_pool_put(&core->unexp_pool, f->u);
      nm_pool_put(&core->frag_pool, f);
      return -NM_ENOMEM;
    }
    *f->u = (struct nm_unexp_s){.gate = gate, .session_id = c->session, .type = NM_WIRE_DATA, .tag = c->tag,
                                .seq = c->seq, .msg_len = c->msg_len, .len = f->msg_len, .data = data};
    if (nm_credit_on(gate)) { /* stored while it waits for its pieces, as a stored DATA is */
      f->u->credit = (uint32_t)cost;
      nm_credit_stored(gate, cost);
    }
  }
  gate->frag_bytes += cost;
  nm_frag_insert(gate, f);
  *out = f;
  return NM_ESUCCESS;
}

/* Every byte is in: complete the claimed receive, or deliver the stored message as one DATA. */
static void nm_frag_complete(struct nm_gate_s *gate, struct nm_frag_s *f)
{
  struct nm_req_s *req = f->req;
  struct nm_unexp_s *u = f->u;
  uint8_t flags = f->flags;
  uint64_t cookie = f->cookie, cost = f->cost;
  nm_frag_remove(gate, f);
  if (req) {
    if (flags & NM_WIRE_FLAG_SYNC)
      nm_rdv_send_ack(gate, cookie);
    nm_req_complete(req, NM_ESUCCESS);
  } else {
    u->flags = flags;
    u->cookie = cookie;
    struct nm_wire_chunk_s c;
    nm_unexp_to_chunk(u, &c);
    nm_incoming_msg(gate, &c, u);
  }
  if (nm_credit_on(gate)) /* consumed, or its stored copy took the cost back off (nm_credit_stored()) */
    nm_credit_consumed(gate, cost);
}

static int nm_frag_place(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  struct nm_frag_key_s key = {.tag = c->tag, .session = c->session, .seq = c->seq};
  struct nm_frag_s *f = nm_frag_find(gate, &key);
  if (!f) {
    int err = nm_frag_new(gate, c, &f);
    if (err)
      return err;
  } else if (c->msg_len != f->msg_len) {
    return -NM_EPROTO;
  }
  /* The wire check put the piece inside the message; more bytes than the message lacks means overlapping
   * pieces, and a second piece at offset 0 a second head. */
  if (c->len > f->msg_len - f->got || (c->offset == 0 && f->head))
    return -NM_EPROTO;
  if (c->offset == 0) {
    f->head = 1;
    f->flags = c->flags;
    f->cookie = c->cookie;
    f->prefix_len = c->prefix_len;
    if (f->u)
      f->u->prefix_len = c->prefix_len;
  }
  memcpy(f->req ? (uint8_t *)f->req->buf + c->offset : f->u->data + c->offset, c->payload, c->len);
  f->got += c->len;
  if (f->got < f->msg_len)
    return NM_ESUCCESS;
  if (!f->head)
    return -NM_EPROTO; /* full count without the head: some pieces overlapped */
  nm_frag_complete(gate, f);
  return NM_ESUCCESS;
}

void nm_frag_incoming(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  int err = nm_frag_place(gate, c);
  if (err)
    nm_gate_fail(gate, err);
}

/* Drop @p f (gate failure): its claimed receive completes with @p err, its stored copy is freed. */
static void nm_frag_drop(struct nm_gate_s *gate, struct nm_frag_s *f, int err)
{
  struct nm_req_s *req = f->req;
  struct nm_unexp_s *u = f->u;
  nm_frag_remove(gate, f);
  if (req)
    nm_req_complete(req, err);
  else
    nm_unexp_free(gate->core, u);
}

void nm_frag_gate_fail(struct nm_gate_s *gate, int err)
{
  struct nm_frag_s *f, *tmp;
  if (gate->frag_one)
    nm_frag_drop(gate, gate->frag_one, err);
  HASH_ITER(hh, gate->frags, f, tmp)
    nm_frag_drop(gate, f, err);
}
