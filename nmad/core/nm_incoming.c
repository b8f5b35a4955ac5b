/* Incoming path: validate a packet completely, then dispatch its chunks. A malformed packet fails the gate it
 * came from (DESIGN.md rule 5); per-(gate, session, tag) sequence numbers restore the send order. */
#include "nm_core_private.h"

/* Sequence numbers wrap; a message "ahead" of the expected one is held back, one "behind" is a protocol error
 * (a duplicate). */
static void nm_incoming_msg(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  struct nm_seq_s *s = nm_gate_seq(gate, c->session, c->tag);
  if (!s) {
    nm_gate_fail(gate, -NM_ENOMEM);
    return;
  }
  if (c->seq != s->next_recv) {
    if ((int32_t)(c->seq - s->next_recv) < 0) {
      nm_gate_fail(gate, -NM_EPROTO);
      return;
    }
    struct nm_unexp_s *u = nm_unexp_from_chunk(gate->core, gate, c->session, c);
    if (!u) {
      nm_gate_fail(gate, -NM_ENOMEM);
      return;
    }
    u->next = gate->ooo;
    gate->ooo = u;
    return;
  }
  s->next_recv++;
  nm_match_in_order(gate, c);
  /* Release held-back successors now in order. */
  int found = 1;
  while (found && gate->ooo && !gate->status) {
    found = 0;
    for (struct nm_unexp_s **pp = &gate->ooo; *pp; pp = &(*pp)->next) {
      struct nm_unexp_s *u = *pp;
      if (u->session_id == c->session && u->tag == c->tag && u->seq == s->next_recv) {
        *pp = u->next;
        s->next_recv++;
        nm_match_unexp_in_order(gate, u);
        found = 1;
        break;
      }
    }
  }
}

void nm_core_packet(void *ref, struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src_hint)
{
  struct nm_core_s *core = ref;
  struct nm_wire_pkt_s pkt;
  int err = nm_wire_validate(buf, len, &pkt);
  uint64_t src = src_hint != UINT64_MAX ? src_hint : (err ? UINT64_MAX : pkt.src_rank);
  if (src >= (uint64_t)core->size)
    return; /* cannot tell whom to blame: drop it */
  struct nm_gate_s *gate = &core->gates[src];
  if (gate->status)
    return;
  if (!err && pkt.src_rank != src)
    err = -NM_EPROTO; /* the header lies about its source */
  if (err) {
    nm_gate_fail(gate, err);
    return;
  }
  size_t off = NM_WIRE_PKT_HDR_LEN;
  struct nm_wire_chunk_s c;
  for (unsigned i = 0; i < pkt.n_chunks && !gate->status; i++) {
    nm_wire_next_chunk(buf, len, &off, &c); /* already validated */
    switch (c.type) {
    case NM_WIRE_DATA:
    case NM_WIRE_RDV:
      nm_incoming_msg(gate, &c);
      break;
    case NM_WIRE_RTR:
      if ((err = nm_rdv_handle_rtr(gate, &c)))
        nm_gate_fail(gate, err);
      break;
    case NM_WIRE_ACK:
      if ((err = nm_rdv_handle_ack(gate, c.cookie)))
        nm_gate_fail(gate, err);
      break;
    }
  }
}
