/**
 * @file mcast_topo_send.c
 * @brief The standalone non-blocking topology-ID multicast on the wire (Song 2009, section 6.2; issue 19,
 * deliverable 1): rpc messages forwarded through each rank's routing table (mcast_topo_id.c), virtual masters
 * relaying without delivering. Wire format: doc/protocol.md, "Topology-ID multicast".
 *
 * Header (little-endian, 32 bytes, then the list form's ranks): u32 root, u8 form (0 interval, 1 list),
 * u8 stage, u16 zero, u64 tag, u64 data length, u32 lo, u32 hi (interval form) or u32 n, u32 zero (list form),
 * then n x u32 ranks. The body is the data. Every field is checked before use (DESIGN.md rule 5): the stage
 * must be 1 + lcp(sender, us) (the forwarding rule: a sender can only hand us the destinations under our
 * prefix, Theorem 2), every destination must lie under our stage prefix, the length within max_len.
 */
#include "nmad/core/nm_core_interface.h"
#include <nmad/nm_mcast_topo.h>
#include <nmad/nm_rpc.h>
#include <stdlib.h>
#include <string.h>

#define NM_TOPO_HDR 32
#define NM_TOPO_FORM_INTERVAL 0
#define NM_TOPO_FORM_LIST 1
/* Longest list form that fits in an rpc header. */
#define NM_TOPO_MAX_LIST ((int)((NM_RPC_HLEN_MAX - NM_TOPO_HDR) / 4))

struct nm_mcast_topo_service_s {
  nm_session_t session;
  nm_core_t core;
  nm_rpc_service_t rpc;
  nm_mcast_topo_t topo;
  nm_len_t max_len;
  nm_mcast_topo_handler_t handler;
  void *ref;
  int n_active; /* messages received and not yet forwarded everywhere */
};

/* One message being forwarded: our copy of the data, the set we took over, one send per next hop. */
struct nm_topo_msg_s {
  struct nm_mcast_topo_service_s *svc;
  nm_mcast_topo_req_t *root_req; /* at the root: the caller's request, else NULL */
  uint32_t root;
  int stage;
  nm_tag_t tag;
  nm_len_t len;
  void *buf;             /* received data (owned), or the root's data */
  int form, lo, hi, n;   /* the set */
  int *list;             /* list form: n ranks (owned) */
  struct nm_req_s *reqs; /* per hop */
  uint8_t *hdrs;         /* per hop headers, back to back */
  int nhops, ndone, status;
};

static void nm_topo_msg_free(struct nm_topo_msg_s *m)
{
  if (m->root_req == NULL)
    free(m->buf);
  free(m->list);
  free(m->reqs);
  free(m->hdrs);
  free(m);
}

static void nm_topo_msg_over(struct nm_topo_msg_s *m)
{
  if (m->root_req) {
    m->root_req->status = m->status;
    m->root_req->priv = NULL;
    m->root_req->completed = 1;
  } else {
    m->svc->n_active--;
  }
  nm_topo_msg_free(m);
}

static void nm_topo_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  struct nm_topo_msg_s *m = ref;
  if (req->status < 0 && m->status == 0)
    m->status = req->status;
  if (++m->ndone == m->nhops)
    nm_topo_msg_over(m);
}

/* Route the message at our stage and post one rpc send per next hop (paper fig. 3, right). */
static int nm_topo_forward(struct nm_topo_msg_s *m)
{
  struct nm_mcast_topo_service_s *svc = m->svc;
  const int r = nm_mcast_topo_ndigits(svc->topo), cols = 1 << nm_mcast_topo_base_bits(svc->topo);
  struct nm_mcast_topo_set_s set = {.lo = m->lo, .hi = m->hi, .list = m->form ? m->list : NULL, .n = m->n};
  struct nm_mcast_topo_hop_s *hops = malloc(sizeof(*hops) * (size_t)r * (size_t)cols);
  if (hops == NULL)
    return -NM_ENOMEM;
  int nh = nm_mcast_topo_route(svc->topo, m->stage, &set, hops);
  size_t total = 0;
  for (int h = 0; h < nh; h++)
    total += NM_TOPO_HDR + (m->form ? 4 * (size_t)hops[h].count : 0);
  m->reqs = nh > 0 ? calloc((size_t)nh, sizeof(*m->reqs)) : NULL;
  m->hdrs = nh > 0 ? malloc(total) : NULL;
  if (nh < 0 || (nh > 0 && (!m->reqs || !m->hdrs))) {
    free(hops);
    return nh < 0 ? nh : -NM_ENOMEM;
  }
  m->nhops = nh;
  if (nh == 0) {
    free(hops);
    nm_topo_msg_over(m);
    return NM_ESUCCESS;
  }
  uint8_t *h = m->hdrs;
  size_t lens[64 * 15];
  for (int k = 0; k < nh; k++) {
    memset(h, 0, NM_TOPO_HDR);
    nm_put32(h, m->root);
    h[4] = (uint8_t)m->form;
    h[5] = (uint8_t)hops[k].stage;
    nm_put64(h + 8, m->tag);
    nm_put64(h + 16, m->len);
    size_t hl = NM_TOPO_HDR;
    if (m->form) { /* the list trimmed to the hop's prefix: headers shrink down the tree */
      nm_put32(h + 24, (uint32_t)hops[k].count);
      for (int q = 0; q < m->n; q++)
        if (m->list[q] >= hops[k].lo && m->list[q] < hops[k].hi) {
          nm_put32(h + hl, (uint32_t)m->list[q]);
          hl += 4;
        }
    } else {
      nm_put32(h + 24, (uint32_t)hops[k].lo);
      nm_put32(h + 28, (uint32_t)hops[k].hi);
    }
    lens[k] = hl;
    h += hl;
  }
  /* Post after building every header: a send that completes at once may end the message. */
  h = m->hdrs;
  for (int k = 0; k < nh; k++) {
    struct nm_req_s *req = &m->reqs[k];
    nm_gate_t g = nm_core_gate(svc->core, hops[k].rank);
    uint8_t *hk = h;
    h += lens[k];
    nm_sr_send_init(svc->session, req);
    nm_sr_request_set_monitor(svc->session, req, NM_EVENT_SEND_COMPLETED, nm_topo_sent, m);
    if (g)
      nm_rpc_isend(svc->session, g, NM_MCAST_TOPO_RPC_TAG, hk, lens[k], m->buf, m->len, req);
    else
      nm_req_complete(req, -NM_ENOMEM);
  }
  free(hops);
  return NM_ESUCCESS;
}

static int nm_topo_int_cmp(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Every rank in [0, size), no duplicate. Sorts a copy: O(n log n), no O(size) bitmap. */
static int nm_topo_list_ok(const int *list, int n, int size)
{
  int *c = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (c == NULL)
    return -NM_ENOMEM;
  memcpy(c, list, sizeof(int) * (size_t)n);
  qsort(c, (size_t)n, sizeof(int), nm_topo_int_cmp);
  int ok = n == 0 || (c[0] >= 0 && c[n - 1] < size);
  for (int k = 1; ok && k < n; k++)
    ok = c[k] != c[k - 1];
  free(c);
  return ok ? NM_ESUCCESS : -NM_EINVAL;
}

static int nm_topo_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct nm_mcast_topo_service_s *svc = ref;
  const uint8_t *h = header;
  const int size = nm_mcast_topo_size(svc->topo), me = nm_mcast_topo_self(svc->topo);
  if (hlen < NM_TOPO_HDR)
    return -NM_EPROTO;
  uint32_t root = nm_get32(h), a = nm_get32(h + 24), b = nm_get32(h + 28);
  int form = h[4], stage = h[5], from = nm_gate_get_rank(nm_rpc_get_source(token));
  nm_len_t len = nm_get64(h + 16);
  if (h[6] || h[7] || form > NM_TOPO_FORM_LIST || root >= (uint32_t)size || from < 0 || from >= size ||
      from == me || stage != nm_mcast_topo_lcp(svc->topo, from, me) + 1 || len > svc->max_len ||
      len != nm_rpc_get_body_size(token))
    return -NM_EPROTO;
  int plo, phi; /* what a sender may hand us: the ranks under our stage prefix */
  nm_mcast_topo_prefix_range(svc->topo, me, stage, -1, &plo, &phi);
  struct nm_topo_msg_s *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return -NM_ENOMEM;
  *m = (struct nm_topo_msg_s){.svc = svc, .root = root, .stage = stage, .tag = nm_get64(h + 8), .len = len,
                              .form = form};
  int err = NM_ESUCCESS;
  if (form == NM_TOPO_FORM_INTERVAL) {
    m->lo = (int)a;
    m->hi = (int)b;
    if (hlen != NM_TOPO_HDR || a >= b || a < (uint32_t)plo || b > (uint32_t)phi)
      err = -NM_EPROTO;
  } else {
    if (b != 0 || a == 0 || a > (uint32_t)NM_TOPO_MAX_LIST || hlen != NM_TOPO_HDR + 4 * (nm_len_t)a)
      err = -NM_EPROTO;
    else if ((m->list = malloc(sizeof(int) * a)) == NULL)
      err = -NM_ENOMEM;
    for (uint32_t q = 0; !err && q < a; q++) {
      uint32_t x = nm_get32(h + NM_TOPO_HDR + 4 * q);
      m->list[q] = (int)x;
      if (x < (uint32_t)plo || x >= (uint32_t)phi || x == root)
        err = -NM_EPROTO;
    }
    m->n = (int)a;
    if (!err && nm_topo_list_ok(m->list, m->n, size) != 0)
      err = -NM_EPROTO;
  }
  if (!err && len && (m->buf = malloc(len)) == NULL)
    err = -NM_ENOMEM;
  if (err) {
    nm_topo_msg_free(m);
    return err;
  }
  svc->n_active++;
  nm_rpc_token_set_ref(token, m);
  if (len)
    nm_rpc_irecv_body(token, m->buf, len);
  return NM_ESUCCESS;
}

/* The body is in: deliver if we are a destination, then relay (virtual master or not). */
static void nm_topo_finalizer(nm_rpc_token_t token, void *ref)
{
  struct nm_topo_msg_s *m = nm_rpc_token_get_ref(token);
  if (m == NULL)
    return;
  struct nm_mcast_topo_service_s *svc = m->svc;
  if (nm_rpc_token_status(token) != 0) { /* the data is lost here: our subtree is not told (not reliable) */
    svc->n_active--;
    nm_topo_msg_free(m);
    return;
  }
  struct nm_mcast_topo_set_s set = {.lo = m->lo, .hi = m->hi, .list = m->form ? m->list : NULL, .n = m->n};
  if (nm_mcast_topo_set_has(&set, nm_mcast_topo_self(svc->topo)))
    svc->handler((int)m->root, m->tag, m->buf, m->len, svc->ref);
  if (nm_topo_forward(m) != 0) {
    svc->n_active--;
    nm_topo_msg_free(m);
  }
}

int nm_mcast_topo_init(nm_session_t session, nm_mcast_topo_t topo, nm_len_t max_len, nm_mcast_topo_handler_t handler,
                       void *ref, nm_mcast_topo_service_t *out)
{
  if (session == NULL || topo == NULL || handler == NULL || out == NULL)
    return -NM_EINVAL;
  nm_core_t core = nm_session_get_core(session);
  if (nm_mcast_topo_size(topo) != nm_core_get_size(core) || nm_mcast_topo_self(topo) != nm_core_get_rank(core))
    return -NM_EINVAL;
  struct nm_mcast_topo_service_s *svc = calloc(1, sizeof(*svc));
  if (svc == NULL)
    return -NM_ENOMEM;
  *svc = (struct nm_mcast_topo_service_s){.session = session, .core = core, .topo = topo, .max_len = max_len,
                                          .handler = handler, .ref = ref};
  int err = nm_rpc_register(session, NM_MCAST_TOPO_RPC_TAG, ~(nm_tag_t)0, NM_RPC_HLEN_MAX, nm_topo_handler,
                            nm_topo_finalizer, svc, &svc->rpc);
  if (err) {
    free(svc);
    return err;
  }
  *out = svc;
  return NM_ESUCCESS;
}

int nm_mcast_topo_finalize(nm_mcast_topo_service_t svc)
{
  if (svc == NULL)
    return -NM_EINVAL;
  if (svc->n_active)
    return -NM_EBUSY;
  int err = nm_rpc_unregister(svc->rpc);
  if (!err)
    free(svc);
  return err;
}

int nm_mcast_topo_pending(nm_mcast_topo_service_t svc) { return svc ? svc->n_active : 0; }

int nm_mcast_topo_isend(nm_mcast_topo_service_t svc, const struct nm_mcast_topo_set_s *set, nm_tag_t tag,
                        const void *data, nm_len_t len, nm_mcast_topo_req_t *req)
{
  if (svc == NULL || set == NULL || req == NULL || (len && data == NULL) || len > svc->max_len)
    return -NM_EINVAL;
  const int size = nm_mcast_topo_size(svc->topo), me = nm_mcast_topo_self(svc->topo);
  if (set->list ? (set->n < 0 || set->n > NM_TOPO_MAX_LIST || (set->n && nm_topo_list_ok(set->list, set->n, size)))
                : (set->lo < 0 || set->hi > size || set->lo > set->hi))
    return -NM_EINVAL;
  memset(req, 0, sizeof(*req));
  struct nm_topo_msg_s *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return -NM_ENOMEM;
  *m = (struct nm_topo_msg_s){.svc = svc, .root_req = req, .root = (uint32_t)me, .stage = 0, .tag = tag,
                              .len = len, .buf = (void *)data, .form = set->list != NULL, .lo = set->lo,
                              .hi = set->hi, .n = 0};
  if (set->list) { /* the root is never its own destination: drop it from the list */
    m->list = malloc(sizeof(int) * (size_t)(set->n ? set->n : 1));
    if (m->list == NULL) {
      free(m);
      return -NM_ENOMEM;
    }
    for (int k = 0; k < set->n; k++)
      if (set->list[k] != me)
        m->list[m->n++] = set->list[k];
  }
  req->priv = m;
  NM_CORE_LOCKED(svc->core);
  int err = nm_topo_forward(m);
  if (err) {
    req->priv = NULL;
    free(m->list);
    free(m->reqs);
    free(m->hdrs);
    free(m);
  }
  return err;
}

int nm_mcast_topo_wait(nm_mcast_topo_service_t svc, nm_mcast_topo_req_t *req)
{
  NM_CORE_LOCKED(svc->core);
  nm_core_wait_flag(svc->core, &req->completed, 0);
  return req->status;
}
