/* Integration test of the rpc interface (nm_rpc.h) with real processes (any N >= 2; nmad-run or mpirun).
 * Every message carries a header that names its sender, receiver, phase, index, length and how the receiver must
 * take its body; contents derive from (source, destination, phase, index), so a misrouted, reordered, corrupted or
 * overflowing body is detected. Phases:
 *  - api:       argument checks of nm_rpc_register()/nm_rpc_isend() (local);
 *  - basic:     every rank to every rank (itself included): empty, 100 B and 8 MiB (rendezvous) bodies, received
 *               into a buffer the handler allocates, into a preallocated slot named by the header, or discarded;
 *               headers of 0 B, 1 B and 16 KiB on a second service;
 *  - many:      200 rpcs on one tag from each rank to each rank without waiting (mixed 0 B..1 MiB): per-source order,
 *               contents;
 *  - serial:    rank 0 sends an 8 MiB rpc then a small one to rank 1 and enters a barrier without progress: rank 1
 *               must handle the small one while the large body cannot move (a service is never serialized behind
 *               one body receive); nm_rpc_unregister() reports -NM_EBUSY while that body is pending;
 *  - reply:     requests whose handler sends a reply rpc to another service and whose finalizer sends the body back
 *               (priority + monitor); the senders wait for all replies;
 *  - trunc:     handler buffer shorter than the body (eager and rendezvous): finalizer sees -NM_ETRUNCATED, the
 *               first bytes are right and nothing is written past the buffer; an exact or longer buffer gives 0
 *               and the bytes after the body stay untouched;
 *  - isolation: point-to-point receives of the same session and tag (and a wildcard one) stay pending while rpcs
 *               flow, are cancelled; a point-to-point message with an rpc tag reaches the p2p receive, not the
 *               handler;
 *  - blocking:  nm_rpc_send() to itself and to the next rank (8 MiB);
 *  - rereg:     after nm_rpc_unregister(), messages for the service's tags are kept (the old handler is never
 *               called) and go to the service registered next for them (100 B, 8 MiB, self);
 *  - sessions:  a second session with a service on the same tag: messages stay in their session.
 * Prints "PASS" lines; exits non-zero on the first failure (a 120 s deadline guards every wait). */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TEST_DEADLINE_NS (120ULL * 1000000000ULL)
#define MIB ((size_t)1 << 20)
#define GUARD 32
#define GUARD_BYTE 0xA5
#define MAGIC 0x7270636dU /* "rpcm" */

static int rank, size;
static nm_launcher_t launcher;
static nm_core_t core;
static nm_session_t sess, sess2; /* sess2: same tags, another session */


static int guard_ok(const uint8_t *p)
{
  for (int i = 0; i < GUARD; i++)
    if (p[i] != GUARD_BYTE)
      return 0;
  return 1;
}

static uint64_t msg_seed(int src, int dst, int phase, int idx)
{
  return ((uint64_t)(src + 1) << 48) ^ ((uint64_t)(dst + 1) << 32) ^ ((uint64_t)phase << 20) ^ (uint64_t)idx;
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
  CHECK(g != NULL, "NULL source gate");
  CHECK_RC(nm_launcher_get_rank_of_gate(launcher, g, &r), "nm_launcher_get_rank_of_gate");
  return r;
}

static uint64_t deadline_in(uint64_t ns) { return nm_core_time_ns(core) + ns; }

/* Progress for about @p ms milliseconds (lets late or spurious arrivals happen). */
static void progress_for(unsigned ms)
{
  uint64_t end = deadline_in((uint64_t)ms * 1000000ULL);
  while (nm_core_time_ns(core) < end) {
    nm_core_progress(core);
    nm_core_wait(core, end);
  }
}

/* ---- phases, services, headers ---- */

enum { PH_BASIC = 1, PH_BIG, PH_MANY, PH_SER, PH_REQ, PH_REP1, PH_REP2, PH_TRUNC, PH_ISO, PH_BLOCK, PH_DROP, PH_SESS,
       NPH };
static const char *ph_name[NPH] = {"?",     "basic", "big-header", "many",     "serial", "request",
                                   "reply1", "reply2", "trunc",   "isolation", "blocking", "rereg", "sessions"};

enum { M_ALLOC, M_SLOT, M_TRUNC, M_DISCARD, NMODES };
static const char *mode_name[NMODES] = {"alloc", "slot", "trunc", "discard"};

#define DATA_TAG(phase, sub) (0x10000ULL | ((nm_tag_t)(phase) << 8) | (nm_tag_t)(sub))
#define DATA_MASK (~(nm_tag_t)0xffff)
#define BIG_TAG(cls) (0x40000ULL | (nm_tag_t)(cls))
#define BIG_MASK (~(nm_tag_t)0xff)
#define REQ_TAG 0x20000ULL
#define REP_TAG(kind) (0x30000ULL | (nm_tag_t)(kind))
#define REP_MASK (~(nm_tag_t)0xf)
#define SER_TAG 0x50000ULL
#define DROP_TAG 0x60000ULL

/** The header of every message of the data/request/reply/serial services. */
struct hdr {
  uint32_t magic;
  int32_t src, dst;
  uint32_t phase, idx, mode;
  uint32_t ordered; /* idx counts 0, 1, 2... per (source, tag): the handler checks arrival order */
  int32_t slot;     /* M_SLOT: preallocated buffer to use */
  uint64_t blen;    /* body bytes */
  uint64_t rlen;    /* M_TRUNC: buffer bytes the handler gives */
  uint64_t tag;
  uint64_t seed;    /* contents of the body (both sides also derive it) */
  uint32_t sess_no; /* session the sender used (0: main, 1: second) */
  uint32_t pad;
};

/** One service as the test sees it (passed as ref to handler and finalizer). */
struct svc {
  const char *name;
  nm_tag_t tag, mask;
  nm_rpc_service_t s;
  volatile int handled, finalized;
  volatile int unregistered;
  int sess_no; /* 0: the main session, 1: the second one */
};
static struct svc svc_data = {"data", DATA_TAG(0, 0), DATA_MASK, NULL, 0, 0, 0, 0};
static struct svc svc_big = {"big-header", BIG_TAG(0), BIG_MASK, NULL, 0, 0, 0, 0};
static struct svc svc_req = {"request", REQ_TAG, NM_TAG_MASK_FULL, NULL, 0, 0, 0, 0};
static struct svc svc_rep = {"reply", REP_TAG(0), REP_MASK, NULL, 0, 0, 0, 0};
static struct svc svc_ser = {"serial", SER_TAG, NM_TAG_MASK_FULL, NULL, 0, 0, 0, 0};
static struct svc svc_drop = {"drop", DROP_TAG, NM_TAG_MASK_FULL, NULL, 0, 0, 0, 0};

/** Receiver side of one message, from handler to finalizer. */
struct rx {
  struct hdr h;
  uint8_t *buf;
  nm_len_t buflen;
  int owned;
};

/** Preallocated receive slots (M_SLOT). */
struct slot {
  uint8_t *buf;
  size_t len;
  int busy;
};
static struct slot *slots[NPH]; /* per phase, allocated before the first message */
static int nslots[NPH];

static void slots_setup(int phase, int n, size_t len)
{
  for (int i = 0; i < nslots[phase]; i++)
    free(slots[phase][i].buf);
  free(slots[phase]);
  slots[phase] = calloc((size_t)n, sizeof(struct slot));
  nslots[phase] = n;
  for (int i = 0; i < n; i++) {
    slots[phase][i].buf = malloc(len + GUARD);
    slots[phase][i].len = len;
    CHECK(slots[phase][i].buf, "out of memory");
  }
}

/* Statistics, per phase (and per source rank where useful). */
static volatile int fin_phase[NPH];
static volatile int handled_phase[NPH];
static int *next_idx[NPH];   /* [src]: expected idx of the next ordered message */
static int *fin_src[NPH];    /* [src]: finalized messages */
static int fin_mode[NMODES]; /* finalized messages per mode, for diagnostics */
static int handled_mode[NMODES];
static int ser_fin[2];         /* serial phase: message idx finalized */

/* Reply-phase bookkeeping. */
#define NREQ 16
static size_t req_len(int idx)
{
  static const size_t lens[4] = {0, 100, 65536, 1 << 20};
  return lens[idx % 4];
}
static unsigned char *got_reply; /* [kind 0/1][src][idx] */
struct reply {
  struct hdr h;
  uint8_t *body;
  nm_rpc_req_t req;
  int monitored, notified;
  struct reply *next;
};
static struct reply *replies;
static int n_monitored;
static volatile int n_notified;

static uint64_t expected_seed(const struct hdr *h)
{
  if (h->phase == PH_REP2) /* the replier echoes the request's body */
    return msg_seed(h->dst, h->src, PH_REQ, (int)h->idx);
  return msg_seed(h->src, h->dst, (int)h->phase, (int)h->idx);
}

static void send_reply(int kind, const struct hdr *rq, uint8_t *body, size_t blen);

/* In the handler: decide where the body goes (from rx->h.mode), post it, attach rx to the token. */
static void rx_post_body(nm_rpc_token_t tok, struct rx *rx)
{
  struct hdr *h = &rx->h;
  switch (h->mode) {
  case M_ALLOC:
    rx->buflen = h->blen;
    rx->buf = malloc(h->blen + GUARD);
    rx->owned = 1;
    break;
  case M_SLOT:
    CHECK(h->slot >= 0 && h->slot < nslots[h->phase], "slot %d out of range", h->slot);
    struct slot *sl = &slots[h->phase][h->slot];
    CHECK(!sl->busy && sl->len >= h->blen, "slot %d busy or short", h->slot);
    sl->busy = 1;
    rx->buf = sl->buf;
    rx->buflen = h->blen;
    break;
  case M_TRUNC:
    rx->buflen = h->rlen;
    rx->buf = malloc(h->rlen + GUARD);
    rx->owned = 1;
    if (rx->buf && h->rlen > h->blen) /* the bytes after the body must stay untouched */
      memset(rx->buf + h->blen, GUARD_BYTE, h->rlen - h->blen);
    break;
  case M_DISCARD:
    break;
  default:
    CHECK(0, "bad mode %u in header", h->mode);
  }
  if (h->mode != M_DISCARD) {
    CHECK(rx->buf != NULL, "out of memory");
    memset(rx->buf + rx->buflen, GUARD_BYTE, GUARD);
    CHECK_RC(nm_rpc_irecv_body(tok, rx->buf, rx->buflen), "nm_rpc_irecv_body");
    int rc = nm_rpc_irecv_body(tok, rx->buf, rx->buflen);
    CHECK(rc == -NM_EINVAL, "second nm_rpc_irecv_body on one token returned %d, want -NM_EINVAL", rc);
  }
  nm_rpc_token_set_ref(tok, rx);
  handled_mode[h->mode]++;
}

/* Handler of the data, request, reply and serial services: the header is a struct hdr. */
static int hdr_handler(nm_rpc_token_t tok, const void *header, nm_len_t hlen, void *ref)
{
  struct svc *svc = ref;
  CHECK(!svc->unregistered, "service %s: handler called after nm_rpc_unregister", svc->name);
  CHECK(hlen == sizeof(struct hdr), "service %s: header of %llu bytes, want %zu", svc->name,
        (unsigned long long)hlen, sizeof(struct hdr));
  struct rx *rx = calloc(1, sizeof(*rx));
  memcpy(&rx->h, header, sizeof(rx->h));
  struct hdr *h = &rx->h;
  CHECK(h->magic == MAGIC, "service %s: bad header magic %#x", svc->name, h->magic);
  CHECK(h->phase > 0 && h->phase < NPH && h->mode < NMODES, "service %s: bad phase/mode", svc->name);
  int src = rank_of(nm_rpc_get_source(tok));
  nm_tag_t tag = nm_rpc_get_tag(tok);
  CHECK(src == h->src && h->dst == rank, "service %s phase %s: message from rank %d says src %d dst %d", svc->name,
        ph_name[h->phase], src, h->src, h->dst);
  CHECK(tag == h->tag, "service %s phase %s: token tag %#llx, header says %#llx", svc->name, ph_name[h->phase],
        (unsigned long long)tag, (unsigned long long)h->tag);
  CHECK((tag & svc->mask) == (svc->tag & svc->mask), "service %s got tag %#llx outside its (tag, mask)",
        svc->name, (unsigned long long)tag);
  CHECK(nm_rpc_get_body_size(tok) == h->blen, "phase %s idx %u: body size %llu, header says %llu",
        ph_name[h->phase], h->idx, (unsigned long long)nm_rpc_get_body_size(tok), (unsigned long long)h->blen);
  CHECK(h->sess_no == (uint32_t)svc->sess_no, "service %s of session %d got a message sent on session %u",
        svc->name, svc->sess_no, h->sess_no);
  CHECK(nm_rpc_get_session(tok) == (svc->sess_no ? sess2 : sess), "nm_rpc_get_session is not the user session");
  CHECK(h->seed == expected_seed(h), "phase %s idx %u from %d: unexpected seed", ph_name[h->phase], h->idx, src);
  if (h->ordered) {
    CHECK((int)h->idx == next_idx[h->phase][src],
          "phase %s: message %u from rank %d handled when %d was expected (arrival order on one tag)",
          ph_name[h->phase], h->idx, src, next_idx[h->phase][src]);
    next_idx[h->phase][src]++;
  }
  svc->handled++;
  handled_phase[h->phase]++;
  rx_post_body(tok, rx);
  if (h->phase == PH_REQ) { /* reply from inside the handler, to another service */
    uint8_t *b = malloc(100);
    fill(b, 100, msg_seed(rank, h->src, PH_REP1, (int)h->idx));
    send_reply(PH_REP1, h, b, 100);
  }
  return 0;
}

static void rx_finalize(nm_rpc_token_t tok, struct svc *svc)
{
  struct rx *rx = nm_rpc_token_get_ref(tok);
  CHECK(rx != NULL, "service %s: finalizer without the ref set in the handler", svc->name);
  struct hdr *h = &rx->h;
  int st = nm_rpc_token_status(tok);
  int want = (h->mode == M_TRUNC && h->blen > h->rlen) ? -NM_ETRUNCATED : 0;
  CHECK(st == want, "phase %s idx %u from %d (%s, body %llu B, buffer %llu B): status %d (%s), want %d",
        ph_name[h->phase], h->idx, h->src, mode_name[h->mode], (unsigned long long)h->blen,
        (unsigned long long)rx->buflen, st, nm_strerror(st), want);
  CHECK(rank_of(nm_rpc_get_source(tok)) == h->src && nm_rpc_get_tag(tok) == h->tag &&
            nm_rpc_get_body_size(tok) == h->blen,
        "token accessors differ in the finalizer");
  if (!rx->buf) {
    static char scratch[64];
    int rc = nm_rpc_irecv_body(tok, scratch, sizeof(scratch));
    CHECK(rc == -NM_EINVAL, "nm_rpc_irecv_body from a finalizer returned %d, want -NM_EINVAL", rc);
  } else {
    nm_len_t n = rx->buflen < h->blen ? rx->buflen : h->blen;
    long bad = verify(rx->buf, n, h->seed);
    CHECK(bad < 0, "phase %s idx %u from %d (%s, %llu B): wrong body byte at offset %ld", ph_name[h->phase], h->idx,
          h->src, mode_name[h->mode], (unsigned long long)h->blen, bad);
    CHECK(guard_ok(rx->buf + rx->buflen), "phase %s idx %u from %d (%s): bytes written past the %llu-byte buffer",
          ph_name[h->phase], h->idx, h->src, mode_name[h->mode], (unsigned long long)rx->buflen);
    for (nm_len_t i = n; i < rx->buflen; i++)
      CHECK(rx->buf[i] == GUARD_BYTE, "phase %s idx %u from %d: byte %llu written past the %llu-byte body",
            ph_name[h->phase], h->idx, h->src, (unsigned long long)i, (unsigned long long)h->blen);
  }
  if (h->phase == PH_REP1 || h->phase == PH_REP2) {
    CHECK(h->idx < NREQ, "reply idx %u", h->idx);
    if (h->phase == PH_REP2)
      CHECK(h->blen == req_len((int)h->idx), "echo reply %u: %llu B", h->idx, (unsigned long long)h->blen);
    unsigned char *g = &got_reply[((h->phase == PH_REP2) * size + h->src) * NREQ + h->idx];
    CHECK(!*g, "reply %s idx %u from %d received twice", ph_name[h->phase], h->idx, h->src);
    *g = 1;
  }
  if (h->phase == PH_REQ) { /* reply from the finalizer, giving the body back */
    send_reply(PH_REP2, h, rx->buf, h->blen);
    rx->buf = NULL;
  }
  if (rx->buf) {
    if (rx->owned)
      free(rx->buf);
    else
      slots[h->phase][h->slot].busy = 0;
  }
  if (h->phase == PH_SER && h->idx < 2)
    ser_fin[h->idx] = 1;
  svc->finalized++;
  fin_phase[h->phase]++;
  fin_src[h->phase][h->src]++;
  fin_mode[h->mode]++;
  free(rx);
}

static void hdr_finalizer(nm_rpc_token_t tok, void *ref) { rx_finalize(tok, ref); }

/* The big-header service: tag class cls selects the header length; header and body contents are checked. */
static const size_t big_hlen[4] = {0, 1, 16384, 16384};
static const size_t big_blen[4] = {100, 0, 8 << 20, 0};
static int big_handler(nm_rpc_token_t tok, const void *header, nm_len_t hlen, void *ref)
{
  struct svc *svc = ref;
  nm_tag_t tag = nm_rpc_get_tag(tok);
  int cls = (int)(tag & 0xff), src = rank_of(nm_rpc_get_source(tok));
  CHECK(cls < 4, "big-header: tag %#llx", (unsigned long long)tag);
  CHECK(hlen == big_hlen[cls], "big-header class %d from %d: header of %llu bytes, want %zu", cls, src,
        (unsigned long long)hlen, big_hlen[cls]);
  long bad = verify(header, hlen, msg_seed(src, rank, PH_BIG, cls) ^ 0x5a5a);
  CHECK(bad < 0, "big-header class %d from %d: wrong header byte at %ld", cls, src, bad);
  CHECK(nm_rpc_get_body_size(tok) == big_blen[cls], "big-header class %d: body %llu B", cls,
        (unsigned long long)nm_rpc_get_body_size(tok));
  struct rx *rx = calloc(1, sizeof(*rx));
  rx->h = (struct hdr){.magic = MAGIC, .src = src, .dst = rank, .phase = PH_BIG, .idx = (uint32_t)cls,
                       .mode = M_ALLOC, .blen = big_blen[cls], .tag = tag};
  rx->h.seed = expected_seed(&rx->h);
  svc->handled++;
  handled_phase[PH_BIG]++;
  rx_post_body(tok, rx);
  return 0;
}

/* The first service of DROP_TAG: never called (it is unregistered before anything is sent to it). */
static int drop_handler(nm_rpc_token_t tok, const void *header, nm_len_t hlen, void *ref)
{
  (void)header;
  (void)hlen;
  (void)ref;
  CHECK(0, "service drop: handler called after nm_rpc_unregister (message from rank %d)",
        rank_of(nm_rpc_get_source(tok)));
  return 0;
}

/* Progress until *counter >= target; fails with @p what after the deadline. */
static void wait_count(volatile int *counter, int target, uint64_t deadline, const char *what)
{
  while (*counter < target) {
    uint64_t now = nm_core_time_ns(core);
    CHECK(now < deadline,
          "timeout waiting for %s: %d of %d (all phases: handled per mode alloc %d slot %d trunc %d discard %d, "
          "finalized alloc %d slot %d trunc %d discard %d)",
          what, *counter, target, handled_mode[M_ALLOC], handled_mode[M_SLOT], handled_mode[M_TRUNC],
          handled_mode[M_DISCARD], fin_mode[M_ALLOC], fin_mode[M_SLOT], fin_mode[M_TRUNC], fin_mode[M_DISCARD]);
    uint64_t d = now + 50000000ULL;
    nm_core_wait(core, d < deadline ? d : deadline);
  }
}

/* ---- sending ---- */

struct tx {
  struct hdr h;
  uint8_t *body;
  nm_rpc_req_t req;
};

static void tx_prepare(struct tx *t, int dst, nm_tag_t tag, int phase, int idx, int mode, size_t blen, size_t rlen,
                       int slot, int ordered)
{
  memset(t, 0, sizeof(*t));
  t->h = (struct hdr){.magic = MAGIC, .src = rank, .dst = dst, .phase = (uint32_t)phase, .idx = (uint32_t)idx,
                      .mode = (uint32_t)mode, .ordered = (uint32_t)ordered, .slot = slot, .blen = blen,
                      .rlen = rlen, .tag = tag};
  t->h.seed = expected_seed(&t->h);
  t->body = malloc(blen ? blen : 1);
  CHECK(t->body, "out of memory");
  fill(t->body, blen, t->h.seed);
}

static void tx_post(struct tx *t)
{
  int rc = nm_rpc_isend(sess, gate_of(t->h.dst), t->h.tag, &t->h, sizeof(t->h), t->body, t->h.blen, &t->req);
  CHECK_RC(rc, "nm_rpc_isend");
}

static void tx_wait_free(struct tx *t, int n, uint64_t deadline)
{
  for (int i = 0; i < n; i++) {
    int rc = nm_sr_wait_deadline(sess, &t[i].req, deadline);
    CHECK(rc == 0, "rpc send (phase %s idx %u to %d, %llu B): %d (%s)", ph_name[t[i].h.phase], t[i].h.idx,
          t[i].h.dst, (unsigned long long)t[i].h.blen, rc, nm_strerror(rc));
    memset(t[i].body, 0xEE, t[i].h.blen); /* complete means reusable: a late read would deliver garbage */
    free(t[i].body);
    memset(&t[i].h, 0xEE, sizeof(t[i].h));
  }
}

static void send_notifier(struct nm_req_s *req, unsigned event, void *ref)
{
  struct reply *r = ref;
  CHECK(&r->req == req, "monitor: wrong request");
  CHECK(event == NM_EVENT_SEND_COMPLETED, "monitor of an rpc send: event %#x", event);
  r->notified++;
  CHECK(r->notified == 1, "monitor of an rpc send called %d times", r->notified);
  n_notified++;
}

/* From a handler (kind PH_REP1) or a finalizer (PH_REP2): reply to the requester; @p body becomes ours. */
static void send_reply(int kind, const struct hdr *rq, uint8_t *body, size_t blen)
{
  struct reply *r = calloc(1, sizeof(*r));
  r->h = (struct hdr){.magic = MAGIC, .src = rank, .dst = rq->src, .phase = (uint32_t)kind, .idx = rq->idx,
                      .mode = M_ALLOC, .blen = blen, .tag = REP_TAG(kind)};
  r->h.seed = expected_seed(&r->h);
  r->body = body;
  if (kind == PH_REP2) { /* prepared request: priority and a monitor */
    nm_sr_send_init(sess, &r->req);
    CHECK_RC(nm_sr_send_set_priority(sess, &r->req, (nm_prio_t)(rq->idx % 4)), "nm_sr_send_set_priority");
    CHECK_RC(nm_sr_request_set_monitor(sess, &r->req, NM_EVENT_SEND_COMPLETED, send_notifier, r),
             "nm_sr_request_set_monitor");
    r->monitored = 1;
    n_monitored++;
  }
  CHECK_RC(nm_rpc_isend(sess, gate_of(rq->src), r->h.tag, &r->h, sizeof(r->h), body, blen, &r->req),
           "nm_rpc_isend from a handler/finalizer");
  r->next = replies;
  replies = r;
}

/* ---- phases ---- */

static void phase_api(void)
{
  nm_rpc_service_t s = NULL;
  int rc = nm_rpc_register(sess, 0x90000, NM_TAG_MASK_FULL, 64, NULL, NULL, NULL, &s);
  CHECK(rc == -NM_EINVAL, "nm_rpc_register without handler: %d", rc);
  rc = nm_rpc_register(sess, 0x90000, NM_TAG_MASK_FULL, 16385, hdr_handler, NULL, NULL, &s);
  CHECK(rc == -NM_EINVAL, "nm_rpc_register with hlen_max 16385: %d", rc);
  /* overlaps: tag inside the data range; a wider mask covering it */
  rc = nm_rpc_register(sess, DATA_TAG(3, 7), NM_TAG_MASK_FULL, 64, hdr_handler, NULL, NULL, &s);
  CHECK(rc == -NM_EINVAL, "nm_rpc_register overlapping service 'data': %d", rc);
  rc = nm_rpc_register(sess, 0, NM_TAG_MASK_NONE, 64, hdr_handler, NULL, NULL, &s);
  CHECK(rc == -NM_EINVAL, "nm_rpc_register of a catch-all over existing services: %d", rc);
  rc = nm_rpc_register(sess, 0x50000, ~(nm_tag_t)0xfffff, 64, hdr_handler, NULL, NULL, &s);
  CHECK(rc == -NM_EINVAL, "nm_rpc_register of a range covering service 'serial': %d", rc);
  /* a header above 16 KiB is refused at the sender */
  static uint8_t big[16385];
  nm_rpc_req_t req;
  memset(&req, 0, sizeof(req));
  rc = nm_rpc_isend(sess, gate_of(rank), DATA_TAG(PH_BASIC, 0), big, sizeof(big), NULL, 0, &req);
  CHECK(rc == -NM_EINVAL, "nm_rpc_isend with a 16385-byte header: %d", rc);
  printf("PASS rank %d api argument checks\n", rank);
}

/* basic: to every rank (itself included) 8 data messages + 4 big-header messages. */
static void phase_basic(void)
{
  enum { NB = 8 };
  static const struct {
    int mode;
    size_t len;
  } plan[NB] = {{M_ALLOC, 0},      {M_ALLOC, 100},   {M_ALLOC, 8 << 20}, {M_SLOT, 100},
                {M_SLOT, 8 << 20}, {M_DISCARD, 0}, {M_DISCARD, 100},  {M_DISCARD, 8 << 20}};
  struct tx *t = calloc((size_t)size * NB, sizeof(*t));
  for (int d = 0; d < size; d++) {
    int dst = (rank + d) % size;
    for (int i = 0; i < NB; i++) {
      /* the slot is chosen by the sender from the receiver's layout: 2 per source */
      int slot = plan[i].mode == M_SLOT ? 2 * rank + (plan[i].len > 100) : -1;
      tx_prepare(&t[d * NB + i], dst, DATA_TAG(PH_BASIC, i), PH_BASIC, i, plan[i].mode, plan[i].len, 0, slot, 0);
      tx_post(&t[d * NB + i]);
    }
  }
  /* big-header service: the header bytes are the payload being tested */
  struct {
    uint8_t *hdr, *body;
    nm_rpc_req_t req;
  } *b = calloc((size_t)size * 4, sizeof(*b));
  for (int d = 0; d < size; d++) {
    int dst = (rank + d) % size;
    for (int cls = 0; cls < 4; cls++) {
      int k = d * 4 + cls;
      b[k].hdr = malloc(big_hlen[cls] + 1);
      b[k].body = malloc(big_blen[cls] + 1);
      fill(b[k].hdr, big_hlen[cls], msg_seed(rank, dst, PH_BIG, cls) ^ 0x5a5a);
      fill(b[k].body, big_blen[cls], msg_seed(rank, dst, PH_BIG, cls));
      CHECK_RC(nm_rpc_isend(sess, gate_of(dst), BIG_TAG(cls), b[k].hdr, big_hlen[cls], b[k].body, big_blen[cls],
                            &b[k].req),
               "nm_rpc_isend big header");
    }
  }
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  tx_wait_free(t, size * NB, deadline);
  for (int k = 0; k < size * 4; k++) {
    int rc = nm_sr_wait_deadline(sess, &b[k].req, deadline);
    CHECK(rc == 0, "big-header send class %d: %d (%s)", k % 4, rc, nm_strerror(rc));
    memset(b[k].hdr, 0xEE, big_hlen[k % 4]);
    memset(b[k].body, 0xEE, big_blen[k % 4]);
    free(b[k].hdr);
    free(b[k].body);
  }
  wait_count(&fin_phase[PH_BASIC], size * NB, deadline, "basic messages finalized (incl. discarded bodies)");
  wait_count(&fin_phase[PH_BIG], size * 4, deadline, "big-header messages finalized");
  for (int s = 0; s < size; s++)
    CHECK(fin_src[PH_BASIC][s] == NB && fin_src[PH_BIG][s] == 4, "basic: %d/%d messages from rank %d",
          fin_src[PH_BASIC][s], fin_src[PH_BIG][s], s);
  free(t);
  free(b);
  printf("PASS rank %d basic: empty/100 B/8 MiB bodies, alloc/slot/discard, headers 0 B/1 B/16 KiB, self "
         "included\n",
         rank);
}

/* many: 200 rpcs on one tag to every rank (itself included), no waiting in between. */
static size_t many_len(int i)
{
  if (i % 40 == 39)
    return MIB;
  if (i % 7 == 0)
    return 0;
  return 64 + (size_t)((i * 37) % 137);
}

static void phase_many(void)
{
  enum { NM = 200 };
  struct tx *t = calloc((size_t)size * NM, sizeof(*t));
  for (int i = 0; i < NM; i++) /* interleave the destinations */
    for (int d = 0; d < size; d++) {
      int dst = (rank + d) % size, k = d * NM + i;
      size_t len = many_len(i);
      int mode = (i % 3 == 0 && len <= 256) ? M_SLOT : M_ALLOC;
      tx_prepare(&t[k], dst, DATA_TAG(PH_MANY, 0), PH_MANY, i, mode, len, 0, mode == M_SLOT ? rank * NM + i : -1, 1);
      tx_post(&t[k]);
    }
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  tx_wait_free(t, size * NM, deadline);
  wait_count(&fin_phase[PH_MANY], size * NM, deadline, "the 200 rpcs from every rank");
  for (int s = 0; s < size; s++)
    CHECK(fin_src[PH_MANY][s] == NM && next_idx[PH_MANY][s] == NM, "many: %d messages from rank %d",
          fin_src[PH_MANY][s], s);
  free(t);
  printf("PASS rank %d many: %d outstanding rpcs per peer pair, arrival order, contents\n", rank, NM);
}

/* serial: a service must handle later messages while one body waits for a sender that does not progress. */
static void phase_serial(void)
{
  struct tx t[2];
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  if (rank == 0) {
    tx_prepare(&t[0], 1, SER_TAG, PH_SER, 0, M_ALLOC, 8 << 20, 0, -1, 1);
    tx_prepare(&t[1], 1, SER_TAG, PH_SER, 1, M_ALLOC, 100, 0, -1, 1);
    tx_post(&t[0]);
    tx_post(&t[1]);
    /* no progress here until rank 1 has handled message 1 */
    CHECK_RC(nm_launcher_barrier_noprogress(launcher), "barrier");
    tx_wait_free(t, 2, deadline);
  } else if (rank == 1) {
    uint64_t dl = deadline_in(60ULL * 1000000000ULL);
    /* message 1 is small; message 0's 8 MiB body cannot move while rank 0 sits in its barrier, so message 1 is
     * finalized only if the service did not serialize behind message 0's body receive */
    while (!ser_fin[1]) {
      CHECK(nm_core_time_ns(core) < dl,
            "service serialized behind one body receive: handled %d, finalized %d of the 2 messages from rank 0 "
            "(message 1 is small and must be handled and finalized while message 0's 8 MiB body waits)",
            next_idx[PH_SER][0], fin_src[PH_SER][0]);
      nm_core_wait(core, deadline_in(50000000ULL));
    }
    int big_done = ser_fin[0];
    int rc = nm_rpc_unregister(svc_ser.s);
    if (!big_done) {
      CHECK(rc == -NM_EBUSY, "nm_rpc_unregister with a token waiting for its body: %d, want -NM_EBUSY", rc);
    } else { /* the transport moved the body without rank 0 (e.g. RMA read): nothing to check */
      CHECK_RC(rc, "nm_rpc_unregister");
      CHECK_RC(nm_rpc_register(sess, SER_TAG, NM_TAG_MASK_FULL, sizeof(struct hdr), hdr_handler, hdr_finalizer,
                               &svc_ser, &svc_ser.s),
               "re-register");
    }
    CHECK_RC(nm_launcher_barrier_noprogress(launcher), "barrier");
    wait_count(&fin_phase[PH_SER], 2, deadline, "serial: the 8 MiB body");
    printf("PASS rank 1 serial: small rpc handled while an 8 MiB body waited for its sender%s\n",
           big_done ? " (body moved without the sender's progress: EBUSY not checked)" : ", unregister -> EBUSY");
  } else {
    CHECK_RC(nm_launcher_barrier_noprogress(launcher), "barrier");
  }
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  svc_ser.unregistered = 1;
  CHECK_RC(nm_rpc_unregister(svc_ser.s), "nm_rpc_unregister(serial)");
}

static void phase_reply(void)
{
  got_reply = calloc((size_t)size * 2 * NREQ, 1);
  struct tx *t = calloc((size_t)size * NREQ, sizeof(*t));
  for (int i = 0; i < NREQ; i++)
    for (int d = 0; d < size; d++) {
      int dst = (rank + d) % size;
      tx_prepare(&t[d * NREQ + i], dst, REQ_TAG, PH_REQ, i, M_ALLOC, req_len(i), 0, -1, 0);
      tx_post(&t[d * NREQ + i]);
    }
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  tx_wait_free(t, size * NREQ, deadline);
  wait_count(&fin_phase[PH_REQ], size * NREQ, deadline, "requests finalized");
  wait_count(&fin_phase[PH_REP1], size * NREQ, deadline, "replies sent by handlers");
  wait_count(&fin_phase[PH_REP2], size * NREQ, deadline, "echo replies sent by finalizers");
  for (int k = 0; k < 2 * size * NREQ; k++)
    CHECK(got_reply[k], "reply %d missing", k);
  int n = 0;
  while (replies) {
    struct reply *r = replies;
    int rc = nm_sr_wait_deadline(sess, &r->req, deadline);
    CHECK(rc == 0, "reply send %s idx %u to %d: %d (%s)", ph_name[r->h.phase], r->h.idx, r->h.dst, rc,
          nm_strerror(rc));
    CHECK(!r->monitored || r->notified == 1, "reply send completed but its monitor saw %d events", r->notified);
    replies = r->next;
    memset(r->body, 0xEE, r->h.blen);
    memset(&r->h, 0xEE, sizeof(r->h));
    free(r->body);
    free(r);
    n++;
  }
  CHECK(n == 2 * size * NREQ && n_notified == n_monitored && n_monitored == size * NREQ,
        "reply sends %d, monitored %d, notified %d", n, n_monitored, n_notified);
  free(t);
  free(got_reply);
  printf("PASS rank %d reply: replies from handlers and finalizers (priority + monitor), %d requests\n", rank,
         size * NREQ);
}

static void phase_trunc(void)
{
  enum { NT = 6 };
  static const size_t blen[NT] = {100, 8 << 20, 1 << 20, 4096, 100, 65536};
  static const size_t rlen[NT] = {40, 1 << 20, 100, 4096, 300, 100000}; /* the last three fit: status 0 */
  int dsts[2] = {rank, (rank + 1) % size};
  struct tx t[2 * NT];
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < NT; i++) {
      tx_prepare(&t[d * NT + i], dsts[d], DATA_TAG(PH_TRUNC, i), PH_TRUNC, i, M_TRUNC, blen[i], rlen[i], -1, 0);
      tx_post(&t[d * NT + i]);
    }
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  tx_wait_free(t, 2 * NT, deadline); /* truncation is the receiver's business: the sender completes with 0 */
  wait_count(&fin_phase[PH_TRUNC], 2 * NT, deadline, "truncated messages finalized");
  printf("PASS rank %d truncation: eager and rendezvous bodies into short buffers -> -NM_ETRUNCATED\n", rank);
}

static void phase_isolation(void)
{
  const nm_tag_t tag = DATA_TAG(PH_ISO, 0);
  int pred = (rank + size - 1) % size, succ = (rank + 1) % size;
  uint8_t any_buf[256], wild_buf[256], pred_buf[256];
  nm_sr_request_t r_any, r_wild, r_pred;
  CHECK_RC(nm_sr_irecv(sess, NM_ANY_GATE, tag, any_buf, sizeof(any_buf), &r_any), "irecv any");
  CHECK_RC(nm_sr_irecv_mask(sess, NM_ANY_GATE, 0, NM_TAG_MASK_NONE, wild_buf, sizeof(wild_buf), &r_wild),
           "irecv wildcard");
  CHECK_RC(nm_sr_irecv(sess, gate_of(pred), tag, pred_buf, sizeof(pred_buf), &r_pred), "irecv pred");
  enum { NI = 4 };
  struct tx *t = calloc((size_t)size * NI, sizeof(*t));
  for (int d = 0; d < size; d++)
    for (int i = 0; i < NI; i++) {
      int k = d * NI + i;
      tx_prepare(&t[k], (rank + d) % size, tag, PH_ISO, i, M_ALLOC, i == 3 ? MIB : (size_t)(i * 50), 0, -1, 1);
      tx_post(&t[k]);
    }
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  tx_wait_free(t, size * NI, deadline);
  wait_count(&fin_phase[PH_ISO], size * NI, deadline, "rpcs with the tag of a posted p2p receive");
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  progress_for(20);
  CHECK(nm_sr_rtest(sess, &r_any) == -NM_EAGAIN, "p2p receive (any source, rpc tag) matched an rpc");
  CHECK(nm_sr_rtest(sess, &r_wild) == -NM_EAGAIN, "p2p receive (any source, any tag) matched an rpc");
  CHECK(nm_sr_rtest(sess, &r_pred) == -NM_EAGAIN, "p2p receive (rpc tag, from rank %d) matched an rpc", pred);
  CHECK_RC(nm_sr_rcancel(sess, &r_any), "rcancel");
  CHECK_RC(nm_sr_rcancel(sess, &r_wild), "rcancel");
  CHECK(nm_sr_rwait(sess, &r_any) == -NM_ECANCELED && nm_sr_rwait(sess, &r_wild) == -NM_ECANCELED,
        "cancelled receives");
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  /* and a point-to-point message with the rpc tag goes to the p2p receive, not to the service */
  int handled = handled_phase[PH_ISO];
  uint8_t msg[200];
  fill(msg, sizeof(msg), msg_seed(rank, succ, PH_ISO, 99));
  nm_sr_request_t s;
  CHECK_RC(nm_sr_isend(sess, gate_of(succ), tag, msg, sizeof(msg), &s), "isend");
  int rc = nm_sr_wait_deadline(sess, &r_pred, deadline);
  CHECK(rc == 0, "p2p message with an rpc tag: receive status %d (%s)", rc, nm_strerror(rc));
  nm_len_t got = 0;
  nm_sr_get_size(sess, &r_pred, &got);
  CHECK(got == sizeof(msg) && verify(pred_buf, sizeof(msg), msg_seed(pred, rank, PH_ISO, 99)) < 0,
        "p2p message with an rpc tag: wrong size %llu or contents", (unsigned long long)got);
  CHECK_RC(nm_sr_wait_deadline(sess, &s, deadline), "p2p send");
  CHECK(handled_phase[PH_ISO] == handled, "a p2p message reached the rpc handler");
  free(t);
  printf("PASS rank %d isolation: rpc tags never match p2p receives (exact, any-source, wildcard) and back\n",
         rank);
}

static void phase_blocking(void)
{
  int succ = (rank + 1) % size;
  struct tx t[3];
  tx_prepare(&t[0], rank, DATA_TAG(PH_BLOCK, 0), PH_BLOCK, 0, M_ALLOC, 8 << 20, 0, -1, 0);
  tx_prepare(&t[1], succ, DATA_TAG(PH_BLOCK, 1), PH_BLOCK, 1, M_ALLOC, 8 << 20, 0, -1, 0);
  tx_prepare(&t[2], succ, DATA_TAG(PH_BLOCK, 2), PH_BLOCK, 2, M_ALLOC, 100, 0, -1, 0);
  for (int i = 0; i < 3; i++) {
    int rc = nm_rpc_send(sess, gate_of(t[i].h.dst), t[i].h.tag, &t[i].h, sizeof(t[i].h), t[i].body, t[i].h.blen);
    CHECK(rc == 0, "nm_rpc_send %d (to %d, %llu B): %d (%s)", i, t[i].h.dst, (unsigned long long)t[i].h.blen, rc,
          nm_strerror(rc));
    free(t[i].body);
  }
  wait_count(&fin_phase[PH_BLOCK], 3, deadline_in(TEST_DEADLINE_NS), "blocking rpcs");
  printf("PASS rank %d blocking nm_rpc_send to itself and to rank %d\n", rank, succ);
}

static void reg(struct svc *s, nm_len_t hlen_max, nm_rpc_handler_t h, nm_rpc_finalizer_t f)
{
  int rc = nm_rpc_register(s->sess_no ? sess2 : sess, s->tag, s->mask, hlen_max, h, f, s, &s->s);
  CHECK(rc == 0 && s->s != NULL, "nm_rpc_register(%s): %d (%s)", s->name, rc, nm_strerror(rc));
}


/* Two sessions, one tag: each message reaches the service of the session it was sent on. */
static struct svc svc_sess2 = {"data (session 2)", DATA_TAG(PH_SESS, 0), NM_TAG_MASK_FULL, NULL, 0, 0, 0, 1};
static void phase_sessions(void)
{
  int succ = (rank + 1) % size;
  struct tx t[4];
  for (int i = 0; i < 4; i++) {
    tx_prepare(&t[i], i < 2 ? succ : rank, DATA_TAG(PH_SESS, 0), PH_SESS, i, M_ALLOC, i % 2 ? MIB : 100, 0, -1, 0);
    t[i].h.sess_no = (uint32_t)(i % 2 == 0); /* 100 B on session 2, 1 MiB on the main session, and vice versa */
    if (i >= 2)
      t[i].h.sess_no ^= 1;
    int rc = nm_rpc_isend(t[i].h.sess_no ? sess2 : sess, gate_of(t[i].h.dst), t[i].h.tag, &t[i].h, sizeof(t[i].h),
                          t[i].body, t[i].h.blen, &t[i].req);
    CHECK_RC(rc, "nm_rpc_isend");
  }
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  for (int i = 0; i < 4; i++) {
    CHECK_RC(nm_sr_wait_deadline(t[i].h.sess_no ? sess2 : sess, &t[i].req, deadline), "rpc send");
    free(t[i].body);
  }
  wait_count(&fin_phase[PH_SESS], 4, deadline, "messages on two sessions");
  wait_count(&svc_sess2.finalized, 2, deadline, "messages of session 2");
  CHECK(svc_sess2.finalized == 2, "session 2 service: %d messages", svc_sess2.finalized);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  svc_sess2.unregistered = 1;
  CHECK_RC(nm_rpc_unregister(svc_sess2.s), "nm_rpc_unregister(session 2)");
  printf("PASS rank %d two sessions with one rpc tag stay apart\n", rank);
}

/* After nm_rpc_unregister(), messages for the service's tags are kept on the channel (the old handler is never
 * called) and handed to the next service registered for them, 8 MiB bodies included. */
static struct svc svc_rereg = {"re-registered", DROP_TAG, NM_TAG_MASK_FULL, NULL, 0, 0, 0, 0};
static void phase_rereg(void)
{
  svc_drop.unregistered = 1;
  CHECK_RC(nm_rpc_unregister(svc_drop.s), "nm_rpc_unregister(drop)");
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  int succ = (rank + 1) % size;
  struct tx t[3];
  tx_prepare(&t[0], succ, DROP_TAG, PH_DROP, 0, M_ALLOC, 100, 0, -1, 1);
  tx_prepare(&t[1], succ, DROP_TAG, PH_DROP, 1, M_ALLOC, 8 << 20, 0, -1, 1);
  tx_prepare(&t[2], rank, DROP_TAG, PH_DROP, 0, M_ALLOC, 8 << 20, 0, -1, 0);
  t[2].h.idx = 2;
  t[2].h.seed = expected_seed(&t[2].h);
  fill(t[2].body, t[2].h.blen, t[2].h.seed);
  for (int i = 0; i < 3; i++)
    tx_post(&t[i]);
  /* the messages arrive while no service has their tag (drop_handler fails the test if it is called) */
  progress_for(50);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  progress_for(20);
  CHECK(fin_phase[PH_DROP] == 0, "messages for an unregistered service were finalized");
  reg(&svc_rereg, sizeof(struct hdr), hdr_handler, hdr_finalizer);
  uint64_t deadline = deadline_in(TEST_DEADLINE_NS);
  tx_wait_free(t, 3, deadline);
  wait_count(&fin_phase[PH_DROP], 3, deadline, "kept messages handed to the re-registered service");
  CHECK(svc_rereg.finalized == 3 && fin_src[PH_DROP][(rank + size - 1) % size] == 2 && fin_src[PH_DROP][rank] == 1,
        "re-registered service finalized %d messages", svc_rereg.finalized);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  svc_rereg.unregistered = 1;
  CHECK_RC(nm_rpc_unregister(svc_rereg.s), "nm_rpc_unregister(re-registered)");
  printf("PASS rank %d unregister/re-register: messages kept meanwhile (100 B, 8 MiB, self), handed to the new "
         "service\n",
         rank);
}

int main(int argc, char **argv)
{
  CHECK_RC(nm_launcher_init(&launcher, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(launcher, &rank);
  nm_launcher_get_size(launcher, &size);
  CHECK(size >= 2, "run with at least 2 ranks");
  core = nm_launcher_get_core(launcher);
  CHECK_RC(nm_session_open(core, "it_rpc", &sess), "session");
  CHECK_RC(nm_session_open(core, "it_rpc-2", &sess2), "session 2");
  for (int p = 0; p < NPH; p++) {
    next_idx[p] = calloc((size_t)size, sizeof(int));
    fin_src[p] = calloc((size_t)size, sizeof(int));
  }
  slots_setup(PH_BASIC, 2 * size, 8 << 20);
  slots_setup(PH_MANY, size * 200, 256);
  reg(&svc_data, sizeof(struct hdr), hdr_handler, hdr_finalizer);
  reg(&svc_big, 16384, big_handler, hdr_finalizer);
  reg(&svc_req, sizeof(struct hdr), hdr_handler, hdr_finalizer);
  reg(&svc_rep, sizeof(struct hdr), hdr_handler, hdr_finalizer);
  reg(&svc_ser, sizeof(struct hdr), hdr_handler, hdr_finalizer);
  reg(&svc_drop, sizeof(struct hdr), drop_handler, NULL);
  reg(&svc_sess2, sizeof(struct hdr), hdr_handler, hdr_finalizer);
  CHECK_RC(nm_launcher_barrier(launcher), "barrier"); /* every service exists everywhere before any send */
  phase_api();
  phase_basic();
  phase_many();
  phase_serial();
  phase_reply();
  phase_trunc();
  phase_isolation();
  phase_blocking();
  phase_rereg();
  phase_sessions();
  CHECK_RC(nm_launcher_barrier(launcher), "barrier");
  svc_data.unregistered = svc_big.unregistered = svc_req.unregistered = svc_rep.unregistered = 1;
  CHECK_RC(nm_rpc_unregister(svc_data.s), "nm_rpc_unregister(data)");
  CHECK_RC(nm_rpc_unregister(svc_big.s), "nm_rpc_unregister(big)");
  CHECK_RC(nm_rpc_unregister(svc_req.s), "nm_rpc_unregister(request)");
  CHECK_RC(nm_rpc_unregister(svc_rep.s), "nm_rpc_unregister(reply)");
  CHECK_RC(nm_session_close(sess2), "session 2 close");
  CHECK_RC(nm_session_close(sess), "session close");
  for (int p = 0; p < NPH; p++)
    slots_setup(p, 0, 0);
  const char *bootstrap = nm_launcher_get_bootstrap(launcher);
  CHECK_RC(nm_launcher_exit(launcher), "nm_launcher_exit");
  printf("PASS rank %d all (%d ranks, bootstrap %s)\n", rank, size, bootstrap);
  return 0;
}
