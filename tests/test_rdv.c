/* Unit tests of chunked, multi-rail rendezvous (issue 15, parts 2 and 3: nm_rdv.c, split_balance): two cores in
 * one process, each with two fake rails, wired back to back by this file (packets delivered, large transfers
 * matched by rendezvous tag and copied). Messages of sizes around the chunk size and the rail boundary arrive
 * whole at every offset, a short receive buffer truncates, the split follows the rails' bandwidths, at most
 * NM_RDV_CHUNKS_PER_RAIL chunks are in flight per rail, the more urgent receive is served first, and a gate
 * failure in mid-transfer completes the request. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "fake_driver.h"
#include <nmad/nm_sendrecv.h>

#define N_RAILS 2
#define CHUNK NM_RDV_CHUNK_MIN /* small chunks: many of them per message */

struct side_s {
  nm_core_t core;
  struct fake_drv_s *rail[N_RAILS];
  nm_session_t sess;
};
static struct side_s A, B; /* A = rank 0 sends, B = rank 1 receives */

/* Large receives posted and not met yet, per side. */
struct pend_s {
  struct fake_large_s l;
  int rail;
};
#define MAX_PEND 4096
static struct pend_s recvs[MAX_PEND], sends[MAX_PEND];
static int n_recvs, n_sends;
static int max_inflight[N_RAILS];  /* most receive chunks posted at once on a rail (receiver B) */
static uint64_t bytes_on_rail[N_RAILS];

static void side_new(struct side_s *s, int rank, uint32_t bw0, uint32_t bw1)
{
  struct nm_drv_s *drv, *self;
  ck_assert_int_eq(nm_core_create(rank, 2, &s->core), 0);
  uint32_t bw[N_RAILS] = {bw0, bw1};
  for (int i = 0; i < N_RAILS; i++) {
    ck_assert_int_eq(nm_core_add_driver(s->core, &fake_drv_ops, "fake", 1, &drv), 0);
    drv->props.latency_ns = 1000;
    drv->props.bandwidth_MBps = bw[i];
    s->rail[i] = drv->priv;
  }
  ck_assert_int_eq(nm_core_add_driver(s->core, &nm_drv_self_ops, "self", 1, &self), 0);
  self->ops->connect(self, (uint64_t)rank, NULL, 0);
  s->core->cfg.strategy = nm_strategy_lookup("aggreg");
  s->core->cfg.rdv_threshold = 1024;
  s->core->cfg.rdv_chunk = CHUNK;
  s->core->cfg.eager_credit = 0;
  ck_assert_int_eq(nm_session_open(s->core, "rdv", &s->sess), 0);
}

static void setup_bw(uint32_t bw0, uint32_t bw1)
{
  side_new(&A, 0, bw0, bw1);
  side_new(&B, 1, bw0, bw1);
  n_recvs = n_sends = 0;
  memset(max_inflight, 0, sizeof(max_inflight));
  memset(bytes_on_rail, 0, sizeof(bytes_on_rail));
}
static void setup(void) { setup_bw(1000, 3000); }
static void teardown(void)
{
  nm_core_destroy(A.core);
  nm_core_destroy(B.core);
}

/* Move what each side's rails captured: packets to the other core, large transfers into the pending lists. */
static int shuttle_side(struct side_s *from, struct side_s *to, int from_rank)
{
  int moved = 0;
  for (int i = 0; i < N_RAILS; i++) {
    struct fake_drv_s *f = from->rail[i];
    int n = f->n_pkts;
    f->n_pkts = 0;
    for (int k = 0; k < n; k++) {
      nm_core_packet(to->core, &to->core->drvs[i], f->pkts[k].buf, f->pkts[k].len, (uint64_t)from_rank);
      moved++;
    }
    for (int k = 0; k < f->n_large; k++) {
      struct pend_s *p = f->large[k].is_send ? &sends[n_sends++] : &recvs[n_recvs++];
      ck_assert_int_lt(n_sends, MAX_PEND);
      ck_assert_int_lt(n_recvs, MAX_PEND);
      p->l = f->large[k];
      p->rail = i;
      moved++;
    }
    f->n_large = 0;
  }
  return moved;
}

/* Meet large sends with their receives (same rendezvous tag and rail), copy, report both done. */
static int meet(void)
{
  int met = 0;
  int per_rail[N_RAILS] = {0};
  for (int r = 0; r < n_recvs; r++)
    per_rail[recvs[r].rail]++;
  for (int i = 0; i < N_RAILS; i++)
    if (per_rail[i] > max_inflight[i])
      max_inflight[i] = per_rail[i];
  for (int s = 0; s < n_sends; s++)
    for (int r = 0; r < n_recvs; r++) {
      if (recvs[r].l.rtag != sends[s].l.rtag)
        continue;
      ck_assert_int_eq(recvs[r].rail, sends[s].rail); /* the sender used the rail the RTR named */
      ck_assert_uint_le(sends[s].l.len, recvs[r].l.len);
      memcpy(recvs[r].l.buf, sends[s].l.buf, sends[s].l.len);
      bytes_on_rail[recvs[r].rail] += sends[s].l.len;
      struct pend_s rv = recvs[r], sd = sends[s];
      recvs[r] = recvs[--n_recvs];
      sends[s] = sends[--n_sends];
      nm_core_large_done(B.core, rv.l.ctx, 0, sd.l.len);
      nm_core_large_done(A.core, sd.l.ctx, 0, sd.l.len);
      met++;
      s = -1; /* the lists changed: start again */
      break;
    }
  return met;
}

/* Run both cores until nothing moves any more. */
static void run(void)
{
  for (int round = 0; round < 100000; round++) {
    nm_core_progress(A.core);
    nm_core_progress(B.core);
    int moved = shuttle_side(&A, &B, 0) + shuttle_side(&B, &A, 1);
    moved += meet();
    if (!moved)
      return;
  }
  ck_abort_msg("no quiescence");
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
  for (size_t i = 0; i < len; i++)
    buf[i] = (uint8_t)(i * 131 + seed + (i >> 8));
}

/* Send len bytes, receive into a buffer of rlen bytes; check every byte and the status. */
static void transfer(size_t len, size_t rlen, nm_tag_t tag)
{
  uint8_t *src = malloc(len), *dst = malloc(rlen + 64);
  fill(src, len, (unsigned)tag);
  memset(dst, 0xEE, rlen + 64);
  nm_sr_request_t s, r;
  ck_assert_int_eq(nm_sr_irecv(B.sess, nm_core_gate(B.core, 0), tag, dst, rlen, &r), 0);
  ck_assert_int_eq(nm_sr_isend(A.sess, nm_core_gate(A.core, 1), tag, src, len, &s), 0);
  run();
  ck_assert_int_eq(nm_sr_stest(A.sess, &s), 0);
  ck_assert_int_eq(nm_sr_rtest(B.sess, &r), len > rlen ? -NM_ETRUNCATED : 0);
  size_t n = len < rlen ? len : rlen;
  for (size_t i = 0; i < n; i++)
    if (dst[i] != src[i])
      ck_abort_msg("size %zu (buffer %zu): byte %zu is %u, want %u", len, rlen, i, dst[i], src[i]);
  for (size_t i = n; i < rlen + 64; i++)
    ck_assert_uint_eq(dst[i], 0xEE); /* nothing written past the message or the buffer */
  ck_assert_ptr_null(nm_core_gate(A.core, 1)->rdv.head); /* every record freed */
  ck_assert_ptr_null(nm_core_gate(B.core, 0)->rdv.head);
  free(src);
  free(dst);
}

START_TEST(test_sizes_every_offset)
{
  /* around the chunk size, the split point (1/4 on rail 0, 3/4 on rail 1, 4 KiB aligned) and odd sizes */
  static const size_t sizes[] = {1025, 4095, 4097, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK - 1, 3 * CHUNK + 1,
                                 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 4 * CHUNK + 4095, 200001, 1048576 + 7};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    transfer(sizes[i], sizes[i], (nm_tag_t)i);
}
END_TEST

START_TEST(test_truncation)
{
  transfer(100000, 50001, 1);    /* buffer ends inside a chunk */
  transfer(5 * CHUNK, 2 * CHUNK, 2); /* buffer ends on a chunk boundary */
  transfer(300000, 1500, 3);     /* buffer within the first chunk */
}
END_TEST

START_TEST(test_split_follows_bandwidth)
{
  transfer(1 << 22, 1 << 22, 5);
  uint64_t total = bytes_on_rail[0] + bytes_on_rail[1];
  ck_assert_uint_eq(total, 1 << 22);
  /* rail 1 has three times rail 0's bandwidth: 3/4 of the bytes, to a page */
  ck_assert_uint_le(bytes_on_rail[1] > 3 * (total / 4) ? bytes_on_rail[1] - 3 * (total / 4)
                                                       : 3 * (total / 4) - bytes_on_rail[1], 4096);
  for (int i = 0; i < N_RAILS; i++)
    ck_assert_int_le(max_inflight[i], NM_RDV_CHUNKS_PER_RAIL);
  ck_assert_int_ge(max_inflight[1], 1);
}
END_TEST

/* All ranks on one host: the rails share its memory and cores, so a message goes whole on the rail the model
 * prices best (the faster one here) instead of being split; NMAD_SPLIT_LOCAL=1 (cfg.split_local) splits again. */
START_TEST(test_one_host_one_rail)
{
  nm_core_set_one_host(B.core, 1); /* the receiver decides the split (rdv_accept) */
  transfer(1 << 22, 1 << 22, 6);
  ck_assert_uint_eq(bytes_on_rail[0], 0);
  ck_assert_uint_eq(bytes_on_rail[1], 1 << 22);
  memset(bytes_on_rail, 0, sizeof(bytes_on_rail));
  B.core->cfg.split_local = 1;
  transfer(1 << 22, 1 << 22, 7);
  ck_assert_uint_gt(bytes_on_rail[0], 0);
  ck_assert_uint_gt(bytes_on_rail[1], 0);
}
END_TEST

/* On one host a message goes whole on one rail: when that rail's driver pulls (sm, NM_DRV_F_RDV_GET) and beats the
 * other on latency and bandwidth, the sender announces its data with the RDV (get rendezvous: its large send is
 * posted at once, no RTR awaited), as over that rail alone. Not with NMAD_SPLIT_LOCAL=1, nor when the pulling rail
 * is the slower one. */
static int announced_at_isend(int pulling_rail, int split_local, nm_tag_t tag)
{
  struct side_s *sides[2] = {&A, &B};
  for (int k = 0; k < 2; k++) {
    nm_core_set_one_host(sides[k]->core, 1);
    sides[k]->core->cfg.split_local = split_local;
    sides[k]->core->drvs[pulling_rail].props.flags |= NM_DRV_F_RDV_GET;
  }
  static uint8_t src[CHUNK], dst[CHUNK];
  fill(src, sizeof(src), (unsigned)tag);
  nm_sr_request_t s, r;
  ck_assert_int_eq(nm_sr_irecv(B.sess, nm_core_gate(B.core, 0), tag, dst, sizeof(dst), &r), 0);
  ck_assert_int_eq(nm_sr_isend(A.sess, nm_core_gate(A.core, 1), tag, src, sizeof(src), &s), 0);
  int announced = A.rail[0]->n_large + A.rail[1]->n_large;
  run();
  ck_assert_int_eq(nm_sr_stest(A.sess, &s), 0);
  ck_assert_int_eq(nm_sr_rtest(B.sess, &r), 0);
  ck_assert_mem_eq(dst, src, sizeof(src));
  return announced;
}

START_TEST(test_one_host_get_on_pulling_rail)
{
  ck_assert_int_eq(announced_at_isend(1, 0, 21), 1); /* rail 1: bandwidth 3000 against 1000, same latency */
  ck_assert_uint_eq(bytes_on_rail[1], CHUNK);
  ck_assert_uint_eq(bytes_on_rail[0], 0);
}
END_TEST

START_TEST(test_one_host_no_get_when_split_or_slower)
{
  ck_assert_int_eq(announced_at_isend(1, 1, 22), 0); /* NMAD_SPLIT_LOCAL=1: the receiver's RTRs split it */
  teardown();
  setup();
  ck_assert_int_eq(announced_at_isend(0, 0, 23), 0); /* the pulling rail is the slower: the RTR names rail 1 */
  ck_assert_uint_eq(bytes_on_rail[1], CHUNK);
}
END_TEST

START_TEST(test_small_on_fastest_start)
{
  /* rail 0: lower latency; a message just above the rendezvous threshold goes whole on it */
  B.core->drvs[0].props.latency_ns = 500;
  B.core->drvs[1].props.latency_ns = 20000;
  transfer(4000, 4000, 9);
  ck_assert_uint_eq(bytes_on_rail[0], 4000);
  ck_assert_uint_eq(bytes_on_rail[1], 0);
}
END_TEST

START_TEST(test_equal_rails_split_in_half)
{
  teardown();
  setup_bw(2000, 2000);
  transfer(1 << 21, 1 << 21, 4);
  ck_assert_uint_eq(bytes_on_rail[0], 1 << 20);
  ck_assert_uint_eq(bytes_on_rail[1], 1 << 20);
}
END_TEST

/* The most urgent receive gets the rails first: with both messages' RDVs in, the chunks asked for first are
 * those of the high-priority one. */
START_TEST(test_priority_first)
{
  size_t len = 8 * CHUNK;
  uint8_t *lo_src = malloc(len), *hi_src = malloc(len), *lo = malloc(len), *hi = malloc(len);
  fill(lo_src, len, 1);
  fill(hi_src, len, 2);
  nm_sr_request_t rl, rh, sl, sh;
  ck_assert_int_eq(nm_sr_irecv(B.sess, nm_core_gate(B.core, 0), 1, lo, len, &rl), 0);
  ck_assert_int_eq(nm_sr_irecv(B.sess, nm_core_gate(B.core, 0), 2, hi, len, &rh), 0);
  rh.prio = 5; /* a receive's priority (the RDV does not carry the sender's: the receiver decides) */
  /* the low-priority transfer starts first and holds the rails ... */
  ck_assert_int_eq(nm_sr_isend(A.sess, nm_core_gate(A.core, 1), 1, lo_src, len, &sl), 0);
  nm_core_progress(A.core);
  shuttle_side(&A, &B, 0);
  /* ... then the urgent one's RDV comes */
  ck_assert_int_eq(nm_sr_isend(A.sess, nm_core_gate(A.core, 1), 2, hi_src, len, &sh), 0);
  nm_core_progress(A.core);
  shuttle_side(&A, &B, 0);
  /* complete everything; the urgent message must finish while the other still has chunks to ask for */
  int hi_first = 0;
  for (int round = 0; round < 1000; round++) {
    nm_core_progress(A.core);
    nm_core_progress(B.core);
    int moved = shuttle_side(&A, &B, 0) + shuttle_side(&B, &A, 1) + meet();
    if (nm_sr_rtest(B.sess, &rh) == 0 && nm_sr_rtest(B.sess, &rl) == -NM_EAGAIN)
      hi_first = 1;
    if (!moved)
      break;
  }
  ck_assert_int_eq(hi_first, 1);
  ck_assert_int_eq(nm_sr_rtest(B.sess, &rl), 0);
  ck_assert_int_eq(memcmp(lo, lo_src, len), 0);
  ck_assert_int_eq(memcmp(hi, hi_src, len), 0);
  ck_assert_int_eq(nm_sr_stest(A.sess, &sl), 0);
  ck_assert_int_eq(nm_sr_stest(A.sess, &sh), 0);
  free(lo_src), free(hi_src), free(lo), free(hi);
}
END_TEST

/* A gate that fails with chunks in a driver and chunks not asked for yet completes the request once, with the
 * gate's error; the chunks the driver reports later are absorbed. */
START_TEST(test_gate_failure_mid_transfer)
{
  size_t len = 10 * CHUNK;
  uint8_t *src = malloc(len), *dst = malloc(len);
  fill(src, len, 3);
  nm_sr_request_t s, r;
  ck_assert_int_eq(nm_sr_irecv(B.sess, nm_core_gate(B.core, 0), 7, dst, len, &r), 0);
  ck_assert_int_eq(nm_sr_isend(A.sess, nm_core_gate(A.core, 1), 7, src, len, &s), 0);
  for (int round = 0; round < 3; round++) { /* a few chunks move */
    nm_core_progress(A.core);
    nm_core_progress(B.core);
    shuttle_side(&A, &B, 0);
    shuttle_side(&B, &A, 1);
  }
  meet();
  ck_assert_int_eq(nm_sr_rtest(B.sess, &r), -NM_EAGAIN);
  ck_assert_ptr_nonnull(nm_core_gate(B.core, 0)->rdv.head);
  nm_gate_fail(nm_core_gate(B.core, 0), -NM_ECLOSED);
  nm_gate_fail(nm_core_gate(A.core, 1), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_rtest(B.sess, &r), -NM_ECLOSED);
  ck_assert_int_eq(nm_sr_stest(A.sess, &s), -NM_ECLOSED);
  shuttle_side(&A, &B, 0); /* chunks posted after the last meet */
  shuttle_side(&B, &A, 1);
  /* the drivers report the chunks they still held */
  for (int k = 0; k < n_recvs; k++)
    nm_core_large_done(B.core, recvs[k].l.ctx, -NM_ECANCELED, 0);
  for (int k = 0; k < n_sends; k++)
    nm_core_large_done(A.core, sends[k].l.ctx, 0, sends[k].l.len);
  n_recvs = n_sends = 0;
  ck_assert_ptr_null(nm_core_gate(B.core, 0)->rdv.head);
  ck_assert_ptr_null(nm_core_gate(A.core, 1)->rdv.head);
  ck_assert_int_eq(B.core->n_large, 0);
  free(src);
  free(dst);
}
END_TEST

/* A later RTR of a cut message that announces another count, or one RTR too many, is a protocol error. */
START_TEST(test_rtr_count_checked)
{
  static char big[3 * CHUNK];
  nm_sr_request_t s;
  ck_assert_int_eq(nm_sr_isend(A.sess, nm_core_gate(A.core, 1), 3, big, sizeof(big), &s), 0);
  nm_core_progress(A.core);
  struct fake_pkt_s *p = &A.rail[0]->pkts[0];
  struct nm_wire_chunk_s c;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  ck_assert_int_eq(nm_wire_next_chunk(p->buf, p->len, &off, &c), 0);
  ck_assert_uint_eq(c.type, NM_WIRE_RDV);
  uint8_t pkt[256];
  off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rtr_n(pkt + off, 0, c.cookie, 0, CHUNK, 70, 2);
  off += nm_wire_put_rtr_n(pkt + off, 1, c.cookie, CHUNK, CHUNK, 71, 3); /* the count changed */
  nm_wire_put_pkt_hdr(pkt, 2, 1, (uint32_t)off);
  nm_core_packet(A.core, &A.core->drvs[0], pkt, off, 1);
  ck_assert_int_eq(nm_core_gate(A.core, 1)->status, -NM_EPROTO);
  ck_assert_int_eq(nm_sr_stest(A.sess, &s), -NM_EPROTO);
  /* the driver still holds the first chunk's send: its report is absorbed */
  ck_assert_int_eq(A.rail[0]->n_large, 1);
  nm_core_large_done(A.core, A.rail[0]->large[0].ctx, 0, CHUNK);
  A.rail[0]->n_large = 0;
  ck_assert_ptr_null(nm_core_gate(A.core, 1)->rdv.head);
}
END_TEST

/* The RTR count on the wire: 0 and 1 both read as one RTR, the largest count passes, one more fails. */
START_TEST(test_rtr_count_wire)
{
  uint8_t buf[64];
  struct nm_wire_chunk_s c;
  size_t off = 0;
  nm_wire_put_rtr(buf, 1, 5, 0, 100, 9);
  ck_assert_int_eq(nm_wire_next_chunk(buf, NM_WIRE_RTR_LEN, &off, &c), 0);
  ck_assert_uint_eq(c.n_rtr, 1);
  off = 0;
  nm_wire_put_rtr_n(buf, 1, 5, 0, 100, 9, NM_WIRE_RTR_MAX);
  ck_assert_int_eq(nm_wire_next_chunk(buf, NM_WIRE_RTR_LEN, &off, &c), 0);
  ck_assert_uint_eq(c.n_rtr, NM_WIRE_RTR_MAX);
  off = 0;
  nm_wire_put_rtr_n(buf, 1, 5, 0, 100, 9, NM_WIRE_RTR_MAX + 1);
  ck_assert_int_eq(nm_wire_next_chunk(buf, NM_WIRE_RTR_LEN, &off, &c), -NM_EPROTO);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("rdv");
  TCase *tc = tcase_create("rdv");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_sizes_every_offset);
  tcase_add_test(tc, test_truncation);
  tcase_add_test(tc, test_split_follows_bandwidth);
  tcase_add_test(tc, test_one_host_one_rail);
  tcase_add_test(tc, test_one_host_get_on_pulling_rail);
  tcase_add_test(tc, test_one_host_no_get_when_split_or_slower);
  tcase_add_test(tc, test_small_on_fastest_start);
  tcase_add_test(tc, test_equal_rails_split_in_half);
  tcase_add_test(tc, test_priority_first);
  tcase_add_test(tc, test_gate_failure_mid_transfer);
  tcase_add_test(tc, test_rtr_count_checked);
  tcase_add_test(tc, test_rtr_count_wire);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
