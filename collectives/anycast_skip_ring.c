/* Rootless broadcast on a skip ring (Li, Koziol, Tang, Byna 2018, "Anycast: Rootless Broadcasting with MPI",
 * sections 2.1-2.2 and 4; issue 19, deliverable 2). The overlay is a pure function of (n, member) (first part of
 * this file, nm_anycast_ring.h); the service (second part) carries anycasts on the rpc channel, one message per
 * hop, so that forwarding happens inside nmad's progress without the application polling (section 4).
 *
 * Header (little-endian, 32 bytes; doc/protocol.md, "Anycast header"): u8 version (1), u8 flags (0), u16 ring,
 * u32 origin, u32 sender, u32 seq, u64 tag, u64 len. origin and sender are group indices; seq numbers the
 * origin's anycasts of one tag (the receive order of plain receives); the body is the data. */
#include "nmad/core/nm_core_interface.h"
#include "nm_anycast_ring.h"
#include <nmad/nm_anycast.h>
#include <nmad/nm_rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* ====================================================================================================== */
/* The skip ring (section 2.1)                                                                           */
/* ====================================================================================================== */

int nm_anycast_ring_levels(int n)
{
  int h = 1;
  while (h < 31 && (1L << h) < n)
    h++;
  return h;
}

int nm_anycast_ring_height(int n, int i)
{
  int top = nm_anycast_ring_levels(n);
  if (i == 0)
    return top;
  int h = 1 + __builtin_ctz((unsigned)i);
  return h < top ? h : top;
}

int nm_anycast_ring_dist(int n, int a, int b)
{
  return (int)(((long)b - a + n) % n);
}

/* The level-l channel of member i: the next multiple of 2^l after i (height above l), or the head. */
static int nm_anycast_ring_next(int n, int i, int l)
{
  long j = (((long)i >> l) + 1) << l;
  return j >= n ? 0 : (int)j;
}

int nm_anycast_ring_outs(int n, int i, int *out)
{
  int k = 0, h = nm_anycast_ring_height(n, i);
  for (int l = 0; l < h && n > 1; l++) {
    int j = nm_anycast_ring_next(n, i, l);
    if (k == 0 || out[k - 1] != j) /* farther with each level: a repeat is the previous one */
      out[k++] = j;
  }
  return k;
}

int nm_anycast_ring_ins(int n, int i, int *in)
{
  int k = 0, h = nm_anycast_ring_height(n, i);
  for (int l = 0; l < h && n > 1; l++) {
    /* the previous member with a height above l: the last multiple of 2^l before i (before n for the head) */
    long from = i == 0 ? n - 1 : i - 1;
    int u = (int)((from >> l) << l);
    if (nm_anycast_ring_next(n, u, l) != i)
      continue; /* u's level-l channel skips i (cannot happen with these heights; kept as the definition) */
    int dup = 0;
    for (int x = 0; x < k; x++)
      dup |= in[x] == u;
    if (!dup)
      in[k++] = u;
  }
  return k;
}

int nm_anycast_ring_targets(int n, int self, int origin, int sender, int *out)
{
  int outs[NM_ANYCAST_MAX_LEVELS];
  int m = nm_anycast_ring_outs(n, self, outs), k = 0;
  int h = nm_anycast_ring_height(n, self);
  int fresh = sender < 0 || nm_anycast_ring_height(n, sender) < h; /* rule 1: new here, all channels */
  int limit = self == origin ? n : nm_anycast_ring_dist(n, self, origin);
  for (int x = 0; x < m; x++) {
    if (!fresh && nm_anycast_ring_height(n, outs[x]) >= h)
      continue;
    if (nm_anycast_ring_dist(n, self, outs[x]) >= limit) /* rule 2: not at or past the origin */
      break;                                             /* outs are nearest first: the rest are past too */
    out[k++] = outs[x];
  }
  return k;
}

/* ====================================================================================================== */
/* The service                                                                                           */
/* ====================================================================================================== */

#define NM_ANYCAST_HDR_LEN 32
#define NM_ANYCAST_VERSION 1

/* Next sequence number of the origin's anycasts of one tag. */
struct nm_anycast_seq_s {
  nm_tag_t tag;
  nm_seq_t next;
  UT_hash_handle hh;
};

/* An origin whose anycast was delivered to a receive here: its gate is the receive's source. */
struct nm_anycast_origin_s {
  nm_gate_t gate;
  int member;
  UT_hash_handle hh;
};

struct nm_anycast_s {
  nm_session_t session; /* the user's: its rpc channel carries the anycasts */
  nm_session_t rx;      /* receive mode: where anycasts are delivered (local only) */
  nm_core_t core;
  struct nm_coll_group_s group;
  int n, self;
  unsigned ring;
  nm_len_t max_len;
  nm_anycast_handler_t handler;
  void *handler_ref;
  nm_rpc_service_t rpc;
  int n_in;
  int in[NM_ANYCAST_MAX_LEVELS];
  nm_gate_t in_gate[NM_ANYCAST_MAX_LEVELS];
  int n_out;
  int out[NM_ANYCAST_MAX_LEVELS];
  nm_gate_t out_gate[NM_ANYCAST_MAX_LEVELS];
  struct nm_pool_s fwd_pool; /* struct nm_anycast_fwd_s with n_out requests */
  struct nm_anycast_seq_s *seqs;
  struct nm_anycast_origin_s *origins;
  int n_active; /* anycasts being received or forwarded here */
  struct nm_anycast_stats_s stats;
};

/* One anycast being sent by this member (originated or forwarded). */
struct nm_anycast_fwd_s {
  struct nm_anycast_s *ac;
  nm_anycast_req_t *user; /* at the origin: the caller's request; else NULL */
  void *buf;              /* forwarder: its copy of the data (owned); origin: the caller's data */
  nm_len_t len;
  int origin;
  nm_tag_t tag;
  nm_seq_t seq;
  int n, done, status, posting;
  int target[NM_ANYCAST_MAX_LEVELS];
  uint8_t hdr[NM_ANYCAST_HDR_LEN];
  struct nm_req_s reqs[]; /* n_out of them */
};

static nm_tag_t nm_anycast_rpc_tag(unsigned ring) { return NM_ANYCAST_RPC_TAG | (nm_tag_t)ring; }

static void nm_anycast_put_hdr(uint8_t *h, unsigned ring, int origin, int sender, nm_seq_t seq, nm_tag_t tag,
                               nm_len_t len)
{
  nm_put8(h, NM_ANYCAST_VERSION);
  nm_put8(h + 1, 0);
  nm_put16(h + 2, (uint16_t)ring);
  nm_put32(h + 4, (uint32_t)origin);
  nm_put32(h + 8, (uint32_t)sender);
  nm_put32(h + 12, seq);
  nm_put64(h + 16, tag);
  nm_put64(h + 24, len);
}

/* The anycast's sends are over here: free what it held, complete the origin's request. */
static void nm_anycast_fwd_end(struct nm_anycast_fwd_s *f)
{
  struct nm_anycast_s *ac = f->ac;
  if (f->user) {
    f->user->status = f->status;
    f->user->completed = 1;
  } else {
    free(f->buf);
  }
  ac->n_active--;
  nm_pool_put(&ac->fwd_pool, f);
}

static void nm_anycast_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  struct nm_anycast_fwd_s *f = ref;
  if (req->status && !f->status)
    f->status = req->status;
  if (++f->done == f->n && !f->posting)
    nm_anycast_fwd_end(f);
}

/* Send the anycast to its targets, from f->buf. A send that fails completes its request with the error (the
 * subtree behind that member loses this anycast: the ring has no second path). */
static void nm_anycast_fwd_post(struct nm_anycast_fwd_s *f)
{
  struct nm_anycast_s *ac = f->ac;
  nm_anycast_put_hdr(f->hdr, ac->ring, f->origin, ac->self, f->seq, f->tag, f->len);
  f->done = 0;
  f->posting = 1;
  for (int k = f->n - 1; k >= 0; k--) { /* farthest channel first: its subtree is the largest (the critical path
                                         * pays one per-message send cost per level, not one per channel) */
    struct nm_req_s *req = &f->reqs[k];
    nm_gate_t g = NULL;
    int x = 0;
    while (x < ac->n_out && ac->out[x] != f->target[k])
      x++;
    if (x < ac->n_out)
      g = ac->out_gate[x];
    nm_sr_send_init(ac->session, req);
    /* The order above holds for one anycast; when several wait for the same gates, the scheduler aggregates
     * each gate's into one packet, and the farthest channel's must still leave first (largest subtree first,
     * at every hop: without it the batch to the largest subtree left last, and the time of a loop grew with
     * (log n)^2). So each channel has a priority by its distance: the farthest 0 (the default), each nearer
     * one a step lower; a channel has one priority, so the order of one gate's messages is kept. */
    nm_sr_send_set_priority(ac->session, req, (nm_prio_t)(x - (ac->n_out - 1)));
    nm_sr_request_set_monitor(ac->session, req, NM_EVENT_SEND_COMPLETED, nm_anycast_sent, f);
    ac->stats.sent++;
    int err = nm_rpc_isend(ac->session, g, nm_anycast_rpc_tag(ac->ring), f->hdr, NM_ANYCAST_HDR_LEN, f->buf, f->len,
                           req);
    if (err && !req->completed)
      nm_req_complete(req, err);
  }
  f->posting = 0;
  if (f->done == f->n)
    nm_anycast_fwd_end(f);
}

int nm_anycast_isend(nm_anycast_t ac, nm_tag_t tag, const void *data, nm_len_t len, nm_anycast_req_t *req)
{
  if (!ac || !req || (len && !data) || len > ac->max_len)
    return -NM_EINVAL;
  NM_CORE_LOCKED(ac->core);
  struct nm_anycast_seq_s *s;
  HASH_FIND(hh, ac->seqs, &tag, sizeof(tag), s);
  if (!s) {
    s = calloc(1, sizeof(*s));
    if (!s)
      return -NM_ENOMEM;
    s->tag = tag;
    HASH_ADD(hh, ac->seqs, tag, sizeof(s->tag), s);
  }
  struct nm_anycast_fwd_s *f = nm_pool_get(&ac->fwd_pool);
  if (!f)
    return -NM_ENOMEM;
  *f = (struct nm_anycast_fwd_s){.ac = ac, .user = req, .buf = (void *)data, .len = len, .origin = ac->self,
                                 .tag = tag, .seq = s->next++};
  f->n = nm_anycast_ring_targets(ac->n, ac->self, ac->self, -1, f->target);
  req->status = 0;
  req->completed = 0;
  req->priv = f;
  ac->stats.started++;
  ac->n_active++;
  nm_anycast_fwd_post(f); /* n == 0 (a ring of one): completes at once */
  return NM_ESUCCESS;
}

int nm_anycast_wait(nm_anycast_t ac, nm_anycast_req_t *req)
{
  NM_CORE_LOCKED(ac->core);
  nm_core_wait_flag(ac->core, &req->completed, 0);
  return req->status;
}

int nm_anycast_flush(nm_anycast_t ac, uint64_t deadline_ns)
{
  if (!ac)
    return -NM_EINVAL;
  NM_CORE_LOCKED(ac->core);
  while (ac->n_active)
    if (nm_core_wait(ac->core, deadline_ns) == -NM_ETIMEDOUT)
      return -NM_ETIMEDOUT;
  return NM_ESUCCESS;
}

int nm_anycast_test(nm_anycast_t ac, nm_anycast_req_t *req)
{
  NM_CORE_LOCKED(ac->core);
  if (!req->completed)
    nm_core_progress(ac->core);
  return req->completed ? req->status : -NM_EAGAIN;
}

/* ---- receiving ---- */

/* Decode and check a header against the ring (DESIGN.md rule 5): the sender is one of our inbound channels and
 * the message came from its gate, the origin is a member the sender still forwards for (rule 2 at the sender), the
 * length is the body's and within max_len. @return 0 or -NM_EPROTO. */
static int nm_anycast_check(const struct nm_anycast_s *ac, nm_rpc_token_t token, const uint8_t *h, nm_len_t hlen,
                            struct nm_anycast_fwd_s *x)
{
  if (hlen != NM_ANYCAST_HDR_LEN || h[0] != NM_ANYCAST_VERSION || h[1] != 0 ||
      nm_get16(h + 2) != ac->ring)
    return -NM_EPROTO;
  uint32_t origin = nm_get32(h + 4), sender = nm_get32(h + 8);
  nm_len_t len = nm_get64(h + 24);
  if (origin >= (uint32_t)ac->n || origin == (uint32_t)ac->self || sender >= (uint32_t)ac->n)
    return -NM_EPROTO;
  int known = 0;
  for (int k = 0; k < ac->n_in; k++)
    known |= ac->in[k] == (int)sender && ac->in_gate[k] == nm_rpc_get_source(token);
  if (!known)
    return -NM_EPROTO;
  int limit = sender == origin ? ac->n : nm_anycast_ring_dist(ac->n, (int)sender, (int)origin);
  if (nm_anycast_ring_dist(ac->n, (int)sender, ac->self) >= limit)
    return -NM_EPROTO; /* we are at or past the origin: the sender broke rule 2 (or lies about the origin) */
  if (len != nm_rpc_get_body_size(token) || len > ac->max_len)
    return -NM_EPROTO;
  x->origin = (int)origin;
  x->seq = nm_get32(h + 12);
  x->tag = nm_get64(h + 16);
  x->len = len;
  x->n = nm_anycast_ring_targets(ac->n, ac->self, (int)origin, (int)sender, x->target);
  return 0;
}

static void nm_anycast_lost(struct nm_anycast_s *ac, const struct nm_anycast_fwd_s *x, int err);

static int nm_anycast_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct nm_anycast_s *ac = ref;
  struct nm_anycast_fwd_s x;
  int err = nm_anycast_check(ac, token, header, hlen, &x);
  if (err)
    return err;
  struct nm_anycast_fwd_s *f = nm_pool_get(&ac->fwd_pool);
  void *buf = x.len ? malloc(x.len) : NULL; /* x.len <= max_len, checked */
  if (!f || (x.len && !buf)) {
    if (f)
      nm_pool_put(&ac->fwd_pool, f);
    free(buf);
    nm_anycast_lost(ac, &x, -NM_ENOMEM);
    return 0; /* not our peer's fault: the body is discarded, the anycast lost here */
  }
  *f = x;
  f->ac = ac;
  f->user = NULL;
  f->buf = buf;
  f->status = 0;
  ac->n_active++;
  nm_rpc_token_set_ref(token, f);
  return x.len ? nm_rpc_irecv_body(token, buf, x.len) : 0;
}

/* The anycast could not be had here (@p err): count it, and in receive mode give its place in the origin's order to
 * an error, so that the receive meant for it fails and later anycasts of that origin and tag are not held back
 * behind it. The members below us lose it too: the ring has one path to each member. */
static void nm_anycast_lost(struct nm_anycast_s *ac, const struct nm_anycast_fwd_s *x, int err)
{
  ac->stats.lost++;
  nm_gate_t g = ac->rx ? ac->group.gate_of(ac->group.ref, x->origin) : NULL;
  if (g)
    nm_core_inject_lost(ac->rx, g, x->tag, x->seq, err);
}

/* Hand the anycast to the application: its handler, or the receive session as message seq of (origin, tag).
 * @p owned says whether @p data may be given to the core as it is (no forwarding reads it). */
static void nm_anycast_deliver(struct nm_anycast_s *ac, struct nm_anycast_fwd_s *f, int owned)
{
  if (ac->handler) {
    ac->stats.received++;
    ac->handler(ac, f->origin, f->tag, f->buf, f->len, ac->handler_ref);
    return;
  }
  nm_gate_t g = ac->group.gate_of(ac->group.ref, f->origin);
  struct nm_anycast_origin_s *o = NULL;
  if (g)
    HASH_FIND_PTR(ac->origins, &g, o);
  if (g && !o && (o = calloc(1, sizeof(*o)))) {
    o->gate = g;
    o->member = f->origin;
    HASH_ADD_PTR(ac->origins, gate, o);
  }
  void *data = owned ? f->buf : (f->len ? malloc(f->len) : NULL);
  if (!o || (f->len && !data)) {
    if (!owned)
      free(data);
    ac->stats.lost++;
    return;
  }
  if (owned)
    f->buf = NULL;
  else if (f->len)
    memcpy(data, f->buf, f->len);
  ac->stats.received++;
  nm_core_inject(ac->rx, g, f->tag, f->seq, data, f->len); /* the core owns data now */
}

static void nm_anycast_finalizer(nm_rpc_token_t token, void *ref)
{
  struct nm_anycast_s *ac = ref;
  struct nm_anycast_fwd_s *f = nm_rpc_token_get_ref(token);
  if (!f)
    return; /* rejected or lost in the handler */
  int err = nm_rpc_token_status(token);
  if (err) { /* the sender died before the body was in: lost here and below */
    nm_anycast_lost(ac, f, err);
    f->n = 0; /* nm_anycast_fwd_post() below just ends it */
  } else {
    nm_anycast_deliver(ac, f, f->n == 0);
  }
  nm_anycast_fwd_post(f);
}

/* ---- set-up ---- */

int nm_anycast_init(nm_session_t session, const struct nm_coll_group_s *group, int self, unsigned ring,
                    const struct nm_anycast_params_s *params, nm_anycast_t *out)
{
  const uint64_t known = NM_ANYCAST_PARAM_MAX_LEN | NM_ANYCAST_PARAM_HANDLER;
  if (!session || !group || !group->gate_of || group->n < 1 || self < 0 || self >= group->n || ring > 0xffff ||
      !out || (params && (params->field_mask & ~known)))
    return -NM_EINVAL;
  nm_core_t core = nm_session_get_core(session);
  struct nm_anycast_s *ac = calloc(1, sizeof(*ac));
  if (!ac)
    return -NM_ENOMEM;
  *ac = (struct nm_anycast_s){.session = session, .core = core, .group = *group, .n = group->n, .self = self,
                              .ring = ring, .max_len = nm_core_peer_alloc_max(core)};
  if (params && (params->field_mask & NM_ANYCAST_PARAM_MAX_LEN) && params->max_len < ac->max_len)
    ac->max_len = params->max_len;
  if (params && (params->field_mask & NM_ANYCAST_PARAM_HANDLER)) {
    ac->handler = params->handler;
    ac->handler_ref = params->handler_ref;
  }
  if (!ac->handler && ac->max_len > UINT32_MAX)
    ac->max_len = UINT32_MAX; /* a delivery is one core message, whose stored length is 32 bits */
  NM_CORE_LOCKED(core);
  int err = NM_ESUCCESS;
  ac->n_out = nm_anycast_ring_outs(ac->n, self, ac->out);
  ac->n_in = nm_anycast_ring_ins(ac->n, self, ac->in);
  for (int k = 0; k < ac->n_out && !err; k++)
    if (!(ac->out_gate[k] = group->gate_of(group->ref, ac->out[k])))
      err = -NM_EINVAL;
  for (int k = 0; k < ac->n_in && !err; k++)
    if (!(ac->in_gate[k] = group->gate_of(group->ref, ac->in[k])))
      err = -NM_EINVAL;
  if (!err && !ac->handler) {
    char name[64]; /* local only: nothing travels on it, so the name need only be unique here */
    snprintf(name, sizeof(name), "nm_anycast:%p", (void *)ac);
    err = nm_session_open(core, name, &ac->rx);
  }
  if (err) {
    free(ac);
    return err;
  }
  nm_pool_init(&ac->fwd_pool, sizeof(struct nm_anycast_fwd_s) + (size_t)ac->n_out * sizeof(struct nm_req_s));
  err = nm_rpc_register(session, nm_anycast_rpc_tag(ring), NM_TAG_MASK_FULL, NM_ANYCAST_HDR_LEN, nm_anycast_handler,
                        nm_anycast_finalizer, ac, &ac->rpc);
  if (err) {
    if (ac->rx)
      nm_session_close(ac->rx);
    nm_pool_destroy(&ac->fwd_pool);
    free(ac);
    return err;
  }
  *out = ac;
  return NM_ESUCCESS;
}

int nm_anycast_finalize(nm_anycast_t ac)
{
  if (!ac)
    return -NM_EINVAL;
  NM_CORE_LOCKED(ac->core);
  if (ac->n_active)
    return -NM_EBUSY;
  int err = nm_rpc_unregister(ac->rpc);
  if (err)
    return err;
  if (ac->rx)
    nm_session_close(ac->rx);
  struct nm_anycast_seq_s *s, *stmp;
  HASH_ITER(hh, ac->seqs, s, stmp) {
    HASH_DEL(ac->seqs, s);
    free(s);
  }
  struct nm_anycast_origin_s *o, *otmp;
  HASH_ITER(hh, ac->origins, o, otmp) {
    HASH_DEL(ac->origins, o);
    free(o);
  }
  nm_pool_destroy(&ac->fwd_pool);
  free(ac);
  return NM_ESUCCESS;
}

nm_session_t nm_anycast_session(nm_anycast_t ac) { return ac ? ac->rx : NULL; }
int nm_anycast_size(nm_anycast_t ac) { return ac ? ac->n : -NM_EINVAL; }
int nm_anycast_self(nm_anycast_t ac) { return ac ? ac->self : -NM_EINVAL; }

int nm_anycast_member_of(nm_anycast_t ac, nm_gate_t gate)
{
  if (!ac || !gate)
    return -1;
  NM_CORE_LOCKED(ac->core);
  struct nm_anycast_origin_s *o;
  HASH_FIND_PTR(ac->origins, &gate, o);
  return o ? o->member : -1;
}

int nm_anycast_get_stats(nm_anycast_t ac, struct nm_anycast_stats_s *out)
{
  if (!ac || !out)
    return -NM_EINVAL;
  NM_CORE_LOCKED(ac->core);
  *out = ac->stats;
  return NM_ESUCCESS;
}
