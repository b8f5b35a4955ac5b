/* Dynamic broadcasts (Denis 2020, "Dynamic broadcasts in StarPU/NewMadeleine", sections 3.2 and 4.3).
 *
 * Only the root knows the destinations. Every hop receives, in the header of an rpc message, the root, the
 * tag, the data length, the tree kind, its own point-to-point sequence number and its subtree as
 * (rank, priority, sequence number) triples. It receives the data in place (into the matching point-to-point
 * receive when that one is due and posted, else into a temporary buffer), forwards it to its children with
 * their priorities, then completes the receive or hands the data to the core as an unexpected message of the
 * root's (gate, tag) with that sequence number: the broadcast takes exactly the place of a point-to-point
 * message in the root's send order.
 *
 * Header (little-endian): u32 root, u32 n, u64 tag, u64 data length, u8 tree, 3 x u8 zero, u32 seq, i32 prio,
 * then n x {u32 rank, i32 prio, u32 seq}. */
#include "nmad/core/nm_core_private.h"
#include "nmad/core/nm_le.h"
#include "nm_mcast_tree.h"
#include <nmad/nm_mcast.h>
#include <nmad/nm_rpc.h>
#include <stdlib.h>
#include <string.h>

#define NM_MCAST_HDR_FIXED 36
#define NM_MCAST_ENTRY_LEN 12
#define NM_MCAST_HLEN_MAX (16 * 1024)

struct nm_mcast_service_s {
  nm_session_t session;
  nm_rpc_service_t rpc;
  int n_active; /* broadcasts being received or forwarded here */
};

struct nm_mcast_entry_s {
  uint32_t rank;
  int32_t prio;
  uint32_t seq;
};

/* The sends of one hop to its children (at the root or at a forwarder). */
struct nm_mcast_fanout_s {
  struct nm_req_s *reqs;
  uint8_t *hdrs;
  int n, done, status;
};

/* A broadcast being received and forwarded at this node. */
struct nm_mcast_fwd_s {
  struct nm_mcast_service_s *svc;
  nm_gate_t root_gate;
  nm_tag_t tag;
  nm_seq_t seq;
  nm_len_t len;
  uint8_t tree;
  uint32_t root;
  struct nm_req_s *claimed; /* the application's receive, when the data lands in it directly */
  void *buf;
  struct nm_mcast_fanout_s out;
  int n_entries;
  struct nm_mcast_entry_s entries[];
};

static size_t nm_mcast_hdr_len(int n) { return NM_MCAST_HDR_FIXED + (size_t)n * NM_MCAST_ENTRY_LEN; }

static void nm_mcast_put_hdr(uint8_t *h, uint32_t root, nm_tag_t tag, nm_len_t len, uint8_t tree,
                             const struct nm_mcast_entry_s *self, const struct nm_mcast_entry_s *sub, int n)
{
  nm_put32(h, root);
  nm_put32(h + 4, (uint32_t)n);
  nm_put64(h + 8, tag);
  nm_put64(h + 16, len);
  memset(h + 24, 0, 4);
  nm_put8(h + 24, tree);
  nm_put32(h + 28, self->seq);
  nm_put32(h + 32, (uint32_t)self->prio);
  for (int i = 0; i < n; i++) {
    uint8_t *e = h + NM_MCAST_HDR_FIXED + (size_t)i * NM_MCAST_ENTRY_LEN;
    nm_put32(e, sub[i].rank);
    nm_put32(e + 4, (uint32_t)sub[i].prio);
    nm_put32(e + 8, sub[i].seq);
  }
}

/* Send the data to the children of position 0 in list[0..m) (list positions 1..m). Each child gets its subtree
 * slice and its own priority in the local scheduler. @p notifier fires per child send; when the last one fired
 * the fan-out is over (it may already be over when this returns). @return number of children. */
static int nm_mcast_fanout(nm_session_t session, struct nm_mcast_fanout_s *out, uint32_t root, nm_tag_t tag,
                           const void *data, nm_len_t len, uint8_t tree, const struct nm_mcast_entry_s *list,
                           int m, nm_req_notifier_t notifier, void *ref)
{
  int *child = malloc(sizeof(int) * (size_t)(m ? m : 1)), *end = malloc(sizeof(int) * (size_t)(m ? m : 1));
  int nc = (child && end) ? nm_mcast_tree_children((enum nm_mcast_tree_e)tree, m, child, end) : -1;
  size_t total = 0;
  for (int k = 0; k < nc; k++)
    total += nm_mcast_hdr_len(end[k] - child[k]);
  out->reqs = nc > 0 ? calloc((size_t)nc, sizeof(*out->reqs)) : NULL;
  out->hdrs = nc > 0 ? malloc(total) : NULL;
  out->done = 0;
  out->status = NM_ESUCCESS;
  if (nc < 0 || (nc > 0 && (!out->reqs || !out->hdrs))) {
    free(child);
    free(end);
    free(out->reqs);
    free(out->hdrs);
    out->reqs = NULL;
    out->hdrs = NULL;
    out->n = 0;
    out->status = -NM_ENOMEM;
    return -NM_ENOMEM;
  }
  out->n = nc;
  /* Build every header first: a send may complete (and end the fan-out) inside the loop below. */
  size_t off = 0;
  for (int k = 0; k < nc; k++) {
    int sub = end[k] - child[k];
    nm_mcast_put_hdr(out->hdrs + off, root, tag, len, tree, &list[child[k] - 1], &list[child[k]], sub);
    off += nm_mcast_hdr_len(sub);
  }
  struct nm_req_s *reqs = out->reqs;
  uint8_t *hdrs = out->hdrs;
  off = 0;
  for (int k = 0; k < nc; k++) {
    const struct nm_mcast_entry_s *c = &list[child[k] - 1];
    size_t hlen = nm_mcast_hdr_len(end[k] - child[k]);
    nm_sr_send_init(session, &reqs[k]);
    nm_sr_send_set_priority(session, &reqs[k], c->prio);
    nm_sr_request_set_monitor(session, &reqs[k], NM_EVENT_SEND_COMPLETED, notifier, ref);
    /* Errors complete the request (and reach the notifier): nothing more to do here. */
    /* Errors complete the request; a gate that cannot be made (no memory) fails the child's send alike. */
    nm_gate_t g = nm_core_gate(session->core, (int)c->rank);
    if (g)
      nm_rpc_isend(session, g, NM_MCAST_RPC_TAG, hdrs + off, hlen, data, len, &reqs[k]);
    else
      nm_req_complete(&reqs[k], -NM_ENOMEM);
    off += hlen;
  }
  free(child);
  free(end);
  return nc;
}

/* One child send finished. @return 1 when it was the last one (the fan-out buffers are then released). */
static int nm_mcast_fanout_done(struct nm_mcast_fanout_s *out, int status)
{
  if (status && !out->status)
    out->status = status;
  if (++out->done < out->n)
    return 0;
  free(out->reqs);
  free(out->hdrs);
  out->reqs = NULL;
  out->hdrs = NULL;
  return 1;
}

/* ---- root ---- */

static void nm_mcast_root_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  nm_mcast_req_t *mreq = ref;
  struct nm_mcast_fanout_s *out = mreq->priv;
  if (nm_mcast_fanout_done(out, req->status)) {
    mreq->status = out->status;
    free(out);
    mreq->priv = NULL;
    mreq->completed = 1;
  }
}

struct nm_mcast_sort_s {
  int dest, prio, index;
};

static int nm_mcast_by_prio(const void *a, const void *b)
{
  const struct nm_mcast_sort_s *x = a, *y = b;
  if (x->prio != y->prio)
    return x->prio > y->prio ? -1 : 1; /* most urgent first */
  return x->index - y->index;          /* stable */
}

static int nm_mcast_by_dest(const void *a, const void *b)
{
  return ((const struct nm_mcast_sort_s *)a)->dest - ((const struct nm_mcast_sort_s *)b)->dest;
}

int nm_mcast_isend(nm_mcast_service_t service, const int *dests, const int *prios, int n, nm_tag_t tag,
                   const void *data, nm_len_t len, enum nm_mcast_tree_e tree, nm_mcast_req_t *req)
{
  if (!service || !req || n < 0 || (n > 0 && !dests) || (len && !data) || (unsigned)tree > NM_MCAST_TREE_BINARY ||
      nm_mcast_hdr_len(n) > NM_MCAST_HLEN_MAX)
    return -NM_EINVAL;
  nm_session_t session = service->session;
  nm_core_t core = session->core;
  NM_CORE_LOCKED(core);
  memset(req, 0, sizeof(*req));
  if (n == 0) {
    req->completed = 1;
    return NM_ESUCCESS;
  }
  struct nm_mcast_sort_s *s = malloc(sizeof(*s) * (size_t)n);
  struct nm_mcast_entry_s *list = malloc(sizeof(*list) * (size_t)n);
  int *order = malloc(sizeof(int) * (size_t)n);
  struct nm_mcast_fanout_s *out = malloc(sizeof(*out));
  int err = (!s || !list || !order || !out) ? -NM_ENOMEM : NM_ESUCCESS;
  for (int i = 0; !err && i < n; i++) {
    s[i] = (struct nm_mcast_sort_s){dests[i], prios ? prios[i] : 0, i};
    if (dests[i] < 0 || dests[i] >= core->size || dests[i] == core->rank)
      err = -NM_EINVAL;
  }
  if (!err) { /* duplicates */
    qsort(s, (size_t)n, sizeof(*s), nm_mcast_by_dest);
    for (int i = 1; i < n; i++)
      if (s[i].dest == s[i - 1].dest)
        err = -NM_EINVAL;
  }
  if (!err)
    err = nm_mcast_tree_arrival_order(tree, n, order);
  if (!err) {
    /* Place destinations by decreasing priority on the positions served first (paper 3.2), and give each the
     * next point-to-point sequence number of (its gate, tag): the broadcast takes that place in the order. */
    qsort(s, (size_t)n, sizeof(*s), nm_mcast_by_prio);
    for (int i = 0; i < n; i++) {
      struct nm_gate_s *g = nm_core_gate(core, s[i].dest);
      struct nm_seq_s *seq = g ? nm_gate_seq(g, session->id, tag) : NULL;
      if (!seq) {
        err = -NM_ENOMEM;
        break;
      }
      list[order[i] - 1] = (struct nm_mcast_entry_s){(uint32_t)s[i].dest, s[i].prio, seq->next_send++};
    }
  }
  if (!err) {
    req->priv = out;
    req->n_children = nm_mcast_fanout(session, out, (uint32_t)core->rank, tag, data, len, (uint8_t)tree, list, n,
                                      nm_mcast_root_sent, req);
    if (req->n_children < 0) {
      err = req->n_children;
      req->priv = NULL;
    } else {
      out = NULL; /* owned by the request now (freed by the last completion) */
    }
  }
  free(s);
  free(list);
  free(order);
  free(out);
  return err;
}

int nm_mcast_wait(nm_mcast_service_t service, nm_mcast_req_t *req)
{
  NM_CORE_LOCKED(service->session->core);
  nm_core_wait_flag(service->session->core, &req->completed, 0);
  return req->status;
}

int nm_mcast_test(nm_mcast_service_t service, nm_mcast_req_t *req)
{
  NM_CORE_LOCKED(service->session->core);
  if (!req->completed)
    nm_core_progress(service->session->core);
  return req->completed ? req->status : -NM_EAGAIN;
}

/* ---- receiving and forwarding ---- */

static void nm_mcast_fwd_finish(struct nm_mcast_fwd_s *f, int status)
{
  struct nm_mcast_service_s *svc = f->svc;
  if (f->claimed)
    nm_req_complete_events(f->claimed, status, NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED);
  else if (status == NM_ESUCCESS)
    nm_core_inject(svc->session, f->root_gate, f->tag, f->seq, f->buf, f->len); /* the core owns buf now */
  else
    free(f->buf);
  svc->n_active--;
  free(f);
}

static void nm_mcast_fwd_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  struct nm_mcast_fwd_s *f = ref;
  if (nm_mcast_fanout_done(&f->out, req->status))
    nm_mcast_fwd_finish(f, NM_ESUCCESS); /* a child's failure does not make our own copy wrong */
}

/* The data is in place: tell the application it may read it, then forward from the same buffer. */
static void nm_mcast_finalizer(nm_rpc_token_t token, void *ref)
{
  struct nm_mcast_fwd_s *f = nm_rpc_token_get_ref(token);
  if (!f)
    return;
  int status = nm_rpc_token_status(token);
  if (status) {
    nm_mcast_fwd_finish(f, status);
    return;
  }
  if (f->claimed)
    nm_req_notify(f->claimed, NM_EVENT_RECV_DATA);
  int nc = nm_mcast_fanout(f->svc->session, &f->out, f->root, f->tag, f->buf, f->len, f->tree, f->entries,
                           f->n_entries, nm_mcast_fwd_sent, f);
  if (nc <= 0) /* no child (leaf), or no memory to forward */
    nm_mcast_fwd_finish(f, NM_ESUCCESS);
}

/* Header from the network: validate everything before using it (DESIGN.md rule 5). */
static int nm_mcast_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct nm_mcast_service_s *svc = ref;
  nm_core_t core = svc->session->core;
  const uint8_t *h = header;
  if (hlen < NM_MCAST_HDR_FIXED)
    return -NM_EPROTO;
  uint32_t root = nm_get32(h), n = nm_get32(h + 4);
  nm_tag_t tag = nm_get64(h + 8);
  nm_len_t len = nm_get64(h + 16);
  uint8_t tree = h[24];
  if (h[25] || h[26] || h[27] || tree > NM_MCAST_TREE_BINARY || root >= (uint32_t)core->size ||
      root == (uint32_t)core->rank || n >= (uint32_t)core->size || hlen != nm_mcast_hdr_len((int)n) ||
      len != nm_rpc_get_body_size(token))
    return -NM_EPROTO;
  nm_gate_t root_gate = nm_core_gate(core, (int)root);
  if (!root_gate)
    return -NM_ENOMEM;
  struct nm_mcast_fwd_s *f = malloc(sizeof(*f) + sizeof(struct nm_mcast_entry_s) * n);
  if (!f)
    return -NM_ENOMEM;
  *f = (struct nm_mcast_fwd_s){.svc = svc, .root_gate = root_gate, .tag = tag, .seq = nm_get32(h + 28),
                               .len = len, .tree = tree, .root = root, .n_entries = (int)n};
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *e = h + NM_MCAST_HDR_FIXED + (size_t)i * NM_MCAST_ENTRY_LEN;
    f->entries[i] = (struct nm_mcast_entry_s){nm_get32(e), (int32_t)nm_get32(e + 4), nm_get32(e + 8)};
    uint32_t r = f->entries[i].rank;
    int bad = r >= (uint32_t)core->size || r == (uint32_t)core->rank || r == root;
    for (uint32_t j = 0; !bad && j < i; j++)
      bad = f->entries[j].rank == r;
    if (bad) {
      free(f);
      return -NM_EPROTO;
    }
  }
  f->claimed = nm_core_claim_recv(svc->session, f->root_gate, tag, f->seq, len);
  f->buf = f->claimed ? f->claimed->buf : malloc(len ? len : 1);
  if (!f->buf) {
    free(f);
    return -NM_ENOMEM;
  }
  svc->n_active++;
  nm_rpc_token_set_ref(token, f);
  return nm_rpc_irecv_body(token, f->buf, len);
}

int nm_mcast_init(nm_session_t session, nm_mcast_service_t *out)
{
  if (!session || !out)
    return -NM_EINVAL;
  struct nm_mcast_service_s *svc = calloc(1, sizeof(*svc));
  if (!svc)
    return -NM_ENOMEM;
  svc->session = session;
  int err = nm_rpc_register(session, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, NM_MCAST_HLEN_MAX, nm_mcast_handler,
                            nm_mcast_finalizer, svc, &svc->rpc);
  if (err) {
    free(svc);
    return err;
  }
  *out = svc;
  return NM_ESUCCESS;
}

int nm_mcast_finalize(nm_mcast_service_t service)
{
  NM_CORE_LOCKED(service->session->core);
  if (service->n_active)
    return -NM_EBUSY;
  int err = nm_rpc_unregister(service->rpc);
  if (!err)
    free(service);
  return err;
}
