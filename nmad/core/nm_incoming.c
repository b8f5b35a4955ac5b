/* Incoming path: validate a packet completely, then dispatch its chunks. A malformed packet fails the gate it
 * came from (DESIGN.md rule 5); per-(gate, session, tag) sequence numbers restore the send order. */
#include "nm_core_private.h"
#include <stdlib.h>

#define NM_INCOMING_KEEP 16 /* chunks kept from validation; longer packets are parsed again past these */

/* Deliver the held-back successors in the ordering stream of (session, tag) whose turn came. gate->ooo is keyed by
 * (session, stream tag, seq): each successor is one lookup, so a reversed sequence of n is released in O(n). The
 * stream is looked up again at every step: the delivery may run a hook that changes the gate. */
static void nm_incoming_release(struct nm_gate_s *gate, uint32_t session, nm_tag_t tag)
{
  while (gate->ooo && !gate->status) {
    struct nm_seq_s *s = nm_gate_seq(gate, session, tag);
    struct nm_unexp_s *u = s ? nm_msg_set_find(gate->ooo, session, s->key.tag, s->next_recv) : NULL;
    if (!u)
      return;
    nm_msg_set_remove(&gate->ooo, u);
    s->next_recv++;
    struct nm_wire_chunk_s c;
    nm_unexp_to_chunk(u, &c);
    nm_match_in_order(gate, &c, u);
  }
}

/* Hold @p u back until its turn. A second message of the same (session, stream, seq) is a duplicate: a protocol
 * error from the network (DESIGN.md rule 5: it would otherwise be held forever), dropped when local. */
static void nm_incoming_hold(struct nm_gate_s *gate, struct nm_unexp_s *u)
{
  u->key = (struct nm_msg_key_s){.tag = nm_seq_tag(u->session_id, u->tag), .session = u->session_id, .seq = u->seq};
  int err = nm_msg_set_add(&gate->ooo, u);
  if (!err)
    return;
  int local = u->flags & (NM_FLAG_LOCAL_BCAST | NM_FLAG_LOCAL_LOST);
  nm_unexp_free(gate->core, u);
  if (err != -NM_EALREADY || !local)
    nm_gate_fail(gate, err == -NM_EALREADY ? -NM_EPROTO : err);
}

/* Sequence numbers wrap; a message "ahead" of the expected one is held back, one "behind" is a protocol error
 * (a duplicate). */
void nm_incoming_msg(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c, struct nm_unexp_s *owned)
{
  struct nm_core_s *core = gate->core;
  struct nm_seq_s *s = nm_gate_seq(gate, c->session, c->tag);
  if (!s || (int32_t)(c->seq - s->next_recv) < 0) {
    if (owned)
      nm_unexp_free(core, owned);
    nm_gate_fail(gate, s ? -NM_EPROTO : -NM_ENOMEM);
    return;
  }
  if (c->seq != s->next_recv) {
    struct nm_unexp_s *u = owned ? owned : nm_unexp_from_chunk(core, gate, c->session, c);
    if (!u) {
      nm_gate_fail(gate, -NM_ENOMEM);
      return;
    }
    nm_incoming_hold(gate, u);
    return;
  }
  s->next_recv++;
  uint32_t session = c->session;
  nm_tag_t tag = c->tag;
  nm_match_in_order(gate, c, owned); /* c may point into owned: not used after this */
  nm_incoming_release(gate, session, tag);
}

/* The doors, before anything else is parsed: the packet carries this job's key, and, from a driver that
 * authenticates sources, comes from a peer it knows. A refusal is counted and blamed on no gate: its sender is not
 * known to be one of ours, so failing a gate for it would let a stranger break the job. @return 1 to go on. */
static int nm_incoming_door(struct nm_core_s *core, const struct nm_drv_s *drv, const void *buf, size_t len,
                            uint64_t src_hint)
{
  uint64_t key;
  if (nm_wire_peek_key(buf, len, &key) || key != core->door.job_key) {
    core->door.refused.foreign++;
    return 0;
  }
  if (src_hint == UINT64_MAX && (drv->props.flags & NM_DRV_F_AUTH_SOURCE)) {
    core->door.refused.unknown_source++;
    return 0;
  }
  return 1;
}

void nm_core_set_job_key(nm_core_t core, uint64_t job_key)
{
  core->door.job_key = job_key;
}

int nm_core_get_refused(nm_core_t core, struct nm_core_refused_s *out)
{
  if (!out)
    return -NM_EINVAL;
  NM_CORE_LOCKED(core);
  *out = core->door.refused;
  return NM_ESUCCESS;
}

void nm_core_packet(void *ref, struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src_hint)
{
  struct nm_core_s *core = ref;
  if (!nm_incoming_door(core, drv, buf, len, src_hint))
    return;
  struct nm_wire_pkt_s pkt;
  struct nm_wire_chunk_s kept[NM_INCOMING_KEEP];
  int err = nm_wire_validate_keep(buf, len, &pkt, kept, NM_INCOMING_KEEP);
  uint64_t src = src_hint != UINT64_MAX ? src_hint : (err ? UINT64_MAX : pkt.src_rank);
  if (src >= (uint64_t)core->size)
    return; /* cannot tell whom to blame: drop it */
  struct nm_gate_s *gate = nm_core_gate_of_rank(core, (int)src);
  if (!gate || gate->status) /* no memory for a new peer's gate: its packets are lost, as a full queue's */
    return;
  if (!err && pkt.src_rank != src)
    err = -NM_EPROTO; /* the header lies about its source */
  if (err) {
    nm_gate_fail(gate, err);
    return;
  }
  size_t off = NM_WIRE_PKT_HDR_LEN;
  struct nm_wire_chunk_s more, *c;
  for (unsigned i = 0; i < pkt.n_chunks && !gate->status; i++) {
    if (i < NM_INCOMING_KEEP) {
      c = &kept[i];
    } else {
      if (i == NM_INCOMING_KEEP) /* long packet: walk past the kept chunks once */
        for (unsigned k = 0; k < NM_INCOMING_KEEP; k++)
          nm_wire_next_chunk(buf, len, &off, &more);
      nm_wire_next_chunk(buf, len, &off, &more); /* already validated */
      c = &more;
    }
    switch (c->type) {
    case NM_WIRE_DATA:
      nm_incoming_msg(gate, c, NULL);
      if (nm_credit_on(gate)) /* consumed, or its stored copy took the cost back off (nm_credit_stored()) */
        nm_credit_consumed(gate, nm_wire_credit_cost(c->len));
      break;
    case NM_WIRE_RDV:
      nm_incoming_msg(gate, c, NULL);
      break;
    case NM_WIRE_DATA_FRAG: /* reassembled, then delivered as DATA (credit counted there) */
      nm_frag_incoming(gate, c);
      break;
    case NM_WIRE_CREDIT:
      if ((err = nm_credit_handle(gate, c->cookie)))
        nm_gate_fail(gate, err);
      else
        nm_gate_mark_work(gate);
      break;
    case NM_WIRE_RTR:
      if ((err = nm_rdv_handle_rtr(gate, c)))
        nm_gate_fail(gate, err);
      break;
    case NM_WIRE_ACK:
      if ((err = nm_rdv_handle_ack(gate, c->cookie)))
        nm_gate_fail(gate, err);
      break;
    case NM_WIRE_CANCEL:
      if ((err = nm_cancel_handle_request(gate, c)))
        nm_gate_fail(gate, err);
      break;
    case NM_WIRE_CANCEL_REPLY:
      if ((err = nm_cancel_handle_reply(gate, c)))
        nm_gate_fail(gate, err);
      break;
    }
  }
}

void nm_core_inject(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t seq, void *data, nm_len_t len)
{
  struct nm_core_s *core = session->core;
  struct nm_unexp_s *u = nm_pool_get(&core->unexp_pool);
  if (!u) {
    free(data);
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  *u = (struct nm_unexp_s){.gate = gate, .session_id = session->id, .type = NM_WIRE_DATA,
                           .flags = NM_FLAG_LOCAL_BCAST, .tag = tag, .seq = seq, .msg_len = len,
                           .len = (uint32_t)len, .data = data};
  struct nm_wire_chunk_s c;
  nm_unexp_to_chunk(u, &c);
  nm_incoming_msg(gate, &c, u);
}

int nm_core_inject_lost(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t seq, int err)
{
  struct nm_core_s *core = session->core;
  struct nm_seq_s *s = nm_gate_seq(gate, session->id, tag);
  if (gate->status || !s || (int32_t)(seq - s->next_recv) < 0)
    return 0; /* delivered already (or the gate is gone, which fails the receives by itself) */
  if (nm_msg_set_find(gate->ooo, session->id, s->key.tag, seq))
    return 0; /* arrived, waiting for its turn */
  struct nm_unexp_s *u = nm_pool_get(&core->unexp_pool);
  if (!u)
    return -NM_ENOMEM;
  *u = (struct nm_unexp_s){.gate = gate, .session_id = session->id, .type = NM_WIRE_DATA,
                           .flags = NM_FLAG_LOCAL_LOST, .tag = tag, .seq = seq, .cookie = (uint64_t)(int64_t)err};
  struct nm_wire_chunk_s c;
  nm_unexp_to_chunk(u, &c);
  nm_incoming_msg(gate, &c, u);
  return 1;
}

struct nm_req_s *nm_core_claim_recv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t seq,
                                    nm_len_t min_len)
{
  struct nm_seq_s *s = nm_gate_seq(gate, session->id, tag);
  if (!s || s->next_recv != seq || gate->status)
    return NULL;
  struct nm_req_s *r = nm_match_claim(session, gate, tag, min_len);
  if (!r)
    return NULL;
  r->gate = gate;
  r->tag = tag;
  r->msg_len = min_len;
  r->flags |= NM_REQF_MATCHED;
  r->state = NM_RS_RDV;
  s->next_recv++;
  nm_incoming_release(gate, session->id, tag);
  return r;
}
