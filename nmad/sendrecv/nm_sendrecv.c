/* The sendrecv interface: thin wrappers that fill a request and hand it to the core. Each function that reads or
 * changes state the core shares (posted requests, completion fields) holds the core lock (a no-op without a
 * progress thread; nm_lock.c). */
#include "nm_core_private.h"
#include <nmad/nm_sendrecv.h>
#include <string.h>

static void nm_sr_req_reset(nm_session_t session, nm_sr_request_t *req, uint8_t kind)
{
  memset(req, 0, sizeof(*req));
  req->session = session;
  req->kind = kind;
}

void nm_sr_send_init(nm_session_t session, nm_sr_request_t *req)
{
  nm_sr_req_reset(session, req, NM_REQ_SEND);
}

void nm_sr_recv_init(nm_session_t session, nm_sr_request_t *req)
{
  nm_sr_req_reset(session, req, NM_REQ_RECV);
}

int nm_sr_send_set_priority(nm_session_t session, nm_sr_request_t *req, nm_prio_t prio)
{
  if (req->kind != NM_REQ_SEND || req->state != NM_RS_INIT)
    return -NM_EINVAL;
  req->prio = prio;
  return NM_ESUCCESS;
}

int nm_sr_request_set_monitor(nm_session_t session, nm_sr_request_t *req, unsigned mask,
                              nm_req_notifier_t notifier, void *ref)
{
  if (req->kind == NM_REQ_NONE)
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  if (req->completed) /* its events were delivered already: nothing would ever call the monitor */
    return -NM_EALREADY;
  /* On a posted request this is safe because the core reads the monitor only when it delivers an event, and
   * requests progress only under the core lock, which we hold. */
  req->notifier = notifier;
  req->notifier_ref = ref;
  req->notifier_mask = mask;
  return NM_ESUCCESS;
}

static int nm_sr_gate_valid(nm_session_t session, nm_gate_t gate)
{
  struct nm_core_s *core = session->core;
  return gate && gate->core == core;
}

static int nm_sr_post_send(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag,
                           const void *buf, nm_len_t len, int sync)
{
  if (!session || !req || req->kind != NM_REQ_SEND || req->state != NM_RS_INIT || !nm_sr_gate_valid(session, gate) ||
      (len && !buf))
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  req->gate = gate;
  req->tag = tag;
  req->mask = NM_TAG_MASK_FULL;
  req->buf = (void *)buf;
  req->len = len;
  req->msg_len = len;
  if (sync)
    req->flags |= NM_REQF_SYNC;
  return nm_core_post_send(req);
}

int nm_sr_send_isend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, const void *buf,
                     nm_len_t len)
{
  return nm_sr_post_send(session, req, gate, tag, buf, len, 0);
}

int nm_sr_send_issend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, const void *buf,
                      nm_len_t len)
{
  return nm_sr_post_send(session, req, gate, tag, buf, len, 1);
}

int nm_sr_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                nm_sr_request_t *req)
{
  nm_sr_send_init(session, req);
  return nm_sr_post_send(session, req, gate, tag, buf, len, 0);
}

int nm_sr_issend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                 nm_sr_request_t *req)
{
  nm_sr_send_init(session, req);
  return nm_sr_post_send(session, req, gate, tag, buf, len, 1);
}

int nm_sr_recv_irecv(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask,
                     void *buf, nm_len_t len)
{
  if (!session || !req || req->kind != NM_REQ_RECV || req->state != NM_RS_INIT ||
      (gate != NM_ANY_GATE && !nm_sr_gate_valid(session, gate)) || (len && !buf))
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  req->gate = gate;
  req->tag = tag;
  req->mask = mask;
  req->buf = buf;
  req->len = len;
  nm_match_post_recv(session, req);
  return NM_ESUCCESS;
}

int nm_sr_irecv_mask(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, void *buf, nm_len_t len,
                     nm_sr_request_t *req)
{
  if (!req)
    return -NM_EINVAL;
  nm_sr_req_reset(session, req, NM_REQ_RECV);
  return nm_sr_recv_irecv(session, req, gate, tag, mask, buf, len);
}

int nm_sr_irecv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, void *buf, nm_len_t len, nm_sr_request_t *req)
{
  return nm_sr_irecv_mask(session, gate, tag, NM_TAG_MASK_FULL, buf, len, req);
}

int nm_sr_wait_deadline(nm_session_t session, nm_sr_request_t *req, uint64_t deadline_ns)
{
  NM_CORE_LOCKED(session->core);
  if (!req->completed) {
    int err = nm_core_wait_flag(session->core, &req->completed, deadline_ns);
    if (err)
      return err;
  }
  return req->status;
}

int nm_sr_swait(nm_session_t session, nm_sr_request_t *req)
{
  return nm_sr_wait_deadline(session, req, 0);
}

int nm_sr_rwait(nm_session_t session, nm_sr_request_t *req)
{
  return nm_sr_wait_deadline(session, req, 0);
}

static int nm_sr_test(nm_session_t session, nm_sr_request_t *req)
{
  NM_CORE_LOCKED(session->core);
  if (!req->completed)
    nm_core_progress(session->core);
  return req->completed ? req->status : -NM_EAGAIN;
}

int nm_sr_stest(nm_session_t session, nm_sr_request_t *req)
{
  return nm_sr_test(session, req);
}

int nm_sr_rtest(nm_session_t session, nm_sr_request_t *req)
{
  return nm_sr_test(session, req);
}

int nm_sr_scancel(nm_session_t session, nm_sr_request_t *req)
{
  if (!session || !req || req->session != session)
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  return nm_cancel_send(req);
}

int nm_sr_recv_source(nm_session_t session, nm_sr_request_t *req, nm_gate_t *gate)
{
  NM_CORE_LOCKED(session->core);
  if (!(req->flags & NM_REQF_MATCHED) && !req->gate)
    return -NM_EAGAIN;
  *gate = req->gate;
  return NM_ESUCCESS;
}

int nm_sr_recv_get_tag(nm_session_t session, nm_sr_request_t *req, nm_tag_t *tag)
{
  NM_CORE_LOCKED(session->core);
  if (!(req->flags & NM_REQF_MATCHED))
    return -NM_EAGAIN;
  *tag = req->tag;
  return NM_ESUCCESS;
}

int nm_sr_get_size(nm_session_t session, nm_sr_request_t *req, nm_len_t *len)
{
  NM_CORE_LOCKED(session->core);
  if (!req->completed)
    return -NM_EAGAIN;
  if (req->kind == NM_REQ_SEND)
    *len = req->len;
  else
    *len = (req->flags & NM_REQF_MATCHED) ? (req->msg_len < req->len ? req->msg_len : req->len) : 0;
  return NM_ESUCCESS;
}

int nm_sr_iprobe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                 nm_tag_t *out_tag, nm_len_t *out_len)
{
  NM_CORE_LOCKED(session->core);
  nm_core_progress(session->core);
  for (struct nm_unexp_s *u = session->unexp_head; u; u = u->next) {
    if ((gate == NM_ANY_GATE || gate == u->gate) && nm_match_tag(u->tag, tag, mask)) {
      if (out_gate)
        *out_gate = u->gate;
      if (out_tag)
        *out_tag = u->tag;
      if (out_len)
        *out_len = u->msg_len;
      return NM_ESUCCESS;
    }
  }
  return -NM_EAGAIN;
}

int nm_sr_probe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                nm_tag_t *out_tag, nm_len_t *out_len)
{
  struct nm_core_s *core = session->core;
  NM_CORE_LOCKED(core);
  for (;;) {
    int err = nm_sr_iprobe(session, gate, tag, mask, out_gate, out_tag, out_len);
    if (err != -NM_EAGAIN)
      return err;
    if (gate != NM_ANY_GATE && gate->status)
      return gate->status;
    nm_core_wait(core, nm_core_time_ns(core) + core->cfg.spin_ns);
  }
}

int nm_sr_rcancel(nm_session_t session, nm_sr_request_t *req)
{
  NM_CORE_LOCKED(session->core);
  if (req->kind != NM_REQ_RECV || req->state != NM_RS_POSTED)
    return -NM_EBUSY;
  nm_match_remove_posted(session, req);
  nm_req_complete(req, -NM_ECANCELED);
  return NM_ESUCCESS;
}
