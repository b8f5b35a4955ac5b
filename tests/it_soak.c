/* Soak test (issue 14, part 7): many messages of random sizes, tags, priorities and kinds among N >= 2 ranks,
 * every one checked on arrival; counts lost, duplicated, reordered and corrupted messages.
 *
 * The schedule. Every rank builds the same list of messages from the seed (no message tells a rank what to
 * expect): message i has a source, a kind, a tag, a priority, a length (log-uniform in [0, max], so eager,
 * aggregated and rendezvous paths all run), and its receivers:
 *  - sendrecv: one receiver; nm_sr_isend, or nm_sr_issend (synchronous) for --sync percent of them;
 *  - rpc:      one receiver; nm_rpc_isend to a service whose handler checks the header and chooses where the body
 *              lands (a buffer of its own allocation, just the body's size);
 *  - mcast:    a dynamic broadcast (nm_mcast_isend) from the source, the root, to a random non-empty subset of the
 *              other ranks, with a random tree kind and random per-destination priorities; receivers post plain
 *              receives from the root's gate.
 * Every rank walks the list in order: it posts the sends it is the source of (a window of --window outstanding
 * sends; the oldest is waited for when the window is full) and the specific-source receives of the sendrecv and
 * mcast messages it gets (another window of the same size). Because every rank posts in the order of one global
 * list and only waits for its oldest request, the request of smallest index not yet complete is always posted at
 * both ends: the walk cannot deadlock. On one tag in four ("wild" tags) every receive is any-source instead (a
 * buffer of --max bytes), and is posted apart from the walk: LANES_PER_TAG of them stay posted per wild tag,
 * each re-posted from its own monitor (see struct lane for why). rpc messages need no receive; rpc handlers and
 * broadcast forwarding run in progress, whatever the walk waits for.
 *
 * The payload. A point-to-point or broadcast message is a 32-byte header (struct soak_hdr: message id, sequence
 * number, length, tag, source, kind, magic, checksum) followed by its body; one shorter than 32 bytes carries the
 * first bytes of its header only. An rpc message has that header as its rpc header and the body as its body. The
 * checksum is a hash of the body seeded by the header's fields. Bodies are slices of a random pool every rank
 * holds.
 *
 * The order rule checked (nm_sendrecv.h, nm_rpc.h, nm_mcast.h): messages from one source with one tag arrive in
 * the order the source sent them (MPI's non-overtaking order, whatever their priorities), and a broadcast takes
 * the place of a point-to-point message from its root in that order, so sendrecv and mcast messages share one
 * sequence per (source, tag); rpc messages have their own per (source, rpc tag), checked in the order the
 * handlers run (bodies may complete in another order: finalizers are not checked for order). Nothing is
 * promised across tags or sources, and nothing is counted there. The sequence number is per (source, channel,
 * tag) over all receivers (a broadcast carries one number for all), so a receiver expects an increasing, known
 * subsequence: a message that is not the next one it expects on its (source, channel, tag) counts as reordered.
 *
 * Counts: lost (expected, never received: left when the run ends or stalls), duplicated (received twice, or
 * left over unreceived at the end), reordered (above), corrupted (header or checksum wrong, or not one of the
 * messages this rank expects), failed (a request completed with an error). A message shorter than 4 bytes carries
 * no id: it is taken to be the one its receive (or, any-source, its source and tag) expects, and checked by length
 * and bytes.
 *
 * Options: --messages N (10000), --max BYTES (1 MiB), --seed S (default: drawn by rank 0 from the clock and
 * printed), --mix SR,RPC,MCAST (weights, 60,25,15), --tags N (32), --window N (64), --sync PCT (10), --tail PCT
 * (100: percent of messages whose length may exceed 32 KiB, the others stay eager), --stall SEC (120: a hang
 * guard on every wait; no timing is asserted). Prints one line per rank, and at rank 0 a "SOAK PASS|FAIL" line
 * with the totals, messages/s and bytes; exits non-zero on any non-zero count, 3 on a stall. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_rpc.h>
#include <nmad/nm_mcast.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "it_common.h"

#define MAXN 64 /* receivers are a 64-bit mask */
#define NONE UINT32_MAX
#define SOAK_MAGIC 0x4b414f53U /* "SOAK" */
#define GUARD 16
#define GUARD_BYTE 0xA5
#define NS 1000000000ULL

/* Point-to-point tags: bit 62 marks the soak's data (probed for leftovers at the end), the index is spread over
 * the other bits so that 64-bit tags are exercised. rpc tags live on the rpc channel, apart from the broadcast
 * service's NM_MCAST_RPC_TAG. */
#define DATA_BIT (1ULL << 62)
#define CTRL_DONE 0x1001ULL
#define CTRL_STATS 0x1002ULL
#define CTRL_SEED 0x1003ULL
#define RPC_TAG_BASE 0x2f00000000000000ULL
#define RPC_TAG_MASK 0xff00000000000000ULL

enum soak_kind { K_SR, K_RPC, K_MCAST, NKINDS };
enum soak_chan { CH_P2P, CH_RPC }; /* sendrecv and mcast share one order (a broadcast is a message from its root) */
static const char *kind_name[NKINDS] = {"sendrecv", "rpc", "mcast"};

#define MF_SYNC 0x1
#define MF_TREE_SHIFT 1 /* 2 bits: enum nm_mcast_tree_e */

/** One message of the schedule (every rank builds the same array). */
struct msg {
  uint64_t dests; /* bit r: rank r receives it */
  uint32_t len;   /* p2p/mcast: whole message (header included); rpc: body */
  uint32_t seq;   /* per (source, channel, tag), over all receivers */
  uint16_t tag;   /* tag index */
  uint8_t src, kind;
  int8_t prio;
  uint8_t flags;
};

/** The header each payload starts with (little-endian hosts: written as the struct). */
struct soak_hdr {
  uint32_t id, seq, len;
  uint16_t tag;
  uint8_t src, kind;
  uint32_t magic, pad;
  uint64_t csum;
};
#define HDR ((uint32_t)sizeof(struct soak_hdr))

struct opts {
  uint64_t nmsg, seed;
  uint32_t maxlen;
  unsigned mix[NKINDS];
  int ntags, window, sync_pct;
  unsigned tail_pct, stall_s;
};

struct counts {
  uint64_t expected, received, lost, duplicated, reordered, corrupted, failed;
  uint64_t sent, bytes_sent, bytes_received;
};

static int rank, size;
static nm_launcher_t launcher;
static nm_core_t core;
static nm_session_t sess;
static nm_mcast_service_t mcast;
static nm_rpc_service_t rpc;

/* The run's state, in one struct (no other mutable globals than the handles above). */
static struct soak {
  struct opts o;
  struct msg *sched;
  uint32_t *next_same; /* [i]: next message to this rank on the same (source, channel, tag), or NONE */
  uint32_t *expect;    /* [(src * 2 + chan) * ntags + tag]: oldest message not yet received there, or NONE */
  uint8_t *got;        /* [i]: received */
  uint8_t *pool;       /* random bytes: bodies are slices of it */
  size_t pool_len;
  struct lane *lanes;  /* any-source receives, LANES_PER_TAG per wild tag */
  unsigned *lane_head; /* [tag]: oldest posted lane of a wild tag */
  char *lane_busy;     /* [tag]: its lanes are being posted or accounted (see lanes_account()) */
  uint64_t *wild_left; /* [tag]: any-source receives still to post on a wild tag */
  int wild_posted;
  struct counts c;
  uint64_t rpc_expected, rpc_done;
  uint64_t events; /* arrivals and completions: the hang guard's sign of life */
  int notes;       /* error lines printed */
} S;

static uint64_t now_ns(void) { return nm_core_time_ns(core); }

static uint64_t rnd(uint64_t *s)
{
  *s = mix(*s + 0x9e3779b97f4a7c15ULL);
  return *s;
}

static nm_gate_t gate_of(int r)
{
  nm_gate_t g;
  CHECK_RC(nm_launcher_get_gate(launcher, r, &g), "nm_launcher_get_gate");
  return g;
}

static int rank_of(nm_gate_t g)
{
  int r = -1;
  if (!g || nm_launcher_get_rank_of_gate(launcher, g, &r) != 0)
    return -1;
  return r;
}

static nm_tag_t data_tag(unsigned t) { return DATA_BIT | ((mix(t + 1) & ~(3ULL << 62)) & ~0xffffULL) | t; }
static int is_wild(unsigned t) { return t % 4 == 3; }
static uint32_t chan_of(int kind) { return kind == K_RPC ? CH_RPC : CH_P2P; }
static uint32_t *expect_of(int src, int chan, unsigned tag) { return &S.expect[(src * 2 + chan) * S.o.ntags + tag]; }

/* ---- checksums and bodies ---- */

/** Hash of @p n bytes, four independent lanes so it runs at memory speed rather than multiply latency. */
static uint64_t body_hash(uint64_t seed, const uint8_t *p, size_t n)
{
  const uint64_t k = 0x9e3779b97f4a7c15ULL;
  uint64_t h[4] = {seed, seed ^ 1, seed ^ 2, seed ^ 3}, w[4];
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    memcpy(w, p + i, 32);
    for (int j = 0; j < 4; j++)
      h[j] = (h[j] ^ w[j]) * k, h[j] ^= h[j] >> 31;
  }
  uint64_t t = 0, r = n;
  for (; i < n; i++)
    t = (t << 8) | p[i], r = mix(r ^ t);
  return mix(h[0] ^ mix(h[1] ^ mix(h[2] ^ mix(h[3] ^ r))));
}

static uint64_t hdr_seed(const struct soak_hdr *h)
{
  return mix(((uint64_t)h->id << 32 | h->seq) ^ mix((uint64_t)h->len << 32 | (uint64_t)h->tag << 16 |
                                                    (uint64_t)h->src << 8 | h->kind));
}

static uint32_t body_len(uint32_t id)
{
  const struct msg *m = &S.sched[id];
  if (m->kind == K_RPC)
    return m->len;
  return m->len > HDR ? m->len - HDR : 0;
}

static const uint8_t *body_of(uint32_t id)
{
  uint32_t blen = body_len(id);
  return S.pool + mix(id ^ 0xb0d1ULL) % (S.pool_len - blen + 1);
}

/** The header message @p id carries (the receiver rebuilds it to compare). */
static void hdr_make(uint32_t id, struct soak_hdr *h)
{
  const struct msg *m = &S.sched[id];
  memset(h, 0, sizeof(*h));
  *h = (struct soak_hdr){.id = id, .seq = m->seq, .len = m->len, .tag = m->tag, .src = m->src, .kind = m->kind,
                         .magic = SOAK_MAGIC};
  h->csum = body_hash(hdr_seed(h), body_of(id), body_len(id));
}

/* ---- the schedule ---- */

static int floor_log2(uint64_t x)
{
  int l = -1;
  for (; x; x >>= 1)
    l++;
  return l;
}

/** Log-uniform in [0, max] by doublings: b uniform in [0, log2(max)], then uniform in [2^(b-1), 2^b) (the last
 *  doubling reaches max itself). Each doubling gets as many messages, so most messages are small and most bytes
 *  are in the tail. With --tail below 100, the other messages stay under 32 KiB (eager). */
static uint32_t rand_len(uint64_t *s)
{
  if (S.o.maxlen == 0)
    return 0;
  int last = floor_log2(S.o.maxlen), top = last;
  if (rnd(s) % 100 >= S.o.tail_pct && top > 15)
    top = 15;
  int b = (int)(rnd(s) % (uint64_t)(top + 1));
  if (b == 0)
    return 0;
  uint64_t lo = 1ULL << (b - 1), span = b == last ? S.o.maxlen - lo + 1 : lo;
  return (uint32_t)(lo + rnd(s) % span);
}

static int rand_kind(uint64_t *s)
{
  unsigned total = S.o.mix[0] + S.o.mix[1] + S.o.mix[2];
  unsigned r = (unsigned)(rnd(s) % total);
  for (int k = 0; k < NKINDS - 1; k++) {
    if (r < S.o.mix[k])
      return k;
    r -= S.o.mix[k];
  }
  return NKINDS - 1;
}

/** Receivers: one other rank, or for a broadcast a random non-empty subset of the other ranks. */
static uint64_t rand_dests(uint64_t *s, int src, int kind)
{
  uint64_t all = (size == 64 ? ~0ULL : (1ULL << size) - 1) & ~(1ULL << src);
  if (kind != K_MCAST)
    return 1ULL << ((src + 1 + (int)(rnd(s) % (uint64_t)(size - 1))) % size);
  uint64_t d;
  do
    d = rnd(s) & all;
  while (!d);
  return d;
}

static void make_msg(struct msg *m, uint64_t *s, uint32_t *seqs)
{
  m->src = (uint8_t)(rnd(s) % (uint64_t)size);
  m->kind = (uint8_t)rand_kind(s);
  m->tag = (uint16_t)(rnd(s) % (uint64_t)S.o.ntags);
  m->len = rand_len(s);
  m->prio = (int8_t)((int)(rnd(s) % 13) - 3); /* negative, zero, and many equal values */
  m->flags = 0;
  if (m->kind == K_SR && rnd(s) % 100 < (uint64_t)S.o.sync_pct)
    m->flags |= MF_SYNC;
  if (m->kind == K_MCAST)
    m->flags |= (uint8_t)((rnd(s) % 4) << MF_TREE_SHIFT);
  m->dests = rand_dests(s, m->src, m->kind);
  m->seq = seqs[(m->src * 2 + chan_of(m->kind)) * S.o.ntags + m->tag]++;
}

static int expects(const struct msg *m) { return (m->dests >> rank) & 1; }

/** Build the schedule, then this rank's view of it: per (source, channel, tag), the chain of messages it gets,
 *  in send order (next_same), headed by expect[]. */
static void schedule_build(void)
{
  size_t nch = (size_t)size * 2 * (size_t)S.o.ntags;
  uint32_t *seqs = calloc(nch, sizeof(*seqs));
  S.sched = calloc(S.o.nmsg, sizeof(*S.sched));
  S.next_same = malloc(S.o.nmsg * sizeof(*S.next_same));
  S.expect = malloc(nch * sizeof(*S.expect));
  S.got = calloc(S.o.nmsg, 1);
  CHECK(seqs && S.sched && S.next_same && S.expect && S.got, "out of memory for %llu messages",
        (unsigned long long)S.o.nmsg);
  uint64_t s = mix(S.o.seed);
  for (uint64_t i = 0; i < S.o.nmsg; i++)
    make_msg(&S.sched[i], &s, seqs);
  for (size_t c = 0; c < nch; c++)
    S.expect[c] = NONE;
  for (uint64_t i = S.o.nmsg; i-- > 0;) {
    const struct msg *m = &S.sched[i];
    S.next_same[i] = NONE;
    if (!expects(m))
      continue;
    uint32_t *e = expect_of(m->src, chan_of(m->kind), m->tag);
    S.next_same[i] = *e;
    *e = (uint32_t)i;
    S.c.expected++;
    if (m->kind == K_RPC)
      S.rpc_expected++;
    else if (is_wild(m->tag))
      S.wild_left[m->tag]++;
  }
  free(seqs);
}

static void pool_build(void)
{
  S.pool_len = 2 * (size_t)S.o.maxlen + 64;
  S.pool = malloc(S.pool_len);
  CHECK(S.pool, "out of memory");
  fill(S.pool, S.pool_len, S.o.seed ^ 0x9001);
}

/* ---- arrivals ---- */

static void note(const char *what, uint32_t id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Count the arrival at this rank of message @p id (identified and its header checked): duplicated, in order, or
 *  reordered on its (source, channel, tag). */
static void arrival(uint32_t id)
{
  const struct msg *m = &S.sched[id];
  S.events++;
  if (S.got[id]) {
    S.c.duplicated++;
    note("duplicated", id, "received a second time");
    return;
  }
  S.got[id] = 1;
  S.c.received++;
  S.c.bytes_received += m->len + (m->kind == K_RPC ? HDR : 0);
  uint32_t *e = expect_of(m->src, chan_of(m->kind), m->tag);
  if (*e != id) {
    S.c.reordered++;
    note("reordered", id, "arrived while message %u (seq %u) was the next expected on its (source, tag)", *e,
         *e == NONE ? 0 : S.sched[*e].seq);
    return;
  }
  while (*e != NONE && S.got[*e])
    *e = S.next_same[*e];
}

/** The header fields of message @p id, checksum left 0 (receivers compare the other fields first). */
static void hdr_fields(uint32_t id, struct soak_hdr *h)
{
  const struct msg *m = &S.sched[id];
  memset(h, 0, sizeof(*h));
  h->id = id;
  h->seq = m->seq;
  h->len = m->len;
  h->tag = m->tag;
  h->src = m->src;
  h->kind = m->kind;
  h->magic = SOAK_MAGIC;
}

/** Whether the @p len bytes received for message @p id are its header and body: header fields, then the
 *  checksum over the body as received (a short message is the prefix of its header). */
static int payload_intact(uint32_t id, const uint8_t *buf, uint32_t len)
{
  struct soak_hdr h;
  hdr_fields(id, &h);
  if (len < HDR) {
    h.csum = body_hash(hdr_seed(&h), NULL, 0);
    return memcmp(buf, &h, len) == 0;
  }
  struct soak_hdr got;
  memcpy(&got, buf, HDR);
  if (memcmp(&got, &h, offsetof(struct soak_hdr, csum)) != 0)
    return 0;
  return got.csum == body_hash(hdr_seed(&h), buf + HDR, len - HDR);
}

/** Which message a completed point-to-point receive holds, or NONE if none this rank expects from @p src on
 *  @p tag with that length. Shorter than 4 bytes, it has no id: it is the one the receive was posted for, or
 *  (any-source) the next expected from its source on its tag. */
static uint32_t p2p_identify(const uint8_t *buf, uint32_t len, uint32_t posted_for, int src, unsigned tag)
{
  uint32_t id = posted_for;
  if (len >= 4)
    memcpy(&id, buf, 4);
  else if (posted_for == NONE && src >= 0)
    id = *expect_of(src, CH_P2P, tag);
  if (id == NONE || id >= S.o.nmsg)
    return NONE;
  const struct msg *m = &S.sched[id];
  if (m->kind == K_RPC || m->src != src || m->tag != tag || m->len != len || !expects(m))
    return NONE;
  return id;
}

/** Tag index of a soak data tag, or -1. */
static int tag_index(nm_tag_t t)
{
  unsigned i = (unsigned)(t & 0xffff);
  return (i < (unsigned)S.o.ntags && data_tag(i) == t) ? (int)i : -1;
}

/** A message that names one already received from its source on its tag (whatever its length: it may have taken,
 *  truncated, the receive of another) is a duplicate. */
static int seen_before(const uint8_t *buf, nm_len_t n, int src, int tag)
{
  uint32_t id;
  if (n < 4 || tag < 0)
    return 0;
  memcpy(&id, buf, 4);
  if (id >= S.o.nmsg || !S.got[id] || S.sched[id].src != src || S.sched[id].tag != tag)
    return 0;
  S.c.duplicated++;
  S.events++;
  note("duplicated", id, "received a second time (%llu B)", (unsigned long long)n);
  return 1;
}

/** Account a completed point-to-point receive (@p rc its status; @p posted_for NONE for any-source). */
static void p2p_received(nm_sr_request_t *req, int rc, const uint8_t *buf, nm_len_t posted_len,
                         uint32_t posted_for)
{
  if (rc != 0 && rc != -NM_ETRUNCATED) {
    S.c.failed++;
    note("failed", posted_for, "receive completed with %d (%s)", rc, nm_strerror(rc));
    return;
  }
  nm_gate_t g = NULL;
  nm_tag_t t = 0;
  nm_len_t n = 0;
  nm_sr_recv_source(sess, req, &g);
  nm_sr_recv_get_tag(sess, req, &t);
  nm_sr_get_size(sess, req, &n);
  int src = rank_of(g), tag = tag_index(t);
  if (seen_before(buf, n, src, tag))
    return;
  uint32_t id = tag < 0 ? NONE : p2p_identify(buf, (uint32_t)n, posted_for, src, (unsigned)tag);
  for (int i = 0; i < GUARD; i++)
    if (buf[posted_len + i] != GUARD_BYTE)
      rc = -NM_ETRUNCATED; /* written past the buffer: as bad as a truncation */
  if (id == NONE || rc != 0 || !payload_intact(id, buf, (uint32_t)n)) {
    S.c.corrupted++;
    note("corrupted", id == NONE ? posted_for : id, "%llu B from rank %d, tag %#llx, status %d: not the message "
         "expected, or its bytes differ", (unsigned long long)n, src, (unsigned long long)t, rc);
    if (id == NONE)
      return;
  }
  arrival(id);
}

static void note(const char *what, uint32_t id, const char *fmt, ...)
{
  if (++S.notes > 20)
    return; /* the counts say the rest */
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "soak rank %d: %s: ", rank, what);
  if (id != NONE && id < S.o.nmsg) {
    const struct msg *m = &S.sched[id];
    fprintf(stderr, "message %u (%s from %d, tag %u, seq %u, %u B, prio %d): ", id, kind_name[m->kind], m->src,
            m->tag, m->seq, m->len, m->prio);
  }
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

/* ---- any-source receives ---- */

static void lane_done(nm_sr_request_t *req, unsigned event, void *ref);

/* On a wild tag every receive is any-source, and is re-posted from the monitor: receives are then always posted
 * there while messages remain, whatever the walk waits for. (Posting them from the walk would deadlock: a message
 * far ahead in the list takes the receive meant for an earlier one, whose rendezvous sender then waits for a
 * receive the walk posts only after its own oldest request, which may depend on that very sender.)
 * Receives match in the order they were posted, but complete in any order (a rendezvous one after a later eager
 * one): the lanes of a tag form a ring and are accounted in posting order, oldest first. */
#define LANES_PER_TAG 4

struct lane {
  nm_sr_request_t req;
  uint8_t *buf; /* --max bytes + GUARD */
  unsigned tag;
  int posted, done;
};

static void lane_post(struct lane *l)
{
  memset(l->buf + S.o.maxlen, GUARD_BYTE, GUARD);
  l->done = 0;
  nm_sr_recv_init(sess, &l->req);
  CHECK_RC(nm_sr_request_set_monitor(sess, &l->req, NM_EVENT_RECV_COMPLETED, lane_done, l), "set_monitor");
  CHECK_RC(nm_sr_recv_irecv(sess, &l->req, NM_ANY_GATE, data_tag(l->tag), NM_TAG_MASK_FULL, l->buf, S.o.maxlen),
           "nm_sr_recv_irecv (any source)");
  l->posted = 1;
  S.wild_posted++;
  S.wild_left[l->tag]--;
}

/** Account the completed lanes of @p tag from the oldest, re-posting each as the newest.
 *  A receive may complete inside the post of another: matching a stored rendezvous or synchronous message queues
 *  an RTR or ACK, and the driver may read incoming packets while it sends them. A lane accounted and re-posted
 *  from there would be posted before the lane whose post is under way, and the ring would no longer be in posting
 *  order (lanes_start() posting a tag's first lanes did exactly that: messages counted out of order). So while a
 *  tag's lanes are posted or accounted, a completion only marks its lane done; the outer call accounts it. */
static void lanes_account(unsigned tag)
{
  struct lane *ring = &S.lanes[tag * LANES_PER_TAG];
  unsigned *head = &S.lane_head[tag];
  if (S.lane_busy[tag])
    return;
  S.lane_busy[tag] = 1;
  for (struct lane *o = &ring[*head]; o->posted && o->done; o = &ring[*head]) {
    o->posted = 0;
    S.wild_posted--;
    p2p_received(&o->req, o->req.status, o->buf, S.o.maxlen, NONE);
    if (S.wild_left[tag] > 0)
      lane_post(o); /* the newest now: the ring keeps posting order */
    *head = (*head + 1) % LANES_PER_TAG;
  }
  S.lane_busy[tag] = 0;
}

/** Monitor of an any-source receive. */
static void lane_done(nm_sr_request_t *req, unsigned event, void *ref)
{
  struct lane *l = ref;
  (void)req;
  (void)event;
  l->done = 1;
  lanes_account(l->tag);
}

static void lanes_start(void)
{
  S.lanes = calloc((size_t)S.o.ntags * LANES_PER_TAG, sizeof(*S.lanes));
  S.lane_head = calloc((size_t)S.o.ntags, sizeof(*S.lane_head));
  S.lane_busy = calloc((size_t)S.o.ntags, 1);
  CHECK(S.lanes && S.lane_head && S.lane_busy, "out of memory");
  for (int t = 0; t < S.o.ntags; t++) {
    S.lane_busy[t] = 1;
    for (int k = 0; k < LANES_PER_TAG && S.wild_left[t] > 0; k++) {
      struct lane *l = &S.lanes[t * LANES_PER_TAG + k];
      l->tag = (unsigned)t;
      l->buf = malloc((size_t)S.o.maxlen + GUARD);
      CHECK(l->buf, "out of memory");
      lane_post(l);
    }
    S.lane_busy[t] = 0;
    lanes_account((unsigned)t); /* those that completed while the others were posted */
  }
}

/* ---- waits (the hang guard) ---- */

static void report_and_exit(const char *why, int code);

static void stall(const char *what, uint32_t id)
{
  note("STALL", id, "%s not complete after %u s", what, S.o.stall_s);
  S.notes = 0;
  report_and_exit("stalled", 3);
}

/** Wait for a send or receive, at most --stall seconds. @return its status. */
static int req_wait(nm_sr_request_t *req, const char *what, uint32_t id)
{
  int rc = nm_sr_wait_deadline(sess, req, now_ns() + (uint64_t)S.o.stall_s * NS);
  if (rc == -NM_ETIMEDOUT && !req->completed)
    stall(what, id);
  return rc;
}

/** Progress until @p done() holds; a stall is --stall seconds without any arrival or completion. */
static void wait_until(int (*done)(void), const char *what)
{
  uint64_t seen = S.events, deadline = now_ns() + (uint64_t)S.o.stall_s * NS;
  while (!done()) {
    nm_core_wait(core, deadline);
    if (S.events != seen) {
      seen = S.events;
      deadline = now_ns() + (uint64_t)S.o.stall_s * NS;
    } else if (now_ns() >= deadline) {
      stall(what, NONE);
    }
  }
}

/* ---- sends ---- */

struct sslot {
  nm_sr_request_t req;
  nm_mcast_req_t mreq;
  struct soak_hdr hdr; /* rpc header */
  uint8_t *buf;        /* point-to-point and broadcast payload, --max bytes */
  int dests[MAXN], prios[MAXN];
  uint32_t id;
  int busy;
};

/** Header then body, or the first bytes of the header for a message shorter than it. */
static void payload_make(uint8_t *buf, uint32_t id)
{
  struct soak_hdr h;
  hdr_make(id, &h);
  uint32_t len = S.sched[id].len;
  memcpy(buf, &h, len < HDR ? len : HDR);
  if (len > HDR)
    memcpy(buf + HDR, body_of(id), len - HDR);
}

/** Destinations in a random order, each with a random priority (derived from the id: no need to store them). */
static int mcast_dests(uint32_t id, int *dests, int *prios)
{
  uint64_t s = mix((uint64_t)id * 7919 + 17);
  int n = 0;
  for (int r = 0; r < size; r++)
    if ((S.sched[id].dests >> r) & 1)
      dests[n++] = r;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(rnd(&s) % (uint64_t)(i + 1)), t = dests[i];
    dests[i] = dests[j];
    dests[j] = t;
  }
  for (int i = 0; i < n; i++)
    prios[i] = (int)(rnd(&s) % 13) - 3;
  return n;
}

static void mcast_post(struct sslot *sl)
{
  const struct msg *m = &S.sched[sl->id];
  int n = mcast_dests(sl->id, sl->dests, sl->prios);
  payload_make(sl->buf, sl->id);
  memset(&sl->mreq, 0, sizeof(sl->mreq));
  int rc = nm_mcast_isend(mcast, sl->dests, sl->prios, n, data_tag(m->tag), sl->buf, m->len,
                          (enum nm_mcast_tree_e)(m->flags >> MF_TREE_SHIFT), &sl->mreq);
  CHECK(rc == 0, "nm_mcast_isend (message %u, %d dests, %u B): %d (%s)", sl->id, n, m->len, rc, nm_strerror(rc));
}

static void send_post(struct sslot *sl, uint32_t id)
{
  const struct msg *m = &S.sched[id];
  sl->id = id;
  sl->busy = 1;
  if (m->kind == K_MCAST) {
    mcast_post(sl);
    return;
  }
  nm_gate_t gate = gate_of(__builtin_ctzll(m->dests));
  nm_sr_send_init(sess, &sl->req);
  CHECK_RC(nm_sr_send_set_priority(sess, &sl->req, m->prio), "nm_sr_send_set_priority");
  int rc;
  if (m->kind == K_RPC) {
    hdr_make(id, &sl->hdr);
    rc = nm_rpc_isend(sess, gate, RPC_TAG_BASE | m->tag, &sl->hdr, HDR, body_of(id), m->len, &sl->req);
  } else {
    payload_make(sl->buf, id);
    if (m->flags & MF_SYNC)
      rc = nm_sr_send_issend(sess, &sl->req, gate, data_tag(m->tag), sl->buf, m->len);
    else
      rc = nm_sr_send_isend(sess, &sl->req, gate, data_tag(m->tag), sl->buf, m->len);
  }
  CHECK(rc == 0, "send of message %u (%s, %u B): %d (%s)", id, kind_name[m->kind], m->len, rc, nm_strerror(rc));
}

static void send_complete(struct sslot *sl)
{
  const struct msg *m = &S.sched[sl->id];
  int rc;
  if (m->kind == K_MCAST) {
    if (nm_core_wait_flag(core, &sl->mreq.completed, now_ns() + (uint64_t)S.o.stall_s * NS) != 0)
      stall("broadcast at its root", sl->id);
    rc = nm_mcast_wait(mcast, &sl->mreq);
  } else {
    rc = req_wait(&sl->req, "send", sl->id);
  }
  if (rc != 0) {
    S.c.failed++;
    note("failed", sl->id, "send completed with %d (%s)", rc, nm_strerror(rc));
  }
  S.c.sent++;
  S.c.bytes_sent += m->len + (m->kind == K_RPC ? HDR : 0);
  S.events++;
  sl->busy = 0;
}

/* ---- specific-source receives ---- */

struct rslot {
  nm_sr_request_t req;
  uint8_t *buf; /* --max bytes + GUARD */
  uint32_t id;
  int busy;
};

static void recv_post(struct rslot *r, uint32_t id)
{
  const struct msg *m = &S.sched[id];
  r->id = id;
  r->busy = 1;
  memset(r->buf + m->len, GUARD_BYTE, GUARD);
  CHECK_RC(nm_sr_irecv(sess, gate_of(m->src), data_tag(m->tag), r->buf, m->len, &r->req), "nm_sr_irecv");
}

static void recv_complete(struct rslot *r)
{
  int rc = req_wait(&r->req, "receive", r->id);
  r->busy = 0;
  p2p_received(&r->req, rc, r->buf, S.sched[r->id].len, r->id);
}

/* ---- rpc ---- */

/** What the handler keeps for the finalizer: the header, then the body where the handler chose to land it. */
struct rpc_rx {
  struct soak_hdr h;
  uint8_t body[];
};

/** The message an rpc header announces, or NONE if it is not one this rank expects as it came. */
static uint32_t rpc_identify(nm_rpc_token_t tok, const void *header, nm_len_t hlen, struct soak_hdr *h)
{
  if (hlen != HDR)
    return NONE;
  memcpy(h, header, HDR);
  if (h->id >= S.o.nmsg)
    return NONE;
  const struct msg *m = &S.sched[h->id];
  struct soak_hdr want;
  hdr_fields(h->id, &want);
  if (m->kind != K_RPC || !expects(m) || memcmp(h, &want, offsetof(struct soak_hdr, csum)) != 0 ||
      rank_of(nm_rpc_get_source(tok)) != m->src || nm_rpc_get_tag(tok) != (RPC_TAG_BASE | m->tag) ||
      nm_rpc_get_body_size(tok) != m->len)
    return NONE;
  return h->id;
}

/* Handlers run in the order messages arrive: the order check is here, the body check in the finalizer. */
static int rpc_handler(nm_rpc_token_t tok, const void *header, nm_len_t hlen, void *ref)
{
  struct soak_hdr h;
  (void)ref;
  uint32_t id = rpc_identify(tok, header, hlen, &h);
  if (id == NONE) {
    S.c.corrupted++;
    note("corrupted", NONE, "rpc header of %llu B that is no message expected here", (unsigned long long)hlen);
    return 0; /* the body is discarded; the finalizer sees no ref */
  }
  arrival(id);
  struct rpc_rx *rx = malloc(sizeof(*rx) + h.len);
  CHECK(rx, "out of memory");
  rx->h = h;
  if (h.len)
    CHECK_RC(nm_rpc_irecv_body(tok, rx->body, h.len), "nm_rpc_irecv_body");
  nm_rpc_token_set_ref(tok, rx);
  return 0;
}

static void rpc_finalizer(nm_rpc_token_t tok, void *ref)
{
  struct rpc_rx *rx = nm_rpc_token_get_ref(tok);
  int st = nm_rpc_token_status(tok);
  (void)ref;
  S.rpc_done++;
  S.events++;
  if (!rx)
    return;
  if (st != 0) {
    S.c.failed++;
    note("failed", rx->h.id, "rpc body completed with %d (%s)", st, nm_strerror(st));
  } else if (body_hash(hdr_seed(&rx->h), rx->body, rx->h.len) != rx->h.csum) {
    S.c.corrupted++;
    note("corrupted", rx->h.id, "rpc body checksum differs");
  }
  free(rx);
}

/* ---- the walk ---- */

struct window {
  struct sslot *send;
  struct rslot *recv;
  int n;
  uint64_t nsend, nrecv; /* posted so far: slot = count % n, the oldest is reused */
};

static void window_alloc(struct window *w)
{
  w->n = S.o.window;
  w->send = calloc((size_t)w->n, sizeof(*w->send));
  w->recv = calloc((size_t)w->n, sizeof(*w->recv));
  CHECK(w->send && w->recv, "out of memory");
  for (int i = 0; i < w->n; i++) {
    w->send[i].buf = malloc((size_t)S.o.maxlen + 1);
    w->recv[i].buf = malloc((size_t)S.o.maxlen + GUARD);
    CHECK(w->send[i].buf && w->recv[i].buf, "out of memory for the window");
  }
}

/** A long run says how far rank 0 got, every tenth of the schedule (a stalled run then shows where). */
static void walk_progress(uint64_t i, uint64_t t0)
{
  uint64_t tenth = S.o.nmsg / 10;
  if (rank != 0 || S.o.nmsg < 100000 || i == 0 || i % tenth != 0)
    return;
  printf("soak: rank 0 walked %llu of %llu messages, %.1f s\n", (unsigned long long)i,
         (unsigned long long)S.o.nmsg, (double)(now_ns() - t0) / 1e9);
  fflush(stdout);
}

/** Post this rank's part of the schedule in order, waiting only for the oldest request of a full window. */
static void walk(struct window *w)
{
  uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < S.o.nmsg; i++) {
    const struct msg *m = &S.sched[i];
    walk_progress(i, t0);
    if (m->src == rank) {
      struct sslot *sl = &w->send[w->nsend++ % (uint64_t)w->n];
      if (sl->busy)
        send_complete(sl);
      send_post(sl, (uint32_t)i);
    }
    if (expects(m) && m->kind != K_RPC && !is_wild(m->tag)) {
      struct rslot *r = &w->recv[w->nrecv++ % (uint64_t)w->n];
      if (r->busy)
        recv_complete(r);
      recv_post(r, (uint32_t)i);
    }
  }
}

static int rpcs_and_lanes_done(void) { return S.rpc_done >= S.rpc_expected && S.wild_posted == 0; }

static void drain(struct window *w)
{
  for (int i = 0; i < w->n; i++) { /* oldest first: receives are accounted in the order they were posted */
    struct sslot *sl = &w->send[(w->nsend + (uint64_t)i) % (uint64_t)w->n];
    struct rslot *r = &w->recv[(w->nrecv + (uint64_t)i) % (uint64_t)w->n];
    if (sl->busy)
      send_complete(sl);
    if (r->busy)
      recv_complete(r);
  }
  wait_until(rpcs_and_lanes_done, "rpc messages and any-source receives");
}

/* ---- the end: every rank done, leftovers, totals ---- */

/** Send @p len bytes to every other rank and receive as much from each into @p in (size x len), on @p tag,
 *  progressing meanwhile (forwarding and acknowledgements this rank still owes go out). */
static void exchange(nm_tag_t tag, const void *out, void *in, size_t len)
{
  nm_sr_request_t *sreq = calloc((size_t)size, sizeof(*sreq)), *rreq = calloc((size_t)size, sizeof(*rreq));
  CHECK(sreq && rreq, "out of memory");
  for (int r = 0; r < size; r++)
    if (r != rank) {
      CHECK_RC(nm_sr_irecv(sess, gate_of(r), tag, (uint8_t *)in + (size_t)r * len, len, &rreq[r]), "irecv");
      CHECK_RC(nm_sr_isend(sess, gate_of(r), tag, out, len, &sreq[r]), "isend");
    }
  for (int r = 0; r < size; r++)
    if (r != rank) {
      CHECK_RC(req_wait(&rreq[r], "end-of-run exchange (receive)", NONE), "end-of-run exchange");
      CHECK_RC(req_wait(&sreq[r], "end-of-run exchange (send)", NONE), "end-of-run exchange");
    }
  free(sreq);
  free(rreq);
}

/** Messages still unexpected on soak tags once everybody is done were delivered twice (or invented). */
static void leftovers(void)
{
  uint64_t end = now_ns() + 100000000ULL; /* 100 ms for late arrivals */
  while (now_ns() < end)
    nm_core_wait(core, end);
  uint8_t *scratch = malloc((size_t)S.o.maxlen + 1);
  nm_gate_t g;
  nm_tag_t t;
  nm_len_t len;
  while (nm_sr_iprobe(sess, NM_ANY_GATE, DATA_BIT, DATA_BIT, &g, &t, &len) == 0) {
    nm_sr_request_t req;
    CHECK_RC(nm_sr_irecv(sess, g, t, scratch, S.o.maxlen + 1, &req), "irecv");
    req_wait(&req, "leftover message", NONE);
    S.c.duplicated++;
    note("duplicated", len >= 4 ? *(uint32_t *)scratch : NONE, "left over (%llu B from rank %d, tag %#llx)",
         (unsigned long long)len, rank_of(g), (unsigned long long)t);
  }
  free(scratch);
}

static void counts_add(struct counts *sum, const struct counts *c)
{
  const uint64_t *a = (const uint64_t *)c;
  uint64_t *s = (uint64_t *)sum;
  for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
    s[i] += a[i];
}

static int counts_bad(const struct counts *c)
{
  return c->lost || c->duplicated || c->reordered || c->corrupted || c->failed;
}

static void counts_print(const char *who, const struct counts *c)
{
  printf("%s: expected %llu received %llu lost %llu duplicated %llu reordered %llu corrupted %llu failed %llu; "
         "sent %llu (%llu B)\n",
         who, (unsigned long long)c->expected, (unsigned long long)c->received, (unsigned long long)c->lost,
         (unsigned long long)c->duplicated, (unsigned long long)c->reordered, (unsigned long long)c->corrupted,
         (unsigned long long)c->failed, (unsigned long long)c->sent, (unsigned long long)c->bytes_sent);
  fflush(stdout);
}

/** A rank that stalls says what it has, alone (its peers may be stalled too, or gone). */
static void report_and_exit(const char *why, int code)
{
  char who[64];
  S.c.lost = S.c.expected - S.c.received;
  snprintf(who, sizeof(who), "soak rank %d %s", rank, why);
  counts_print(who, &S.c);
  fprintf(stderr, "soak rank %d: %s (seed %llu to replay; rpc %llu/%llu handled, %d any-source receives "
          "posted)\n", rank, why, (unsigned long long)S.o.seed, (unsigned long long)S.rpc_done,
          (unsigned long long)S.rpc_expected, S.wild_posted);
  exit(code);
}

static void report_totals(const struct counts *all, double secs)
{
  struct counts t = {0};
  uint64_t per_kind[NKINDS] = {0};
  for (int r = 0; r < size; r++)
    counts_add(&t, &all[r]);
  for (uint64_t i = 0; i < S.o.nmsg; i++)
    per_kind[S.sched[i].kind]++;
  const char *drv = getenv("NMAD_DRIVER");
  printf("SOAK %s: ranks %d driver %s seed %llu messages %llu (sendrecv %llu rpc %llu mcast %llu) max %u B: "
         "deliveries %llu lost %llu duplicated %llu reordered %llu corrupted %llu failed %llu; %.1f s, %.0f msg/s, "
         "%llu B sent (%.1f MB/s), %llu B delivered\n",
         counts_bad(&t) ? "FAIL" : "PASS", size, drv ? drv : "default", (unsigned long long)S.o.seed,
         (unsigned long long)S.o.nmsg, (unsigned long long)per_kind[K_SR], (unsigned long long)per_kind[K_RPC],
         (unsigned long long)per_kind[K_MCAST], S.o.maxlen, (unsigned long long)t.received,
         (unsigned long long)t.lost, (unsigned long long)t.duplicated, (unsigned long long)t.reordered,
         (unsigned long long)t.corrupted, (unsigned long long)t.failed, secs, (double)S.o.nmsg / secs,
         (unsigned long long)t.bytes_sent, (double)t.bytes_sent / secs / 1e6, (unsigned long long)t.bytes_received);
  fflush(stdout);
}

/** Every rank done, then leftovers counted, then the counts gathered everywhere. @return 1 if any is bad. */
static int finish(uint64_t t0)
{
  uint8_t token = 1, *tokens = calloc((size_t)size, 1);
  exchange(CTRL_DONE, &token, tokens, 1);
  double secs = (double)(now_ns() - t0) / 1e9;
  leftovers();
  S.c.lost = S.c.expected - S.c.received;
  char who[32];
  snprintf(who, sizeof(who), "soak rank %d", rank);
  counts_print(who, &S.c);
  struct counts *all = calloc((size_t)size, sizeof(*all));
  CHECK(tokens && all, "out of memory");
  all[rank] = S.c;
  exchange(CTRL_STATS, &S.c, all, sizeof(S.c));
  all[rank] = S.c;
  if (rank == 0)
    report_totals(all, secs);
  struct counts t = {0};
  for (int r = 0; r < size; r++)
    counts_add(&t, &all[r]);
  free(all);
  free(tokens);
  return counts_bad(&t);
}

/** Free what the run allocated (so that a sanitizer build reports the library's leaks only). */
static void soak_free(struct window *w)
{
  for (int i = 0; i < w->n; i++) {
    free(w->send[i].buf);
    free(w->recv[i].buf);
  }
  free(w->send);
  free(w->recv);
  for (int i = 0; S.lanes && i < S.o.ntags * LANES_PER_TAG; i++)
    free(S.lanes[i].buf);
  free(S.lanes);
  free(S.lane_head);
  free(S.lane_busy);
  free(S.wild_left);
  free(S.sched);
  free(S.next_same);
  free(S.expect);
  free(S.got);
  free(S.pool);
}

/* ---- options ---- */

static void usage(const char *prog)
{
  fprintf(stderr, "usage: %s [--messages N] [--max BYTES] [--seed S] [--mix SR,RPC,MCAST] [--tags N] "
          "[--window N] [--sync PCT] [--tail PCT] [--stall SEC]\n", prog);
  exit(2);
}

static void opts_parse(int argc, char **argv, struct opts *o, int *seed_given)
{
  *o = (struct opts){.nmsg = 10000, .maxlen = 1 << 20, .mix = {60, 25, 15}, .ntags = 32, .window = 64,
                     .sync_pct = 10, .tail_pct = 100, .stall_s = 120};
  *seed_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v)
      usage(argv[0]);
    i++;
    if (!strcmp(a, "--messages"))
      o->nmsg = strtoull(v, NULL, 0);
    else if (!strcmp(a, "--max"))
      o->maxlen = (uint32_t)strtoul(v, NULL, 0);
    else if (!strcmp(a, "--seed"))
      o->seed = strtoull(v, NULL, 0), *seed_given = 1;
    else if (!strcmp(a, "--mix"))
      CHECK(sscanf(v, "%u,%u,%u", &o->mix[0], &o->mix[1], &o->mix[2]) == 3, "--mix wants SR,RPC,MCAST");
    else if (!strcmp(a, "--tags"))
      o->ntags = atoi(v);
    else if (!strcmp(a, "--window"))
      o->window = atoi(v);
    else if (!strcmp(a, "--sync"))
      o->sync_pct = atoi(v);
    else if (!strcmp(a, "--tail"))
      o->tail_pct = (unsigned)atoi(v);
    else if (!strcmp(a, "--stall"))
      o->stall_s = (unsigned)atoi(v);
    else
      usage(argv[0]);
  }
  CHECK(o->nmsg > 0 && o->nmsg < NONE, "--messages in [1, 2^32-1)");
  CHECK(o->maxlen <= (1U << 30), "--max at most 1 GiB");
  CHECK(o->mix[0] + o->mix[1] + o->mix[2] > 0, "--mix: some weight must be non-zero");
  CHECK(o->ntags >= 1 && o->ntags <= 65536 && o->window >= 1 && o->stall_s >= 1, "bad --tags, --window or --stall");
}

/** Without --seed, rank 0 draws one from the clock and sends it to the others: the only message outside the
 *  schedule, so that a run is replayable from the seed it prints. */
static uint64_t seed_agree(uint64_t seed, int given)
{
  if (given)
    return seed;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  seed = mix((uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec) % 1000000007ULL;
  uint64_t *all = calloc((size_t)size, sizeof(*all));
  CHECK(all, "out of memory");
  exchange(CTRL_SEED, &seed, all, sizeof(seed));
  if (rank != 0)
    seed = all[0];
  free(all);
  return seed;
}

int main(int argc, char **argv)
{
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  CHECK(size >= 2 && size <= MAXN, "run with 2..%d ranks", MAXN);
  core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_session_open(core, "it_soak", &sess), "nm_session_open");
  CHECK_RC(nm_mcast_init(sess, &mcast), "nm_mcast_init");
  CHECK_RC(nm_rpc_register(sess, RPC_TAG_BASE, RPC_TAG_MASK, HDR, rpc_handler, rpc_finalizer, NULL, &rpc),
           "nm_rpc_register");
  int seed_given;
  opts_parse(argc, argv, &S.o, &seed_given);
  S.o.seed = seed_agree(S.o.seed, seed_given);
  if (rank == 0) {
    printf("soak: %d ranks, seed %llu, %llu messages, max %u B, mix %u,%u,%u, %d tags, window %d\n", size,
           (unsigned long long)S.o.seed, (unsigned long long)S.o.nmsg, S.o.maxlen, S.o.mix[0], S.o.mix[1],
           S.o.mix[2], S.o.ntags, S.o.window);
    fflush(stdout);
  }
  S.wild_left = calloc((size_t)S.o.ntags, sizeof(*S.wild_left));
  CHECK(S.wild_left, "out of memory");
  schedule_build();
  pool_build();
  struct window w = {0};
  window_alloc(&w);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  uint64_t t0 = now_ns();
  lanes_start();
  walk(&w);
  drain(&w);
  int bad = finish(t0);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  soak_free(&w);
  nm_rpc_unregister(rpc);
  nm_mcast_finalize(mcast);
  nm_session_close(sess);
  nm_launcher_exit(launcher);
  return bad ? 1 : 0;
}
