/* The sendrecv interface: thin wrappers that hand a request to the core through its interface
 * (nmad/core/nm_core_interface.h). The core functions take the core lock themselves (a no-op without a progress
 * thread), so this layer holds none and writes no field of the request itself. */
#include "nm_core_interface.h"
#include <nmad/nm_sendrecv.h>

void nm_sr_send_init(nm_session_t session, nm_sr_request_t *req)
{
  nm_core_req_init(req, session, NM_REQ_SEND);
}

void nm_sr_recv_init(nm_session_t session, nm_sr_request_t *req)
{
  nm_core_req_init(req, session, NM_REQ_RECV);
}

int nm_sr_send_set_priority(nm_session_t session, nm_sr_request_t *req, nm_prio_t prio)
{
  return nm_core_req_set_prio(req, prio);
}

int nm_sr_request_set_monitor(nm_session_t session, nm_sr_request_t *req, unsigned mask,
                              nm_req_notifier_t notifier, void *ref)
{
  return nm_core_req_set_monitor(req, mask, notifier, ref);
}

static int nm_sr_post_send(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag,
                           const void *buf, nm_len_t len, unsigned flags)
{
  if (!session)
    return -NM_EINVAL;
  return nm_core_req_isend(req, session, gate, tag, NULL, 0, buf, len, flags);
}

int nm_sr_send_isend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, const void *buf,
                     nm_len_t len)
{
  return nm_sr_post_send(session, req, gate, tag, buf, len, 0);
}

int nm_sr_send_issend(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, const void *buf,
                      nm_len_t len)
{
  return nm_sr_post_send(session, req, gate, tag, buf, len, NM_CORE_SEND_SYNC);
}

int nm_sr_send_now(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len)
{
  return nm_core_send_now(session, gate, tag, buf, len);
}

/* init + post in one core call with the same arguments: the fast path of an application's send is a jump */
int nm_sr_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                nm_sr_request_t *req)
{
  return nm_core_isend(session, gate, tag, buf, len, req);
}

int nm_sr_issend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                 nm_sr_request_t *req)
{
  return nm_sr_post_send(session, req, gate, tag, buf, len, NM_CORE_REQ_FRESH | NM_CORE_SEND_SYNC);
}

int nm_sr_recv_irecv(nm_session_t session, nm_sr_request_t *req, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask,
                     void *buf, nm_len_t len)
{
  if (!session)
    return -NM_EINVAL;
  return nm_core_req_irecv(req, session, gate, tag, mask, buf, len, 0);
}

int nm_sr_irecv_mask(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, void *buf, nm_len_t len,
                     nm_sr_request_t *req)
{
  if (!req || !session) /* init + post in one core call: the fast path of an application's receive */
    return -NM_EINVAL;
  return nm_core_req_irecv(req, session, gate, tag, mask, buf, len, NM_CORE_REQ_FRESH);
}

int nm_sr_irecv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, void *buf, nm_len_t len, nm_sr_request_t *req)
{
  return nm_core_irecv(session, gate, tag, buf, len, req); /* as nm_sr_isend(): a jump */
}

int nm_sr_wait_deadline(nm_session_t session, nm_sr_request_t *req, uint64_t deadline_ns)
{
  return nm_core_req_wait(session, req, deadline_ns);
}

int nm_sr_swait(nm_session_t session, nm_sr_request_t *req)
{
  return nm_core_req_wait(session, req, 0);
}

int nm_sr_rwait(nm_session_t session, nm_sr_request_t *req)
{
  return nm_core_req_wait(session, req, 0);
}

int nm_sr_stest(nm_session_t session, nm_sr_request_t *req)
{
  return nm_core_req_test(session, req);
}

int nm_sr_rtest(nm_session_t session, nm_sr_request_t *req)
{
  return nm_core_req_test(session, req);
}

int nm_sr_scancel(nm_session_t session, nm_sr_request_t *req)
{
  return nm_core_req_cancel_send(session, req);
}

int nm_sr_recv_source(nm_session_t session, nm_sr_request_t *req, nm_gate_t *gate)
{
  return nm_core_req_source(session, req, gate);
}

int nm_sr_recv_get_tag(nm_session_t session, nm_sr_request_t *req, nm_tag_t *tag)
{
  return nm_core_req_tag(session, req, tag);
}

int nm_sr_get_size(nm_session_t session, nm_sr_request_t *req, nm_len_t *len)
{
  return nm_core_req_size(session, req, len);
}

int nm_sr_iprobe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                 nm_tag_t *out_tag, nm_len_t *out_len)
{
  return nm_core_probe(session, gate, tag, mask, 0, out_gate, out_tag, out_len);
}

int nm_sr_probe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                nm_tag_t *out_tag, nm_len_t *out_len)
{
  return nm_core_probe(session, gate, tag, mask, 1, out_gate, out_tag, out_len);
}

int nm_sr_rcancel(nm_session_t session, nm_sr_request_t *req)
{
  return nm_core_req_cancel_recv(session, req);
}
