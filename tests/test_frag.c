/* Unit tests of eager messages cut to the inject size (core/nm_frag.c, DATA_FRAG in doc/protocol.md): two cores
 * (rank 0 sends, rank 1 receives) joined by fake drivers whose packets a pump carries; the sender's rail injects
 * TEST_INJECT bytes. Reassembly at every size around 1, 2 and 3 inject sizes, posted and unexpected; pieces of
 * two messages interleaved and reversed; sync sends; rpc headers; truncation; cancel in the middle of a cut; gate
 * failure with a message half there; pieces that lie (bounds, overlaps, disagreements); the cutting policy; the
 * decoder's checks of a DATA_FRAG chunk. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "fake_driver.h"
#include <nmad/nm_rpc.h>
#include <nmad/nm_sendrecv.h>

#define TEST_INJECT 1024
#define MAX_MSG (4 * TEST_INJECT + 256)

static nm_core_t a, b; /* a: rank 0, the sender; b: rank 1, the receiver */
static struct fake_drv_s *fa, *fb;
static nm_session_t sa, sb;

static void setup(void)
{
  a = fake_core_new_rank(0, 4, "aggreg", 32 * 1024, &fa);
  b = fake_core_new_rank(1, 4, "aggreg", 32 * 1024, &fb);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  a->drvs[0].props.inject_size = TEST_INJECT;
  a->cfg.frag_max = 1 << 20; /* every eager message above the inject size is cut (the policy has its own test) */
  ck_assert_int_eq(nm_session_open(a, "frag", &sa), 0);
  ck_assert_int_eq(nm_session_open(b, "frag", &sb), 0);
}

static void teardown(void)
{
  fake_core_free(a);
  fake_core_free(b);
}

static nm_gate_t ga(void) { return nm_core_gate(a, 1); } /* a's gate to b */
static nm_gate_t gb(void) { return nm_core_gate(b, 0); } /* b's gate to a */

/* The packets @p from sent since the last call, delivered to @p to as coming from @p src. @return how many. */
static int move(struct fake_drv_s *from, nm_core_t to, int src)
{
  int n = from->n_pkts;
  from->n_pkts = 0;
  for (int i = 0; i < n; i++)
    nm_core_packet(to, &to->drvs[0], from->pkts[i].buf, from->pkts[i].len, (uint64_t)src);
  return n;
}

/* Whether packet @p p of the sender holds a DATA_FRAG chunk; checks that such a packet fits the inject size. */
static int has_frag(const struct fake_pkt_s *p)
{
  struct nm_wire_pkt_s h;
  ck_assert_int_eq(nm_wire_validate(p->buf, p->len, &h), 0);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  int frag = 0;
  for (int i = 0; i < h.n_chunks; i++) {
    struct nm_wire_chunk_s c;
    ck_assert_int_eq(nm_wire_next_chunk(p->buf, p->len, &off, &c), 0);
    frag |= c.type == NM_WIRE_DATA_FRAG;
  }
  if (frag)
    ck_assert_uint_le(p->len, TEST_INJECT);
  return frag;
}

/* Carry packets both ways until neither side sends. @return packets from a holding a DATA_FRAG chunk. */
static int pump(void)
{
  int frags = 0;
  for (int round = 0; round < 1000; round++) {
    nm_core_progress(a);
    for (int i = 0; i < fa->n_pkts; i++)
      frags += has_frag(&fa->pkts[i]);
    int n = move(fa, b, 0);
    nm_core_progress(b);
    n += move(fb, a, 1);
    if (n == 0 && !nm_gate_has_work(ga()) && !nm_gate_has_work(gb()))
      return frags;
  }
  ck_abort_msg("the pump never went idle");
  return frags;
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
  for (size_t i = 0; i < len; i++)
    buf[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* Credit is charged once per message at the sender and counted once at the receiver: what a holds plus what b
 * owes it is the window, whenever nothing is stored at b and no CREDIT chunk is on its way. */
static void check_credit_balance(void)
{
  pump(); /* a CREDIT chunk queued by the last receive */
  struct nm_core_stats_s st;
  nm_core_get_stats(b, &st);
  ck_assert_uint_eq(st.unexpected_bytes, 0);
  ck_assert_int_eq(ga()->credit + gb()->credit_owed, (int64_t)a->cfg.eager_credit);
  ck_assert_ptr_null(gb()->frags);
  ck_assert_uint_eq(gb()->frag_bytes, 0);
}

/* One message of @p len bytes from a to b, the receive posted before (@p posted) or after it arrived. */
static void one_size(size_t len, int posted)
{
  static uint8_t sbuf[MAX_MSG], rbuf[MAX_MSG + 1];
  nm_sr_request_t s, r;
  fill(sbuf, len, (unsigned)len);
  memset(rbuf, 0xee, sizeof(rbuf));
  nm_tag_t tag = 7;
  if (posted)
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), tag, rbuf, MAX_MSG, &r), 0);
  ck_assert_int_eq(nm_sr_isend(sa, ga(), tag, sbuf, len, &s), 0);
  int frags = pump();
  if (!posted)
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), tag, rbuf, MAX_MSG, &r), 0);
  ck_assert_int_eq(nm_sr_stest(sa, &s), 0);
  ck_assert_int_eq(nm_sr_rtest(sb, &r), 0);
  nm_len_t got;
  ck_assert_int_eq(nm_sr_get_size(sb, &r, &got), 0);
  ck_assert_uint_eq(got, len);
  ck_assert_msg(memcmp(rbuf, sbuf, len) == 0, "size %zu (%s): wrong bytes", len, posted ? "posted" : "unexpected");
  ck_assert_uint_eq(rbuf[len], 0xee);
  /* cut exactly when its DATA packet would exceed the inject size; then at least two pieces */
  int cut = NM_WIRE_PKT_HDR_LEN + nm_wire_data_size(len, 0, 0) > TEST_INJECT;
  ck_assert_msg(cut ? frags >= 2 : frags == 0, "size %zu: %d packets with pieces", len, frags);
}

START_TEST(test_every_size_around_inject)
{
  int posted = _i;
  for (size_t k = 1; k <= 3; k++)
    for (size_t len = k * TEST_INJECT - 80; len <= k * TEST_INJECT + 80; len++)
      one_size(len, posted);
  one_size(4 * TEST_INJECT + 256, posted);
  check_credit_balance();
}
END_TEST

/* The packets of two messages carried in reverse order: pieces of both interleave, the later message of one
 * (gate, tag) completes first and waits for its predecessor, and receives still match in send order. */
START_TEST(test_interleaved_reversed)
{
  static uint8_t s[3][3000], r[3][3000];
  nm_sr_request_t sr[3], rr[3];
  const nm_tag_t tags[3] = {5, 5, 6};
  const size_t lens[3] = {2500, 3000, 2200};
  for (int i = 0; i < 3; i++) {
    fill(s[i], lens[i], 10u + (unsigned)i);
    if (i != 1)
      ck_assert_int_eq(nm_sr_irecv(sb, gb(), tags[i], r[i], sizeof(r[i]), &rr[i]), 0);
  }
  for (int i = 0; i < 3; i++) { /* one at a time: a message with another queued behind it is not cut */
    ck_assert_int_eq(nm_sr_isend(sa, ga(), tags[i], s[i], lens[i], &sr[i]), 0);
    nm_core_progress(a);
  }
  int n = fa->n_pkts;
  ck_assert_int_ge(n, 9); /* 3 messages of 3 pieces at least */
  fa->n_pkts = 0;
  for (int i = n - 1; i >= 0; i--) {
    nm_core_packet(b, &b->drvs[0], fa->pkts[i].buf, fa->pkts[i].len, 0);
    if (i == n / 2) /* half-way: the second message of tag 5 is posted while pieces are still missing */
      ck_assert_int_eq(nm_sr_irecv(sb, gb(), tags[1], r[1], sizeof(r[1]), &rr[1]), 0);
  }
  pump();
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(nm_sr_rtest(sb, &rr[i]), 0);
    ck_assert_int_eq(nm_sr_stest(sa, &sr[i]), 0);
    ck_assert_msg(memcmp(r[i], s[i], lens[i]) == 0, "message %d: wrong bytes", i);
  }
  check_credit_balance();
}
END_TEST

/* A synchronous send completes only once the receiver matched it: the ACK needs the whole message there. */
START_TEST(test_sync)
{
  int posted = _i;
  static uint8_t s[3000], r[3000];
  nm_sr_request_t sr, rr;
  fill(s, sizeof(s), 3);
  if (posted)
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), 9, r, sizeof(r), &rr), 0);
  ck_assert_int_eq(nm_sr_issend(sa, ga(), 9, s, sizeof(s), &sr), 0);
  ck_assert_int_ge(pump(), 2);
  if (!posted) {
    ck_assert_int_eq(nm_sr_stest(sa, &sr), -NM_EAGAIN); /* stored unexpected at b: no ACK yet */
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), 9, r, sizeof(r), &rr), 0);
    pump();
  }
  ck_assert_int_eq(nm_sr_rtest(sb, &rr), 0);
  ck_assert_int_eq(nm_sr_stest(sa, &sr), 0);
  ck_assert_int_eq(memcmp(r, s, sizeof(s)), 0);
  check_credit_balance();
}
END_TEST

/* An rpc message cut in pieces: the handler sees its header whole (here longer than a piece) and the body. */
struct rpc_seen {
  uint8_t hdr[2048], body[4096];
  nm_len_t hlen, blen;
  int done, status;
};
static int rpc_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct rpc_seen *v = ref;
  memcpy(v->hdr, header, hlen);
  v->hlen = hlen;
  v->blen = nm_rpc_get_body_size(token);
  return nm_rpc_irecv_body(token, v->body, sizeof(v->body));
}
static void rpc_finalizer(nm_rpc_token_t token, void *ref)
{
  struct rpc_seen *v = ref;
  v->status = nm_rpc_token_status(token);
  v->done = 1;
}

START_TEST(test_rpc_prefix)
{
  static struct rpc_seen v;
  static uint8_t hdr[1500], body[2500];
  const nm_len_t hlens[2] = {40, sizeof(hdr)};
  nm_rpc_service_t svc;
  ck_assert_int_eq(nm_rpc_register(sb, 77, NM_TAG_MASK_FULL, sizeof(v.hdr), rpc_handler, rpc_finalizer, &v, &svc), 0);
  for (int i = 0; i < 2; i++) {
    memset(&v, 0, sizeof(v));
    fill(hdr, hlens[i], 20u + (unsigned)i);
    fill(body, sizeof(body), 30u + (unsigned)i);
    nm_rpc_req_t req;
    memset(&req, 0, sizeof(req));
    ck_assert_int_eq(nm_rpc_isend(sa, ga(), 77, hdr, hlens[i], body, sizeof(body), &req), 0);
    ck_assert_int_ge(pump(), 2);
    ck_assert_int_eq(v.done, 1);
    ck_assert_int_eq(v.status, 0);
    ck_assert_uint_eq(v.hlen, hlens[i]);
    ck_assert_uint_eq(v.blen, sizeof(body));
    ck_assert_int_eq(memcmp(v.hdr, hdr, hlens[i]), 0);
    ck_assert_int_eq(memcmp(v.body, body, sizeof(body)), 0);
  }
  check_credit_balance();
}
END_TEST

/* A receive shorter than the message: the first bytes, -NM_ETRUNCATED, nothing written past the buffer. */
START_TEST(test_truncation)
{
  int posted = _i;
  static uint8_t s[3000], r[1001];
  nm_sr_request_t sr, rr;
  fill(s, sizeof(s), 4);
  memset(r, 0xee, sizeof(r));
  if (posted)
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), 3, r, 1000, &rr), 0);
  ck_assert_int_eq(nm_sr_isend(sa, ga(), 3, s, sizeof(s), &sr), 0);
  ck_assert_int_ge(pump(), 2);
  if (!posted)
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), 3, r, 1000, &rr), 0);
  ck_assert_int_eq(nm_sr_rtest(sb, &rr), -NM_ETRUNCATED);
  ck_assert_int_eq(memcmp(r, s, 1000), 0);
  ck_assert_uint_eq(r[1000], 0xee);
  check_credit_balance();
}
END_TEST

/* Withdrawn while it is being cut (its last pieces still queued behind a full rail): the CANCEL overtakes them,
 * the receiver drops the message once whole, the send completes -NM_ECANCELED, the next message of the tag
 * matches the receive. */
START_TEST(test_cancel_mid_cut)
{
  static uint8_t s[6000], s2[10], r[6000];
  nm_sr_request_t sr, sr2, rr;
  fill(s, sizeof(s), 5);
  memcpy(s2, "second", 7);
  fa->inject = 0; /* sends stay in flight: NM_STRAT_MAX_INFLIGHT pieces leave, the rest waits */
  ck_assert_int_eq(nm_sr_isend(sa, ga(), 4, s, sizeof(s), &sr), 0);
  ck_assert_int_eq(fa->n_pkts, NM_STRAT_MAX_INFLIGHT);
  ck_assert_uint_gt(sr.frag_off, 0);
  ck_assert_uint_lt(sr.frag_off, sizeof(s));
  ck_assert_int_eq(nm_sr_scancel(sa, &sr), 0);
  ck_assert_int_eq(nm_sr_isend(sa, ga(), 4, s2, sizeof(s2), &sr2), 0);
  for (int i = 0; i < 50 && (fa->n_inflight || nm_gate_has_work(ga()) || fa->n_pkts); i++) {
    fake_complete_sends(a, fa);
    pump();
  }
  ck_assert_int_eq(nm_sr_stest(sa, &sr), -NM_ECANCELED);
  ck_assert_int_eq(nm_sr_stest(sa, &sr2), 0);
  ck_assert_int_eq(nm_sr_irecv(sb, gb(), 4, r, sizeof(r), &rr), 0);
  ck_assert_int_eq(nm_sr_rtest(sb, &rr), 0);
  ck_assert_str_eq((char *)r, "second");
  check_credit_balance();
}
END_TEST

/* The sender dies with a message half there: a receive it went to completes with the error, a partial stored
 * message is freed and its credit accounting undone. */
START_TEST(test_gate_fail_mid_message)
{
  int posted = _i;
  static uint8_t s[2][3000], r[2][3000];
  nm_sr_request_t sr[2], rr[2];
  /* Two messages in reassembly at once: the first is kept apart (gate->frag_one), the second in the hash. */
  for (int m = 0; m < 2; m++) {
    fill(s[m], sizeof(s[m]), 6u + (unsigned)m);
    if (posted)
      ck_assert_int_eq(nm_sr_irecv(sb, gb(), 8u + (nm_tag_t)m, r[m], sizeof(r[m]), &rr[m]), 0);
    ck_assert_int_eq(nm_sr_isend(sa, ga(), 8u + (nm_tag_t)m, s[m], sizeof(s[m]), &sr[m]), 0);
    nm_core_progress(a);
    ck_assert_int_ge(fa->n_pkts, 3);
    nm_core_packet(b, &b->drvs[0], fa->pkts[0].buf, fa->pkts[0].len, 0); /* the first piece only */
    fa->n_pkts = 0;
  }
  ck_assert_ptr_nonnull(gb()->frag_one);
  ck_assert_ptr_nonnull(gb()->frags);
  struct nm_core_stats_s st;
  nm_core_get_stats(b, &st);
  ck_assert_uint_eq(st.unexpected_bytes, posted ? 0 : 2 * nm_wire_credit_cost(sizeof(s[0])));
  nm_gate_fail(gb(), -NM_ECLOSED);
  ck_assert_ptr_null(gb()->frag_one);
  ck_assert_ptr_null(gb()->frags);
  ck_assert_uint_eq(gb()->frag_bytes, 0);
  nm_core_get_stats(b, &st);
  ck_assert_uint_eq(st.unexpected_bytes, 0);
  if (posted)
    for (int m = 0; m < 2; m++)
      ck_assert_int_eq(nm_sr_rtest(sb, &rr[m]), -NM_ECLOSED);
}
END_TEST

/* A crafted DATA_FRAG packet from rank @p src to b. */
static void inject_piece(int src, uint32_t seq, uint32_t off, uint32_t len, uint32_t msg_len)
{
  static uint8_t pkt[NM_WIRE_PKT_HDR_LEN + NM_WIRE_FRAG_HDR_LEN + 4096];
  ck_assert_uint_le(len, 4096);
  size_t o = NM_WIRE_PKT_HDR_LEN;
  o += nm_wire_put_frag_hdr(pkt + o, sb->id, 1, seq, len, off, msg_len, 0, 0, 0);
  memset(pkt + o, 0x5a, len);
  o += len;
  nm_wire_put_pkt_hdr(pkt, 1, (uint32_t)src, (uint32_t)o);
  nm_core_packet(b, &b->drvs[0], pkt, o, (uint64_t)src);
}

/* Pieces that contradict each other or exceed the bounds fail their gate and leave nothing behind. */
START_TEST(test_lying_pieces)
{
  nm_gate_t g2 = nm_core_gate(b, 2), g3 = nm_core_gate(b, 3), g0 = gb();
  /* overlapping: 600 + 500 bytes of a 1000-byte message */
  inject_piece(2, 0, 0, 600, 1000);
  ck_assert_int_eq(g2->status, 0);
  inject_piece(2, 0, 500, 500, 1000);
  ck_assert_int_eq(g2->status, -NM_EPROTO);
  ck_assert_ptr_null(g2->frags);
  /* two pieces of one message disagree on its length */
  inject_piece(3, 0, 0, 100, 1000);
  inject_piece(3, 0, 100, 100, 2000);
  ck_assert_int_eq(g3->status, -NM_EPROTO);
  /* more than the eager window announced: refused before anything is allocated */
  inject_piece(0, 0, 0, 100, (uint32_t)b->cfg.eager_credit);
  ck_assert_int_eq(g0->status, -NM_EPROTO);
  struct nm_core_stats_s st;
  nm_core_get_stats(b, &st);
  ck_assert_uint_eq(st.unexpected_bytes, 0);
}
END_TEST

START_TEST(test_duplicate_pieces)
{
  nm_gate_t g2 = nm_core_gate(b, 2), g3 = nm_core_gate(b, 3);
  /* a second head */
  inject_piece(2, 0, 0, 100, 1000);
  inject_piece(2, 0, 0, 100, 1000);
  ck_assert_int_eq(g2->status, -NM_EPROTO);
  /* a message delivered already comes again */
  inject_piece(3, 0, 0, 500, 1000);
  inject_piece(3, 0, 500, 500, 1000);
  ck_assert_int_eq(g3->status, 0);
  inject_piece(3, 0, 0, 500, 1000);
  ck_assert_int_eq(g3->status, -NM_EPROTO);
}
END_TEST

/* The decoder checks every field of a DATA_FRAG chunk: the piece lies in the message, is not empty nor the whole,
 * only the piece at offset 0 carries flags, the prefix lies in the message, the reserved bytes are 0. */
static int parse_piece(uint32_t off, uint32_t len, uint32_t msg_len, int sync, uint32_t prefix, size_t cut,
                       struct nm_wire_chunk_s *c)
{
  uint8_t buf[256];
  size_t n = nm_wire_put_frag_hdr(buf, 1, 2, 3, len, off, msg_len, sync, 0x1234, prefix);
  memset(buf + n, 0x11, len < 100 ? len : 100);
  n += len < 100 ? len : 100;
  size_t o = 0;
  return nm_wire_next_chunk(buf, n - cut, &o, c);
}

START_TEST(test_wire_checks)
{
  struct nm_wire_chunk_s c;
  ck_assert_int_eq(parse_piece(0, 40, 100, 1, 10, 0, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_DATA_FRAG);
  ck_assert_uint_eq(c.msg_len, 100);
  ck_assert_uint_eq(c.cookie, 0x1234);
  ck_assert_uint_eq(c.prefix_len, 10);
  ck_assert_int_eq(parse_piece(60, 40, 100, 0, 0, 0, &c), 0);
  ck_assert_uint_eq(c.offset, 60);
  ck_assert_int_eq(parse_piece(0, 0, 100, 0, 0, 0, &c), -NM_EPROTO);    /* empty */
  ck_assert_int_eq(parse_piece(0, 100, 100, 0, 0, 0, &c), -NM_EPROTO);  /* the whole message: that is DATA */
  ck_assert_int_eq(parse_piece(61, 40, 100, 0, 0, 0, &c), -NM_EPROTO);  /* ends past the message */
  ck_assert_int_eq(parse_piece(100, 1, 100, 0, 0, 0, &c), -NM_EPROTO);  /* starts past it */
  ck_assert_int_eq(parse_piece(UINT32_MAX, 2, 100, 0, 0, 0, &c), -NM_EPROTO);
  ck_assert_int_eq(parse_piece(10, 40, 100, 1, 0, 0, &c), -NM_EPROTO);  /* flags on a later piece */
  ck_assert_int_eq(parse_piece(0, 40, 100, 0, 101, 0, &c), -NM_EPROTO); /* prefix longer than the message */
  ck_assert_int_eq(parse_piece(0, 40, 100, 0, 0, 1, &c), -NM_EPROTO);   /* payload cut short */
  uint8_t buf[64];
  size_t n = nm_wire_put_frag_hdr(buf, 1, 2, 3, 10, 0, 100, 0, 0, 0);
  memset(buf + n, 0, 10);
  buf[2] = 1; /* reserved */
  size_t o = 0;
  ck_assert_int_eq(nm_wire_next_chunk(buf, n + 10, &o, &c), -NM_EPROTO);
  buf[2] = 0;
  buf[1] = 0x04; /* unknown flag */
  o = 0;
  ck_assert_int_eq(nm_wire_next_chunk(buf, n + 10, &o, &c), -NM_EPROTO);
}
END_TEST

/* Packets with a DATA_FRAG chunk for the next message a sends of @p len bytes. */
static int frags_for(size_t len)
{
  static uint8_t buf[8 * TEST_INJECT];
  nm_sr_request_t s, r;
  ck_assert_uint_le(len, sizeof(buf));
  ck_assert_int_eq(nm_sr_isend(sa, ga(), 2, buf, len, &s), 0);
  int n = pump();
  ck_assert_int_eq(nm_sr_irecv(sb, gb(), 2, buf, sizeof(buf), &r), 0);
  ck_assert_int_eq(nm_sr_rtest(sb, &r), 0);
  return n;
}

/* The default cuts messages of up to NM_FRAG_AUTO_PIECES inject sizes; NMAD_EAGER_FRAG_MAX=0 never cuts; a
 * rail that injects less than 1 KiB (tcp;ofi_rxm: 64 B) is never cut for; only a message alone in its queue is. */
START_TEST(test_policy)
{
  a->cfg.frag_max = NM_FRAG_MAX_AUTO;
  ck_assert_int_eq(frags_for(3 * TEST_INJECT), 4); /* 3 KiB plus headers: 4 pieces */
  ck_assert_int_eq(frags_for(3 * TEST_INJECT + 1), 0);
  a->cfg.frag_max = 0;
  ck_assert_int_eq(frags_for(2 * TEST_INJECT), 0);
  a->cfg.frag_max = 1 << 20;
  a->drvs[0].props.inject_size = 64;
  ck_assert_int_eq(frags_for(2 * TEST_INJECT), 0);
  a->drvs[0].props.inject_size = TEST_INJECT;
  /* a burst: the first message, alone when sent, is cut; the second, queued with the third behind it, goes whole
   * (a stream is faster aggregated); the third, alone again, is cut: 3 + 3 pieces */
  static uint8_t buf[3][2048], rbuf[3][2048];
  nm_sr_request_t s[3], r[3];
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(nm_sr_isend(sa, ga(), 11, buf[i], sizeof(buf[i]), &s[i]), 0);
  ck_assert_int_eq(pump(), 6);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(nm_sr_irecv(sb, gb(), 11, rbuf[i], sizeof(rbuf[i]), &r[i]), 0);
    ck_assert_int_eq(nm_sr_rtest(sb, &r[i]), 0);
    ck_assert_int_eq(nm_sr_stest(sa, &s[i]), 0);
  }
  check_credit_balance();
}
END_TEST

int main(void)
{
  Suite *s = suite_create("frag");
  TCase *tc = tcase_create("frag");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_every_size_around_inject, 0, 2);
  tcase_add_test(tc, test_interleaved_reversed);
  tcase_add_loop_test(tc, test_sync, 0, 2);
  tcase_add_test(tc, test_rpc_prefix);
  tcase_add_loop_test(tc, test_truncation, 0, 2);
  tcase_add_test(tc, test_cancel_mid_cut);
  tcase_add_loop_test(tc, test_gate_fail_mid_message, 0, 2);
  tcase_add_test(tc, test_lying_pieces);
  tcase_add_test(tc, test_duplicate_pieces);
  tcase_add_test(tc, test_policy);
  tcase_add_test(tc, test_wire_checks);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
