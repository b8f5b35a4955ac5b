/* What the rpc and mcast layers need from the core: session hooks (rpc channel), accepting a hooked message's
 * body, and replaying stored messages to a hook. Claim and inject live in nm_incoming.c (they follow its
 * sequence-number logic). */
#include "nm_core_private.h"
#include <string.h>

void nm_core_session_set_hook(nm_session_t session, nm_core_hook_t hook, void *ref)
{
  session->hook = hook;
  session->hook_ref = ref;
}

void nm_core_session_get_hook(nm_session_t session, nm_core_hook_t *hook, void **ref)
{
  *hook = session->hook;
  *ref = session->hook_ref;
}

int nm_core_incoming_accept(struct nm_core_incoming_s *in, struct nm_req_s *req, void *buf, nm_len_t len)
{
  if (in->accepted)
    return -NM_EINVAL;
  in->accepted = 1;
  req->kind = NM_REQ_RECV;
  req->gate = in->gate;
  req->tag = in->tag;
  req->buf = buf;
  req->len = len;
  req->msg_len = in->body_len;
  req->flags |= NM_REQF_MATCHED;
  nm_len_t n = in->body_len < len ? in->body_len : len;
  if (in->body_len > len)
    req->flags |= NM_REQF_TRUNC;
  if (!in->is_rdv) {
    if (n)
      memcpy(buf, in->body, n);
    nm_req_complete(req, (req->flags & NM_REQF_TRUNC) ? -NM_ETRUNCATED : NM_ESUCCESS);
    return NM_ESUCCESS;
  }
  nm_rdv_post(req, in->gate, in->cookie, in->prefix_len, buf, n);
  return NM_ESUCCESS;
}

void nm_core_session_replay(nm_session_t session)
{
  struct nm_unexp_s **pp = &session->unexp_head;
  while (*pp && session->hook) {
    struct nm_unexp_s *u = *pp;
    struct nm_wire_chunk_s c;
    nm_unexp_to_chunk(u, &c);
    struct nm_core_incoming_s in = {
      .gate = u->gate, .tag = u->tag, .prefix = c.payload, .prefix_len = c.prefix_len,
      .body_len = c.msg_len - c.prefix_len, .is_rdv = c.type == NM_WIRE_RDV, .cookie = c.cookie};
    in.body = in.is_rdv ? NULL : c.payload + c.prefix_len;
    int rc = u->gate->status ? 0 : session->hook(session->hook_ref, &in);
    if (rc == 0) {
      pp = &u->next;
      continue;
    }
    nm_match_unexp_remove(session, u); /* *pp becomes its successor */
    if (rc < 0)
      nm_gate_fail(u->gate, rc);
    else if (in.is_rdv && !in.accepted)
      nm_rdv_post(NULL, u->gate, c.cookie, c.prefix_len, NULL, 0);
    else if (!in.is_rdv && (c.flags & NM_WIRE_FLAG_SYNC))
      nm_rdv_send_ack(u->gate, c.cookie);
    nm_unexp_free(session->core, u);
  }
}

nm_len_t nm_core_rdv_threshold(nm_core_t core) { return core->cfg.rdv_threshold; }

nm_len_t nm_core_rdv_pull_upto(nm_core_t core)
{
  int network = 0, pulls = 1;
  for (int i = 0; i < core->n_drvs; i++)
    if (&core->drvs[i] != core->self_drv) {
      network++;
      pulls = pulls && (core->drvs[i].props.flags & NM_DRV_F_RDV_GET);
    }
  if (network != 1 || !pulls)
    return core->cfg.rdv_threshold;
  nm_len_t chunk = nm_core_rdv_chunk(core);
  return chunk > core->cfg.rdv_threshold ? chunk : core->cfg.rdv_threshold;
}

void nm_core_gate_fail_hook_add(nm_core_t core, struct nm_gate_fail_hook_s *h)
{
  h->next = core->gate_fail_hooks;
  core->gate_fail_hooks = h;
}

void nm_core_gate_fail_hook_remove(nm_core_t core, struct nm_gate_fail_hook_s *h)
{
  for (struct nm_gate_fail_hook_s **pp = &core->gate_fail_hooks; *pp; pp = &(*pp)->next)
    if (*pp == h) {
      *pp = h->next;
      return;
    }
}
