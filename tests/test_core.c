/* Unit tests of the core through a fake driver: tag matching (order, any-source, masks, unexpected messages),
 * malformed input, rendezvous and synchronous-send protocols, gate failure, self sends, monitors, and what the
 * strategies put into packets (aggreg packs N messages in one packet, prio order). */
#define _GNU_SOURCE /* CPU_SET */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_driver.h"
#include <nmad/nm_sendrecv.h>
#include <unistd.h>
#include "nmad/launcher/nm_progress_place.h"
#include "nmad/launcher/nm_rank_spread.h"

static nm_core_t core;
static struct fake_drv_s *fake;
static nm_session_t sess;
static uint8_t pkt[70000];

static void setup_strategy(const char *strategy)
{
  core = fake_core_new(4, strategy, 1024, &fake);
  ck_assert_ptr_nonnull(core);
  ck_assert_int_eq(nm_session_open(core, "test", &sess), 0);
}
static void setup(void) { setup_strategy("aggreg"); }
static void teardown(void) { fake_core_free(core); }

static nm_gate_t gate(int r) { return nm_core_gate(core, r); }

static void inject(const uint8_t *buf, size_t len, int src)
{
  nm_core_packet(core, &core->drvs[0], buf, len, (uint64_t)src);
}

static void inject_data(int src, nm_tag_t tag, uint32_t seq, const char *text)
{
  size_t len = fake_data_packet(pkt, (uint32_t)src, sess->id, tag, seq, text, (uint32_t)strlen(text) + 1);
  inject(pkt, len, src);
}

/* Decode captured packet i into its chunks; returns the chunk count. */
static int decode(int i, struct nm_wire_chunk_s *chunks, int max)
{
  struct fake_pkt_s *p = &fake->pkts[i];
  struct nm_wire_pkt_s h;
  ck_assert_int_eq(nm_wire_validate(p->buf, p->len, &h), 0);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  for (int c = 0; c < h.n_chunks && c < max; c++)
    ck_assert_int_eq(nm_wire_next_chunk(p->buf, p->len, &off, &chunks[c]), 0);
  return h.n_chunks;
}

START_TEST(test_order_same_tag)
{
  char b[3][16];
  nm_sr_request_t r[3];
  inject_data(1, 5, 0, "first");
  inject_data(1, 5, 1, "second");
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 5, b[i], sizeof(b[i]), &r[i]), 0);
  inject_data(1, 5, 2, "third");
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(nm_sr_rtest(sess, &r[i]), 0);
  ck_assert_str_eq(b[0], "first");
  ck_assert_str_eq(b[1], "second");
  ck_assert_str_eq(b[2], "third");
}
END_TEST

START_TEST(test_out_of_order_arrival)
{
  char b[2][16];
  nm_sr_request_t r[2];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 7, b[0], 16, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 7, b[1], 16, &r[1]), 0);
  inject_data(2, 7, 1, "later"); /* overtook its predecessor on another rail */
  ck_assert_int_eq(nm_sr_rtest(sess, &r[0]), -NM_EAGAIN);
  inject_data(2, 7, 0, "earlier");
  ck_assert_int_eq(nm_sr_rtest(sess, &r[0]), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[1]), 0);
  ck_assert_str_eq(b[0], "earlier");
  ck_assert_str_eq(b[1], "later");
}
END_TEST

/* A session opened with NM_SESSION_ORDER_BY_CONTEXT numbers the messages of one context in one stream: a
 * message of another tag that overtook its predecessor is held back too, and many tags keep one counter. */
static void inject_ctx(nm_session_t s, int src, nm_tag_t tag, uint32_t seq, const char *text)
{
  size_t len = fake_data_packet(pkt, (uint32_t)src, s->id, tag, seq, text, (uint32_t)strlen(text) + 1);
  inject(pkt, len, src);
}

START_TEST(test_order_by_context)
{
  nm_session_t cs;
  ck_assert_int_eq(nm_session_open_flags(core, "test", NM_SESSION_ORDER_BY_CONTEXT, &cs), 0);
  ck_assert_uint_ne(cs->id, sess->id); /* the flag is part of the id: a peer without it never mixes streams */
  ck_assert_int_eq(nm_session_open_flags(core, "other", 0x80, &cs), -NM_EINVAL);
  const nm_tag_t ctx = (nm_tag_t)3 << 32, other_ctx = (nm_tag_t)4 << 32;
  char b[3][16];
  nm_sr_request_t r[3];
  ck_assert_int_eq(nm_sr_irecv(cs, gate(2), ctx | 7, b[0], 16, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv(cs, gate(2), ctx | 9, b[1], 16, &r[1]), 0);
  ck_assert_int_eq(nm_sr_irecv(cs, gate(2), other_ctx | 9, b[2], 16, &r[2]), 0);
  inject_ctx(cs, 2, ctx | 9, 1, "second"); /* its predecessor in the stream has another tag */
  inject_ctx(cs, 2, other_ctx | 9, 0, "own stream"); /* another context: its own numbering */
  ck_assert_int_eq(nm_sr_rtest(cs, &r[1]), -NM_EAGAIN);
  ck_assert_int_eq(nm_sr_rtest(cs, &r[2]), 0);
  inject_ctx(cs, 2, ctx | 7, 0, "first");
  ck_assert_int_eq(nm_sr_rtest(cs, &r[0]), 0);
  ck_assert_int_eq(nm_sr_rtest(cs, &r[1]), 0);
  ck_assert_str_eq(b[0], "first");
  ck_assert_str_eq(b[1], "second");
  ck_assert_str_eq(b[2], "own stream");
  /* sends on 100 tags of one context: one sequence counter for the gate, numbered 0..99 */
  static char payload[100][8];
  static nm_sr_request_t sr[100]; /* still queued at teardown, which completes them */
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq(nm_sr_isend(cs, gate(1), ctx | (nm_tag_t)(1000 + i), payload[i], sizeof(payload[i]), &sr[i]), 0);
  unsigned streams = 0;
  for (struct nm_seq_s *q = gate(1)->seqs; q; q = q->hh.next)
    streams += q->key.session == cs->id;
  ck_assert_uint_eq(streams, 1);
  ck_assert_uint_eq(nm_gate_seq(gate(1), cs->id, ctx | 5)->next_send, 100);
}
END_TEST

START_TEST(test_duplicate_seq_fails_gate)
{
  char b[16];
  nm_sr_request_t r;
  inject_data(3, 1, 0, "x");
  ck_assert_int_eq(nm_sr_irecv(sess, gate(3), 2, b, 16, &r), 0);
  inject_data(3, 1, 0, "x"); /* replayed sequence number */
  ck_assert_int_eq(gate(3)->status, -NM_EPROTO);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EPROTO);
}
END_TEST

START_TEST(test_any_source)
{
  char b[16];
  nm_sr_request_t r;
  nm_gate_t src = NULL;
  nm_tag_t tag = 0;
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 9, b, 16, &r), 0);
  ck_assert_int_eq(nm_sr_recv_source(sess, &r, &src), -NM_EAGAIN);
  inject_data(2, 9, 0, "from2");
  ck_assert_int_eq(nm_sr_rwait(sess, &r), 0);
  ck_assert_int_eq(nm_sr_recv_source(sess, &r, &src), 0);
  ck_assert_ptr_eq(src, gate(2));
  ck_assert_int_eq(nm_sr_recv_get_tag(sess, &r, &tag), 0);
  ck_assert(tag == 9);
  ck_assert_str_eq(b, "from2");
}
END_TEST

START_TEST(test_tag_mask)
{
  char b[16];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv_mask(sess, NM_ANY_GATE, 0x100, 0xff00, b, 16, &r), 0);
  inject_data(1, 0x2ab, 0, "nomatch");
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN);
  inject_data(1, 0x1cd, 0, "match");
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  ck_assert_str_eq(b, "match");
  nm_tag_t tag;
  nm_sr_recv_get_tag(sess, &r, &tag);
  ck_assert(tag == 0x1cd);
  /* the non-matching one stayed unexpected */
  nm_gate_t g;
  nm_len_t len;
  ck_assert_int_eq(nm_sr_iprobe(sess, NM_ANY_GATE, 0x2ab, NM_TAG_MASK_FULL, &g, &tag, &len), 0);
  ck_assert_ptr_eq(g, gate(1));
  ck_assert_uint_eq(len, 8);
}
END_TEST

START_TEST(test_unexpected_then_posted)
{
  char b[16];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_iprobe(sess, gate(1), 4, NM_TAG_MASK_FULL, NULL, NULL, NULL), -NM_EAGAIN);
  inject_data(1, 4, 0, "early");
  ck_assert_int_eq(nm_sr_iprobe(sess, gate(1), 4, NM_TAG_MASK_FULL, NULL, NULL, NULL), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 4, b, 16, &r), 0);
  ck_assert_int_eq(r.completed, 1);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(b, "early");
  ck_assert_int_eq(nm_sr_iprobe(sess, gate(1), 4, NM_TAG_MASK_FULL, NULL, NULL, NULL), -NM_EAGAIN);
}
END_TEST

START_TEST(test_truncation)
{
  char b[4] = {0};
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 3, b, 4, &r), 0);
  inject_data(1, 3, 0, "0123456789");
  ck_assert_int_eq(nm_sr_rwait(sess, &r), -NM_ETRUNCATED);
  ck_assert_mem_eq(b, "0123", 4);
  nm_len_t n;
  ck_assert_int_eq(nm_sr_get_size(sess, &r, &n), 0);
  ck_assert_uint_eq(n, 4);
}
END_TEST

START_TEST(test_malformed_fails_gate_only)
{
  char b[16], c[16];
  nm_sr_request_t r, any;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(3), 1, b, 16, &r), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 1, c, 16, &any), 0);
  size_t len = fake_data_packet(pkt, 3, sess->id, 1, 0, "payload", 8);
  inject(pkt, len - 3, 3); /* truncated */
  ck_assert_int_eq(gate(3)->status, -NM_EPROTO);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EPROTO);
  ck_assert_int_eq(nm_sr_rtest(sess, &any), -NM_EAGAIN);
  /* later packets from the failed gate are ignored; other gates work */
  inject(pkt, len, 3);
  ck_assert_int_eq(nm_sr_rtest(sess, &any), -NM_EAGAIN);
  inject_data(1, 1, 0, "ok");
  ck_assert_int_eq(nm_sr_rtest(sess, &any), 0);
  /* sends to the failed gate complete with its error */
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(3), 1, "x", 1, &s), -NM_EPROTO);
  ck_assert_int_eq(nm_sr_swait(sess, &s), -NM_EPROTO);
}
END_TEST

START_TEST(test_lying_source_fails_gate)
{
  size_t len = fake_data_packet(pkt, 2, sess->id, 1, 0, "spoof", 6); /* claims rank 2 */
  inject(pkt, len, 1);                                                /* but came from rank 1 */
  ck_assert_int_eq(gate(1)->status, -NM_EPROTO);
  ck_assert_int_eq(gate(2)->status, 0);
}
END_TEST

/* The doors (doc/reliability.md): the driver names the sender; the header's rank must agree. */
START_TEST(test_forged_rank_fails_that_gate_only)
{
  char b2[16], b3[16];
  nm_sr_request_t r2, r3;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 1, b2, sizeof(b2), &r2), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(3), 1, b3, sizeof(b3), &r3), 0);
  size_t len = fake_data_packet(pkt, 2, sess->id, 1, 0, "forged", 7); /* claims rank 2 */
  inject(pkt, len, 3);                                                 /* the driver says rank 3 */
  ck_assert_int_eq(gate(3)->status, -NM_EPROTO);
  ck_assert_int_eq(nm_sr_rtest(sess, &r3), -NM_EPROTO);
  ck_assert_int_eq(nm_sr_rtest(sess, &r2), -NM_EAGAIN); /* rank 2's stream is untouched */
  inject_data(2, 1, 0, "real");
  ck_assert_int_eq(nm_sr_rwait(sess, &r2), 0);
  ck_assert_str_eq(b2, "real");
  ck_assert_int_eq(gate(1)->status, 0);
  ck_assert_int_eq(gate(2)->status, 0);
  struct nm_core_refused_s ref;
  ck_assert_int_eq(nm_core_get_refused(core, &ref), 0);
  ck_assert_uint_eq(ref.foreign + ref.unknown_source, 0); /* a job peer lied: a gate failure, not a refusal */
}
END_TEST

START_TEST(test_unknown_source_dropped_with_auth_driver)
{
  char b[16];
  nm_sr_request_t r;
  core->drvs[0].props.flags |= NM_DRV_F_AUTH_SOURCE;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, b, sizeof(b), &r), 0);
  size_t len = fake_data_packet(pkt, 1, sess->id, 1, 0, "stranger", 9);
  nm_core_packet(core, &core->drvs[0], pkt, len, UINT64_MAX); /* from an address outside the table */
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN);
  NM_CORE_FOR_GATES(core, g)
    ck_assert_int_eq(g->status, 0);
  struct nm_core_refused_s ref;
  ck_assert_int_eq(nm_core_get_refused(core, &ref), 0);
  ck_assert_uint_eq(ref.unknown_source, 1);
  ck_assert_uint_eq(ref.foreign, 0);
  inject_data(1, 1, 0, "rank 1"); /* the real sequence number 0 is still expected */
  ck_assert_int_eq(nm_sr_rwait(sess, &r), 0);
  ck_assert_str_eq(b, "rank 1");
}
END_TEST

START_TEST(test_unknown_source_trusts_header_without_auth)
{
  char b[16];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, b, sizeof(b), &r), 0);
  size_t len = fake_data_packet(pkt, 1, sess->id, 1, 0, "shm-like", 9);
  nm_core_packet(core, &core->drvs[0], pkt, len, UINT64_MAX); /* a driver that cannot tell: the header decides */
  ck_assert_int_eq(nm_sr_rwait(sess, &r), 0);
  ck_assert_str_eq(b, "shm-like");
}
END_TEST

/* Packets of another job (another key), of another protocol version, or not nmad at all: dropped and counted,
 * whatever source the driver gives them, and no gate fails. */
START_TEST(test_foreign_packets_refused)
{
  const uint64_t key = 0x0123456789abcdefULL;
  char b[16];
  nm_sr_request_t r;
  nm_core_set_job_key(core, key);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, b, sizeof(b), &r), 0);
  size_t len = fake_data_packet(pkt, 1, sess->id, 1, 0, "other", 6);
  nm_wire_put_pkt_hdr_key(pkt, 1, 1, (uint32_t)len, key ^ 1); /* another job's key */
  inject(pkt, len, 1);
  nm_core_packet(core, &core->drvs[0], pkt, len, UINT64_MAX);
  nm_wire_put_pkt_hdr_key(pkt, 1, 1, (uint32_t)len, key);
  pkt[1] = NM_WIRE_VERSION - 1; /* a peer of another version */
  inject(pkt, len, 1);
  inject((const uint8_t *)"not nmad", 8, 1);
  inject(pkt, 0, 1);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN);
  NM_CORE_FOR_GATES(core, g)
    ck_assert_int_eq(g->status, 0);
  struct nm_core_refused_s ref;
  ck_assert_int_eq(nm_core_get_refused(core, &ref), 0);
  ck_assert_uint_eq(ref.foreign, 5);
  ck_assert_uint_eq(ref.unknown_source, 0);
  pkt[1] = NM_WIRE_VERSION; /* the job's own packet gets in, and what we send carries the key */
  inject(pkt, len, 1);
  ck_assert_int_eq(nm_sr_rwait(sess, &r), 0);
  ck_assert_str_eq(b, "other");
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 1, "x", 2, &s), 0);
  ck_assert_int_eq(nm_sr_swait(sess, &s), 0);
  struct nm_wire_pkt_s h;
  ck_assert_int_eq(nm_wire_validate(fake->pkts[fake->n_pkts - 1].buf, fake->pkts[fake->n_pkts - 1].len, &h), 0);
  ck_assert_uint_eq(h.job_key, key);
  ck_assert_int_eq(nm_core_get_refused(core, NULL), -NM_EINVAL);
}
END_TEST

START_TEST(test_sessions_isolated_and_orphans)
{
  nm_session_t other;
  char b[16];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 1, b, 16, &r), 0);
  /* a message for a session we have not opened yet must not match "test" */
  const uint32_t later_id = 0x811c9dc5u; /* any id that is not sess->id */
  size_t len = fake_data_packet(pkt, 1, later_id, 1, 0, "orphan", 7);
  inject(pkt, len, 1);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN);
  ck_assert_int_eq(nm_session_open(core, "test", &other), -NM_EALREADY);
  ck_assert_int_eq(nm_session_open(core, "other", &other), 0);
  /* the orphan is adopted only by the session whose id it carries */
  ck_assert_int_eq(nm_sr_iprobe(other, NM_ANY_GATE, 1, NM_TAG_MASK_FULL, NULL, NULL, NULL),
                   other->id == later_id ? 0 : -NM_EAGAIN);
  inject_data(2, 1, 0, "mine");
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  ck_assert_str_eq(b, "mine");
}
END_TEST

START_TEST(test_orphan_adopted)
{
  /* compute the id "late" will get by opening and closing it first */
  nm_session_t late;
  ck_assert_int_eq(nm_session_open(core, "late", &late), 0);
  uint32_t id = late->id;
  ck_assert_int_eq(nm_session_close(late), 0);
  size_t len = fake_data_packet(pkt, 2, id, 6, 0, "kept", 5);
  inject(pkt, len, 2);
  ck_assert_int_eq(nm_session_open(core, "late", &late), 0);
  char b[8];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(late, gate(2), 6, b, 8, &r), 0);
  ck_assert_int_eq(nm_sr_rwait(late, &r), 0);
  ck_assert_str_eq(b, "kept");
}
END_TEST

START_TEST(test_rdv_receiver)
{
  static char big[100000];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 8, big, sizeof(big), &r), 0);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rdv(pkt + off, sess->id, 8, 0, 100000, 4242, 0);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  inject(pkt, off, 1);
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert_int_eq(fake->large[0].is_send, 0);
  ck_assert_uint_eq(fake->large[0].len, 100000);
  ck_assert_ptr_eq(fake->large[0].buf, big);
  nm_core_progress(core); /* the RTR goes out */
  ck_assert_int_eq(fake->n_pkts, 1);
  struct nm_wire_chunk_s c[4];
  ck_assert_int_eq(decode(0, c, 4), 1);
  ck_assert_uint_eq(c[0].type, NM_WIRE_RTR);
  ck_assert(c[0].cookie == 4242 && c[0].msg_len == 100000 && c[0].offset == 0);
  ck_assert(c[0].rtag == fake->large[0].rtag);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN);
  nm_core_large_done(core, fake->large[0].ctx, 0, 100000);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
}
END_TEST

START_TEST(test_rdv_receiver_truncated)
{
  static char small[5000];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 8, small, sizeof(small), &r), 0);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rdv(pkt + off, sess->id, 8, 0, 100000, 1, 0);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  inject(pkt, off, 1);
  ck_assert_uint_eq(fake->large[0].len, 5000); /* never more than the buffer */
  nm_core_progress(core);
  struct nm_wire_chunk_s c[2];
  decode(0, c, 2);
  ck_assert(c[0].msg_len == 5000);
  nm_core_large_done(core, fake->large[0].ctx, 0, 5000);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_ETRUNCATED);
}
END_TEST

START_TEST(test_rdv_sender)
{
  static char big[50000];
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
  struct nm_wire_chunk_s c[2];
  ck_assert_int_eq(decode(0, c, 2), 1);
  ck_assert_uint_eq(c[0].type, NM_WIRE_RDV);
  ck_assert(c[0].msg_len == sizeof(big));
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_EAGAIN);
  /* an RTR with an unknown cookie is a protocol error... on a gate we do not use further */
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rtr(pkt + off, 0, c[0].cookie, 0, sizeof(big), 77);
  nm_wire_put_pkt_hdr(pkt, 1, 2, (uint32_t)off);
  inject(pkt, off, 2);
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert_int_eq(fake->large[0].is_send, 1);
  ck_assert(fake->large[0].rtag == 77);
  ck_assert_ptr_eq(fake->large[0].buf, big);
  nm_core_large_done(core, fake->large[0].ctx, 0, sizeof(big));
  ck_assert_int_eq(nm_sr_stest(sess, &s), 0);
}
END_TEST

/* ---- get rendezvous (a driver whose receiver pulls: NM_DRV_F_RDV_GET) ---- */

static struct nm_wire_chunk_s last_chunk(void);
static void inject_cancel(int src, uint8_t type, uint8_t result, nm_tag_t tag, uint32_t seq);

static void fake_pulls(void) { core->drvs[0].props.flags |= NM_DRV_F_RDV_GET; }

static void inject_rdv(int src, nm_tag_t tag, uint32_t seq, uint64_t total, uint64_t cookie)
{
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rdv(pkt + off, sess->id, tag, seq, total, cookie, 0);
  nm_wire_put_pkt_hdr(pkt, 1, (uint32_t)src, (uint32_t)off);
  inject(pkt, off, src);
}

START_TEST(test_rdv_get_sender)
{
  static char big[50000];
  fake_pulls();
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  struct nm_wire_chunk_s c[2];
  ck_assert_int_eq(decode(0, c, 2), 1);
  ck_assert_uint_eq(c[0].type, NM_WIRE_RDV);
  ck_assert(c[0].cookie & NM_COOKIE_GET);
  /* the data is announced with the RDV: no RTR awaited */
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert_int_eq(fake->large[0].is_send, 1);
  ck_assert(fake->large[0].rtag == c[0].cookie && fake->large[0].len == sizeof(big));
  ck_assert_ptr_eq(fake->large[0].buf, big);
  ck_assert_int_eq(core->n_large, 0); /* the receiver does the work: the sender may sleep meanwhile */
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_EAGAIN);
  nm_core_large_done(core, fake->large[0].ctx, 0, sizeof(big));
  ck_assert_int_eq(nm_sr_stest(sess, &s), 0);
  ck_assert_ptr_null(gate(2)->rdv_sends.head);
  /* nobody asks for announced data: an RTR naming it is a protocol error */
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  struct nm_wire_chunk_s d = last_chunk();
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rtr(pkt + off, 0, d.cookie, 0, sizeof(big), 77);
  nm_wire_put_pkt_hdr(pkt, 1, 2, (uint32_t)off);
  inject(pkt, off, 2);
  ck_assert_int_eq(gate(2)->status, -NM_EPROTO);
}
END_TEST

START_TEST(test_rdv_get_sender_large_or_plain)
{
  /* without the driver flag, and above one chunk, the RDV waits for RTRs as before */
  static char big[50000];
  static nm_sr_request_t s, t; /* still pending at the teardown, which fails them */
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  ck_assert(!(last_chunk().cookie & NM_COOKIE_GET));
  ck_assert_int_eq(fake->n_large, 0);
  fake_pulls();
  core->cfg.rdv_chunk = 40000;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 12, big, sizeof(big), &t), 0);
  ck_assert(!(last_chunk().cookie & NM_COOKIE_GET));
  ck_assert_int_eq(fake->n_large, 0);
}
END_TEST

START_TEST(test_rdv_get_receiver)
{
  static char big[100000], small[5000];
  fake_pulls();
  nm_sr_request_t r, t;
  const uint64_t cookie = NM_COOKIE_GET | 4242;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 8, big, sizeof(big), &r), 0);
  inject_rdv(1, 8, 0, 100000, cookie);
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert(fake->large[0].is_send == 0 && fake->large[0].rtag == cookie && fake->large[0].len == 100000);
  ck_assert_ptr_eq(fake->large[0].buf, big);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 0); /* no RTR */
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN);
  nm_core_large_done(core, fake->large[0].ctx, 0, 100000);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  /* truncated: the receive takes what fits (unexpected first, matched at the receive) */
  inject_rdv(1, 8, 1, 100000, cookie + 1);
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 8, small, sizeof(small), &t), 0);
  ck_assert_int_eq(fake->n_large, 2);
  ck_assert(fake->large[1].rtag == cookie + 1 && fake->large[1].len == sizeof(small));
  nm_core_large_done(core, fake->large[1].ctx, 0, sizeof(small));
  ck_assert_int_eq(nm_sr_rtest(sess, &t), -NM_ETRUNCATED);
  ck_assert_int_eq(gate(1)->status, 0);
}
END_TEST

START_TEST(test_rdv_get_receiver_refused)
{
  /* a get rendezvous over a driver that does not pull: the peer is confused or forged */
  static char big[100000];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 8, big, sizeof(big), &r), 0);
  inject_rdv(1, 8, 0, 100000, NM_COOKIE_GET | 7);
  ck_assert_int_eq(fake->n_large, 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EPROTO);
  ck_assert_int_eq(gate(1)->status, -NM_EPROTO);
}
END_TEST

START_TEST(test_rdv_get_cancel)
{
  static char big[50000];
  fake_pulls();
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert_int_eq(nm_sr_scancel(sess, &s), 0);
  inject_cancel(2, NM_WIRE_CANCEL_REPLY, 1, 11, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_ECANCELED);
  ck_assert_int_eq(fake->cancelled, 1); /* its announcement taken back from the driver */
  nm_core_large_done(core, fake->large[0].ctx, -NM_ECANCELED, 0); /* the driver reports it: released */
  ck_assert_ptr_null(gate(2)->large);
  ck_assert_int_eq(gate(2)->status, 0);
}
END_TEST

START_TEST(test_rtr_out_of_range)
{
  static char big[50000];
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  struct nm_wire_chunk_s c[2];
  decode(0, c, 2);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rtr(pkt + off, 0, c[0].cookie, 40000, 20000, 77); /* past the end of the message */
  nm_wire_put_pkt_hdr(pkt, 1, 2, (uint32_t)off);
  inject(pkt, off, 2);
  ck_assert_int_eq(fake->n_large, 0);
  ck_assert_int_eq(gate(2)->status, -NM_EPROTO);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_EPROTO);
}
END_TEST

/* A send made inside a progress pass (here by a progress hook, as a collective's monitor sends its next round)
 * completes at post and keeps its rail busy for the rest of that pass, so that a burst aggregates. The caller of
 * the wait that ran that pass resumes after it: its next send to that gate goes at post, not at the next pass. */
struct send_in_pass_s {
  nm_gate_t gate;
  nm_sr_request_t req;
  int flag;
};
static char send_in_pass_buf[8];
static int send_in_pass(void *ref)
{
  struct send_in_pass_s *s = ref;
  if (s->flag)
    return 0;
  ck_assert_int_eq(nm_sr_isend(sess, s->gate, 5, send_in_pass_buf, sizeof(send_in_pass_buf), &s->req), 0);
  s->flag = 1;
  return 1;
}

START_TEST(test_send_after_wait_goes_at_post)
{
  fake->inject = 1;
  struct send_in_pass_s s = {gate(1), {0}, 0};
  struct nm_core_progress_hook_s h = {send_in_pass, &s, NULL};
  nm_core_progress_hook_add(core, &h);
  ck_assert_int_eq(nm_core_wait_flag(core, &s.flag, 0), 0);
  nm_core_progress_hook_remove(core, &h);
  ck_assert_int_eq(fake->n_pkts, 1); /* the hook's send left at post, inside the pass */
  nm_sr_request_t r2;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 5, send_in_pass_buf, sizeof(send_in_pass_buf), &r2), 0);
  ck_assert_int_eq(fake->n_pkts, 2); /* and so does the caller's next one, after the wait */
  ck_assert_int_eq(nm_sr_swait(sess, &r2), 0);
  ck_assert_int_eq(nm_sr_swait(sess, &s.req), 0);
}
END_TEST

/* A relative timeout runs from the wait's first look at the clock: a flag already set returns at once; one never
 * set times out after at least the timeout (the clock here is the monotonic one: the fake driver has none). */
START_TEST(test_wait_flag_for)
{
  volatile int set = 1, never = 0;
  ck_assert_int_eq(nm_core_wait_flag_for(core, &set, 1000000, 0), 0);
  uint64_t t0 = nm_core_time_ns(core);
  ck_assert_int_eq(nm_core_wait_flag_for(core, &never, 2000000, 0), -NM_ETIMEDOUT);
  ck_assert_uint_ge(nm_core_time_ns(core) - t0, 2000000);
}
END_TEST

static void count_call(void *ref) { ++*(int *)ref; }

/* The wait hook (the launcher's: a rank back on its processor) runs at the start of one wait in 16, however
 * short, and after each sleep in the drivers; none once removed. */
START_TEST(test_wait_hook)
{
  int calls = 0;
  volatile int set = 1;
  nm_core_set_wait_hook(core, count_call, &calls);
  for (int i = 0; i < 15; i++)
    ck_assert_int_eq(nm_core_wait_flag_for(core, &set, 1000000, 0), 0);
  ck_assert_int_eq(calls, 0);
  ck_assert_int_eq(nm_core_wait_flag(core, &set, 0), 0); /* the 16th */
  ck_assert_int_eq(calls, 1);
  for (int i = 0; i < 16; i++)
    ck_assert_int_eq(nm_core_wait_flag_spin(core, &set, 0, 1000), 0);
  ck_assert_int_eq(calls, 2);
  /* nm_core_wait() sleeps in the drivers from its first idle pass (the fake driver has no wait fd: back-off
   * sleeps, in ppoll from 20 us on) */
  calls = 0;
  ck_assert_int_eq(nm_core_wait(core, nm_core_time_ns(core) + 2000000), -NM_ETIMEDOUT);
  ck_assert_int_gt(calls, 0);
  nm_core_set_wait_hook(core, NULL, NULL);
  calls = 0;
  for (int i = 0; i < 16; i++)
    ck_assert_int_eq(nm_core_wait_flag(core, &set, 0), 0);
  ck_assert_int_eq(nm_core_wait(core, nm_core_time_ns(core) + 1000000), -NM_ETIMEDOUT);
  ck_assert_int_eq(calls, 0);
}
END_TEST

START_TEST(test_sync_send)
{
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_issend(sess, gate(1), 2, "sync", 5, &s), 0);
  struct nm_wire_chunk_s c[2];
  ck_assert_int_eq(decode(0, c, 2), 1);
  ck_assert_uint_eq(c[0].flags, NM_WIRE_FLAG_SYNC);
  nm_core_progress(core);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_EAGAIN); /* sent, not matched */
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_ack(pkt + off, c[0].cookie);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  inject(pkt, off, 1);
  ck_assert_int_eq(nm_sr_stest(sess, &s), 0);
}
END_TEST

START_TEST(test_sync_recv_sends_ack)
{
  char b[8];
  nm_sr_request_t r;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_data_hdr(pkt + off, sess->id, 2, 0, 3, 1, 555, 0);
  memcpy(pkt + off, "abc", 3);
  off += 3;
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  inject(pkt, off, 1);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 0); /* no ACK before the receive matches */
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 2, b, 8, &r), 0);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 1);
  struct nm_wire_chunk_s c[2];
  decode(0, c, 2);
  ck_assert_uint_eq(c[0].type, NM_WIRE_ACK);
  ck_assert(c[0].cookie == 555);
}
END_TEST

START_TEST(test_cancel)
{
  char b[8];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, b, 8, &r), 0);
  ck_assert_int_eq(nm_sr_rcancel(sess, &r), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_ECANCELED);
  inject_data(1, 1, 0, "late");
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, b, 8, &r), 0);
  ck_assert_int_eq(nm_sr_rcancel(sess, &r), -NM_EBUSY); /* already matched */
  ck_assert_str_eq(b, "late");
}
END_TEST

START_TEST(test_gate_failure_completes_requests)
{
  static char big[50000];
  char b[8];
  nm_sr_request_t s, r, l;
  fake->inject = 0; /* packets stay in flight */
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 1, "x", 2, &s), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 1, b, 8, &r), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 2, big, sizeof(big), &l), 0);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rdv(pkt + off, sess->id, 2, 0, sizeof(big), 1, 0);
  nm_wire_put_pkt_hdr(pkt, 1, 2, (uint32_t)off);
  inject(pkt, off, 2); /* large receive now posted in the driver */
  nm_gate_fail(gate(2), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_rtest(sess, &l), -NM_ECLOSED);
  ck_assert_int_eq(fake->cancelled, 1);
  /* late driver completions of detached work are harmless */
  fake_complete_sends(core, fake);
  nm_core_large_done(core, fake->large[0].ctx, -NM_ECANCELED, 0);
}
END_TEST

START_TEST(test_self_send)
{
  static char big[3000], got[3000];
  char b[8];
  nm_sr_request_t s, r, s2, r2;
  for (size_t i = 0; i < sizeof(big); i++)
    big[i] = (char)i;
  ck_assert_int_eq(nm_sr_isend(sess, gate(0), 1, "self", 5, &s), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(0), 1, b, 8, &r), 0);
  ck_assert_int_eq(nm_sr_isend(sess, gate(0), 2, big, sizeof(big), &s2), 0); /* above the 1024 B threshold */
  ck_assert_int_eq(nm_sr_irecv(sess, gate(0), 2, got, sizeof(got), &r2), 0);
  ck_assert_int_eq(nm_sr_swait(sess, &s), 0);
  ck_assert_int_eq(nm_sr_rwait(sess, &r), 0);
  ck_assert_int_eq(nm_sr_swait(sess, &s2), 0);
  ck_assert_int_eq(nm_sr_rwait(sess, &r2), 0);
  ck_assert_str_eq(b, "self");
  ck_assert_mem_eq(big, got, sizeof(big));
  ck_assert_int_eq(fake->n_pkts, 0); /* nothing went to the network */
}
END_TEST

static int monitor_calls;
static unsigned monitor_event;
static void monitor(struct nm_req_s *req, unsigned event, void *ref)
{
  monitor_calls++;
  monitor_event = event;
  ck_assert_ptr_eq(ref, &monitor_calls);
}

START_TEST(test_monitor)
{
  char b[8];
  nm_sr_request_t r;
  monitor_calls = 0;
  nm_sr_recv_init(sess, &r);
  ck_assert_int_eq(nm_sr_request_set_monitor(sess, &r, NM_EVENT_RECV_COMPLETED, monitor, &monitor_calls), 0);
  ck_assert_int_eq(nm_sr_recv_irecv(sess, &r, gate(1), 1, NM_TAG_MASK_FULL, b, 8), 0);
  ck_assert_int_eq(monitor_calls, 0);
  inject_data(1, 1, 0, "evt");
  ck_assert_int_eq(monitor_calls, 1);
  ck_assert_uint_eq(monitor_event, NM_EVENT_RECV_COMPLETED);
}
END_TEST

/* A monitor attached to a request already posted fires at its completion; once completed, attaching one is
 * refused (it would never be called). */
START_TEST(test_monitor_after_post)
{
  char b[8];
  nm_sr_request_t r;
  monitor_calls = 0;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 2, b, 8, &r), 0);
  ck_assert_int_eq(nm_sr_request_set_monitor(sess, &r, NM_EVENT_RECV_COMPLETED, monitor, &monitor_calls), 0);
  ck_assert_int_eq(monitor_calls, 0);
  inject_data(1, 2, 0, "late");
  ck_assert_int_eq(monitor_calls, 1);
  ck_assert_int_eq(nm_sr_rwait(sess, &r), 0);
  ck_assert_str_eq(b, "late");
  ck_assert_int_eq(nm_sr_request_set_monitor(sess, &r, NM_EVENT_RECV_COMPLETED, monitor, &monitor_calls),
                   -NM_EALREADY);
  ck_assert_int_eq(monitor_calls, 1);
}
END_TEST

/* ---- withdrawing sends (nm_sr_scancel, CANCEL / CANCEL_REPLY) ---- */

static void inject_cancel(int src, uint8_t type, uint8_t result, nm_tag_t tag, uint32_t seq)
{
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_cancel(pkt + off, type, result, sess->id, tag, seq);
  nm_wire_put_pkt_hdr(pkt, 1, (uint32_t)src, (uint32_t)off);
  inject(pkt, off, src);
}

/* The last chunk of the last packet sent (progress first, so that queued control chunks leave). */
static struct nm_wire_chunk_s last_chunk(void)
{
  nm_core_progress(core);
  struct nm_wire_chunk_s c[8];
  int n = decode(fake->n_pkts - 1, c, 8);
  ck_assert_int_ge(n, 1);
  ck_assert_int_le(n, 8);
  return c[n - 1];
}

START_TEST(test_cancel_eager_withdrawn)
{
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 3, "x", 2, &s), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), 0); /* its data left */
  ck_assert_int_eq(nm_sr_scancel(sess, &s), 0);
  ck_assert_int_eq(nm_sr_scancel(sess, &s), -NM_EALREADY);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_EAGAIN); /* re-armed until the receiver answers */
  struct nm_wire_chunk_s c = last_chunk();
  ck_assert_uint_eq(c.type, NM_WIRE_CANCEL);
  ck_assert(c.session == sess->id && c.tag == 3 && c.seq == 0);
  inject_cancel(1, NM_WIRE_CANCEL_REPLY, 1, 3, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_ECANCELED);
  ck_assert_int_eq(gate(1)->status, 0);
}
END_TEST

START_TEST(test_cancel_eager_too_late)
{
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 3, "x", 2, &s), 0);
  ck_assert_int_eq(nm_sr_scancel(sess, &s), 0);
  inject_cancel(1, NM_WIRE_CANCEL_REPLY, 0, 3, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), 0); /* a receive had matched it: delivered */
}
END_TEST

START_TEST(test_cancel_eager_in_flight)
{
  nm_sr_request_t s;
  fake->inject = 0; /* packets stay in the driver until fake_complete_sends() */
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 3, "x", 2, &s), 0);
  ck_assert_int_eq(nm_sr_scancel(sess, &s), 0);
  ck_assert_uint_eq(last_chunk().type, NM_WIRE_CANCEL);
  inject_cancel(1, NM_WIRE_CANCEL_REPLY, 1, 3, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_EAGAIN); /* withdrawn, but its buffer is still being sent */
  fake_complete_sends(core, fake);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_ECANCELED);
}
END_TEST

START_TEST(test_cancel_rdv)
{
  static char big[50000];
  nm_sr_request_t s, t;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &s), 0);
  ck_assert_int_eq(nm_sr_scancel(sess, &s), 0);
  inject_cancel(2, NM_WIRE_CANCEL_REPLY, 1, 11, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_ECANCELED);
  ck_assert_int_eq(fake->n_large, 0); /* no data moved */
  /* a synchronous rendezvous send: the same (its RDV never gets an RTR) */
  nm_sr_request_t u;
  ck_assert_int_eq(nm_sr_issend(sess, gate(2), 12, big, sizeof(big), &u), 0);
  ck_assert_int_eq(nm_sr_scancel(sess, &u), 0);
  inject_cancel(2, NM_WIRE_CANCEL_REPLY, 1, 12, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &u), -NM_ECANCELED);
  /* once the receiver asked for the data (RTR), it is too late */
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 11, big, sizeof(big), &t), 0);
  struct nm_wire_chunk_s c = last_chunk();
  ck_assert_uint_eq(c.type, NM_WIRE_RDV);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rtr(pkt + off, 0, c.cookie, 0, sizeof(big), 78);
  nm_wire_put_pkt_hdr(pkt, 1, 2, (uint32_t)off);
  inject(pkt, off, 2);
  ck_assert_int_eq(fake->n_large, 1);
  ck_assert_int_eq(nm_sr_scancel(sess, &t), -NM_EBUSY);
  nm_core_large_done(core, fake->large[0].ctx, 0, sizeof(big));
  ck_assert_int_eq(nm_sr_stest(sess, &t), 0);
}
END_TEST

START_TEST(test_cancel_sync)
{
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_issend(sess, gate(1), 2, "sync", 5, &s), 0);
  struct nm_wire_chunk_s c = last_chunk();
  ck_assert_int_eq(nm_sr_scancel(sess, &s), 0);
  inject_cancel(1, NM_WIRE_CANCEL_REPLY, 1, 2, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &s), -NM_ECANCELED);
  /* an acknowledged synchronous send was matched: nothing to withdraw */
  ck_assert_int_eq(nm_sr_issend(sess, gate(1), 2, "sync", 5, &s), 0);
  c = last_chunk();
  ck_assert_uint_eq(c.type, NM_WIRE_DATA);
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_ack(pkt + off, c.cookie);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  inject(pkt, off, 1);
  ck_assert_int_eq(nm_sr_stest(sess, &s), 0);
  ck_assert_int_eq(nm_sr_scancel(sess, &s), -NM_EBUSY);
}
END_TEST

START_TEST(test_cancel_receiver_unexpected)
{
  char b[16];
  nm_sr_request_t r;
  inject_data(1, 4, 0, "withdrawn");
  inject_cancel(1, NM_WIRE_CANCEL, 0, 4, 0);
  struct nm_wire_chunk_s c = last_chunk();
  ck_assert_uint_eq(c.type, NM_WIRE_CANCEL_REPLY);
  ck_assert(c.tag == 4 && c.seq == 0 && c.result == 1);
  inject_data(1, 4, 1, "next");
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 4, b, sizeof(b), &r), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  ck_assert_str_eq(b, "next");
}
END_TEST

START_TEST(test_cancel_receiver_tombstone)
{
  char b[16];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 6, b, sizeof(b), &r), 0);
  inject_cancel(1, NM_WIRE_CANCEL, 0, 6, 0); /* overtook its message */
  ck_assert_uint_eq(last_chunk().result, 1);
  inject_data(1, 6, 0, "withdrawn");
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EAGAIN); /* dropped on arrival */
  inject_data(1, 6, 1, "next");
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  ck_assert_str_eq(b, "next");
  inject_cancel(1, NM_WIRE_CANCEL, 0, 6, 5);
  inject_cancel(1, NM_WIRE_CANCEL, 0, 6, 5); /* the same message withdrawn twice: a protocol error */
  ck_assert_int_eq(gate(1)->status, -NM_EPROTO);
}
END_TEST

START_TEST(test_cancel_receiver_matched)
{
  char b[16];
  nm_sr_request_t r;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 8, b, sizeof(b), &r), 0);
  inject_data(1, 8, 0, "kept");
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  inject_cancel(1, NM_WIRE_CANCEL, 0, 8, 0);
  ck_assert_uint_eq(last_chunk().result, 0);
  ck_assert_str_eq(b, "kept");
}
END_TEST

START_TEST(test_cancel_reply_unknown)
{
  inject_cancel(1, NM_WIRE_CANCEL_REPLY, 0, 9, 0); /* "too late" for a send that completed meanwhile: ignored */
  ck_assert_int_eq(gate(1)->status, 0);
  inject_cancel(1, NM_WIRE_CANCEL_REPLY, 1, 9, 0); /* withdrawn, but nothing asked for it */
  ck_assert_int_eq(gate(1)->status, -NM_EPROTO);
}
END_TEST

/* Post one send (it leaves at once), then n more while the rail is busy; return the packets of one pass. */
static int burst(int n, nm_sr_request_t *reqs, char (*msgs)[8])
{
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 100, "lead", 5, &reqs[n]), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
  for (int i = 0; i < n; i++) {
    snprintf(msgs[i], 8, "m%d", i);
    ck_assert_int_eq(nm_sr_isend(sess, gate(1), 100, msgs[i], 8, &reqs[i]), 0);
  }
  ck_assert_int_eq(fake->n_pkts, 1); /* rail busy: queued */
  nm_core_progress(core);
  return fake->n_pkts - 1;
}

START_TEST(test_aggreg_packs_all)
{
  nm_sr_request_t reqs[33];
  char msgs[32][8];
  ck_assert_int_eq(burst(32, reqs, msgs), 1);
  struct nm_wire_chunk_s c[40];
  ck_assert_int_eq(decode(1, c, 40), 32);
  for (int i = 0; i < 32; i++) {
    ck_assert_uint_eq(c[i].seq, (uint32_t)i + 1);
    ck_assert_str_eq((const char *)c[i].payload, msgs[i]);
  }
  for (int i = 0; i < 33; i++)
    ck_assert_int_eq(nm_sr_stest(sess, &reqs[i]), 0);
}
END_TEST

START_TEST(test_aggreg_respects_packet_size)
{
  /* 20 messages of 8000 B: 8 fit in a 64 KiB packet */
  static char data[20][8000];
  nm_sr_request_t reqs[21];
  core->cfg.rdv_threshold = 32768; /* eager */
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 1, "lead", 5, &reqs[20]), 0);
  for (int i = 0; i < 20; i++)
    nm_sr_isend(sess, gate(1), 1, data[i], 8000, &reqs[i]);
  for (int pass = 0; pass < 10; pass++)
    nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 4);
  struct nm_wire_chunk_s c[40];
  ck_assert_int_eq(decode(1, c, 40), 8);
  ck_assert_int_eq(decode(2, c, 40), 8);
  ck_assert_int_eq(decode(3, c, 40), 4);
  for (int i = 1; i < 4; i++)
    ck_assert_uint_le(fake->pkts[i].len, 65536);
}
END_TEST

START_TEST(test_default_one_chunk_per_packet)
{
  teardown();
  setup_strategy("default");
  nm_sr_request_t reqs[9];
  char msgs[8][8];
  ck_assert_int_eq(burst(8, reqs, msgs), 1);
  for (int pass = 0; pass < 20; pass++)
    nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 9);
  struct nm_wire_chunk_s c[2];
  for (int i = 1; i < 9; i++) {
    ck_assert_int_eq(decode(i, c, 2), 1);
    ck_assert_str_eq((const char *)c[0].payload, msgs[i - 1]);
  }
}
END_TEST

START_TEST(test_prio_order)
{
  teardown();
  setup_strategy("prio");
  /* queued: A(prio 1, tag 1), B(prio 5, tag 2), C(prio 9, tag 1), D(prio 3, tag 3) */
  struct { nm_prio_t prio; nm_tag_t tag; const char *name; } m[4] = {
    {1, 1, "A"}, {5, 2, "B"}, {9, 1, "C"}, {3, 3, "D"}};
  nm_sr_request_t lead, reqs[4];
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 50, "lead", 5, &lead), 0);
  for (int i = 0; i < 4; i++) {
    nm_sr_send_init(sess, &reqs[i]);
    ck_assert_int_eq(nm_sr_send_set_priority(sess, &reqs[i], m[i].prio), 0);
    ck_assert_int_eq(nm_sr_send_isend(sess, &reqs[i], gate(1), m[i].tag, m[i].name, 2), 0);
  }
  ck_assert_int_eq(nm_sr_send_set_priority(sess, &reqs[0], 7), -NM_EINVAL); /* already posted */
  nm_core_progress(core);
  struct nm_wire_chunk_s c[4];
  ck_assert_int_eq(decode(1, c, 4), 4);
  /* B first (most urgent); C (9) may not overtake A (same tag 1), so A then C; D (3) last */
  ck_assert_str_eq((const char *)c[0].payload, "B");
  ck_assert_str_eq((const char *)c[1].payload, "A");
  ck_assert_str_eq((const char *)c[2].payload, "C");
  ck_assert_str_eq((const char *)c[3].payload, "D");
}
END_TEST

START_TEST(test_bad_arguments)
{
  nm_sr_request_t r;
  char b[4] = "abc";
  ck_assert_int_eq(nm_sr_isend(sess, (nm_gate_t)&r, 1, b, 4, &r), -NM_EINVAL);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, NULL, 4, &r), -NM_EINVAL);
  ck_assert_int_eq(nm_session_open(core, "", &sess), -NM_EINVAL);
}
END_TEST


/* The progress thread completes transfers without any nmad call from the application, and runs monitors on its
 * own thread (the schedules of the MPI shim's non-blocking collectives advance from there). Self transfers
 * complete only in the self driver's progress, so nothing here can complete without the thread. */
static pthread_t monitor_thread;
static void monitor_record_thread(struct nm_req_s *req, unsigned event, void *ref)
{
  monitor_thread = pthread_self();
  *(int *)ref = 1;
}

START_TEST(test_progress_thread)
{
  static char big[3000], got[3000];
  static volatile int monitored; /* written by the monitor, on the progress thread */
  nm_sr_request_t s, r;
  for (size_t i = 0; i < sizeof(big); i++)
    big[i] = (char)(i * 7);
  monitored = 0;
  ck_assert_int_eq(nm_core_progress_thread_running(core), 0);
  ck_assert_int_eq(nm_core_progress_thread_start(core, NULL, 0), 0);
  ck_assert_int_eq(nm_core_progress_thread_start(core, NULL, 0), -NM_EALREADY);
  ck_assert_int_eq(nm_core_progress_thread_running(core), 1);
  nm_core_lock(core); /* recursive: the interfaces below take it again */
  nm_sr_recv_init(sess, &r);
  ck_assert_int_eq(nm_sr_request_set_monitor(sess, &r, NM_EVENT_RECV_COMPLETED, monitor_record_thread,
                                             (void *)&monitored), 0);
  ck_assert_int_eq(nm_sr_recv_irecv(sess, &r, gate(0), 5, NM_TAG_MASK_FULL, got, sizeof(got)), 0);
  ck_assert_int_eq(nm_sr_isend(sess, gate(0), 5, big, sizeof(big), &s), 0); /* rendezvous: 3000 B > 1024 B */
  nm_core_unlock(core);
  /* no nmad call until both completed: only the progress thread can move them (the deadline only bounds a
   * failure) */
  uint64_t deadline = nm_core_time_ns(core) + 30ULL * 1000000000ULL;
  int done = 0;
  while (!done && nm_core_time_ns(core) < deadline) {
    sched_yield();
    nm_core_lock(core); /* reading the completion fields under the lock orders them after the thread's writes */
    done = s.completed && r.completed && monitored;
    nm_core_unlock(core);
  }
  nm_core_progress_thread_stop(core);
  ck_assert_int_eq(nm_core_progress_thread_running(core), 0);
  ck_assert_int_eq(done, 1);
  ck_assert_int_eq(s.status, 0);
  ck_assert_int_eq(r.status, 0);
  ck_assert_mem_eq(big, got, sizeof(big));
  ck_assert(!pthread_equal(monitor_thread, pthread_self()));
  nm_core_progress_thread_stop(core); /* stopping twice is harmless */
}
END_TEST

/* Another thread that progresses the core: posts a self send and its receive, and completes both, all under the
 * lock, so that the waiting thread can see none of it in its own progress passes. */
static void *progress_elsewhere(void *arg)
{
  (void)arg;
  static char out[16] = "elsewhere", in[16];
  nm_sr_request_t s, r;
  nm_core_lock(core);
  int err = nm_sr_irecv(sess, gate(0), 9, in, sizeof(in), &r);
  if (!err)
    err = nm_sr_isend(sess, gate(0), 9, out, sizeof(out), &s);
  while (!err && !(s.completed && r.completed))
    nm_core_progress(core);
  nm_core_unlock(core);
  return err ? (void *)"post failed" : strcmp(in, out) ? (void *)"wrong data" : NULL;
}

/* nm_core_wait() returns when the core progressed in another thread while the waiter slept without the lock (the
 * progress thread handles most events when it runs): before, a flush whose sends the progress thread pushed out
 * waited forever (the intermittent hang of the launcher's barrier with NMAD_PROGRESS=thread). */
START_TEST(test_wait_sees_other_thread)
{
  ck_assert_int_eq(nm_core_progress_thread_start(core, NULL, 0), 0);
  nm_core_lock(core); /* the other thread can post only once nm_core_wait() released the lock */
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, progress_elsewhere, NULL), 0);
  int err = nm_core_wait(core, nm_core_time_ns(core) + 2ULL * 1000000000ULL);
  nm_core_unlock(core);
  void *why;
  pthread_join(t, &why);
  nm_core_progress_thread_stop(core);
  ck_assert_ptr_null(why);
  ck_assert_int_eq(err, 0); /* -NM_ETIMEDOUT: the wait missed the other thread's events */
}
END_TEST

/* Placement of the progress thread (NMAD_BIND): idle processors are those no local rank's mask holds. */
START_TEST(test_progress_place)
{
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    return; /* one processor: no placement is possible, nothing to check */
  cpu_set_t own, used;
  CPU_ZERO(&own);
  CPU_SET(0, &own);
  used = own;
  int cpu = -1;
  ck_assert_int_eq(nm_progress_place(NM_BIND_BIND, 0, &own, &used, &cpu), 0); /* bind: the rank's own cores */
  ck_assert_int_eq(nm_progress_place(NM_BIND_ODD_EVEN, 0, &own, &used, &cpu), 1);
  ck_assert_int_eq(cpu, 1); /* processor 1 is the only idle one on two, the first idle one on more */
  ck_assert_int_eq(nm_progress_place(NM_BIND_ODD_EVEN, 2, &own, &used, &cpu), 1);
  ck_assert(cpu >= 1 && CPU_ISSET(cpu, &used) == 0);
  ck_assert_int_eq(nm_progress_place(NM_BIND_NUMA, 0, &own, &used, &cpu), 1);
  ck_assert(cpu >= 1);
  for (int c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
    CPU_SET(c, &used); /* every processor holds a rank: all policies fall back to the rank's own */
  ck_assert_int_eq(nm_progress_place(NM_BIND_ODD_EVEN, 1, &own, &used, &cpu), 0);
  ck_assert_int_eq(nm_progress_place(NM_BIND_NUMA, 1, &own, &used, &cpu), 0);
}
END_TEST

/* Start of the unbound ranks of an oversubscribed host (nm_rank_spread.c): local index i goes to the (i mod n)-th
 * processor of its mask; a bound rank, or a host with a core per rank, is left alone. */
START_TEST(test_rank_spread)
{
  cpu_set_t two, one;
  CPU_ZERO(&two);
  CPU_SET(2, &two);
  CPU_SET(5, &two); /* a mask with holes: processors 2 and 5 */
  int cpu = -1;
  const int want[4] = {2, 5, 2, 5};
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(nm_rank_spread_cpu(i, &two, &two, 4, &cpu), 1);
    ck_assert_int_eq(cpu, want[i]);
  }
  ck_assert_int_eq(nm_rank_spread_cpu(1, &two, &two, 2, &cpu), 0); /* 2 ranks on 2 processors: not oversubscribed */
  CPU_ZERO(&one);
  CPU_SET(2, &one);
  ck_assert_int_eq(nm_rank_spread_cpu(0, &one, &two, 4, &cpu), 0); /* bound to one of the host's processors */
  ck_assert_int_eq(nm_rank_spread_cpu(0, &one, &one, 3, &cpu), 0); /* one processor: nowhere to spread */
  /* applied to this thread: it ends with its own mask again */
  cpu_set_t own, after;
  ck_assert_int_eq(sched_getaffinity(0, sizeof(own), &own), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
    if (CPU_ISSET(c, &own))
      first = c;
  ck_assert_int_eq(nm_rank_spread_apply(first, &own), 0);
  ck_assert_int_eq(sched_getaffinity(0, sizeof(after), &after), 0);
  ck_assert(CPU_EQUAL(&own, &after));
}
END_TEST

/* The pacing of the returns (nm_rank_spread_pace()): rare returns always go; returns that follow each other within
 * NM_RANK_SPREAD_CONTESTED_NS of the end of the hold-off double it, up to its maximum; a quiet period clears it. */
START_TEST(test_rank_spread_pace)
{
  struct nm_rank_spread_pace_s p = {0, 0};
  const uint64_t ms = 1000000ULL, c = NM_RANK_SPREAD_CONTESTED_NS;
  uint64_t t = 5000 * ms;
  ck_assert_int_eq(nm_rank_spread_pace(&p, t), 1); /* the first one */
  ck_assert_uint_eq(p.holdoff_ns, 0);
  t += c + 1; /* rare: no hold-off */
  ck_assert_int_eq(nm_rank_spread_pace(&p, t), 1);
  ck_assert_uint_eq(p.holdoff_ns, 0);
  t += c / 2; /* contested: the first hold-off */
  ck_assert_int_eq(nm_rank_spread_pace(&p, t), 1);
  ck_assert_uint_eq(p.holdoff_ns, NM_RANK_SPREAD_HOLDOFF_MIN_NS);
  ck_assert_int_eq(nm_rank_spread_pace(&p, t + NM_RANK_SPREAD_HOLDOFF_MIN_NS - 1), 0); /* held */
  ck_assert_uint_eq(p.last_ns, t);
  uint64_t h = NM_RANK_SPREAD_HOLDOFF_MIN_NS;
  for (int k = 0; k < 20; k++) { /* displaced again each time the hold-off ends: it doubles, then stays at its max */
    t += h;
    ck_assert_int_eq(nm_rank_spread_pace(&p, t), 1);
    h = 2 * h > NM_RANK_SPREAD_HOLDOFF_MAX_NS ? NM_RANK_SPREAD_HOLDOFF_MAX_NS : 2 * h;
    ck_assert_uint_eq(p.holdoff_ns, h);
  }
  ck_assert_uint_eq(p.holdoff_ns, NM_RANK_SPREAD_HOLDOFF_MAX_NS);
  t += NM_RANK_SPREAD_HOLDOFF_MAX_NS + c; /* quiet for a contested period after the hold-off: cleared */
  ck_assert_int_eq(nm_rank_spread_pace(&p, t), 1);
  ck_assert_uint_eq(p.holdoff_ns, 0);
}
END_TEST

/* A rank found on another processor than its own as it waits goes back (nm_rank_spread_return()); one where it
 * should be is left alone; one whose mask someone else changed (an application binding its threads) is left where
 * it is. Needs two processors in this thread's mask. */
START_TEST(test_rank_spread_return)
{
  cpu_set_t own, both, away, home, now;
  ck_assert_int_eq(sched_getaffinity(0, sizeof(own), &own), 0);
  int a = -1, b = -1;
  for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
    if (CPU_ISSET(c, &own)) {
      if (a < 0)
        a = c;
      else
        b = c;
    }
  if (b < 0)
    return; /* one processor: a rank cannot be elsewhere */
  CPU_ZERO(&away);
  CPU_SET(a, &away);
  CPU_ZERO(&home);
  CPU_SET(b, &home);
  CPU_ZERO(&both);
  CPU_SET(a, &both);
  CPU_SET(b, &both);
  /* on a with its whole mask (a and b), as the kernel leaves it: moved back to b, the mask given back. The kernel
   * may move the thread itself between the placement and the call (rc 0): tried again then. */
  int rc = 0;
  for (int tries = 0; tries < 100 && rc == 0; tries++) {
    ck_assert_int_eq(sched_setaffinity(0, sizeof(away), &away), 0);
    ck_assert_int_eq(sched_setaffinity(0, sizeof(both), &both), 0);
    rc = nm_rank_spread_return(b, &both, NULL);
  }
  ck_assert_int_eq(rc, 1);
  ck_assert_int_eq(sched_getaffinity(0, sizeof(now), &now), 0);
  ck_assert(CPU_EQUAL(&now, &both));
  /* already there (a mask of b alone: the kernel cannot move it) */
  ck_assert_int_eq(sched_setaffinity(0, sizeof(home), &home), 0);
  ck_assert_int_eq(nm_rank_spread_return(b, &home, NULL), 0);
  /* the application bound the thread to a itself: not ours to move */
  ck_assert_int_eq(sched_setaffinity(0, sizeof(away), &away), 0);
  ck_assert_int_eq(nm_rank_spread_return(b, &both, NULL), NM_RANK_SPREAD_FOREIGN);
  ck_assert_int_eq(sched_getcpu(), a);
  ck_assert_int_eq(sched_getaffinity(0, sizeof(now), &now), 0);
  ck_assert(CPU_EQUAL(&now, &away));
  ck_assert_int_eq(sched_setaffinity(0, sizeof(own), &own), 0);
}
END_TEST

/* A fault source that reports rank 2 dead once (the launcher's, in a job). */
static int dead_reported;
static int report_rank2(void *ref, int *rank)
{
  (void)ref;
  if (dead_reported++)
    return 0;
  *rank = 2;
  return 1;
}

/* A peer that sends its last message and exits: the message and the news of its death come together. The core,
 * woken by the fault source, first delivers what the driver holds from that peer, then fails its gate: the
 * receive gets the data; a receive posted after the failure gets the error. */
START_TEST(test_dead_peer_last_message_delivered)
{
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  ck_assert_int_eq(write(fds[1], "x", 1), 1); /* the fault fd is readable: the wait wakes at once */
  dead_reported = 0;
  nm_core_set_fault_source(core, fds[0], report_rank2, NULL);
  char b[16] = "", c[16];
  nm_sr_request_t r, r2;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 5, b, sizeof(b), &r), 0);
  static uint8_t last[256];
  fake->arriving_len = fake_data_packet(last, 2, sess->id, 5, 0, "bye", 4);
  fake->arriving = last;
  fake->arriving_src = 2;
  fake->arrive_after = 2; /* not at the wait's first pass: it arrives while the core blocks */
  ck_assert_int_eq(nm_core_wait(core, nm_core_time_ns(core) + 2000000000ULL), 0);
  ck_assert_int_eq(dead_reported, 2); /* the death was seen (and the source asked again) */
  ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
  ck_assert_str_eq(b, "bye");
  ck_assert_int_eq(nm_gate_get_status(gate(2)), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 5, c, sizeof(c), &r2), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r2), -NM_ECLOSED);
  nm_core_set_fault_source(core, -1, NULL, NULL);
  close(fds[0]);
  close(fds[1]);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("core");
  TCase *tm = tcase_create("matching");
  tcase_add_checked_fixture(tm, setup, teardown);
  tcase_add_test(tm, test_order_same_tag);
  tcase_add_test(tm, test_dead_peer_last_message_delivered);
  tcase_add_test(tm, test_out_of_order_arrival);
  tcase_add_test(tm, test_order_by_context);
  tcase_add_test(tm, test_duplicate_seq_fails_gate);
  tcase_add_test(tm, test_any_source);
  tcase_add_test(tm, test_tag_mask);
  tcase_add_test(tm, test_unexpected_then_posted);
  tcase_add_test(tm, test_truncation);
  tcase_add_test(tm, test_malformed_fails_gate_only);
  tcase_add_test(tm, test_lying_source_fails_gate);
  tcase_add_test(tm, test_forged_rank_fails_that_gate_only);
  tcase_add_test(tm, test_unknown_source_dropped_with_auth_driver);
  tcase_add_test(tm, test_unknown_source_trusts_header_without_auth);
  tcase_add_test(tm, test_foreign_packets_refused);
  tcase_add_test(tm, test_sessions_isolated_and_orphans);
  tcase_add_test(tm, test_orphan_adopted);
  tcase_add_test(tm, test_cancel);
  tcase_add_test(tm, test_monitor);
  tcase_add_test(tm, test_monitor_after_post);
  tcase_add_test(tm, test_bad_arguments);
  suite_add_tcase(s, tm);
  TCase *tp = tcase_create("protocols");
  tcase_add_checked_fixture(tp, setup, teardown);
  tcase_add_test(tp, test_rdv_receiver);
  tcase_add_test(tp, test_rdv_receiver_truncated);
  tcase_add_test(tp, test_rdv_sender);
  tcase_add_test(tp, test_rtr_out_of_range);
  tcase_add_test(tp, test_rdv_get_sender);
  tcase_add_test(tp, test_rdv_get_sender_large_or_plain);
  tcase_add_test(tp, test_rdv_get_receiver);
  tcase_add_test(tp, test_rdv_get_receiver_refused);
  tcase_add_test(tp, test_sync_send);
  tcase_add_test(tp, test_wait_flag_for);
  tcase_add_test(tp, test_wait_hook);
  tcase_add_test(tp, test_send_after_wait_goes_at_post);
  tcase_add_test(tp, test_sync_recv_sends_ack);
  tcase_add_test(tp, test_cancel_eager_withdrawn);
  tcase_add_test(tp, test_cancel_eager_too_late);
  tcase_add_test(tp, test_cancel_eager_in_flight);
  tcase_add_test(tp, test_cancel_rdv);
  tcase_add_test(tp, test_rdv_get_cancel);
  tcase_add_test(tp, test_cancel_sync);
  tcase_add_test(tp, test_cancel_receiver_unexpected);
  tcase_add_test(tp, test_cancel_receiver_tombstone);
  tcase_add_test(tp, test_cancel_receiver_matched);
  tcase_add_test(tp, test_cancel_reply_unknown);
  tcase_add_test(tp, test_gate_failure_completes_requests);
  tcase_add_test(tp, test_self_send);
  tcase_add_test(tp, test_progress_thread);
  tcase_add_test(tp, test_wait_sees_other_thread);
  tcase_add_test(tp, test_progress_place);
  tcase_add_test(tp, test_rank_spread);
  tcase_add_test(tp, test_rank_spread_return);
  tcase_add_test(tp, test_rank_spread_pace);
  suite_add_tcase(s, tp);
  TCase *ts = tcase_create("strategies");
  tcase_add_checked_fixture(ts, setup, teardown);
  tcase_add_test(ts, test_aggreg_packs_all);
  tcase_add_test(ts, test_aggreg_respects_packet_size);
  tcase_add_test(ts, test_default_one_chunk_per_packet);
  tcase_add_test(ts, test_prio_order);
  suite_add_tcase(s, ts);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
