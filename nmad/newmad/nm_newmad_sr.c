/* NewMadeleine's send/receive request model over nmad (issue 16, deliverable 2; nm_sendrecv_interface.h).
 *
 * Why a session hook: NewMadeleine lets a receive be posted without a buffer and given one once the message's
 * first bytes were seen (NM_SR_EVENT_RECV_DATA, peek, offset, unpack_data: StarPU receives data of unknown size
 * that way). nmad's core decides where a message goes at match time only through a session hook (the rpc
 * model: header inline, body accepted into a buffer chosen then, by rendezvous when large). So a session used by
 * this interface is hooked here and its receives are matched here, in post order; the core still keeps the
 * sender's order per (gate, tag), the unexpected store (a message no receive wants is left to it and offered
 * again when a receive is posted: nm_core_session_replay()) and flow control. */
#include "nm_core_interface.h"
#include <nm_sendrecv_interface.h>
#include <nm_coll_interface.h>
#include <stdio.h>
#include <string.h>

/* Request states. */
enum { NM_SR_ST_INIT = 0, NM_SR_ST_POSTED, NM_SR_ST_MATCHED, NM_SR_ST_DONE };
enum { NM_SR_KIND_SEND = 1, NM_SR_KIND_RECV = 2 };
/* Header bytes a two-piece send puts in the core's header when the caller gave none: a small first piece (an
 * iovec's size field) then rides inline and the second piece is sent from where it is. */
#define NM_NEWMAD_AUTO_HDR_MAX ((nm_len_t)4096)
/* Largest header of nm_sr_send_header(): what nmad's rpc accepts inline (NM_RPC_HLEN_MAX). */
#define NM_NEWMAD_HDR_MAX ((nm_len_t)16 * 1024)

/* The state of a session hooked by this layer (the hook's ref). */
struct nm_newmad_sr_s {
  nm_session_t session;
  nm_core_t core;
  nm_sr_request_t *posted_head, *posted_tail; /* receives waiting for a message, in post order */
  unsigned kept;       /* messages left to the core's store (a hint: replay only when some may wait) */
  int replaying, replay_again;
  struct nm_gate_fail_hook_s fail_hook;
  nm_comm_t comm;      /* the communicator attached by nm_mpi_nmad.h (nm_comm_get_by_session()) */
};

static int nm_newmad_hook(void *ref, struct nm_core_incoming_s *in);

int nm_newmad_abi_check(int abi, size_t data_size)
{
  if (abi == NM_NEWMAD_ABI && data_size == sizeof(struct nm_data_s))
    return NM_ESUCCESS;
  fprintf(stderr, "nmad: NewMadeleine interface mismatch: program built for ABI %d (nm_data_s %zu bytes), "
                  "library has ABI %d (%zu bytes); rebuild against this nmad's headers\n",
          abi, data_size, NM_NEWMAD_ABI, sizeof(struct nm_data_s));
  return -NM_EINVAL;
}

/* The layer's state of a session, or NULL when nm_sr_init() was not called on it. Caller holds the lock. */
static struct nm_newmad_sr_s *nm_newmad_of(nm_session_t session)
{
  nm_core_hook_t hook;
  void *ref;
  if (!session)
    return NULL;
  nm_core_session_get_hook(session, &hook, &ref);
  return hook == nm_newmad_hook ? ref : NULL;
}

static void nm_newmad_unlink(struct nm_newmad_sr_s *s, nm_sr_request_t *r)
{
  if (r->prev)
    r->prev->next = r->next;
  else
    s->posted_head = r->next;
  if (r->next)
    r->next->prev = r->prev;
  else
    s->posted_tail = r->prev;
  r->next = r->prev = NULL;
}

/* Fire the completion events of a finished request that @p mask asks for, in ONE call: COMPLETED | FINALIZED, as
 * NewMadeleine does for a request nothing holds any more (StarPU relies on it: a receive that sees RECV_COMPLETED
 * alone is one whose buffer NewMadeleine still reads, and it then expects FINALIZED later, in a second call, and
 * releases the request twice otherwise). The monitor may release the request: it is the last access. */
static void nm_newmad_fire_done(nm_sr_request_t *r, nm_sr_event_t mask)
{
  nm_sr_event_t done = r->kind == NM_SR_KIND_SEND ? NM_SR_EVENT_SEND_COMPLETED : NM_SR_EVENT_RECV_COMPLETED;
  nm_sr_event_notifier_t fn = r->notifier;
  nm_sr_event_info_t info = {.req = {r}, .recv = {r->src, r->rtag, r->msg_len}, .status = r->status};
  void *ref = r->ref;
  nm_sr_event_t ev = fn ? mask & (done | NM_SR_EVENT_FINALIZED) : 0;
  r->completed = 1; /* before the call: after it the request may be gone */
  if (ev)
    fn(ev, &info, ref);
}

/* A request is over with @p status: record it, then its events. */
static void nm_newmad_finish(nm_sr_request_t *r, int status)
{
  if (r->tmp) {
    free(r->tmp);
    r->tmp = NULL;
  }
  r->status = status;
  r->state = NM_SR_ST_DONE;
  r->events |= (r->kind == NM_SR_KIND_SEND ? NM_SR_EVENT_SEND_COMPLETED : NM_SR_EVENT_RECV_COMPLETED) |
               NM_SR_EVENT_FINALIZED;
  nm_newmad_fire_done(r, r->ev_mask);
}

/* The core request under a send or a rendezvous receive completed. */
static void nm_newmad_core_done(struct nm_req_s *creq, unsigned event, void *ref)
{
  nm_sr_request_t *r = ref;
  int status = creq->status;
  if (r->kind == NM_SR_KIND_RECV && r->tmp && status == NM_ESUCCESS) {
    /* the body came through a bounce buffer: scatter what the descriptor wants of it */
    nm_len_t from = r->offset > r->body_at ? r->offset : r->body_at;
    nm_len_t end = r->body_at + r->body_len;
    if (end > r->data.size)
      end = r->data.size;
    if (from < end)
      nm_data_copy_from(&r->data, from, end - from, (char *)r->tmp + (from - r->body_at));
  }
  if (r->kind == NM_SR_KIND_RECV && r->truncated && status == NM_ESUCCESS)
    status = -NM_ETRUNCATED;
  nm_newmad_finish(r, status);
}

/* ---- sessions ---- */

static void nm_newmad_gate_failed(void *ref, struct nm_gate_s *gate)
{
  struct nm_newmad_sr_s *s = ref;
  for (nm_sr_request_t *r = s->posted_head, *next; r; r = next) {
    next = r->next;
    if (r->gate == gate) {
      nm_newmad_unlink(s, r);
      nm_newmad_finish(r, nm_gate_get_status(gate) ? nm_gate_get_status(gate) : -NM_ECLOSED);
    }
  }
}

/* Offer the stored messages to the posted receives again (after a post). Re-entrant: a monitor that posts
 * during a replay makes the outer replay run once more instead of walking the store twice at once. */
static void nm_newmad_replay(struct nm_newmad_sr_s *s)
{
  if (s->replaying) {
    s->replay_again = 1;
    return;
  }
  do {
    s->replay_again = 0;
    s->replaying = 1;
    s->kept = 0; /* recounted: every message the hook leaves during the replay counts again */
    nm_core_session_replay(s->session);
    s->replaying = 0;
  } while (s->replay_again && s->kept);
}

int nm_newmad_sr_init(nm_session_t session)
{
  if (!session)
    return -NM_EINVAL;
  nm_core_t core = nm_session_get_core(session);
  NM_CORE_LOCKED(core);
  nm_core_hook_t hook;
  void *ref;
  nm_core_session_get_hook(session, &hook, &ref);
  if (hook)
    return hook == nm_newmad_hook ? -NM_EALREADY : -NM_EBUSY;
  struct nm_newmad_sr_s *s = calloc(1, sizeof(*s));
  if (!s)
    return -NM_ENOMEM;
  s->session = session;
  s->core = core;
  s->fail_hook.fn = nm_newmad_gate_failed;
  s->fail_hook.ref = s;
  nm_core_gate_fail_hook_add(core, &s->fail_hook);
  nm_core_session_set_hook(session, nm_newmad_hook, s);
  s->kept = 1; /* messages may have arrived before: the first post replays */
  return NM_ESUCCESS;
}

int nm_newmad_sr_exit(nm_session_t session)
{
  if (!session)
    return -NM_EINVAL;
  nm_core_t core = nm_session_get_core(session);
  NM_CORE_LOCKED(core);
  struct nm_newmad_sr_s *s = nm_newmad_of(session);
  if (!s)
    return -NM_EINVAL;
  while (s->posted_head) {
    nm_sr_request_t *r = s->posted_head;
    nm_newmad_unlink(s, r);
    nm_newmad_finish(r, -NM_ECANCELED);
  }
  nm_core_session_set_hook(session, NULL, NULL);
  nm_core_gate_fail_hook_remove(core, &s->fail_hook);
  free(s);
  return NM_ESUCCESS;
}

/* ---- sends ---- */

static void nm_newmad_req_reset(nm_session_t session, nm_sr_request_t *req, int kind)
{
  memset(req, 0, sizeof(*req));
  req->session = session;
  req->kind = (uint8_t)kind;
  nm_core_req_init(&req->req, session, kind == NM_SR_KIND_SEND ? NM_REQ_SEND : NM_REQ_RECV);
}

void nm_newmad_sr_send_init(nm_session_t session, nm_sr_request_t *req)
{
  nm_newmad_req_reset(session, req, NM_SR_KIND_SEND);
}

void nm_newmad_sr_send_pack_data(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data)
{
  req->data = *data;
  req->has_data = 1;
}

int nm_newmad_sr_send_set_priority(nm_session_t session, nm_sr_request_t *req, nm_prio_t prio)
{
  if (req->kind != NM_SR_KIND_SEND || req->state != NM_SR_ST_INIT)
    return -NM_EINVAL;
  req->prio = prio;
  return NM_ESUCCESS;
}

int nm_newmad_sr_send_header(nm_session_t session, nm_sr_request_t *req, nm_len_t hlen)
{
  if (req->kind != NM_SR_KIND_SEND || req->state != NM_SR_ST_INIT || hlen > NM_NEWMAD_HDR_MAX ||
      (req->has_data && hlen > req->data.size))
    return -NM_EINVAL;
  req->hlen = hlen;
  return NM_ESUCCESS;
}

/* Pieces [from, from + len) of the send's data as one address: in place when contiguous, else packed into
 * *scratch at *used (the packing copy nmad's two-buffer send path needs for three pieces or more). */
static const void *nm_newmad_send_view(nm_sr_request_t *r, nm_len_t from, nm_len_t len, char *scratch,
                                       nm_len_t *used)
{
  if (!len)
    return NULL;
  void *p = nm_data_contig_at(&r->data, from, len);
  if (p)
    return p;
  char *dst = scratch + *used;
  nm_data_copy_to(&r->data, from, len, dst);
  *used += len;
  return dst;
}

int nm_newmad_sr_send_post(nm_session_t session, nm_sr_request_t *r, nm_gate_t gate, nm_tag_t tag, int sync)
{
  if (!session || r->kind != NM_SR_KIND_SEND || r->state != NM_SR_ST_INIT || !gate)
    return -NM_EINVAL;
  nm_core_t core = nm_session_get_core(session);
  NM_CORE_LOCKED(core);
  if (!r->has_data)
    nm_data_null_build(&r->data);
  nm_len_t size = r->data.size, hlen = r->hlen;
  if (!hlen && nm_data_pieces(&r->data) == 2 && nm_data_first_piece(&r->data) <= NM_NEWMAD_AUTO_HDR_MAX)
    hlen = nm_data_first_piece(&r->data); /* small first piece as the header: both leave from where they are */
  nm_len_t blen = size - hlen, need = 0;
  if (hlen && !nm_data_contig_at(&r->data, 0, hlen))
    need += hlen;
  if (blen && !nm_data_contig_at(&r->data, hlen, blen))
    need += blen;
  if (need && !(r->tmp = malloc(need)))
    return -NM_ENOMEM;
  nm_len_t used = 0;
  const void *hdr = nm_newmad_send_view(r, 0, hlen, r->tmp, &used);
  const void *body = nm_newmad_send_view(r, hlen, blen, r->tmp, &used);
  r->gate = gate;
  r->tag = tag;
  r->state = NM_SR_ST_POSTED;
  nm_core_req_init(&r->req, session, NM_REQ_SEND);
  nm_core_req_set_prio(&r->req, r->prio);
  nm_core_req_set_monitor(&r->req, NM_EVENT_SEND_COMPLETED, nm_newmad_core_done, r);
  int err = nm_core_req_isend(&r->req, session, gate, tag, hdr, hlen, body, blen, sync ? NM_CORE_SEND_SYNC : 0);
  if (err) {
    free(r->tmp);
    r->tmp = NULL;
    r->state = NM_SR_ST_INIT;
  }
  return err;
}

/* ---- receives ---- */

void nm_newmad_sr_recv_init(nm_session_t session, nm_sr_request_t *req)
{
  nm_newmad_req_reset(session, req, NM_SR_KIND_RECV);
}

void nm_newmad_sr_recv_unpack_data(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data)
{
  req->data = *data;
  req->has_data = 1;
}

int nm_newmad_sr_recv_offset(nm_session_t session, nm_sr_request_t *req, nm_len_t offset)
{
  if (req->kind != NM_SR_KIND_RECV || req->state == NM_SR_ST_DONE || (req->state == NM_SR_ST_MATCHED && !req->in))
    return -NM_EINVAL;
  req->offset = offset;
  return NM_ESUCCESS;
}

int nm_newmad_sr_recv_peek(nm_session_t session, nm_sr_request_t *req, const struct nm_data_s *data)
{
  const struct nm_core_incoming_s *in = req->in;
  if (!in)
    return -NM_EINVAL;
  nm_len_t want = data->size, have = in->is_rdv ? in->prefix_len : in->prefix_len + in->body_len;
  if (want > have)
    return -NM_EAGAIN;
  nm_len_t from_prefix = want < in->prefix_len ? want : in->prefix_len;
  nm_data_copy_from(data, 0, from_prefix, in->prefix);
  if (want > from_prefix)
    nm_data_copy_from(data, from_prefix, want - from_prefix, in->body);
  return NM_ESUCCESS;
}

/* Move a matched message into r's descriptor: eager bytes are scattered at once; a rendezvous body is accepted
 * straight into the descriptor when the bytes it wants are one piece, else into a bounce buffer. */
static int nm_newmad_deliver(struct nm_newmad_sr_s *s, nm_sr_request_t *r, struct nm_core_incoming_s *in)
{
  const nm_len_t total = in->prefix_len + in->body_len, cap = r->data.size;
  const nm_len_t end = total < cap ? total : cap, off = r->offset;
  r->truncated = total > cap;
  if (off < in->prefix_len && off < end)
    nm_data_copy_from(&r->data, off, (in->prefix_len < end ? in->prefix_len : end) - off, in->prefix + off);
  const nm_len_t bstart = off > in->prefix_len ? off : in->prefix_len;
  if (!in->is_rdv) {
    if (bstart < end)
      nm_data_copy_from(&r->data, bstart, end - bstart, in->body + (bstart - in->prefix_len));
    nm_newmad_finish(r, r->truncated ? -NM_ETRUNCATED : NM_ESUCCESS);
    return 1;
  }
  nm_core_req_init(&r->req, s->session, NM_REQ_RECV);
  nm_core_req_set_monitor(&r->req, NM_EVENT_RECV_COMPLETED, nm_newmad_core_done, r);
  void *dst = bstart == in->prefix_len && end > bstart ? nm_data_contig_at(&r->data, bstart, end - bstart) : NULL;
  if (dst || end <= bstart) {
    /* a descriptor shorter than the body truncates: the core fills the first bytes and reports it */
    nm_core_incoming_accept(in, &r->req, dst, end > bstart ? end - bstart : 0);
    return 1;
  }
  if (in->body_len > nm_core_peer_alloc_max(s->core) || !(r->tmp = malloc(in->body_len))) {
    nm_newmad_finish(r, -NM_ENOMEM); /* the hook's caller releases the sender with an empty RTR */
    return 1;
  }
  r->body_at = in->prefix_len;
  r->body_len = in->body_len;
  nm_core_incoming_accept(in, &r->req, r->tmp, in->body_len);
  return 1;
}

/* The session hook: every in-order message of the session. @return 1 taken, 0 left to the core's store. */
static int nm_newmad_hook(void *ref, struct nm_core_incoming_s *in)
{
  struct nm_newmad_sr_s *s = ref;
  nm_sr_request_t *r = s->posted_head;
  while (r && !((r->gate == NM_ANY_GATE || r->gate == in->gate) && ((in->tag ^ r->tag) & r->mask) == 0))
    r = r->next;
  if (!r) {
    s->kept++;
    return 0;
  }
  nm_newmad_unlink(s, r);
  r->state = NM_SR_ST_MATCHED;
  r->src = in->gate;
  r->rtag = in->tag;
  r->msg_len = in->prefix_len + in->body_len;
  if (!r->has_data) {
    if (r->notifier && (r->ev_mask & NM_SR_EVENT_RECV_DATA)) {
      nm_sr_event_info_t info = {.req = {r}, .recv = {in->gate, in->tag, r->msg_len}};
      r->in = in;
      r->notifier(NM_SR_EVENT_RECV_DATA, &info, r->ref);
      r->in = NULL;
    }
    if (!r->has_data) { /* nobody said where the data goes: dropped, reported on the request */
      nm_newmad_finish(r, -NM_EINVAL);
      return 1;
    }
  }
  return nm_newmad_deliver(s, r, in);
}

int nm_newmad_sr_recv_irecv(nm_session_t session, nm_sr_request_t *r, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask)
{
  if (!session || r->kind != NM_SR_KIND_RECV || r->state != NM_SR_ST_INIT)
    return -NM_EINVAL;
  NM_CORE_LOCKED(nm_session_get_core(session));
  struct nm_newmad_sr_s *s = nm_newmad_of(session);
  if (!s)
    return -NM_EINVAL;
  r->gate = gate;
  r->tag = tag;
  r->mask = mask;
  r->state = NM_SR_ST_POSTED;
  if (gate && nm_gate_get_status(gate)) {
    nm_newmad_finish(r, nm_gate_get_status(gate));
    return NM_ESUCCESS;
  }
  r->prev = s->posted_tail;
  r->next = NULL;
  if (s->posted_tail)
    s->posted_tail->next = r;
  else
    s->posted_head = r;
  s->posted_tail = r;
  if (s->kept)
    nm_newmad_replay(s);
  return NM_ESUCCESS;
}

int nm_newmad_sr_rcancel(nm_session_t session, nm_sr_request_t *r)
{
  NM_CORE_LOCKED(nm_session_get_core(session));
  struct nm_newmad_sr_s *s = nm_newmad_of(session);
  if (!s || r->kind != NM_SR_KIND_RECV || r->state != NM_SR_ST_POSTED)
    return -NM_EBUSY;
  nm_newmad_unlink(s, r);
  nm_newmad_finish(r, -NM_ECANCELED);
  return NM_ESUCCESS;
}

/* ---- monitors, waits ---- */

int nm_newmad_sr_request_monitor(nm_session_t session, nm_sr_request_t *r, nm_sr_event_t mask,
                                 nm_sr_event_notifier_t notifier)
{
  if (!session || !r->kind)
    return -NM_EINVAL;
  NM_CORE_LOCKED(nm_session_get_core(session));
  r->notifier = notifier;
  r->ev_mask = mask;
  if (r->state == NM_SR_ST_DONE)
    nm_newmad_fire_done(r, mask & r->events);
  return NM_ESUCCESS;
}

int nm_newmad_sr_wait(nm_session_t session, nm_sr_request_t *r)
{
  if (!session || !r->kind || r->state == NM_SR_ST_INIT)
    return -NM_EINVAL;
  nm_core_t core = nm_session_get_core(session);
  if (!r->completed) {
    NM_CORE_LOCKED(core);
    nm_core_wait_flag(core, &r->completed, 0);
  }
  return r->status;
}

int nm_newmad_sr_test(nm_session_t session, nm_sr_request_t *r)
{
  if (!session || !r->kind || r->state == NM_SR_ST_INIT)
    return -NM_EINVAL;
  if (!r->completed)
    nm_core_progress(nm_session_get_core(session));
  return r->completed ? r->status : -NM_EAGAIN;
}

int nm_newmad_sr_recv_source(nm_session_t session, nm_sr_request_t *r, nm_gate_t *gate)
{
  if (r->kind != NM_SR_KIND_RECV || r->state < NM_SR_ST_MATCHED || !r->src)
    return -NM_EAGAIN;
  *gate = r->src;
  return NM_ESUCCESS;
}

int nm_newmad_sr_recv_get_tag(nm_session_t session, nm_sr_request_t *r, nm_tag_t *tag)
{
  if (r->kind != NM_SR_KIND_RECV || r->state < NM_SR_ST_MATCHED || !r->src)
    return -NM_EAGAIN;
  *tag = r->rtag;
  return NM_ESUCCESS;
}

int nm_newmad_sr_get_size(nm_session_t session, nm_sr_request_t *r, nm_len_t *len)
{
  if (!r->completed)
    return -NM_EAGAIN;
  if (r->kind == NM_SR_KIND_SEND)
    *len = r->data.size;
  else
    *len = r->msg_len < r->data.size ? r->msg_len : r->data.size;
  return NM_ESUCCESS;
}

/* ---- communicators (nm_coll_interface.h) ---- */

int nm_newmad_session_set_comm(nm_session_t session, nm_comm_t comm)
{
  NM_CORE_LOCKED(nm_session_get_core(session));
  struct nm_newmad_sr_s *s = nm_newmad_of(session);
  if (!s)
    return -NM_EINVAL;
  s->comm = comm;
  return NM_ESUCCESS;
}

nm_comm_t nm_comm_get_by_session(nm_session_t session)
{
  if (!session)
    return NULL;
  NM_CORE_LOCKED(nm_session_get_core(session));
  struct nm_newmad_sr_s *s = nm_newmad_of(session);
  return s ? s->comm : NULL;
}

nm_gate_t nm_comm_get_gate(nm_comm_t comm, int rank)
{
  if (!comm || rank < 0 || rank >= comm->size)
    return NULL;
  nm_core_t core = nm_session_get_core(comm->session);
  NM_CORE_LOCKED(core);
  return nm_core_gate(core, comm->world[rank]);
}
