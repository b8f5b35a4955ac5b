/* Withdrawing a send that no receive matched yet (what MPI_Cancel of a send needs, MPI-3.1 section 3.8.4:
 * either the cancellation succeeds or the communication does, never both, and the wait returns).
 *
 * The sender cannot withdraw a message alone: once posted it owns a sequence number, and the receiver delivers the
 * messages of (gate, session, tag) in sequence order, so the message must still arrive, or be known gone. The
 * sender sends a CANCEL naming (session, tag, seq); the receiver answers with a CANCEL_REPLY:
 *  - the message arrived in order and waits, unmatched, among the unexpected messages (or the orphans of a session
 *    not opened yet): it is dropped, result 1;
 *  - it has not been delivered in order yet (still in flight, or held back behind a predecessor): a tombstone is
 *    left and the message is dropped when its turn comes, result 1;
 *  - a receive matched it: result 0; the send completes normally (its RTR or ACK comes or came).
 * The send completes with -NM_ECANCELED once the reply says withdrawn and its data (eager) left this process, so
 * that the buffer is the application's again. An eager send that had completed already (its data left) is
 * re-armed until the reply. Spec: doc/protocol.md, CANCEL and CANCEL_REPLY. */
#include "nm_core_private.h"

/* Per gate: withdrawals of messages that have not arrived yet. A sender has at most the messages it sent and did
 * not see delivered; more than this is a peer misbehaving (DESIGN.md rule 5: bounded memory for network input). */
#define NM_CANCEL_MAX_TOMBSTONES 4096

/* Whether @p req is in @p l: rdv_sends answers by its cookie index (nm_match_hash.c) */
static int nm_req_list_has(const struct nm_req_list_s *l, const struct nm_req_s *req)
{
  return nm_req_index_has(l, req);
}

static int nm_cancel_queue(struct nm_gate_s *gate, uint8_t type, uint8_t result, uint32_t session, nm_tag_t tag,
                           nm_seq_t seq, nm_prio_t prio)
{
  struct nm_ctrl_s *c = nm_gate_new_ctrl(gate, type);
  if (!c)
    return -NM_ENOMEM;
  c->prio = prio; /* a CANCEL goes with its message's urgency (issue 15) */
  c->result = result;
  c->session = session;
  c->tag = tag;
  c->seq = seq;
  nm_gate_push_ctrl(gate, c);
  return NM_ESUCCESS;
}

int nm_cancel_send(struct nm_req_s *req)
{
  struct nm_gate_s *gate = req->gate;
  if (req->kind != NM_REQ_SEND || !gate || req->state == NM_RS_INIT)
    return -NM_EINVAL;
  if (req->flags & (NM_REQF_CANCEL | NM_REQF_CANCELLED))
    return -NM_EALREADY;
  if (gate->status)
    return gate->status;
  int large = nm_req_is_rdv(gate->core, req);
  if (req->completed) {
    /* A completed eager send only says its data left: it may still wait unmatched at the receiver. Any other
     * completed send was matched (RTR, ACK) or failed. */
    if (large || (req->flags & NM_REQF_SYNC) || req->status)
      return -NM_EBUSY;
    req->completed = 0; /* re-armed: completes again with the outcome */
    req->state = NM_RS_CANCELLING;
    nm_req_list_append(&gate->cancelling, req);
  } else if (large ? (req->state != NM_RS_QUEUED && !nm_req_list_has(&gate->rdv_sends, req))
                   : (req->flags & NM_REQF_ACKED)) {
    return -NM_EBUSY; /* the receiver already asked for the data (RTR) or acknowledged the match (ACK) */
  }
  int err = nm_cancel_queue(gate, NM_WIRE_CANCEL, 0, req->session->id, req->tag, req->seq, req->prio);
  if (err) {
    if (req->state == NM_RS_CANCELLING) { /* undo the re-arm */
      nm_req_list_remove(&gate->cancelling, req);
      nm_req_complete(req, NM_ESUCCESS);
    }
    return err;
  }
  req->flags |= NM_REQF_CANCEL;
  nm_core_schedule_gate(gate);
  return NM_ESUCCESS;
}

void nm_cancel_data_left(struct nm_gate_s *gate, struct nm_req_s *req)
{
  req->flags |= NM_REQF_SENT;
  if (req->flags & NM_REQF_CANCELLED) {
    if (req->flags & NM_REQF_SYNC)
      nm_req_list_remove(&gate->rdv_sends, req);
    nm_req_complete(req, -NM_ECANCELED);
    return;
  }
  if (req->flags & NM_REQF_SYNC) { /* in rdv_sends: its ACK or the reply decides */
    if (req->flags & NM_REQF_ACKED) {
      nm_req_list_remove(&gate->rdv_sends, req);
      nm_req_complete(req, NM_ESUCCESS);
    }
    return;
  }
  req->state = NM_RS_CANCELLING; /* parked until the reply */
  nm_req_list_append(&gate->cancelling, req);
}

static int nm_cancel_names(const struct nm_req_s *r, const struct nm_wire_chunk_s *c)
{
  return (r->flags & NM_REQF_CANCEL) && r->session->id == c->session && r->tag == c->tag && r->seq == c->seq;
}

static struct nm_req_s *nm_cancel_find_in_pw(struct nm_pw_s *pw, const struct nm_wire_chunk_s *c)
{
  for (struct nm_req_s *r = pw ? pw->reqs : NULL; r; r = r->pw_next)
    if (nm_cancel_names(r, c))
      return r;
  return NULL;
}

/* The send a reply answers, wherever it is: parked, waiting for RTR/ACK, queued, or in a packet in flight. */
static struct nm_req_s *nm_cancel_find(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  const struct nm_req_list_s *lists[] = {&gate->cancelling, &gate->rdv_sends, &gate->send_queue};
  for (unsigned i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
    for (struct nm_req_s *r = lists[i]->head; r; r = r->next)
      if (nm_cancel_names(r, c))
        return r;
  for (struct nm_pw_s *pw = gate->inflight_pws; pw; pw = pw->next) {
    struct nm_req_s *r = nm_cancel_find_in_pw(pw, c);
    if (r)
      return r;
  }
  for (int i = 0; i < gate->n_rails; i++) {
    struct nm_req_s *r = nm_cancel_find_in_pw(gate->rails[i].retry, c);
    if (r)
      return r;
  }
  return NULL;
}

int nm_cancel_handle_reply(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  struct nm_req_s *req = nm_cancel_find(gate, c);
  if (!req) /* "too late" after the ACK or the transfer completed the send is normal; "withdrawn" is not */
    return c->result ? -NM_EPROTO : NM_ESUCCESS;
  req->flags &= (uint16_t)~NM_REQF_CANCEL;
  int parked = req->state == NM_RS_CANCELLING;
  if (!c->result) { /* matched: the normal path goes on */
    if (parked) {
      nm_req_list_remove(&gate->cancelling, req);
      nm_req_complete(req, NM_ESUCCESS);
    }
    return NM_ESUCCESS;
  }
  req->flags |= NM_REQF_CANCELLED;
  if (parked) {
    nm_req_list_remove(&gate->cancelling, req);
    nm_req_complete(req, -NM_ECANCELED);
  } else if (nm_req_list_has(&gate->rdv_sends, req) &&
             (nm_req_is_rdv(gate->core, req) || (req->flags & NM_REQF_SENT))) {
    nm_req_list_remove(&gate->rdv_sends, req); /* an RDV nobody will answer, or a sync send whose data left */
    if (req->cookie & NM_COOKIE_GET)
      nm_rdv_get_withdraw(gate, req); /* its data was announced to the driver: taken back */
    nm_req_complete(req, -NM_ECANCELED);
  }
  /* Otherwise still queued or in a packet: it completes when packed (RDV) or when its packet left (eager). */
  return NM_ESUCCESS;
}

/* Drop the stored message (session, tag, seq) of @p gate: unexpected in its session (found in its (gate, tag)
 * bucket), or an orphan of a session not opened yet. @return 1 if found. */
static int nm_unexp_withdraw(struct nm_core_s *core, struct nm_gate_s *gate, uint32_t session, nm_tag_t tag,
                             nm_seq_t seq)
{
  struct nm_session_s *s = nm_core_find_session(core, session);
  if (!s)
    return nm_match_orphan_withdraw(core, gate, session, tag, seq);
  struct nm_unexp_s *u = nm_match_unexp_find_seq(s, gate, tag, seq);
  if (!u)
    return 0;
  nm_match_unexp_remove(s, u);
  nm_unexp_free(core, u);
  return 1;
}

int nm_cancel_handle_request(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c)
{
  struct nm_core_s *core = gate->core;
  struct nm_seq_s *s = nm_gate_seq(gate, c->session, c->tag);
  if (!s)
    return -NM_ENOMEM;
  int withdrawn;
  if ((int32_t)(c->seq - s->next_recv) >= 0) { /* not delivered in order yet */
    if (gate->n_tombstones >= NM_CANCEL_MAX_TOMBSTONES)
      return -NM_EPROTO;
    struct nm_unexp_s *t = nm_pool_get(&core->unexp_pool);
    if (!t)
      return -NM_ENOMEM;
    *t = (struct nm_unexp_s){.gate = gate, .session_id = c->session, .type = NM_WIRE_CANCEL, .tag = c->tag,
                             .seq = c->seq, .key = {.tag = c->tag, .session = c->session, .seq = c->seq}};
    int err = nm_msg_set_add(&gate->tombstones, t);
    if (err) {
      nm_pool_put(&core->unexp_pool, t);
      return err == -NM_EALREADY ? -NM_EPROTO : err; /* withdrawn twice */
    }
    gate->n_tombstones++;
    withdrawn = 1;
  } else {
    withdrawn = nm_unexp_withdraw(core, gate, c->session, c->tag, c->seq);
  }
  return nm_cancel_queue(gate, NM_WIRE_CANCEL_REPLY, (uint8_t)withdrawn, c->session, c->tag, c->seq, 0);
}

int nm_cancel_take_tombstone(struct nm_gate_s *gate, uint32_t session, nm_tag_t tag, nm_seq_t seq)
{
  struct nm_unexp_s *t = nm_msg_set_find(gate->tombstones, session, tag, seq);
  if (!t)
    return 0;
  nm_msg_set_remove(&gate->tombstones, t);
  nm_unexp_free(gate->core, t);
  gate->n_tombstones--;
  return 1;
}

void nm_cancel_gate_fail(struct nm_gate_s *gate, int err)
{
  while (gate->cancelling.head) {
    struct nm_req_s *r = gate->cancelling.head;
    nm_req_list_remove(&gate->cancelling, r);
    nm_req_complete(r, err);
  }
  nm_msg_set_clear(gate->core, &gate->tombstones);
  gate->n_tombstones = 0;
}
