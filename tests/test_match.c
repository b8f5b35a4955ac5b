/* Unit tests of constant-time matching (issue 15, part 5; nmad/core/nm_match.c, nm_match_hash.c): (gate, tag)
 * buckets with hash collisions, wildcard receives mixed with exact ones (post order kept), any-source, masks,
 * unexpected-then-post and post-then-arrive, 100,000 outstanding receives matched in reverse order, the release
 * of a long reversed sequence, duplicates held back, receive cancel, and the cookie index of rendezvous sends.
 * Through the fake driver (tests/fake_driver.h), as test_core.c. Nothing here measures time. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_driver.h"
#include <nmad/nm_sendrecv.h>

static nm_core_t core;
static struct fake_drv_s *fake;
static nm_session_t sess;
static uint8_t pkt[4096];

static void setup(void)
{
  core = fake_core_new(4, "aggreg", 1024, &fake);
  ck_assert_ptr_nonnull(core);
  ck_assert_int_eq(nm_session_open(core, "match", &sess), 0);
}
static void teardown(void) { fake_core_free(core); }

static nm_gate_t gate(int r) { return nm_core_gate(core, r); }

/* Message @p seq of (src, tag) carrying the 8-byte value @p v. */
static void inject_val(int src, nm_tag_t tag, uint32_t seq, uint64_t v)
{
  size_t len = fake_data_packet(pkt, (uint32_t)src, sess->id, tag, seq, &v, sizeof(v));
  nm_core_packet(core, &core->drvs[0], pkt, len, (uint64_t)src);
}

/* Next sequence number of (src, tag) as the sender numbers it (a stream per (session, tag)). */
static uint32_t seq_of[4][64];
static void send_val(int src, nm_tag_t tag, uint64_t v)
{
  ck_assert(tag < 64);
  inject_val(src, tag, seq_of[src][tag]++, v);
}

static void expect_val(nm_sr_request_t *r, const uint64_t *buf, uint64_t v, int src)
{
  ck_assert_int_eq(nm_sr_rtest(sess, r), 0);
  ck_assert_uint_eq(*buf, v);
  nm_gate_t g = NULL;
  ck_assert_int_eq(nm_sr_recv_source(sess, r, &g), 0);
  ck_assert_ptr_eq(g, gate(src));
}

/* Buckets holding something (empty ones are kept for reuse, up to NM_MATCH_EMPTY_KEEP). */
static unsigned n_buckets(void) { return HASH_COUNT(sess->match->buckets) - sess->match->n_empty; }

/* Many (gate, tag) keys in one table: more keys than uthash buckets, so chains hold several keys, and keys that
 * differ only by gate or by one high tag bit. Each message finds its own receive. */
START_TEST(test_collisions)
{
  enum { N = 3000 };
  static nm_sr_request_t r[N];
  static uint64_t b[N];
  for (int i = 0; i < N; i++) {
    int src = 1 + i % 3;
    nm_tag_t tag = (nm_tag_t)(i / 3) | ((i & 1) ? (nm_tag_t)1 << 63 : 0);
    ck_assert_int_eq(nm_sr_irecv(sess, gate(src), tag, &b[i], sizeof(b[i]), &r[i]), 0);
  }
  ck_assert_uint_eq(n_buckets(), N);
  /* pigeonhole: more keys than table buckets, so some chain holds two keys or more */
  ck_assert_uint_gt(HASH_COUNT(sess->match->buckets), sess->match->buckets->hh.tbl->num_buckets);
  for (int i = N - 1; i >= 0; i--) {
    int src = 1 + i % 3;
    nm_tag_t tag = (nm_tag_t)(i / 3) | ((i & 1) ? (nm_tag_t)1 << 63 : 0);
    inject_val(src, tag, 0, (uint64_t)i);
  }
  for (int i = 0; i < N; i++)
    expect_val(&r[i], &b[i], (uint64_t)i, 1 + i % 3);
  ck_assert_uint_eq(n_buckets(), 0);
  /* memory goes with the last receive of a key, but for the NM_MATCH_EMPTY_KEEP most recently emptied buckets */
  ck_assert_uint_eq(HASH_COUNT(sess->match->buckets), NM_MATCH_EMPTY_KEEP);
}
END_TEST

/* Several receives of one key: post order. Exact and wildcard receives interleaved: whichever was posted first
 * among those that match takes the message. */
START_TEST(test_wildcards_mixed_with_exact)
{
  nm_sr_request_t r[6];
  uint64_t b[6];
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 5, &b[0], 8, &r[0]), 0);             /* any source */
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 5, &b[1], 8, &r[1]), 0);                 /* exact */
  ck_assert_int_eq(nm_sr_irecv_mask(sess, gate(1), 4, ~(nm_tag_t)1, &b[2], 8, &r[2]), 0); /* tags 4, 5 of gate 1 */
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 5, &b[3], 8, &r[3]), 0);                 /* exact */
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 5, &b[4], 8, &r[4]), 0);             /* any source */
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 5, &b[5], 8, &r[5]), 0);                 /* exact */
  send_val(1, 5, 100); /* r0: the first posted, a wildcard */
  expect_val(&r[0], &b[0], 100, 1);
  send_val(2, 5, 200); /* gate 2: only the any-source receives match; r4 is the first left */
  expect_val(&r[4], &b[4], 200, 2);
  send_val(1, 5, 101); /* r1 (exact, posted before the masked r2) */
  expect_val(&r[1], &b[1], 101, 1);
  send_val(1, 5, 102);
  expect_val(&r[2], &b[2], 102, 1);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[3]), -NM_EAGAIN);
  send_val(1, 5, 103);
  send_val(1, 5, 104);
  expect_val(&r[3], &b[3], 103, 1);
  expect_val(&r[5], &b[5], 104, 1);
  ck_assert_ptr_null(sess->match->wild.head);
  ck_assert_uint_eq(n_buckets(), 0);
}
END_TEST

/* Unexpected messages: an exact receive takes the first arrived of its key, a wildcard one the first arrived of
 * all that match (any source, tag mask), whatever bucket it sits in. */
START_TEST(test_unexpected_then_post)
{
  send_val(2, 7, 1);
  send_val(1, 7, 2);
  send_val(1, 8, 3);
  send_val(3, 7, 4);
  send_val(1, 7, 5);
  ck_assert_uint_eq(n_buckets(), 4); /* (2,7) (1,7) (1,8) (3,7) */
  nm_sr_request_t r[5];
  uint64_t b[5];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 7, &b[0], 8, &r[0]), 0);
  expect_val(&r[0], &b[0], 2, 1);
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 7, &b[1], 8, &r[1]), 0);
  expect_val(&r[1], &b[1], 1, 2);
  ck_assert_int_eq(nm_sr_irecv_mask(sess, gate(1), 0, NM_TAG_MASK_NONE, &b[2], 8, &r[2]), 0); /* any tag of gate 1 */
  expect_val(&r[2], &b[2], 3, 1);
  ck_assert_int_eq(nm_sr_irecv_mask(sess, NM_ANY_GATE, 0, NM_TAG_MASK_NONE, &b[3], 8, &r[3]), 0);
  expect_val(&r[3], &b[3], 4, 3);
  nm_gate_t g;
  nm_tag_t t;
  nm_len_t len;
  ck_assert_int_eq(nm_sr_iprobe(sess, NM_ANY_GATE, 7, NM_TAG_MASK_FULL, &g, &t, &len), 0);
  ck_assert_ptr_eq(g, gate(1));
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 7, &b[4], 8, &r[4]), 0);
  expect_val(&r[4], &b[4], 5, 1);
  ck_assert_ptr_null(sess->unexp_head);
  ck_assert_uint_eq(n_buckets(), 0);
}
END_TEST

/* Unexpected messages around the size kept in the record itself (NM_UNEXP_SMALL), in a recycled buffer
 * (NM_UNEXP_MEDIUM) and above it, twice (the second round reuses the buffers of the first): each comes out whole in
 * its receive, bytes and length, and its storage is freed (ASan in .ci/sanitize sees a leak or a bad free). */
START_TEST(test_unexpected_sizes)
{
  const uint32_t lens[] = {1, NM_UNEXP_SMALL - 1, NM_UNEXP_SMALL, NM_UNEXP_SMALL + 1, NM_UNEXP_MEDIUM, 3000};
  enum { N = sizeof(lens) / sizeof(lens[0]) };
  static uint8_t sent[N][3000], got[N][3000];
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++) {
      for (uint32_t k = 0; k < lens[i]; k++)
        sent[i][k] = (uint8_t)(i * 31 + k * 7 + 1 + round * 101);
      size_t len = fake_data_packet(pkt, 2, sess->id, 9, seq_of[2][9]++, sent[i], lens[i]);
      nm_core_packet(core, &core->drvs[0], pkt, len, 2);
    }
    for (int i = 0; i < N; i++) {
      nm_sr_request_t r;
      memset(got[i], 0, sizeof(got[i]));
      ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 9, got[i], sizeof(got[i]), &r), 0);
      ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
      nm_len_t n = 0;
      ck_assert_int_eq(nm_sr_get_size(sess, &r, &n), 0);
      ck_assert_uint_eq(n, lens[i]);
      ck_assert_int_eq(memcmp(got[i], sent[i], lens[i]), 0);
    }
    ck_assert_ptr_null(sess->unexp_head);
  }
  ck_assert_uint_ge(core->n_unexp_bufs, 1); /* the medium buffers went back to the core's cache */
}
END_TEST

/* Post then arrive, then the reverse on the same key: the bucket serves both and is gone when empty. */
START_TEST(test_post_then_arrive)
{
  nm_sr_request_t r[4];
  uint64_t b[4];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 9, &b[0], 8, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 9, &b[1], 8, &r[1]), 0);
  ck_assert_uint_eq(n_buckets(), 1);
  send_val(1, 9, 10);
  send_val(1, 9, 11);
  send_val(1, 9, 12);
  expect_val(&r[0], &b[0], 10, 1);
  expect_val(&r[1], &b[1], 11, 1);
  ck_assert_uint_eq(n_buckets(), 1); /* 12 waits unexpected */
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 9, &b[2], 8, &r[2]), 0);
  expect_val(&r[2], &b[2], 12, 1);
  ck_assert_uint_eq(n_buckets(), 0);
}
END_TEST

/* Masks on the context bits (as the MPI shim uses them): a masked receive takes any tag of its context, in
 * arrival order, and never one of another context. */
START_TEST(test_masks)
{
  const nm_tag_t ctx = (nm_tag_t)3 << 32, ctx_mask = ~(nm_tag_t)0 << 32;
  nm_sr_request_t r[3];
  uint64_t b[3];
  uint64_t v = 1;
  inject_val(1, ((nm_tag_t)4 << 32) | 7, 0, 99); /* another context */
  inject_val(1, ctx | 7, 0, v++);
  inject_val(1, ctx | 3, 0, v++);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), ctx | 3, &b[0], 8, &r[0]), 0);
  expect_val(&r[0], &b[0], 2, 1);
  ck_assert_int_eq(nm_sr_irecv_mask(sess, NM_ANY_GATE, ctx, ctx_mask, &b[1], 8, &r[1]), 0);
  expect_val(&r[1], &b[1], 1, 1);
  ck_assert_int_eq(nm_sr_irecv_mask(sess, NM_ANY_GATE, ctx, ctx_mask, &b[2], 8, &r[2]), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[2]), -NM_EAGAIN); /* 99 is of context 4 */
  inject_val(2, ctx | 1234, 0, 3);
  expect_val(&r[2], &b[2], 3, 2);
}
END_TEST

/* 100,000 outstanding receives on distinct tags of one gate, matched in reverse order of posting (the worst case of
 * the former linear scan), then 100,000 unexpected messages received in reverse order of arrival. */
START_TEST(test_100k_reverse)
{
  enum { N = 100000 };
  nm_sr_request_t *r = calloc(N, sizeof(*r));
  uint64_t *b = calloc(N, sizeof(*b));
  ck_assert_ptr_nonnull(r);
  ck_assert_ptr_nonnull(b);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(nm_sr_irecv(sess, gate(1), (nm_tag_t)i, &b[i], 8, &r[i]), 0);
  for (int i = N - 1; i >= 0; i--) {
    inject_val(1, (nm_tag_t)i, 0, (uint64_t)i * 3);
    ck_assert_int_eq(nm_sr_rtest(sess, &r[i]), 0); /* matched on arrival */
  }
  for (int i = 0; i < N; i++)
    ck_assert_uint_eq(b[i], (uint64_t)i * 3);
  ck_assert_uint_eq(n_buckets(), 0);
  for (int i = 0; i < N; i++)
    inject_val(2, (nm_tag_t)i, 0, (uint64_t)i + 7);
  ck_assert_uint_eq(n_buckets(), N);
  for (int i = N - 1; i >= 0; i--) {
    ck_assert_int_eq(nm_sr_irecv(sess, gate(2), (nm_tag_t)i, &b[i], 8, &r[i]), 0);
    ck_assert_int_eq(nm_sr_rtest(sess, &r[i]), 0);
    ck_assert_uint_eq(b[i], (uint64_t)i + 7);
  }
  ck_assert_ptr_null(sess->unexp_head);
  ck_assert_uint_eq(n_buckets(), 0);
  free(r);
  free(b);
}
END_TEST

/* A long sequence arriving reversed: every message but the first is held back, keyed by sequence number, and all
 * are delivered in order when the first arrives. */
START_TEST(test_ooo_reversed)
{
  enum { N = 20000 };
  nm_sr_request_t *r = calloc(N, sizeof(*r));
  uint64_t *b = calloc(N, sizeof(*b));
  ck_assert_ptr_nonnull(r);
  ck_assert_ptr_nonnull(b);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(nm_sr_irecv(sess, gate(3), 42, &b[i], 8, &r[i]), 0);
  for (int i = N - 1; i >= 1; i--)
    inject_val(3, 42, (uint32_t)i, (uint64_t)i);
  ck_assert_uint_eq(HASH_COUNT(gate(3)->ooo), N - 1);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[0]), -NM_EAGAIN);
  inject_val(3, 42, 0, 0);
  ck_assert_ptr_null(gate(3)->ooo);
  for (int i = 0; i < N; i++) {
    ck_assert_int_eq(nm_sr_rtest(sess, &r[i]), 0);
    ck_assert_uint_eq(b[i], (uint64_t)i); /* receive i got message i: order kept */
  }
  ck_assert_int_eq(gate(3)->status, 0);
  free(r);
  free(b);
}
END_TEST

/* Streams of other tags and sessions are held apart: a successor of another tag with the same seq is not
 * released by this tag's predecessor. */
START_TEST(test_ooo_streams_apart)
{
  nm_sr_request_t r[3];
  uint64_t b[3];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, &b[0], 8, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 2, &b[1], 8, &r[1]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 1, &b[2], 8, &r[2]), 0);
  inject_val(1, 1, 1, 11); /* tag 1, seq 1: waits for tag 1 seq 0 */
  inject_val(1, 2, 1, 21); /* tag 2, seq 1: waits for tag 2 seq 0 */
  inject_val(1, 1, 0, 10);
  expect_val(&r[0], &b[0], 10, 1);
  expect_val(&r[2], &b[2], 11, 1);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[1]), -NM_EAGAIN); /* 21 still held */
  ck_assert_uint_eq(HASH_COUNT(gate(1)->ooo), 1);
  /* r[1] is on this stack: withdrawn before it goes out of scope (the teardown's gate failure would complete it) */
  ck_assert_int_eq(nm_sr_rcancel(sess, &r[1]), 0);
}
END_TEST

/* The same sequence number held back twice is a duplicate from the network: the gate fails (it could never be
 * delivered, and would hold memory forever). */
START_TEST(test_ooo_duplicate_fails_gate)
{
  nm_sr_request_t r;
  uint64_t b;
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 4, &b, 8, &r), 0);
  inject_val(2, 4, 5, 1);
  ck_assert_int_eq(gate(2)->status, 0);
  inject_val(2, 4, 5, 2);
  ck_assert_int_eq(gate(2)->status, -NM_EPROTO);
  ck_assert_int_eq(nm_sr_rtest(sess, &r), -NM_EPROTO);
  ck_assert_ptr_null(gate(2)->ooo);
}
END_TEST

/* Cancelled receives leave their bucket or the wildcard list; the others keep their order. */
START_TEST(test_rcancel)
{
  nm_sr_request_t r[4];
  uint64_t b[4];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 3, &b[0], 8, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 3, &b[1], 8, &r[1]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 3, &b[2], 8, &r[2]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 3, &b[3], 8, &r[3]), 0);
  ck_assert_int_eq(nm_sr_rcancel(sess, &r[0]), 0);
  ck_assert_int_eq(nm_sr_rcancel(sess, &r[1]), 0);
  ck_assert_int_eq(nm_sr_rcancel(sess, &r[3]), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[0]), -NM_ECANCELED);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[1]), -NM_ECANCELED);
  ck_assert_uint_eq(n_buckets(), 1); /* (2, 3) went with its only receive */
  send_val(1, 3, 7);
  expect_val(&r[2], &b[2], 7, 1);
  ck_assert_int_eq(nm_sr_rcancel(sess, &r[2]), -NM_EBUSY);
  ck_assert_uint_eq(n_buckets(), 0);
}
END_TEST

/* A failed gate completes the receives posted for it, exact and masked, and no other. */
START_TEST(test_gate_fail_posted)
{
  nm_sr_request_t r[4];
  uint64_t b[4];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 3, &b[0], 8, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv_mask(sess, gate(1), 0, NM_TAG_MASK_NONE, &b[1], 8, &r[1]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 3, &b[2], 8, &r[2]), 0);
  ck_assert_int_eq(nm_sr_irecv(sess, NM_ANY_GATE, 3, &b[3], 8, &r[3]), 0);
  nm_gate_fail(gate(1), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[0]), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[1]), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[2]), -NM_EAGAIN);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[3]), -NM_EAGAIN);
  send_val(2, 3, 5);
  send_val(2, 3, 6);
  expect_val(&r[2], &b[2], 5, 2);
  expect_val(&r[3], &b[3], 6, 2);
}
END_TEST

/* Synchronous sends wait in rdv_sends for their ACK, found by cookie in the index: acknowledged in reverse order,
 * each completes, and the index empties with the list. */
START_TEST(test_rdv_cookie_index)
{
  enum { N = 200 };
  static nm_sr_request_t s[N];
  static uint64_t cookies[N];
  fake->inject = 1;
  for (int i = 0; i < N; i++) {
    ck_assert_int_eq(nm_sr_issend(sess, gate(1), 2, "sync", 5, &s[i]), 0);
    nm_core_progress(core);
  }
  int n = 0;
  for (int p = 0; p < fake->n_pkts; p++) {
    struct nm_wire_pkt_s h;
    ck_assert_int_eq(nm_wire_validate(fake->pkts[p].buf, fake->pkts[p].len, &h), 0);
    size_t off = NM_WIRE_PKT_HDR_LEN;
    for (int c = 0; c < h.n_chunks; c++) {
      struct nm_wire_chunk_s ch;
      ck_assert_int_eq(nm_wire_next_chunk(fake->pkts[p].buf, fake->pkts[p].len, &off, &ch), 0);
      if (ch.type == NM_WIRE_DATA && (ch.flags & NM_WIRE_FLAG_SYNC))
        cookies[n++] = ch.cookie;
    }
  }
  ck_assert_int_eq(n, N);
  struct nm_gate_s *g = gate(1);
  ck_assert_ptr_nonnull(g->rdv_index);
  ck_assert_uint_eq(HASH_COUNT(g->rdv_index->table), N);
  for (int i = N - 1; i >= 0; i--) {
    ck_assert_ptr_eq(nm_req_index_find(&g->rdv_sends, cookies[i]), &s[i]);
    size_t off = NM_WIRE_PKT_HDR_LEN;
    off += nm_wire_put_ack(pkt + off, cookies[i]);
    nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
    nm_core_packet(core, &core->drvs[0], pkt, off, 1);
    ck_assert_int_eq(nm_sr_stest(sess, &s[i]), 0);
    ck_assert_ptr_null(nm_req_index_find(&g->rdv_sends, cookies[i]));
  }
  ck_assert_ptr_null(g->rdv_sends.head);
  ck_assert_uint_eq(HASH_COUNT(g->rdv_index->table), 0);
  size_t off = NM_WIRE_PKT_HDR_LEN; /* an ACK of a cookie no longer known is a protocol error, as before */
  off += nm_wire_put_ack(pkt + off, cookies[0]);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  nm_core_packet(core, &core->drvs[0], pkt, off, 1);
  ck_assert_int_eq(g->status, -NM_EPROTO);
}
END_TEST

/* Withdrawn messages that have not arrived leave tombstones, found by (session, tag, seq) when their turn comes. */
START_TEST(test_tombstones)
{
  nm_sr_request_t r;
  uint64_t b;
  for (uint32_t seq = 0; seq < 100; seq += 2) { /* withdraw the even ones, before they arrive */
    size_t off = NM_WIRE_PKT_HDR_LEN;
    off += nm_wire_put_cancel(pkt + off, NM_WIRE_CANCEL, 0, sess->id, 6, seq);
    nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
    nm_core_packet(core, &core->drvs[0], pkt, off, 1);
  }
  ck_assert_int_eq(gate(1)->n_tombstones, 50);
  ck_assert_uint_eq(HASH_COUNT(gate(1)->tombstones), 50);
  for (uint32_t seq = 100; seq-- > 0;)
    inject_val(1, 6, seq, seq); /* reversed: all held, then released in order */
  ck_assert_int_eq(gate(1)->n_tombstones, 0);
  for (uint64_t v = 1; v < 100; v += 2) { /* only the odd ones are left, in order */
    ck_assert_int_eq(nm_sr_irecv(sess, gate(1), 6, &b, 8, &r), 0);
    ck_assert_int_eq(nm_sr_rtest(sess, &r), 0);
    ck_assert_uint_eq(b, v);
  }
  ck_assert_ptr_null(sess->unexp_head);
  ck_assert_int_eq(gate(1)->status, 0);
}
END_TEST

/* Closing a session with receives and messages still in its tables completes and frees them. */
START_TEST(test_session_close)
{
  nm_session_t s2;
  ck_assert_int_eq(nm_session_open(core, "other", &s2), 0);
  nm_sr_request_t r[2];
  uint64_t b[2];
  ck_assert_int_eq(nm_sr_irecv(s2, gate(1), 1, &b[0], 8, &r[0]), 0);
  ck_assert_int_eq(nm_sr_irecv(s2, NM_ANY_GATE, 2, &b[1], 8, &r[1]), 0);
  uint64_t v = 5;
  size_t len = fake_data_packet(pkt, 2, s2->id, 3, 0, &v, sizeof(v));
  nm_core_packet(core, &core->drvs[0], pkt, len, 2);
  ck_assert_ptr_nonnull(s2->unexp_head);
  ck_assert_int_eq(nm_session_close(s2), 0);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[0]), -NM_ECANCELED);
  ck_assert_int_eq(nm_sr_rtest(sess, &r[1]), -NM_ECANCELED);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("match");
  TCase *t = tcase_create("hashed");
  tcase_set_timeout(t, 60);
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, test_collisions);
  tcase_add_test(t, test_wildcards_mixed_with_exact);
  tcase_add_test(t, test_unexpected_then_post);
  tcase_add_test(t, test_unexpected_sizes);
  tcase_add_test(t, test_post_then_arrive);
  tcase_add_test(t, test_masks);
  tcase_add_test(t, test_100k_reverse);
  tcase_add_test(t, test_ooo_reversed);
  tcase_add_test(t, test_ooo_streams_apart);
  tcase_add_test(t, test_ooo_duplicate_fails_gate);
  tcase_add_test(t, test_rcancel);
  tcase_add_test(t, test_gate_fail_posted);
  tcase_add_test(t, test_rdv_cookie_index);
  tcase_add_test(t, test_tombstones);
  tcase_add_test(t, test_session_close);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
