/* The core interface (nm_core_interface.h): what the layers above the core call instead of touching core
 * structures. Each function takes the core lock where it reads or changes state the core shares, so that the
 * layers need no lock of their own on their fast path (issue 15, part 6). */
#include "nm_core_private.h"
#include <stdio.h>
#include <string.h>

_Static_assert(NM_CORE_MAX_RAILS == NM_MAX_RAILS, "the interface's rail bound is the core's");

/* ---- requests ---- */

void nm_core_req_init(struct nm_req_s *req, nm_session_t session, enum nm_req_kind_e kind)
{
  memset(req, 0, sizeof(*req)); /* state NM_RS_INIT, no flags, no monitor */
  req->session = session;
  req->kind = (uint8_t)kind;
}

/* A gate the caller passed: one of this core's (a gate of another core would corrupt both). */
static int nm_core_gate_ok(struct nm_core_s *core, struct nm_gate_s *gate)
{
  return gate && gate->core == core;
}

/* The body of every send post; inlined into each entry point so that none costs a call more than another. */
static inline int nm_core_isend_body(struct nm_req_s *req, nm_session_t session, nm_gate_t gate, nm_tag_t tag,
                                     const void *hdr, nm_len_t hdr_len, const void *buf, nm_len_t len,
                                     unsigned flags)
{
  if (!req || (flags & ~(NM_CORE_SEND_SYNC | NM_CORE_REQ_FRESH)))
    return -NM_EINVAL;
  if (flags & NM_CORE_REQ_FRESH)
    nm_core_req_init(req, session, NM_REQ_SEND);
  if (!session)
    session = req->session;
  if (!session || req->kind != NM_REQ_SEND || req->state != NM_RS_INIT || !nm_core_gate_ok(session->core, gate) ||
      (len && !buf) || (hdr_len && !hdr))
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  req->session = session;
  req->gate = gate;
  req->tag = tag;
  req->mask = NM_TAG_MASK_FULL;
  req->hdr = hdr;
  req->hdr_len = hdr_len;
  req->buf = (void *)buf;
  req->len = len;
  req->msg_len = hdr_len + len;
  if (flags & NM_CORE_SEND_SYNC)
    req->flags |= NM_REQF_SYNC;
  return nm_core_post_send(req);
}

int nm_core_req_isend(struct nm_req_s *req, nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *hdr,
                      nm_len_t hdr_len, const void *buf, nm_len_t len, unsigned flags)
{
  return nm_core_isend_body(req, session, gate, tag, hdr, hdr_len, buf, len, flags);
}

int nm_core_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                  struct nm_req_s *req)
{
  if (!session)
    return -NM_EINVAL;
  return nm_core_isend_body(req, session, gate, tag, NULL, 0, buf, len, NM_CORE_REQ_FRESH);
}

static inline int nm_core_irecv_body(struct nm_req_s *req, nm_session_t session, nm_gate_t gate, nm_tag_t tag,
                                     nm_tag_t mask, void *buf, nm_len_t len, unsigned flags)
{
  if (!req || (flags & ~NM_CORE_REQ_FRESH))
    return -NM_EINVAL;
  if (flags & NM_CORE_REQ_FRESH)
    nm_core_req_init(req, session, NM_REQ_RECV);
  if (!session)
    session = req->session;
  if (!session || req->kind != NM_REQ_RECV || req->state != NM_RS_INIT ||
      (gate != NM_ANY_GATE && !nm_core_gate_ok(session->core, gate)) || (len && !buf))
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  req->session = session;
  req->gate = gate;
  req->tag = tag;
  req->mask = mask;
  req->buf = buf;
  req->len = len;
  nm_match_post_recv(session, req);
  return NM_ESUCCESS;
}

int nm_core_req_irecv(struct nm_req_s *req, nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask,
                      void *buf, nm_len_t len, unsigned flags)
{
  return nm_core_irecv_body(req, session, gate, tag, mask, buf, len, flags);
}

int nm_core_irecv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, void *buf, nm_len_t len,
                  struct nm_req_s *req)
{
  if (!session)
    return -NM_EINVAL;
  return nm_core_irecv_body(req, session, gate, tag, NM_TAG_MASK_FULL, buf, len, NM_CORE_REQ_FRESH);
}

int nm_core_req_set_prio(struct nm_req_s *req, nm_prio_t prio)
{
  if (!req || req->kind != NM_REQ_SEND || req->state != NM_RS_INIT)
    return -NM_EINVAL;
  req->prio = prio;
  return NM_ESUCCESS;
}

int nm_core_req_set_monitor(struct nm_req_s *req, unsigned mask, nm_req_notifier_t fn, void *ref)
{
  if (!req || req->kind == NM_REQ_NONE || !req->session)
    return -NM_EINVAL;
  NM_CORE_LOCKED(req->session->core);
  if (req->completed) /* its events were delivered already: nothing would ever call the monitor */
    return -NM_EALREADY;
  /* On a posted request this is safe because the core reads the monitor only when it delivers an event, and
   * requests progress only under the core lock, which we hold. */
  req->notifier = fn;
  req->notifier_ref = ref;
  req->notifier_mask = mask;
  return NM_ESUCCESS;
}

int nm_core_req_wait(nm_session_t session, struct nm_req_s *req, uint64_t deadline_ns)
{
  NM_CORE_LOCKED(session->core);
  if (!req->completed) {
    int err = nm_core_wait_flag(session->core, &req->completed, deadline_ns);
    if (err)
      return err;
  }
  return req->status;
}

int nm_core_req_test(nm_session_t session, struct nm_req_s *req)
{
  NM_CORE_LOCKED(session->core);
  if (!req->completed)
    nm_core_progress(session->core);
  return req->completed ? req->status : -NM_EAGAIN;
}

int nm_core_req_cancel_send(nm_session_t session, struct nm_req_s *req)
{
  if (!session || !req || req->session != session)
    return -NM_EINVAL;
  NM_CORE_LOCKED(session->core);
  return nm_cancel_send(req);
}

int nm_core_req_cancel_recv(nm_session_t session, struct nm_req_s *req)
{
  NM_CORE_LOCKED(session->core);
  if (req->kind != NM_REQ_RECV || req->state != NM_RS_POSTED)
    return -NM_EBUSY;
  nm_match_remove_posted(session, req);
  nm_req_complete(req, -NM_ECANCELED);
  return NM_ESUCCESS;
}

int nm_core_req_source(nm_session_t session, struct nm_req_s *req, nm_gate_t *gate)
{
  NM_CORE_LOCKED(session->core);
  if (!(req->flags & NM_REQF_MATCHED) && !req->gate)
    return -NM_EAGAIN;
  *gate = req->gate;
  return NM_ESUCCESS;
}

int nm_core_req_tag(nm_session_t session, struct nm_req_s *req, nm_tag_t *tag)
{
  NM_CORE_LOCKED(session->core);
  if (!(req->flags & NM_REQF_MATCHED))
    return -NM_EAGAIN;
  *tag = req->tag;
  return NM_ESUCCESS;
}

int nm_core_req_size(nm_session_t session, struct nm_req_s *req, nm_len_t *len)
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

/* One look at the stored messages, in arrival order (the first that matches is the one a receive would get). */
static int nm_core_iprobe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, nm_gate_t *out_gate,
                          nm_tag_t *out_tag, nm_len_t *out_len)
{
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

int nm_core_probe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, int block,
                  nm_gate_t *out_gate, nm_tag_t *out_tag, nm_len_t *out_len)
{
  struct nm_core_s *core = session->core;
  NM_CORE_LOCKED(core);
  for (;;) {
    nm_core_progress(core);
    int err = nm_core_iprobe(session, gate, tag, mask, out_gate, out_tag, out_len);
    if (err != -NM_EAGAIN || !block)
      return err;
    if (gate != NM_ANY_GATE && gate->status)
      return gate->status;
    nm_core_wait(core, nm_core_time_ns(core) + core->cfg.spin_ns);
  }
}

/* ---- cores, gates: read-only ---- */

int nm_core_get_rank(nm_core_t core) { return core->rank; }
int nm_core_get_size(nm_core_t core) { return core->size; }
nm_core_t nm_gate_get_core(nm_gate_t gate) { return gate->core; }
int nm_gate_get_rank(nm_gate_t gate) { return gate->rank; }
int nm_gate_get_status(nm_gate_t gate) { return gate->status; }

/* ---- sequence numbers ---- */

int nm_core_send_seq_take(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t *seq)
{
  struct nm_seq_s *s = nm_gate_seq(gate, session->id, tag);
  if (!s)
    return -NM_ENOMEM;
  *seq = s->next_send++;
  return NM_ESUCCESS;
}

void nm_core_send_seq_give_back(nm_session_t session, nm_gate_t gate, nm_tag_t tag)
{
  struct nm_seq_s *s = nm_gate_seq(gate, session->id, tag); /* exists: nm_core_send_seq_take() made it */
  if (s)
    s->next_send--;
}

/* ---- sessions of a layer ---- */

int nm_core_session_open_child(nm_session_t owner, const char *suffix, nm_session_t *out)
{
  if (!owner || !suffix || !out)
    return -NM_EINVAL;
  char name[NM_SESSION_NAME_MAX];
  if ((size_t)snprintf(name, sizeof(name), "%s%s", owner->name, suffix) >= sizeof(name))
    return -NM_EINVAL; /* owner's name too long to derive the child's */
  NM_CORE_LOCKED(owner->core);
  int err = nm_session_open(owner->core, name, out);
  if (!err)
    (*out)->owner = owner; /* nm_core_destroy() closes owners first; they close their children */
  return err;
}

void *nm_core_session_get_rpc(nm_session_t session) { return session->rpc; }

void nm_core_session_set_rpc(nm_session_t session, void *rpc, void (*close)(void *rpc))
{
  session->rpc = rpc;
  session->rpc_close = close;
}

/* ---- set-up ---- */

int nm_core_configure(nm_core_t core, int oversubscribed, int job_oversubscribed)
{
  /* The largest eager payload: what a packet holds after the headers of one message with the most options. */
  size_t max_eager = core->pw_cap - NM_WIRE_PKT_HDR_LEN - NM_WIRE_MSG_HDR_LEN - NM_WIRE_SYNC_LEN - NM_WIRE_PREFIX_LEN;
  for (int i = 0; i < core->n_drvs; i++)
    if (core->drvs[i].ops->host_oversubscribed)
      core->drvs[i].ops->host_oversubscribed(&core->drvs[i], oversubscribed);
  int err = nm_config_load(&core->cfg, max_eager, oversubscribed, job_oversubscribed);
  if (err || oversubscribed || core->cfg.rdv_threshold_set)
    return err;
  /* A driver whose packets above the inject size are a rendezvous of the provider's own: the core's rendezvous
   * moves the data once where eager would copy it twice more. Not on an oversubscribed host, whose default (eager
   * up to 128 KiB) saves the rendezvous' hops, each a wait for a rank to be scheduled. */
  nm_len_t cap = nm_frag_eager_max(core);
  if (cap && cap < core->cfg.rdv_threshold)
    core->cfg.rdv_threshold = cap;
  return NM_ESUCCESS;
}

void nm_core_set_one_host(nm_core_t core, int one_host) { core->one_host = one_host != 0; }

int nm_core_progress_thread_wanted(nm_core_t core, enum nm_bind_e *bind)
{
  if (bind)
    *bind = core->cfg.bind;
  return core->cfg.progress_thread;
}
