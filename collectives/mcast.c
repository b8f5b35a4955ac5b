/* Dynamic broadcasts (Denis 2020, "Dynamic broadcasts in StarPU/NewMadeleine", sections 3.2 and 4.3).
 *
 * Only the root knows the destinations. Every hop receives, on the rpc channel, the root, the tag, the data
 * length, the tree kind, its own point-to-point sequence number and its subtree as (rank, priority, sequence
 * number) triples. It receives the data in place (into the matching point-to-point receive when that one is due
 * and posted, else into a temporary buffer), forwards it to its children with their priorities, then completes
 * the receive or hands the data to the core as an unexpected message of the root's (gate, tag) with that sequence
 * number: the broadcast takes exactly the place of a point-to-point message in the root's send order.
 *
 * Header (little-endian): u32 root, u32 n, u64 tag, u64 data length, u8 tree, u8 kind, 2 x u8 zero, u32 seq,
 * i32 prio. A subtree list of up to max_inline entries (at most 1,362: what fits in NM_RPC_HLEN_MAX) follows in
 * the header (kind INLINE, the paper's layout), the body is the data. A longer one travels as the body of a LIST
 * message, followed on the same ordering stream by a DATA message whose body is the data (doc/mcast.md, "Large
 * destination lists"): rpc headers travel in the first packet, and 6,143 entries of 12 bytes do not fit in one.
 *
 * Pipelined broadcasts (issue 17, deliverable 5; Denis 2020, section 6 names pipelined trees as future work):
 * with a segment size S (nm_mcast_isend_seg()), byte 27 of every header of the broadcast carries
 * NM_MCAST_FLAG_SEG, the body of the INLINE or DATA message is the first segment (so S is its length) and
 * segment k (1 <= k < ceil(len / S)) follows as a SEG message whose n field is k. A forwarder sends segment k to
 * its children as soon as segments 0..k are in, while later ones are still arriving (doc/mcast.md, "Pipelined
 * broadcasts"). */
#include "nmad/core/nm_core_interface.h"
#include "nm_mcast_tree.h"
#include <nmad/nm_mcast_topo.h>
#include <nmad/nm_mcast.h>
#include <nmad/nm_rpc.h>
#include <stdlib.h>
#include <string.h>

#define NM_MCAST_HDR_FIXED 36
#define NM_MCAST_ENTRY_LEN 12
#define NM_MCAST_KIND_OFF 25
/* LIST messages waiting for their DATA message, per parent gate. A sender puts DATA right after its LIST; more
 * than one is open only when a send monitor starts another broadcast to the same child in between. */
#define NM_MCAST_OPEN_PER_GATE 4
/* Up to this many entries, duplicates are found by comparing pairs (no allocation); above, with a bitmap. */
#define NM_MCAST_DUP_PAIRWISE 16
/* Byte 27 of a header: flags. */
#define NM_MCAST_FLAGS_OFF 27
#define NM_MCAST_FLAG_SEG 0x1 /* the data is cut into segments: the body is segment 0, SEG messages bring the rest */
/* Segments in flight per fan-out, each sent to every child: one on the wire while the next one's rendezvous
 * handshake proceeds. More adds concurrent transfers that share the link and delay every segment, hence every
 * hop below (nmad-sim, 16 MiB chain to 99 nodes: 22.0 ms with 2, 23.4 with 4 or more in 64 KiB segments; 29.6 and
 * 43.9 ms in 256 KiB segments; doc/mcast.md). Also bounds a hop's requests to 2 x children, whatever segment size
 * its parent chose. */
#define NM_MCAST_WINDOW 2

enum nm_mcast_kind_e {
  NM_MCAST_INLINE = 0, /* the subtree list follows the fixed header; the body is the data */
  NM_MCAST_LIST = 1,   /* the body is the subtree list; a DATA message follows */
  NM_MCAST_DATA = 2,   /* the body is the data of the LIST with the same fixed fields */
  NM_MCAST_SKIP = 3,   /* the broadcast was lost above: the body is the subtree list, byte 26 the error (doc/mcast.md) */
  NM_MCAST_SEG = 4     /* segment n of a pipelined broadcast: the body is that segment of the data */
};
#define NM_MCAST_ERR_OFF 26

/* Parts of a received broadcast still outstanding (struct nm_mcast_fwd_s.parts). */
#define NM_MCAST_PART_LIST 0x1     /* the LIST body (subtree list) is being received */
#define NM_MCAST_PART_DATA_MSG 0x2 /* the DATA message has not arrived: the broadcast is in svc->open */
#define NM_MCAST_PART_DATA 0x4     /* the data is being received */
#define NM_MCAST_PART_HOLD 0x8     /* a call that may complete the other parts is running */
#define NM_MCAST_PART_SEGS 0x10    /* pipelined: SEG messages are still to come from the parent */
#define NM_MCAST_PART_SEGBODY 0x20 /* token ref of a SEG body (struct nm_mcast_segpart_s), never in parts */

struct nm_mcast_service_s {
  nm_session_t session;
  nm_core_t core;              /* the session's */
  nm_rpc_service_t rpc;
  int n_active;                /* broadcasts being received or forwarded here, SKIP fan-outs in flight */
  int max_dests;               /* largest destination list at the root; a received subtree has one less */
  int max_inline;              /* longest subtree list sent in an rpc header (INLINE); longer: LIST + DATA */
  struct nm_mcast_fwd_s *open; /* LIST messages waiting for their DATA message */
  struct nm_mcast_fwd_s *active; /* every broadcast being received or forwarded here */
  struct nm_gate_fail_hook_s on_gate_fail; /* a parent's death ends its open LISTs at once */
  struct nm_mcast_kept_s *kept;  /* children served lately, newest first (nm_mcast_keep()) */
  nm_len_t seg_size;             /* segment size of nm_mcast_isend(), 0: store-and-forward */
  struct nm_pool_s seg_pool;     /* struct nm_mcast_segpart_s: one per SEG body being received */
  struct nm_mcast_topo_s *topo;  /* NM_MCAST_TREE_TOPO_ID: made from NMAD_MCAST_TOPO on first use, or given */
  int topo_owned;                /* topo was made here (freed at finalize) */
};

struct nm_mcast_entry_s {
  uint32_t rank;
  int32_t prio;
  uint32_t seq;
};
/* A LIST body is received straight into the entry array and decoded in place. */
_Static_assert(sizeof(struct nm_mcast_entry_s) == NM_MCAST_ENTRY_LEN, "entry layout must match the wire");

/* The fixed part of a header, decoded. */
struct nm_mcast_hdr_s {
  uint32_t root, n;
  nm_tag_t tag;
  nm_len_t len;
  uint8_t tree, kind, flags;
  nm_seq_t seq;
  int32_t prio;
};

/* One send of a fan-out, described before it is posted. */
struct nm_mcast_send_s {
  nm_gate_t gate;
  int prio;
  int first;               /* the first send of its child (a LIST's DATA follows it at once) */
  int child;               /* index of the child in the fan-out */
  const uint8_t *h;
  size_t hlen;
  const void *body;
  nm_len_t blen;
};

/* The sends of one hop to its children (at the root or at a forwarder). */
struct nm_mcast_fanout_s {
  struct nm_req_s *reqs;
  uint8_t *hdrs;
  struct nm_mcast_send_s *sends;
  nm_session_t session;
  nm_req_notifier_t notifier;
  void *ref;
  int n, posted, done, status; /* n: sends (one per child, two for a child whose list goes in a LIST message) */
  int serial;  /* one child at a time (rendezvous-size data): the single-port tree */
  int posting; /* inside nm_mcast_fanout_next(): completions only count */
  /* Pipelined (nseg > 1): sends[] carry segment 0; segment k >= 1 goes to every live child as a SEG message once
   * segments 0..k are here (k < avail), at most `window` segments in flight (ring slot (k % window) * nc + c). */
  const uint8_t *data;
  nm_len_t len, seg;
  uint32_t nseg, avail, next_seg, low_seg;
  int nc, window, aborted;
  long seg_posted, seg_done; /* SEG sends posted (or skipped for a failed child) and completed */
  int *first_of;             /* per child: index in sends[] of its INLINE or DATA message */
  uint8_t *dead;             /* per child: a send to it failed and its subtree was told */
  struct nm_mcast_segsend_s *ring;
  int *ring_done;            /* per window slot: sends of that segment completed (or skipped) */
};

/* One SEG send of a fan-out. */
struct nm_mcast_segsend_s {
  struct nm_req_s req;
  uint32_t k;
  int child;
  uint8_t hdr[NM_MCAST_HDR_FIXED];
};

struct nm_mcast_fwd_s;
/* What an rpc token of a broadcast refers to: the broadcast and which of its bodies the token receives. */
struct nm_mcast_part_s {
  struct nm_mcast_fwd_s *f;
  unsigned bit;
};

/* A broadcast being received and forwarded at this node. */
struct nm_mcast_fwd_s {
  struct nm_mcast_service_s *svc;
  struct nm_mcast_fwd_s *next_open; /* in svc->open while NM_MCAST_PART_DATA_MSG is set */
  struct nm_mcast_fwd_s *next_active, *prev_active; /* in svc->active */
  nm_gate_t from;                   /* the parent */
  nm_gate_t root_gate;
  nm_tag_t tag;
  nm_seq_t seq;
  nm_len_t len;
  uint8_t tree;
  uint32_t root;
  uint8_t hdr[NM_MCAST_HDR_FIXED]; /* a LIST's fixed header: its DATA message must repeat it */
  unsigned parts;                  /* NM_MCAST_PART_*: forwarding starts when none is left */
  int status;                      /* first error: the broadcast is lost here, its subtree is told (SKIP) */
  int entries_ok;                  /* the subtree list was validated: a SKIP may be sent over it */
  uint8_t skip_err;                /* a SKIP message: the error it reports (positive NM_E*), else 0 */
  struct nm_mcast_part_s list_part, data_part;
  struct nm_req_s *claimed; /* the application's receive, when the data lands in it directly */
  void *buf;
  struct nm_mcast_fanout_s out;
  /* Pipelined (nseg > 1; doc/mcast.md, "Pipelined broadcasts"). */
  nm_len_t seg;            /* segment size: the length of the first message's body */
  uint32_t nseg, hdr_next; /* segments; index of the next SEG message expected from the parent */
  uint32_t n_arrived;      /* segments in buf */
  int seg_pending;         /* SEG bodies being received */
  uint8_t *arrived;        /* bitmap of the segments in buf (nseg bits: at most len / 8 bytes) */
  int started, out_over, data_told, in_step, step_again;
  int n_entries;
  struct nm_mcast_entry_s entries[];
};

/* Token ref of a SEG body: which segment of which broadcast. */
struct nm_mcast_segpart_s {
  struct nm_mcast_part_s part; /* bit NM_MCAST_PART_SEGBODY */
  uint32_t k;
};

/* Segments of @p len bytes cut every @p seg bytes (seg >= 1). */
static uint64_t nm_mcast_nseg(nm_len_t len, nm_len_t seg) { return len / seg + (len % seg != 0); }

static size_t nm_mcast_hdr_len(int n) { return NM_MCAST_HDR_FIXED + (size_t)n * NM_MCAST_ENTRY_LEN; }

/* Longest subtree list whose header fits in an rpc header (1,362 entries). */
#define NM_MCAST_INLINE_MAX ((int)((NM_RPC_HLEN_MAX - NM_MCAST_HDR_FIXED) / NM_MCAST_ENTRY_LEN))

/* Largest subtree list a hop accepts: the root sends at most max_dests, a child is not in its own list. */
static uint32_t nm_mcast_max_entries(const struct nm_mcast_service_s *svc)
{
  return svc->max_dests > 0 ? (uint32_t)svc->max_dests - 1 : 0;
}

/* Fixed header, then the n entries of sub (INLINE, or the body of a LIST that follows the header). */
static void nm_mcast_put_hdr(uint8_t *h, uint32_t root, nm_tag_t tag, nm_len_t len, uint8_t tree, uint8_t kind,
                             uint8_t flags, const struct nm_mcast_entry_s *self, const struct nm_mcast_entry_s *sub,
                             int n)
{
  nm_put32(h, root);
  nm_put32(h + 4, (uint32_t)n);
  nm_put64(h + 8, tag);
  nm_put64(h + 16, len);
  memset(h + 24, 0, 4);
  nm_put8(h + 24, tree);
  nm_put8(h + NM_MCAST_KIND_OFF, kind);
  nm_put8(h + NM_MCAST_FLAGS_OFF, flags);
  nm_put32(h + 28, self->seq);
  nm_put32(h + 32, (uint32_t)self->prio);
  for (int i = 0; i < n; i++) {
    uint8_t *e = h + NM_MCAST_HDR_FIXED + (size_t)i * NM_MCAST_ENTRY_LEN;
    nm_put32(e, sub[i].rank);
    nm_put32(e + 4, (uint32_t)sub[i].prio);
    nm_put32(e + 8, sub[i].seq);
  }
}

static void nm_mcast_post(nm_session_t session, struct nm_req_s *req, nm_gate_t g, int prio, const uint8_t *h,
                          size_t hlen, const void *body, nm_len_t blen, nm_req_notifier_t notifier, void *ref)
{
  nm_sr_send_init(session, req);
  nm_sr_send_set_priority(session, req, prio);
  nm_sr_request_set_monitor(session, req, NM_EVENT_SEND_COMPLETED, notifier, ref);
  /* Errors complete the request (and reach the notifier); a gate that cannot be made (no memory) fails the
   * child's send alike. The arguments are valid by construction (hlen <= NM_RPC_HLEN_MAX). */
  if (g)
    nm_rpc_isend(session, g, NM_MCAST_RPC_TAG, h, hlen, body, blen, req);
  else
    nm_req_complete(req, -NM_ENOMEM);
}

static int nm_mcast_fanout_next(struct nm_mcast_fanout_s *out);
static void nm_mcast_fanout_free(struct nm_mcast_fanout_s *out);
static void nm_mcast_child_failed(struct nm_mcast_service_s *svc, struct nm_mcast_fanout_s *out,
                                  struct nm_req_s *req, int via_child);
static void nm_mcast_get_entries(const uint8_t *raw, struct nm_mcast_entry_s *e, uint32_t n);

/* The topology of NM_MCAST_TREE_TOPO_ID broadcasts: a cache made at first use (the service is const for the
 * fan-out, which only reads it otherwise). NULL when NMAD_MCAST_TOPO is bad or memory is short. */
static struct nm_mcast_topo_s *nm_mcast_topo_get(const struct nm_mcast_service_s *csvc)
{
  struct nm_mcast_service_s *svc = (struct nm_mcast_service_s *)csvc;
  if (svc->topo == NULL &&
      nm_mcast_topo_from_env(nm_core_get_size(svc->core), nm_core_get_rank(svc->core), &svc->topo) == 0)
    svc->topo_owned = 1;
  return svc->topo;
}

/* Children of position 0 as nm_mcast_tree_children(); the topology-ID tree reads the ranks of the list. */
static int nm_mcast_children(const struct nm_mcast_service_s *svc, enum nm_mcast_tree_e tree,
                             const struct nm_mcast_entry_s *list, int m, int *child, int *end)
{
  if (tree != NM_MCAST_TREE_TOPO_ID)
    return nm_mcast_tree_children(tree, m, child, end);
  struct nm_mcast_topo_s *topo = nm_mcast_topo_get(svc);
  int *ranks = malloc(sizeof(int) * (size_t)(m ? m : 1));
  int nc = topo && ranks ? 0 : -NM_ENOMEM;
  for (int k = 0; !nc && k < m; k++)
    ranks[k] = (int)list[k].rank;
  if (!nc)
    nc = nm_mcast_topo_children(topo, nm_core_get_rank(svc->core), ranks, m, child, end);
  free(ranks);
  return nc;
}

int nm_mcast_set_topo(nm_mcast_service_t service, nm_mcast_topo_t topo)
{
  if (service == NULL || topo == NULL || nm_mcast_topo_size(topo) != nm_core_get_size(service->core))
    return -NM_EINVAL;
  if (service->topo_owned)
    nm_mcast_topo_destroy(service->topo);
  service->topo = topo;
  service->topo_owned = 0;
  return NM_ESUCCESS;
}

/* Send the data to the children of position 0 in list[0..m) (list positions 1..m). Each child gets its subtree
 * slice and its own priority in the local scheduler: in its header when the slice fits, else as a LIST message
 * followed by a DATA message on the same ordering stream. With @p skip_err, each child gets instead one SKIP
 * message (its slice as the body, no data): the broadcast was lost above it. @p notifier fires per send and posts the next child's
 * sends (nm_mcast_fanout_done()); when it returns 1 the fan-out is over. If every send completed while this call
 * posted them, *over is set instead and the caller ends the fan-out. @return number of children, or -NM_ENOMEM. */
static int nm_mcast_fanout(const struct nm_mcast_service_s *svc, struct nm_mcast_fanout_s *out, uint32_t root,
                           nm_tag_t tag, const void *data, nm_len_t len, uint8_t tree,
                           const struct nm_mcast_entry_s *list, int m, uint8_t skip_err, nm_len_t seg,
                           uint32_t avail, nm_req_notifier_t notifier, void *ref, int *over)
{
  nm_session_t session = svc->session;
  /* Pipelined when the segment size cuts the data in two or more (the caller checked nseg <= 2^32). */
  const uint32_t nseg = !skip_err && seg && seg < len ? (uint32_t)nm_mcast_nseg(len, seg) : 0;
  const uint8_t flags = nseg ? NM_MCAST_FLAG_SEG : 0;
  const int max_inline = skip_err ? m : svc->max_inline; /* a SKIP carries its slice as the body, in one message */
  int *child = malloc(sizeof(int) * (size_t)(m ? m : 1)), *end = malloc(sizeof(int) * (size_t)(m ? m : 1));
  int nc = (child && end) ? nm_mcast_children(svc, (enum nm_mcast_tree_e)tree, list, m, child, end) : -1;
  size_t total = 0;
  int ns = 0;
  for (int k = 0; k < nc; k++) {
    int sub = end[k] - child[k];
    total += nm_mcast_hdr_len(sub) + (sub <= max_inline ? 0 : NM_MCAST_HDR_FIXED);
    ns += sub <= max_inline ? 1 : 2;
  }
  out->reqs = ns > 0 ? calloc((size_t)ns, sizeof(*out->reqs)) : NULL;
  out->hdrs = ns > 0 ? malloc(total) : NULL;
  out->sends = ns > 0 ? malloc(sizeof(*out->sends) * (size_t)ns) : NULL;
  out->done = 0;
  out->status = NM_ESUCCESS;
  out->nseg = nseg;
  out->data = data;
  out->len = len;
  out->seg = seg;
  out->avail = avail;
  out->next_seg = out->low_seg = nseg ? 1 : 0;
  out->nc = nc > 0 ? nc : 0;
  out->aborted = 0;
  out->seg_posted = out->seg_done = 0;
  out->window = NM_MCAST_WINDOW;
  int seg_bad = 0;
  out->first_of = NULL;
  out->dead = NULL;
  out->ring = NULL;
  out->ring_done = NULL;
  if (nseg && nc > 0) {
    out->first_of = malloc(sizeof(int) * (size_t)nc);
    out->dead = calloc((size_t)nc, 1);
    out->ring = calloc((size_t)out->window * (size_t)nc, sizeof(*out->ring));
    out->ring_done = calloc((size_t)out->window, sizeof(int));
    seg_bad = !out->first_of || !out->dead || !out->ring || !out->ring_done;
  }
  if (nc < 0 || seg_bad || (ns > 0 && (!out->reqs || !out->hdrs || !out->sends))) {
    free(child);
    free(end);
    nm_mcast_fanout_free(out);
    out->n = 0;
    out->status = -NM_ENOMEM;
    return -NM_ENOMEM;
  }
  out->n = ns;
  /* Build every header first: a send may complete (and end the fan-out) inside the loop below. Per child:
   * INLINE header + entries, or LIST header + entries (its body) + DATA header. */
  size_t off = 0;
  for (int k = 0; k < nc; k++) {
    int sub = end[k] - child[k];
    int inl = sub <= max_inline;
    uint8_t *h = out->hdrs + off;
    nm_mcast_put_hdr(h, root, tag, len, tree, skip_err ? NM_MCAST_SKIP : inl ? NM_MCAST_INLINE : NM_MCAST_LIST,
                     flags, &list[child[k] - 1], &list[child[k]], sub);
    h[NM_MCAST_ERR_OFF] = skip_err;
    off += nm_mcast_hdr_len(sub);
    if (!inl) {
      memcpy(out->hdrs + off, h, NM_MCAST_HDR_FIXED);
      out->hdrs[off + NM_MCAST_KIND_OFF] = NM_MCAST_DATA;
      off += NM_MCAST_HDR_FIXED;
    }
  }
  const uint8_t *hdrs = out->hdrs;
  const nm_len_t len0 = nseg ? seg : len; /* the first message's body: segment 0, or the whole data */
  off = 0;
  for (int k = 0, s = 0; k < nc; k++) {
    const struct nm_mcast_entry_s *c = &list[child[k] - 1];
    int sub = end[k] - child[k];
    size_t hlen = nm_mcast_hdr_len(sub);
    nm_gate_t g = nm_core_gate(svc->core, (int)c->rank);
    if (skip_err) {
      out->sends[s++] = (struct nm_mcast_send_s){g, c->prio, 1, k, hdrs + off, NM_MCAST_HDR_FIXED,
                                                 hdrs + off + NM_MCAST_HDR_FIXED, hlen - NM_MCAST_HDR_FIXED};
      off += hlen;
    } else if (sub <= max_inline) {
      if (out->first_of)
        out->first_of[k] = s;
      out->sends[s++] = (struct nm_mcast_send_s){g, c->prio, 1, k, hdrs + off, hlen, data, len0};
      off += hlen;
    } else {
      /* LIST then DATA, back to back: they take consecutive sequence numbers of the child's stream. */
      out->sends[s++] = (struct nm_mcast_send_s){g, c->prio, 1, k, hdrs + off, NM_MCAST_HDR_FIXED,
                                                 hdrs + off + NM_MCAST_HDR_FIXED, hlen - NM_MCAST_HDR_FIXED};
      if (out->first_of)
        out->first_of[k] = s;
      out->sends[s++] = (struct nm_mcast_send_s){g, c->prio, 0, k, hdrs + off + hlen, NM_MCAST_HDR_FIXED, data,
                                                 len0};
      off += hlen + NM_MCAST_HDR_FIXED;
    }
  }
  out->session = session;
  out->notifier = notifier;
  out->ref = ref;
  out->posted = 0;
  out->posting = 0;
  /* Rendezvous-size data goes to one child at a time, in tree order (largest subtree first): posted at once, the
   * copies would share this node's link and the largest subtree would get its copy last of all (doc/nmad-sim.md;
   * Hasanov 2015, section 2.1.6, single-port). Eager data goes to all at once: the latencies overlap. */
  out->serial = !skip_err && !nseg && len > nm_core_rdv_threshold(svc->core);
  *over = nm_mcast_fanout_next(out);
  free(child);
  free(end);
  return nc;
}

static void nm_mcast_fanout_free(struct nm_mcast_fanout_s *out)
{
  free(out->reqs);
  free(out->hdrs);
  free(out->sends);
  free(out->first_of);
  free(out->dead);
  free(out->ring);
  free(out->ring_done);
  out->reqs = NULL;
  out->hdrs = NULL;
  out->sends = NULL;
  out->first_of = NULL;
  out->dead = NULL;
  out->ring = NULL;
  out->ring_done = NULL;
}

/* Segments whose every send completed leave the window. */
static void nm_mcast_seg_slide(struct nm_mcast_fanout_s *out)
{
  while (out->low_seg < out->next_seg && out->ring_done[out->low_seg % (uint32_t)out->window] == out->nc) {
    out->ring_done[out->low_seg % (uint32_t)out->window] = 0;
    out->low_seg++;
  }
}

/* Pipelined: post segment next_seg to every live child while it is here and the window has room. A child whose
 * sends failed is skipped (its subtree was told); its slot counts as done. */
static void nm_mcast_seg_post(struct nm_mcast_fanout_s *out)
{
  if (out->nc == 0) { /* a leaf: nothing to send, the segments only have to arrive */
    out->next_seg = out->low_seg = out->avail;
    return;
  }
  while (!out->aborted && out->next_seg < out->avail && out->next_seg < out->low_seg + (uint32_t)out->window) {
    const uint32_t k = out->next_seg++;
    const nm_len_t off = (nm_len_t)k * out->seg;
    const nm_len_t blen = out->len - off < out->seg ? out->len - off : out->seg;
    const int w = (int)(k % (uint32_t)out->window);
    for (int c = 0; c < out->nc; c++) {
      struct nm_mcast_segsend_s *x = &out->ring[w * out->nc + c];
      const struct nm_mcast_send_s *first = &out->sends[out->first_of[c]];
      out->seg_posted++;
      if (out->dead[c]) {
        out->seg_done++;
        out->ring_done[w]++;
        continue;
      }
      /* The child's own fixed header, as SEG with the segment index in n: it joins it to its broadcast. */
      memcpy(x->hdr, first->h, NM_MCAST_HDR_FIXED);
      x->hdr[NM_MCAST_KIND_OFF] = NM_MCAST_SEG;
      nm_put32(x->hdr + 4, k);
      x->k = k;
      x->child = c;
      memset(&x->req, 0, sizeof(x->req));
      nm_mcast_post(out->session, &x->req, first->gate, first->prio, x->hdr, NM_MCAST_HDR_FIXED, out->data + off,
                    blen, out->notifier, out->ref);
    }
    nm_mcast_seg_slide(out);
  }
}

/* Every send posted completed, and nothing is left to post. */
static int nm_mcast_fanout_over(const struct nm_mcast_fanout_s *out)
{
  if (out->done < out->n || out->posted < out->n)
    return 0;
  return !out->nseg || (out->seg_done == out->seg_posted && (out->aborted || out->next_seg >= out->nseg));
}

/* Post the sends still to go: all of them, or (serial) the next child's once every send posted so far completed;
 * then (pipelined) the segments that arrived. Completions that happen while posting only count (out->posting);
 * the loop sees them. @return 1 when the fan-out is over: its buffers are released and the caller ends it. */
static int nm_mcast_fanout_next(struct nm_mcast_fanout_s *out)
{
  out->posting = 1;
  while (out->posted < out->n && (!out->serial || out->done == out->posted)) {
    do {
      const struct nm_mcast_send_s *x = &out->sends[out->posted];
      nm_mcast_post(out->session, &out->reqs[out->posted], x->gate, x->prio, x->h, x->hlen, x->body, x->blen,
                    out->notifier, out->ref);
      out->posted++;
    } while (out->posted < out->n && !out->sends[out->posted].first);
  }
  if (out->nseg)
    nm_mcast_seg_post(out);
  out->posting = 0;
  if (!nm_mcast_fanout_over(out))
    return 0;
  nm_mcast_fanout_free(out);
  return 1;
}

/* One child send finished. @return 1 when it was the last one (the fan-out buffers are then released). */
static int nm_mcast_fanout_done(struct nm_mcast_fanout_s *out, int status)
{
  if (status && !out->status)
    out->status = status;
  out->done++;
  return out->posting ? 0 : nm_mcast_fanout_next(out);
}

/* Pipelined: no more segments will be sent (the broadcast was lost at this hop); the sends in flight finish.
 * @return 1 when the fan-out is over. */
static int nm_mcast_fanout_abort(struct nm_mcast_fanout_s *out)
{
  out->aborted = 1;
  return out->posting ? 0 : nm_mcast_fanout_next(out);
}

/* The SEG send of @p req, or NULL when @p req is one of sends[]. */
static struct nm_mcast_segsend_s *nm_mcast_segsend_of(const struct nm_mcast_fanout_s *out, struct nm_req_s *req)
{
  uintptr_t p = (uintptr_t)req, lo = (uintptr_t)out->ring;
  if (!out->ring || p < lo || p >= lo + sizeof(*out->ring) * (size_t)out->window * (size_t)out->nc)
    return NULL;
  return (struct nm_mcast_segsend_s *)(void *)req; /* req is the first member */
}

/* ---- lost broadcasts (SKIP) ----
 * Every destination owns a sequence number of the root's stream (gate, tag): if its copy can never come (a hop
 * failed locally, or died), the receive would wait for ever and every later message of that stream behind it.
 * So whoever knows a subtree lost the broadcast tells it: a SKIP message carries the subtree list down the same
 * tree, and each destination fills its place in the order with an error (nm_core_inject_lost()). */

/* A SKIP fan-out in flight. */
struct nm_mcast_skip_s {
  struct nm_mcast_service_s *svc;
  struct nm_mcast_fanout_s out;
};

static int nm_mcast_fanout_sent(struct nm_mcast_service_s *svc, struct nm_mcast_fanout_s *out,
                                struct nm_req_s *req, int live);

static void nm_mcast_skip_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  struct nm_mcast_skip_s *k = ref;
  struct nm_mcast_service_s *svc = k->svc;
  /* A failed SKIP goes never back through the same child: down its subtree instead. */
  if (nm_mcast_fanout_sent(svc, &k->out, req, 0)) {
    svc->n_active--;
    free(k);
  }
}

/* Send SKIP (error @p err < 0) to the children of a node whose subtree is list[0..m) (positions 1..m). */
static void nm_mcast_skip_list(struct nm_mcast_service_s *svc, uint32_t root, nm_tag_t tag, nm_len_t len,
                               uint8_t tree, const struct nm_mcast_entry_s *list, int m, int err)
{
  struct nm_mcast_skip_s *k = m > 0 ? malloc(sizeof(*k)) : NULL;
  if (!k)
    return; /* a leaf, or no memory: that subtree is not told (doc/mcast.md) */
  k->svc = svc;
  int over = 0;
  int nc = nm_mcast_fanout(svc, &k->out, root, tag, NULL, len, tree, list, m, (uint8_t)-err, 0, 0,
                           nm_mcast_skip_sent, k, &over);
  if (nc < 0 || over) {
    free(k);
    return;
  }
  svc->n_active++;
}

/* Tell the subtree of a child that the broadcast will not come. @p h is the header we sent that child: its fixed
 * part, then its subtree list (INLINE, or the body of its LIST). A live child (@p via_child) gets one SKIP with
 * its whole list and passes it on; for one that is gone, or that a SKIP did not reach, we act in its place. */
static void nm_mcast_skip_subtree(struct nm_mcast_service_s *svc, const uint8_t *h, nm_gate_t g, int via_child,
                                  int err)
{
  uint32_t n = nm_get32(h + 4);
  if (!via_child || !g || nm_gate_get_status(g)) {
    struct nm_mcast_entry_s *list = malloc(sizeof(*list) * (n ? n : 1));
    if (list) {
      nm_mcast_get_entries(h + NM_MCAST_HDR_FIXED, list, n);
      nm_mcast_skip_list(svc, nm_get32(h), nm_get64(h + 8), nm_get64(h + 16), h[24], list, (int)n, err);
    }
    free(list);
    return;
  }
  struct nm_mcast_skip_s *k = calloc(1, sizeof(*k));
  size_t hlen = nm_mcast_hdr_len((int)n);
  struct nm_mcast_fanout_s *out = k ? &k->out : NULL;
  if (out && (out->reqs = calloc(1, sizeof(*out->reqs))) && (out->hdrs = malloc(hlen)) &&
      (out->sends = malloc(sizeof(*out->sends)))) {
    memcpy(out->hdrs, h, hlen);
    out->hdrs[NM_MCAST_KIND_OFF] = NM_MCAST_SKIP;
    out->hdrs[NM_MCAST_ERR_OFF] = (uint8_t)-err;
    out->hdrs[NM_MCAST_FLAGS_OFF] = 0; /* a SKIP carries no data: never segmented */
    out->sends[0] = (struct nm_mcast_send_s){g, (int32_t)nm_get32(h + 32), 1, 0, out->hdrs, NM_MCAST_HDR_FIXED,
                                             out->hdrs + NM_MCAST_HDR_FIXED, hlen - NM_MCAST_HDR_FIXED};
    *out = (struct nm_mcast_fanout_s){.reqs = out->reqs, .hdrs = out->hdrs, .sends = out->sends,
                                      .session = svc->session, .notifier = nm_mcast_skip_sent, .ref = k, .n = 1};
    k->svc = svc;
    svc->n_active++;
    if (nm_mcast_fanout_next(out)) {
      svc->n_active--;
      free(k);
    }
    return;
  }
  if (out) {
    free(out->reqs);
    free(out->hdrs);
  }
  free(k);
}

/* Send @p req of fan-out @p out failed: its child's subtree lost the broadcast. The DATA message that follows a
 * LIST counts only when the LIST went through (else the LIST's own failure told the subtree). */
static void nm_mcast_child_failed(struct nm_mcast_service_s *svc, struct nm_mcast_fanout_s *out,
                                  struct nm_req_s *req, int via_child)
{
  ptrdiff_t i = req - out->reqs;
  if (i < 0 || i >= out->n)
    return;
  const struct nm_mcast_send_s *x = &out->sends[i];
  if (!x->first && (!out->reqs[i - 1].completed || out->reqs[i - 1].status))
    return;
  if (out->dead) { /* pipelined: tell the subtree once, and send the child no more segments */
    if (out->dead[x->child])
      return;
    out->dead[x->child] = 1;
  }
  const struct nm_mcast_send_s *first = x->first ? x : x - 1;
  nm_mcast_skip_subtree(svc, first->h, first->gate, via_child, req->status);
}

/* ---- children served, kept a while ----
 * A child that got the broadcast and dies before serving all its children leaves their subtrees uninformed: our
 * send to it completed, and nobody else alive knows their list. So a hop keeps, for NM_MCAST_KEEP_NS of core time
 * after each successful send to a child that has a subtree, a copy of that child's header (at most
 * NM_MCAST_KEEP_MAX of them, newest first); if the child's gate fails meanwhile, the hop acts in the child's place
 * and sends SKIP to the child's children. Those that got the data from the child ignore it. The time bounds the
 * memory, not correctness for a child slower than that to serve its children (doc/mcast.md). */
#define NM_MCAST_KEEP_NS (10ULL * 1000000000ULL)
#define NM_MCAST_KEEP_MAX 64

struct nm_mcast_kept_s {
  struct nm_mcast_kept_s *next;
  uint64_t until_ns;
  nm_gate_t child;
  uint8_t hdr[]; /* the child's fixed header, then its subtree entries */
};

/* Drop what expired and what is beyond the newest NM_MCAST_KEEP_MAX. */
static void nm_mcast_kept_trim(struct nm_mcast_service_s *svc, uint64_t now)
{
  struct nm_mcast_kept_s **pp = &svc->kept;
  for (int n = 0; *pp && n < NM_MCAST_KEEP_MAX && (*pp)->until_ns > now; n++)
    pp = &(*pp)->next;
  struct nm_mcast_kept_s *k = *pp;
  *pp = NULL;
  while (k) {
    struct nm_mcast_kept_s *next = k->next;
    free(k);
    k = next;
  }
}

static void nm_mcast_keep_child(struct nm_mcast_service_s *svc, const struct nm_mcast_send_s *first);

/* Send @p req of fan-out @p out completed: once a child's last send is done, keep its header for a while. */
static void nm_mcast_keep(struct nm_mcast_service_s *svc, struct nm_mcast_fanout_s *out, struct nm_req_s *req)
{
  ptrdiff_t i = req - out->reqs;
  if (i < 0 || i >= out->n || (out->sends[i].first && i + 1 < out->n && !out->sends[i + 1].first))
    return; /* a LIST: its DATA is the child's last send */
  if (out->nseg)
    return; /* pipelined: the child's last send is its last SEG (nm_mcast_fanout_sent()) */
  nm_mcast_keep_child(svc, out->sends[i].first ? &out->sends[i] : &out->sends[i - 1]);
}

/* Keep the header of the child whose first send (LIST or INLINE) is @p first. */
static void nm_mcast_keep_child(struct nm_mcast_service_s *svc, const struct nm_mcast_send_s *first)
{
  uint32_t n = nm_get32(first->h + 4);
  if (n == 0 || !first->gate)
    return; /* a leaf: nobody depends on it */
  size_t hlen = nm_mcast_hdr_len((int)n);
  struct nm_mcast_kept_s *k = malloc(sizeof(*k) + hlen);
  if (!k)
    return;
  uint64_t now = nm_core_time_ns(svc->core);
  k->until_ns = now + NM_MCAST_KEEP_NS;
  k->child = first->gate;
  memcpy(k->hdr, first->h, hlen); /* INLINE header + entries, or LIST header + its body: contiguous in out->hdrs */
  k->next = svc->kept;
  svc->kept = k;
  nm_mcast_kept_trim(svc, now);
}

/* @p gate failed: tell the subtrees of the kept children on it. Detached first: the SKIPs may fail more gates. */
static void nm_mcast_kept_gate_failed(struct nm_mcast_service_s *svc, struct nm_gate_s *gate)
{
  struct nm_mcast_kept_s *mine = NULL, **pp = &svc->kept;
  while (*pp) {
    struct nm_mcast_kept_s *k = *pp;
    if (k->child != gate) {
      pp = &k->next;
      continue;
    }
    *pp = k->next;
    k->next = mine;
    mine = k;
  }
  while (mine) {
    struct nm_mcast_kept_s *k = mine;
    mine = k->next;
    int err = nm_gate_get_status(gate);
    nm_mcast_skip_subtree(svc, k->hdr, gate, 0, err ? err : -NM_ECLOSED);
    free(k);
  }
}

/* A send of fan-out @p out completed. A failed one tells its child's subtree (@p live: through the child while it
 * lives, as for the data; else in its place); at a root or forwarder (@p live) a child that got everything is kept
 * a while. @return 1 when the fan-out is over (its buffers are released). */
static int nm_mcast_fanout_sent(struct nm_mcast_service_s *svc, struct nm_mcast_fanout_s *out,
                                struct nm_req_s *req, int live)
{
  struct nm_mcast_segsend_s *x = nm_mcast_segsend_of(out, req);
  if (!x) {
    if (req->status)
      nm_mcast_child_failed(svc, out, req, live);
    else if (live)
      nm_mcast_keep(svc, out, req);
    return nm_mcast_fanout_done(out, req->status);
  }
  const struct nm_mcast_send_s *first = &out->sends[out->first_of[x->child]];
  if (req->status && !out->dead[x->child]) {
    out->dead[x->child] = 1;
    const struct nm_mcast_send_s *head = first->first ? first : first - 1; /* the LIST has the whole header */
    nm_mcast_skip_subtree(svc, head->h, head->gate, live, req->status);
  } else if (!req->status && live && x->k == out->nseg - 1) {
    nm_mcast_keep_child(svc, first->first ? first : first - 1);
  }
  if (req->status && !out->status)
    out->status = req->status;
  out->seg_done++;
  out->ring_done[x->k % (uint32_t)out->window]++;
  nm_mcast_seg_slide(out);
  return out->posting ? 0 : nm_mcast_fanout_next(out);
}

/* ---- root ---- */

/* A broadcast at its root (nm_mcast_req_t.priv). */
struct nm_mcast_root_s {
  struct nm_mcast_service_s *svc;
  struct nm_mcast_fanout_s out;
};

/* The root's fan-out is over: the broadcast request completes. */
static void nm_mcast_root_over(nm_mcast_req_t *mreq)
{
  struct nm_mcast_root_s *r = mreq->priv;
  mreq->status = r->out.status;
  free(r);
  mreq->priv = NULL;
  mreq->completed = 1;
}

static void nm_mcast_root_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  nm_mcast_req_t *mreq = ref;
  struct nm_mcast_root_s *r = mreq->priv;
  if (nm_mcast_fanout_sent(r->svc, &r->out, req, 1))
    nm_mcast_root_over(mreq);
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
  return nm_mcast_isend_seg(service, dests, prios, n, tag, data, len, tree, service ? service->seg_size : 0, req);
}

int nm_mcast_isend_seg(nm_mcast_service_t service, const int *dests, const int *prios, int n, nm_tag_t tag,
                       const void *data, nm_len_t len, enum nm_mcast_tree_e tree, nm_len_t seg, nm_mcast_req_t *req)
{
  if (!service || !req || n < 0 || (n > 0 && !dests) || (len && !data) || (unsigned)tree > NM_MCAST_TREE_TOPO_ID ||
      n > service->max_dests || (seg && seg < len && nm_mcast_nseg(len, seg) - 1 > UINT32_MAX))
    return -NM_EINVAL;
  if (seg >= len)
    seg = 0; /* one segment: store-and-forward */
  nm_session_t session = service->session;
  nm_core_t core = service->core;
  const int size = nm_core_get_size(core), me = nm_core_get_rank(core);
  NM_CORE_LOCKED(core);
  memset(req, 0, sizeof(*req));
  if (n == 0) {
    req->completed = 1;
    return NM_ESUCCESS;
  }
  struct nm_mcast_sort_s *s = malloc(sizeof(*s) * (size_t)n);
  struct nm_mcast_entry_s *list = malloc(sizeof(*list) * (size_t)n);
  int *order = malloc(sizeof(int) * (size_t)n);
  struct nm_mcast_root_s *out = malloc(sizeof(*out));
  int err = (!s || !list || !order || !out) ? -NM_ENOMEM : NM_ESUCCESS;
  for (int i = 0; !err && i < n; i++) {
    s[i] = (struct nm_mcast_sort_s){dests[i], prios ? prios[i] : 0, i};
    if (dests[i] < 0 || dests[i] >= size || dests[i] == me)
      err = -NM_EINVAL;
  }
  if (!err) { /* duplicates */
    qsort(s, (size_t)n, sizeof(*s), nm_mcast_by_dest);
    for (int i = 1; i < n; i++)
      if (s[i].dest == s[i - 1].dest)
        err = -NM_EINVAL;
  }
  int uniform = 1; /* every destination has the same priority (or none was given) */
  for (int i = 1; prios && i < n; i++)
    uniform &= prios[i] == prios[0];
  if (!err && tree == NM_MCAST_TREE_TOPO_ID) {
    /* The topology places the destinations (ID order: s is sorted by rank, which is ID order); priorities still
     * travel with each destination and rank its sends in the scheduler. */
    err = nm_mcast_topo_get(service) ? NM_ESUCCESS : -NM_EINVAL;
    uniform = 1;
  }
  if (!err && !uniform)
    err = nm_mcast_tree_arrival_order(tree, n, order);
  for (int i = 0; !err && uniform && i < n; i++)
    order[i] = i + 1;
  if (!err) {
    /* Place destinations by decreasing priority on the positions served first (paper 3.2), and give each the
     * next point-to-point sequence number of (its gate, tag): the broadcast takes that place in the order.
     * Without priorities to honour, the caller's order is the tree order: every subtree is a run of consecutive
     * destinations, as in the static binomial tree, so ranks that are neighbours (on a torus, in a switch) stay
     * in one subtree and the last rounds' transfers stay short. Placed in arrival order, the last round pairs
     * rank r with rank r + n/2: all its transfers would cross the network's bisection at once (doc/mcast.md). */
    if (tree != NM_MCAST_TREE_TOPO_ID) /* else s stays in rank order, which is topology-ID order */
      qsort(s, (size_t)n, sizeof(*s), nm_mcast_by_prio);
    int taken = 0;
    for (; taken < n; taken++) {
      nm_gate_t g = nm_core_gate(core, s[taken].dest);
      nm_seq_t seq;
      err = g ? nm_core_send_seq_take(session, g, tag, &seq) : -NM_ENOMEM;
      if (err)
        break;
      list[order[taken] - 1] = (struct nm_mcast_entry_s){(uint32_t)s[taken].dest, s[taken].prio, seq};
    }
    for (int i = 0; err && i < taken; i++) /* out of memory half way: no hole in any stream */
      nm_core_send_seq_give_back(session, nm_core_gate(core, s[i].dest), tag);
  }
  if (!err) {
    int over = 0;
    req->priv = out;
    out->svc = service;
    uint32_t nseg = seg ? (uint32_t)nm_mcast_nseg(len, seg) : 0; /* the root has every segment */
    req->n_children = nm_mcast_fanout(service, &out->out, (uint32_t)me, tag, data, len, (uint8_t)tree, list, n, 0,
                                      seg, nseg, nm_mcast_root_sent, req, &over);
    if (req->n_children < 0) { /* nothing was posted: give the sequence numbers back, leaving no hole */
      err = req->n_children;
      req->priv = NULL;
      for (int i = 0; i < n; i++)
        nm_core_send_seq_give_back(session, nm_core_gate(core, s[i].dest), tag);
    } else {
      out = NULL; /* owned by the request now (freed by the last completion) */
      if (over)
        nm_mcast_root_over(req);
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
  NM_CORE_LOCKED(service->core);
  nm_core_wait_flag(service->core, &req->completed, 0);
  return req->status;
}

int nm_mcast_test(nm_mcast_service_t service, nm_mcast_req_t *req)
{
  NM_CORE_LOCKED(service->core);
  if (!req->completed)
    nm_core_progress(service->core);
  return req->completed ? req->status : -NM_EAGAIN;
}

/* ---- receiving and forwarding ---- */

/* The broadcast is over at this node: hand the data to the application (or fail its receive), and when it was
 * lost here (@p status < 0) fill our place in the root's order with the error and tell our subtree. A SKIP that
 * finds our place already delivered stops here: the broadcast went through us, our children had it from us. */
static void nm_mcast_fwd_finish(struct nm_mcast_fwd_s *f, int status)
{
  struct nm_mcast_service_s *svc = f->svc;
  /* A parent that broke the protocol (-NM_EPROTO) is not believed about anything: no SKIP on its word. */
  int tell = status && status != -NM_EPROTO && f->entries_ok;
  if (f->claimed) {
    nm_req_complete_events(f->claimed, status, NM_EVENT_FINALIZED | NM_EVENT_RECV_COMPLETED);
  } else if (status == NM_ESUCCESS) {
    nm_core_inject(svc->session, f->root_gate, f->tag, f->seq, f->buf, f->len); /* the core owns buf now */
  } else {
    free(f->buf);
    if (tell && nm_core_inject_lost(svc->session, f->root_gate, f->tag, f->seq, status) == 0 && f->skip_err)
      tell = 0;
  }
  if (tell)
    nm_mcast_skip_list(svc, f->root, f->tag, f->len, f->tree, f->entries, f->n_entries, status);
  if (f->prev_active)
    f->prev_active->next_active = f->next_active;
  else
    svc->active = f->next_active;
  if (f->next_active)
    f->next_active->prev_active = f->prev_active;
  svc->n_active--;
  free(f->arrived);
  free(f);
}

static void nm_mcast_seg_step(struct nm_mcast_fwd_s *f);

static void nm_mcast_fwd_sent(struct nm_req_s *req, unsigned event, void *ref)
{
  struct nm_mcast_fwd_s *f = ref;
  if (!nm_mcast_fanout_sent(f->svc, &f->out, req, 1))
    return;
  if (f->nseg) { /* pipelined: done once every segment is also in */
    f->out_over = 1;
    nm_mcast_seg_step(f);
  } else {
    nm_mcast_fwd_finish(f, NM_ESUCCESS); /* a child's failure does not make our own copy wrong */
  }
}

/* Pipelined: segment @p k is in buf. */
static void nm_mcast_seg_arrived(struct nm_mcast_fwd_s *f, uint32_t k)
{
  f->arrived[k / 8] |= (uint8_t)(1u << (k % 8));
  f->n_arrived++;
}

/* Pipelined, one pass: start the fan-out once the list and segment 0 are in, then hand it each segment as the
 * prefix of arrived segments grows; on an error, let the sends in flight and the bodies being received finish,
 * then end as lost. The data is readable (NM_EVENT_RECV_DATA) when every segment is in; the receive completes
 * when forwarding is over too. @return 1 when @p f is gone. */
static int nm_mcast_seg_step_once(struct nm_mcast_fwd_s *f)
{
  if (f->parts & (NM_MCAST_PART_LIST | NM_MCAST_PART_DATA_MSG | NM_MCAST_PART_HOLD))
    return 0; /* the subtree list is not known yet */
  if (f->status) {
    if (f->started && !f->out_over && nm_mcast_fanout_abort(&f->out))
      f->out_over = 1;
    if ((f->started && !f->out_over) || (f->parts & (NM_MCAST_PART_DATA | NM_MCAST_PART_SEGS)) || f->seg_pending)
      return 0;
    nm_mcast_fwd_finish(f, f->status);
    return 1;
  }
  uint32_t avail = f->started ? f->out.avail : 0;
  while (avail < f->nseg && (f->arrived[avail / 8] & (1u << (avail % 8))))
    avail++;
  if (!f->started && avail > 0) {
    int over = 0;
    f->started = 1;
    int nc = nm_mcast_fanout(f->svc, &f->out, f->root, f->tag, f->buf, f->len, f->tree, f->entries, f->n_entries,
                             0, f->seg, avail, nm_mcast_fwd_sent, f, &over);
    if (nc < 0) /* no memory to forward: our copy is good, the subtree lost it */
      nm_mcast_skip_list(f->svc, f->root, f->tag, f->len, f->tree, f->entries, f->n_entries, nc);
    f->out_over = nc < 0 || over;
  } else if (f->started && !f->out_over && avail > f->out.avail) {
    f->out.avail = avail;
    f->out_over = nm_mcast_fanout_next(&f->out);
  }
  if (f->n_arrived == f->nseg && !f->data_told) {
    f->data_told = 1;
    if (f->claimed)
      nm_req_notify(f->claimed, NM_EVENT_RECV_DATA);
  }
  if (f->out_over && f->n_arrived == f->nseg) {
    nm_mcast_fwd_finish(f, NM_ESUCCESS);
    return 1;
  }
  return 0;
}

/* Pipelined step, not re-entered: a call made while one runs (from a send completing inside it) is replayed. */
static void nm_mcast_seg_step(struct nm_mcast_fwd_s *f)
{
  if (f->in_step) {
    f->step_again = 1;
    return;
  }
  f->in_step = 1;
  do {
    f->step_again = 0;
    if (nm_mcast_seg_step_once(f))
      return;
  } while (f->step_again);
  f->in_step = 0;
}

/* A part of a broadcast is over: once none is left, drop it (an error) or forward it. The data is in place:
 * tell the application it may read it, then forward from the same buffer. */
static void nm_mcast_fwd_step(struct nm_mcast_fwd_s *f)
{
  if (f->nseg) {
    nm_mcast_seg_step(f);
    return;
  }
  if (f->parts)
    return;
  if (f->status) {
    nm_mcast_fwd_finish(f, f->status);
    return;
  }
  if (f->claimed)
    nm_req_notify(f->claimed, NM_EVENT_RECV_DATA);
  int over = 0;
  int nc = nm_mcast_fanout(f->svc, &f->out, f->root, f->tag, f->buf, f->len, f->tree, f->entries,
                           f->n_entries, 0, 0, 0, nm_mcast_fwd_sent, f, &over);
  if (nc < 0) /* no memory to forward: our copy is good, the subtree lost it */
    nm_mcast_skip_list(f->svc, f->root, f->tag, f->len, f->tree, f->entries, f->n_entries, nc);
  if (nc <= 0 || over) /* no child (leaf), no memory to forward, or every send already done */
    nm_mcast_fwd_finish(f, NM_ESUCCESS);
}

static void nm_mcast_part_over(struct nm_mcast_fwd_s *f, unsigned bit, int status)
{
  f->parts &= ~bit;
  if (status && !f->status)
    f->status = status;
  nm_mcast_fwd_step(f);
}

static void nm_mcast_unlink_open(struct nm_mcast_fwd_s *f)
{
  for (struct nm_mcast_fwd_s **pp = &f->svc->open; *pp; pp = &(*pp)->next_open)
    if (*pp == f) {
      *pp = f->next_open;
      break;
    }
  f->parts &= ~NM_MCAST_PART_DATA_MSG;
}

/* Drop the LIST messages whose parent failed before their DATA message came: it never will. */
static void nm_mcast_sweep(struct nm_mcast_service_s *svc)
{
  struct nm_mcast_fwd_s **pp = &svc->open;
  while (*pp) {
    struct nm_mcast_fwd_s *f = *pp;
    int err = nm_gate_get_status(f->from);
    if (!err) {
      pp = &f->next_open;
      continue;
    }
    *pp = f->next_open;
    nm_mcast_part_over(f, NM_MCAST_PART_DATA_MSG, err); /* nothing claimed yet: no up-call */
  }
  /* Pipelined broadcasts whose parent failed before their last SEG: the rest will not come. Restart after each,
   * since ending one may fail other gates and end others. */
  for (struct nm_mcast_fwd_s *f = svc->active; f;) {
    int err = (f->parts & NM_MCAST_PART_SEGS) ? nm_gate_get_status(f->from) : 0;
    if (!err) {
      f = f->next_active;
      continue;
    }
    nm_mcast_part_over(f, NM_MCAST_PART_SEGS, err);
    f = svc->active;
  }
}

static void nm_mcast_gate_failed(void *ref, struct nm_gate_s *gate)
{
  nm_mcast_sweep(ref);
  nm_mcast_kept_gate_failed(ref, gate);
}

/* Fixed header from the network: validate every field before using any (DESIGN.md rule 5). The subtree length
 * is bounded by the service's max_dests (at most the job size) before anything is allocated for it. */
static int nm_mcast_get_hdr(const struct nm_mcast_service_s *svc, const uint8_t *h, nm_len_t hlen,
                            struct nm_mcast_hdr_s *x)
{
  const uint32_t size = (uint32_t)nm_core_get_size(svc->core), me = (uint32_t)nm_core_get_rank(svc->core);
  if (hlen < NM_MCAST_HDR_FIXED)
    return -NM_EPROTO;
  *x = (struct nm_mcast_hdr_s){.root = nm_get32(h), .n = nm_get32(h + 4), .tag = nm_get64(h + 8),
                               .len = nm_get64(h + 16), .tree = h[24], .kind = h[NM_MCAST_KIND_OFF],
                               .flags = h[NM_MCAST_FLAGS_OFF], .seq = nm_get32(h + 28),
                               .prio = (int32_t)nm_get32(h + 32)};
  int bad_err = x->kind == NM_MCAST_SKIP ? h[NM_MCAST_ERR_OFF] == 0 || h[NM_MCAST_ERR_OFF] >= NM_ERR_MAX
                                         : h[NM_MCAST_ERR_OFF] != 0;
  /* SEG needs the flag, SKIP carries no data; a SEG's n is a segment index (checked against the broadcast). */
  int bad_flags = (x->flags & ~NM_MCAST_FLAG_SEG) || (x->kind == NM_MCAST_SEG && !x->flags) ||
                  (x->kind == NM_MCAST_SKIP && x->flags);
  if (bad_err || bad_flags || x->tree > NM_MCAST_TREE_TOPO_ID || x->kind > NM_MCAST_SEG || x->root >= size ||
      x->root == me || (x->kind != NM_MCAST_SEG && x->n > nm_mcast_max_entries(svc)))
    return -NM_EPROTO;
  return NM_ESUCCESS;
}

/* Body length of the message that carries data (INLINE, DATA): the whole data, or with NM_MCAST_FLAG_SEG its first
 * segment, which gives the segment size: shorter than the data (else the sender sends it whole), at least one
 * byte, and at most 2^32 segments (a SEG's index is 32 bits). */
static int nm_mcast_data_body_ok(const struct nm_mcast_hdr_s *x, nm_len_t body)
{
  if (!x->flags)
    return body == x->len;
  return body >= 1 && body < x->len && nm_mcast_nseg(x->len, body) - 1 <= UINT32_MAX;
}

/* Wire entries to host entries; @p raw may be @p e itself (same 12-byte layout: each entry is read whole before
 * it is written). */
static void nm_mcast_get_entries(const uint8_t *raw, struct nm_mcast_entry_s *e, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *p = raw + (size_t)i * NM_MCAST_ENTRY_LEN;
    uint32_t rank = nm_get32(p), prio = nm_get32(p + 4), seq = nm_get32(p + 8);
    e[i] = (struct nm_mcast_entry_s){rank, (int32_t)prio, seq};
  }
}

/* Subtree ranks: in range, not the root, not us, no duplicates. O(n) with a bitmap of the job's ranks (size / 8
 * bytes, bounded by the job, not by the peer), pairwise for short lists. @return 0, -NM_EPROTO, -NM_ENOMEM. */
static int nm_mcast_check_entries(nm_core_t core, uint32_t root, const struct nm_mcast_entry_s *e, uint32_t n)
{
  const uint32_t size = (uint32_t)nm_core_get_size(core), me = (uint32_t)nm_core_get_rank(core);
  for (uint32_t i = 0; i < n; i++)
    if (e[i].rank >= size || e[i].rank == me || e[i].rank == root)
      return -NM_EPROTO;
  if (n <= NM_MCAST_DUP_PAIRWISE) {
    for (uint32_t i = 1; i < n; i++)
      for (uint32_t j = 0; j < i; j++)
        if (e[i].rank == e[j].rank)
          return -NM_EPROTO;
    return NM_ESUCCESS;
  }
  uint64_t *seen = calloc(((size_t)size + 63) / 64, sizeof(uint64_t));
  if (!seen)
    return -NM_ENOMEM;
  int err = NM_ESUCCESS;
  for (uint32_t i = 0; i < n && !err; i++) {
    uint64_t bit = (uint64_t)1 << (e[i].rank % 64);
    if (seen[e[i].rank / 64] & bit)
      err = -NM_EPROTO;
    seen[e[i].rank / 64] |= bit;
  }
  free(seen);
  return err;
}

/* A broadcast of header @p x from @p from, with room for its n entries. */
static struct nm_mcast_fwd_s *nm_mcast_fwd_new(struct nm_mcast_service_s *svc, const struct nm_mcast_hdr_s *x,
                                               nm_gate_t from)
{
  nm_gate_t root_gate = nm_core_gate(svc->core, (int)x->root);
  struct nm_mcast_fwd_s *f = root_gate ? malloc(sizeof(*f) + sizeof(struct nm_mcast_entry_s) * x->n) : NULL;
  if (!f)
    return NULL;
  *f = (struct nm_mcast_fwd_s){.svc = svc, .from = from, .root_gate = root_gate, .tag = x->tag, .seq = x->seq,
                               .len = x->len, .tree = x->tree, .root = x->root, .n_entries = (int)x->n};
  f->list_part = (struct nm_mcast_part_s){f, NM_MCAST_PART_LIST};
  f->data_part = (struct nm_mcast_part_s){f, NM_MCAST_PART_DATA};
  f->next_active = svc->active;
  if (svc->active)
    svc->active->prev_active = f;
  svc->active = f;
  svc->n_active++;
  return f;
}

/* Receive the data: into the matching receive if it is due and posted, else into a temporary buffer. The body
 * of @p token is the whole data, or (pipelined, @p x->flags) segment 0: then the other segments come in SEG
 * messages (NM_MCAST_PART_SEGS until the last one's header came), and a bitmap of nseg bits (at most len / 8
 * bytes, within the bound the data buffer itself meets) records which are in. */
static int nm_mcast_recv_data(struct nm_mcast_fwd_s *f, nm_rpc_token_t token, const struct nm_mcast_hdr_s *x)
{
  nm_core_t core = f->svc->core;
  nm_len_t body = nm_rpc_get_body_size(token);
  if (x->flags) {
    f->seg = body;
    f->nseg = (uint32_t)nm_mcast_nseg(f->len, body);
    f->hdr_next = 1;
    f->parts |= NM_MCAST_PART_SEGS; /* from here on the broadcast waits for its SEG messages, even if lost here */
  }
  if (f->nseg && f->len <= nm_core_peer_alloc_max(core) && !(f->arrived = calloc(((size_t)f->nseg + 7) / 8, 1)))
    return -NM_ENOMEM;
  f->claimed = nm_core_claim_recv(f->svc->session, f->root_gate, f->tag, f->seq, f->len);
  if (!f->claimed && f->len > nm_core_peer_alloc_max(core))
    return -NM_ENOMEM; /* the root's word on the size: never a buffer beyond NMAD_PEER_ALLOC_MAX */
  if (f->nseg && !f->arrived && !(f->arrived = calloc(((size_t)f->nseg + 7) / 8, 1)))
    return -NM_ENOMEM; /* claimed: the receive fails with the broadcast, as for any loss here */
  f->buf = f->claimed ? f->claimed->buf : malloc(f->len ? f->len : 1);
  if (!f->claimed && !f->buf)
    return -NM_ENOMEM;
  f->parts |= NM_MCAST_PART_DATA;
  nm_rpc_token_set_ref(token, &f->data_part);
  return nm_rpc_irecv_body(token, f->buf, body);
}

/* INLINE: the subtree list is in the header. */
static int nm_mcast_on_inline(struct nm_mcast_service_s *svc, nm_rpc_token_t token, const uint8_t *h,
                              const struct nm_mcast_hdr_s *x)
{
  struct nm_mcast_fwd_s *f = nm_mcast_fwd_new(svc, x, nm_rpc_get_source(token));
  if (!f)
    return -NM_ENOMEM;
  nm_mcast_get_entries(h + NM_MCAST_HDR_FIXED, f->entries, x->n);
  int err = nm_mcast_check_entries(svc->core, x->root, f->entries, x->n);
  if (err) { /* malformed: the gate fails (the rpc layer calls no finalizer for a rejected message) */
    nm_mcast_part_over(f, NM_MCAST_PART_DATA, err);
    return err;
  }
  f->entries_ok = 1;
  memcpy(f->hdr, h, NM_MCAST_HDR_FIXED); /* SEG messages must repeat it */
  err = nm_mcast_recv_data(f, token, x);
  if (err) /* no buffer for it here: lost at this node, the subtree is told; the body is discarded */
    nm_mcast_part_over(f, NM_MCAST_PART_DATA, err);
  return NM_ESUCCESS;
}

/* LIST: receive the subtree list (by rendezvous when large); the data comes in the DATA message that follows. */
static int nm_mcast_on_list(struct nm_mcast_service_s *svc, nm_rpc_token_t token, const uint8_t *h,
                            const struct nm_mcast_hdr_s *x)
{
  nm_gate_t from = nm_rpc_get_source(token);
  nm_mcast_sweep(svc);
  int on_gate = 0;
  for (struct nm_mcast_fwd_s *o = svc->open; o; o = o->next_open)
    if (o->from == from) {
      if (o->root == x->root && o->tag == x->tag && o->seq == x->seq)
        return -NM_EPROTO; /* the same broadcast twice */
      on_gate++;
    }
  if (on_gate >= NM_MCAST_OPEN_PER_GATE)
    return -NM_EPROTO;
  struct nm_mcast_fwd_s *f = nm_mcast_fwd_new(svc, x, from);
  if (!f)
    return -NM_ENOMEM;
  memcpy(f->hdr, h, NM_MCAST_HDR_FIXED);
  f->parts = NM_MCAST_PART_LIST | NM_MCAST_PART_DATA_MSG;
  f->next_open = svc->open;
  svc->open = f;
  nm_rpc_token_set_ref(token, &f->list_part);
  int err = nm_rpc_irecv_body(token, f->entries, (nm_len_t)x->n * NM_MCAST_ENTRY_LEN);
  if (err) {
    nm_mcast_unlink_open(f);
    nm_mcast_part_over(f, NM_MCAST_PART_LIST, err);
  }
  return err;
}

/* DATA: the data of an open LIST from the same parent; the fixed fields must repeat the LIST's. */
static int nm_mcast_on_data(struct nm_mcast_service_s *svc, nm_rpc_token_t token, const uint8_t *h,
                            const struct nm_mcast_hdr_s *x)
{
  nm_gate_t from = nm_rpc_get_source(token);
  struct nm_mcast_fwd_s *f = svc->open;
  while (f && !(f->from == from && f->root == x->root && f->tag == x->tag && f->seq == x->seq))
    f = f->next_open;
  if (!f)
    return -NM_EPROTO;
  nm_mcast_unlink_open(f);
  if (memcmp(h, f->hdr, NM_MCAST_KIND_OFF) ||
      memcmp(h + NM_MCAST_KIND_OFF + 1, f->hdr + NM_MCAST_KIND_OFF + 1, NM_MCAST_HDR_FIXED - NM_MCAST_KIND_OFF - 1)) {
    nm_mcast_part_over(f, 0, -NM_EPROTO); /* dropped once its list, if still coming, fails with the gate */
    return -NM_EPROTO;
  }
  int err = nm_mcast_recv_data(f, token, x);
  if (err) /* lost here, as for INLINE */
    nm_mcast_part_over(f, NM_MCAST_PART_DATA, err);
  return NM_ESUCCESS;
}

/* SEG: segment x->n of a pipelined broadcast from the same parent. Segments come in order on the parent's stream,
 * so the index must be the next one expected; offset and length follow from it and are checked against the data
 * length before the body is received. A SEG for no broadcast being received here is discarded: it can follow a
 * SKIP that ended the broadcast here (doc/mcast.md, "Pipelined broadcasts"). */
static int nm_mcast_on_seg(struct nm_mcast_service_s *svc, nm_rpc_token_t token, const uint8_t *h,
                           const struct nm_mcast_hdr_s *x)
{
  nm_gate_t from = nm_rpc_get_source(token);
  struct nm_mcast_fwd_s *f = svc->active;
  while (f && !(f->from == from && f->root == x->root && f->tag == x->tag && f->seq == x->seq &&
                (f->parts & NM_MCAST_PART_SEGS)))
    f = f->next_active;
  if (!f)
    return NM_ESUCCESS;
  const uint32_t k = x->n;
  if (k != f->hdr_next || memcmp(h, f->hdr, 4) || memcmp(h + 8, f->hdr + 8, NM_MCAST_KIND_OFF - 8) ||
      memcmp(h + NM_MCAST_KIND_OFF + 1, f->hdr + NM_MCAST_KIND_OFF + 1, NM_MCAST_HDR_FIXED - NM_MCAST_KIND_OFF - 1))
    return -NM_EPROTO; /* the gate fails; its failure ends this broadcast (nm_mcast_sweep()) */
  const nm_len_t off = (nm_len_t)k * f->seg; /* k < nseg <= 2^32 and k * seg < len: no overflow */
  const nm_len_t blen = f->len - off < f->seg ? f->len - off : f->seg;
  if (nm_rpc_get_body_size(token) != blen)
    return -NM_EPROTO;
  f->hdr_next++;
  struct nm_mcast_segpart_s *p = f->status ? NULL : nm_pool_get(&svc->seg_pool);
  if (p) {
    *p = (struct nm_mcast_segpart_s){{f, NM_MCAST_PART_SEGBODY}, k};
    f->seg_pending++;
    nm_rpc_token_set_ref(token, p);
    int err = nm_rpc_irecv_body(token, (uint8_t *)f->buf + off, blen);
    if (err) { /* not in the handler's contract: the body is not coming */
      f->seg_pending--;
      nm_rpc_token_set_ref(token, NULL);
      nm_pool_put(&svc->seg_pool, p);
      f->status = f->status ? f->status : err;
    }
  } else if (!f->status) {
    f->status = -NM_ENOMEM; /* lost here from this segment on; the body is discarded */
  }
  /* Lost here: the body is discarded, but the broadcast waits for its last SEG before it ends. */
  if (f->hdr_next == f->nseg)
    nm_mcast_part_over(f, NM_MCAST_PART_SEGS, 0);
  else if (f->status)
    nm_mcast_fwd_step(f);
  return NM_ESUCCESS;
}

/* SKIP: the broadcast was lost above us. If we are receiving it anyway, that copy decides (a LIST still waiting
 * for its DATA message is failed: the DATA will not come). Otherwise receive the subtree list as for a LIST;
 * nm_mcast_list_done() then fails our place and passes the SKIP on. */
static int nm_mcast_on_skip(struct nm_mcast_service_s *svc, nm_rpc_token_t token, const uint8_t *h,
                            const struct nm_mcast_hdr_s *x)
{
  for (struct nm_mcast_fwd_s *o = svc->active; o; o = o->next_active)
    if (o->root == x->root && o->tag == x->tag && o->seq == x->seq) {
      if (o->parts & NM_MCAST_PART_DATA_MSG) {
        nm_mcast_unlink_open(o);
        nm_mcast_part_over(o, 0, -(int)h[NM_MCAST_ERR_OFF]);
      } else if (o->parts & NM_MCAST_PART_SEGS) {
        /* pipelined, segments still to come: the hop that sends them lost the broadcast, they will not come */
        nm_mcast_part_over(o, NM_MCAST_PART_SEGS, -(int)h[NM_MCAST_ERR_OFF]);
      }
      return NM_ESUCCESS;
    }
  struct nm_mcast_fwd_s *f = nm_mcast_fwd_new(svc, x, nm_rpc_get_source(token));
  if (!f)
    return NM_ESUCCESS; /* no memory: this subtree is not told (doc/mcast.md) */
  f->skip_err = h[NM_MCAST_ERR_OFF];
  f->parts = NM_MCAST_PART_LIST;
  nm_rpc_token_set_ref(token, &f->list_part);
  int err = nm_rpc_irecv_body(token, f->entries, (nm_len_t)x->n * NM_MCAST_ENTRY_LEN);
  if (err)
    nm_mcast_part_over(f, NM_MCAST_PART_LIST, err);
  return NM_ESUCCESS;
}

/* The LIST body is in: decode and validate it. A malformed list fails the gate it came from (the DATA message
 * then never comes); the broadcast is dropped. */
static void nm_mcast_list_done(struct nm_mcast_fwd_s *f, int status)
{
  int bad = 0;
  if (!status && !f->status) {
    nm_mcast_get_entries((const uint8_t *)f->entries, f->entries, (uint32_t)f->n_entries);
    status = nm_mcast_check_entries(f->svc->core, f->root, f->entries, (uint32_t)f->n_entries);
    bad = status != 0;
    f->entries_ok = !bad;
    if (!bad && f->skip_err)
      status = -(int)f->skip_err; /* a SKIP: lost above us, now known to whom it matters */
  }
  if (status && !f->status)
    f->status = status;
  if (f->status && (f->parts & NM_MCAST_PART_DATA_MSG))
    nm_mcast_unlink_open(f);
  f->parts = (f->parts & ~NM_MCAST_PART_LIST) | NM_MCAST_PART_HOLD;
  if (bad) /* completes the data receive, if posted: its part ends here, f stays held */
    nm_gate_fail(f->from, status);
  nm_mcast_part_over(f, NM_MCAST_PART_HOLD, 0);
}

static void nm_mcast_finalizer(nm_rpc_token_t token, void *ref)
{
  struct nm_mcast_part_s *p = nm_rpc_token_get_ref(token);
  if (!p)
    return;
  struct nm_mcast_fwd_s *f = p->f;
  int status = nm_rpc_token_status(token);
  if (p->bit == NM_MCAST_PART_LIST) {
    nm_mcast_list_done(f, status);
  } else if (p->bit == NM_MCAST_PART_SEGBODY) {
    uint32_t k = ((struct nm_mcast_segpart_s *)p)->k;
    nm_pool_put(&f->svc->seg_pool, p);
    f->seg_pending--;
    if (status && !f->status)
      f->status = status;
    if (!status)
      nm_mcast_seg_arrived(f, k);
    nm_mcast_fwd_step(f);
  } else {
    if (!status && f->nseg)
      nm_mcast_seg_arrived(f, 0);
    nm_mcast_part_over(f, NM_MCAST_PART_DATA, status);
  }
}

/* Header from the network: validate everything before using it (DESIGN.md rule 5). */
static int nm_mcast_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct nm_mcast_service_s *svc = ref;
  const uint8_t *h = header;
  struct nm_mcast_hdr_s x;
  int err = nm_mcast_get_hdr(svc, h, hlen, &x);
  if (err)
    return err;
  nm_len_t body = nm_rpc_get_body_size(token);
  switch (x.kind) {
  case NM_MCAST_INLINE:
    if (hlen != nm_mcast_hdr_len((int)x.n) || !nm_mcast_data_body_ok(&x, body))
      return -NM_EPROTO;
    return nm_mcast_on_inline(svc, token, h, &x);
  case NM_MCAST_LIST:
    if (hlen != NM_MCAST_HDR_FIXED || body != (nm_len_t)x.n * NM_MCAST_ENTRY_LEN)
      return -NM_EPROTO;
    return nm_mcast_on_list(svc, token, h, &x);
  case NM_MCAST_SKIP:
    if (hlen != NM_MCAST_HDR_FIXED || body != (nm_len_t)x.n * NM_MCAST_ENTRY_LEN)
      return -NM_EPROTO;
    return nm_mcast_on_skip(svc, token, h, &x);
  case NM_MCAST_SEG:
    if (hlen != NM_MCAST_HDR_FIXED)
      return -NM_EPROTO;
    return nm_mcast_on_seg(svc, token, h, &x);
  default:
    if (hlen != NM_MCAST_HDR_FIXED || !nm_mcast_data_body_ok(&x, body))
      return -NM_EPROTO;
    return nm_mcast_on_data(svc, token, h, &x);
  }
}

int nm_mcast_init_params(nm_session_t session, const struct nm_mcast_params_s *params, nm_mcast_service_t *out)
{
  const uint64_t known = NM_MCAST_PARAM_MAX_DESTS | NM_MCAST_PARAM_MAX_INLINE | NM_MCAST_PARAM_SEG_SIZE;
  if (!session || !out || (params && (params->field_mask & ~known)))
    return -NM_EINVAL;
  int max_dests = nm_core_get_size(nm_session_get_core(session)) - 1, max_inline = NM_MCAST_INLINE_MAX;
  if (params && (params->field_mask & NM_MCAST_PARAM_MAX_DESTS)) {
    if (params->max_dests < 0)
      return -NM_EINVAL;
    if (params->max_dests < max_dests)
      max_dests = params->max_dests;
  }
  if (params && (params->field_mask & NM_MCAST_PARAM_MAX_INLINE)) {
    if (params->max_inline < 0)
      return -NM_EINVAL;
    if (params->max_inline < max_inline)
      max_inline = params->max_inline;
  }
  struct nm_mcast_service_s *svc = calloc(1, sizeof(*svc));
  if (!svc)
    return -NM_ENOMEM;
  svc->session = session;
  svc->core = nm_session_get_core(session);
  svc->max_dests = max_dests;
  svc->max_inline = max_inline;
  svc->seg_size = params && (params->field_mask & NM_MCAST_PARAM_SEG_SIZE) ? params->seg_size : 0;
  nm_pool_init(&svc->seg_pool, sizeof(struct nm_mcast_segpart_s));
  /* The rpc layer refuses longer headers before the handler runs: an INLINE header of the longest subtree. */
  nm_len_t hlen_max = nm_mcast_hdr_len((int)nm_mcast_max_entries(svc));
  if (hlen_max > NM_RPC_HLEN_MAX)
    hlen_max = NM_RPC_HLEN_MAX;
  int err = nm_rpc_register(session, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, hlen_max, nm_mcast_handler,
                            nm_mcast_finalizer, svc, &svc->rpc);
  if (err) {
    nm_pool_destroy(&svc->seg_pool);
    free(svc);
    return err;
  }
  svc->on_gate_fail = (struct nm_gate_fail_hook_s){.fn = nm_mcast_gate_failed, .ref = svc};
  nm_core_gate_fail_hook_add(svc->core, &svc->on_gate_fail);
  *out = svc;
  return NM_ESUCCESS;
}

int nm_mcast_init(nm_session_t session, nm_mcast_service_t *out)
{
  return nm_mcast_init_params(session, NULL, out);
}

int nm_mcast_finalize(nm_mcast_service_t service)
{
  NM_CORE_LOCKED(service->core);
  nm_mcast_sweep(service);
  if (service->n_active)
    return -NM_EBUSY;
  int err = nm_rpc_unregister(service->rpc);
  if (!err) {
    nm_core_gate_fail_hook_remove(service->core, &service->on_gate_fail);
    nm_mcast_kept_trim(service, UINT64_MAX);
    nm_pool_destroy(&service->seg_pool);
    if (service->topo_owned)
      nm_mcast_topo_destroy(service->topo);
    free(service);
  }
  return err;
}
