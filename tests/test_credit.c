/* Unit tests of eager flow control (nmad/core/nm_credit.c) with two cores joined by fake drivers: a sender
 * floods a receiver that posts nothing; the receiver's unexpected eager data stays within the window, the
 * sender switches to rendezvous, nothing is lost or reordered once the receives come, and the credit comes back
 * so that eager resumes. Also a peer that returns more credit than it was given. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_driver.h"
#include <nmad/nm_sendrecv.h>

#define WINDOW 16384u /* bytes of eager credit per peer */
#define MSG 1000      /* bytes per message: 14 fit the window (cost 1,128 each) */
#define NMSG 200
#define BATCH 8       /* receives posted between two pumps (the fake driver holds 16 large transfers) */

static nm_core_t rx, tx;             /* rank 0 receives, rank 1 sends */
static struct fake_drv_s *frx, *ftx;
static nm_session_t srx, stx;
static char sent[NMSG][MSG], got[NMSG][MSG];
static nm_sr_request_t sreq[NMSG], rreq[NMSG];

static void setup(void)
{
  rx = fake_core_new_rank(0, 2, "aggreg", 32768, &frx);
  tx = fake_core_new_rank(1, 2, "aggreg", 32768, &ftx);
  ck_assert(rx && tx);
  rx->cfg.eager_credit = tx->cfg.eager_credit = WINDOW; /* job-wide, as NMAD_EAGER_CREDIT is */
  ck_assert_int_eq(nm_session_open(rx, "credit", &srx), 0);
  ck_assert_int_eq(nm_session_open(tx, "credit", &stx), 0);
}

static void teardown(void)
{
  fake_core_free(rx);
  fake_core_free(tx);
}

/* Hand every packet one fake driver captured to the other core. @return packets moved. */
static int move_packets(struct fake_drv_s *from, nm_core_t to)
{
  int n = from->n_pkts;
  from->n_pkts = 0;
  for (int i = 0; i < n; i++)
    nm_core_packet(to, &to->drvs[0], from->pkts[i].buf, from->pkts[i].len, from->pkts[i].peer == 0 ? 1 : 0);
  return n;
}

/* Join the large receives of rx to the large sends of tx by rendezvous tag, copy, complete both. */
static int move_large(void)
{
  int moved = 0;
  for (int r = 0; r < frx->n_large; r++) {
    struct fake_large_s *lr = &frx->large[r];
    for (int s = 0; s < ftx->n_large; s++) {
      struct fake_large_s *ls = &ftx->large[s];
      if (ls->rtag != lr->rtag)
        continue;
      size_t n = ls->len < lr->len ? ls->len : lr->len;
      memcpy(lr->buf, ls->buf, n);
      void *rctx = lr->ctx, *sctx = ls->ctx;
      *ls = ftx->large[--ftx->n_large];
      *lr = frx->large[--frx->n_large];
      nm_core_large_done(tx, sctx, 0, n);
      nm_core_large_done(rx, rctx, 0, n);
      moved++;
      r = -1; /* both arrays changed: start over */
      break;
    }
  }
  return moved;
}

/* Progress both cores and carry their traffic until nothing moves. */
static void pump(void)
{
  for (int quiet = 0; quiet < 3;) {
    nm_core_progress(tx);
    int n = move_packets(ftx, rx);
    nm_core_progress(rx);
    n += move_packets(frx, tx);
    n += move_large();
    quiet = n ? 0 : quiet + 1;
  }
}

static void send_all(int first, int count)
{
  for (int i = first; i < first + count; i++) {
    memset(sent[i], 'a' + i % 26, MSG);
    memcpy(sent[i], &i, sizeof(i));
    ck_assert_int_eq(nm_sr_isend(stx, nm_core_gate(tx, 0), 3, sent[i], MSG, &sreq[i]), 0);
  }
}

static void recv_all(int first, int count)
{
  for (int i = first; i < first + count; i += BATCH) {
    for (int k = i; k < i + BATCH && k < first + count; k++)
      ck_assert_int_eq(nm_sr_irecv(srx, nm_core_gate(rx, 1), 3, got[k], MSG, &rreq[k]), 0);
    pump();
  }
  for (int i = first; i < first + count; i++) {
    ck_assert_int_eq(nm_sr_rtest(srx, &rreq[i]), 0);
    ck_assert_int_eq(nm_sr_stest(stx, &sreq[i]), 0);
    ck_assert_msg(memcmp(got[i], sent[i], MSG) == 0, "message %d lost or out of order", i);
  }
}

START_TEST(test_flood_bounded_then_delivered)
{
  send_all(0, NMSG);
  pump(); /* the receiver progresses but posts nothing */
  struct nm_core_stats_s rs, ts;
  nm_core_get_stats(rx, &rs);
  nm_core_get_stats(tx, &ts);
  ck_assert_uint_le(rs.unexpected_bytes_peak, WINDOW);
  ck_assert_uint_eq(rs.unexpected_bytes, (uint64_t)(WINDOW / (MSG + NM_WIRE_CREDIT_MSG_COST)) * (MSG + NM_WIRE_CREDIT_MSG_COST));
  ck_assert_uint_eq(ts.rdv_for_credit, NMSG - WINDOW / (MSG + NM_WIRE_CREDIT_MSG_COST));
  recv_all(0, NMSG);
  nm_core_get_stats(rx, &rs);
  ck_assert_uint_eq(rs.unexpected_bytes, 0);
  ck_assert_uint_gt(rs.credit_chunks_sent, 0);
  /* The credit came back (all but less than a quarter of the window, still owed): a second burst that fits in
   * it goes eager again. */
  ck_assert_int_gt(nm_core_gate(tx, 0)->credit, (int64_t)(WINDOW - WINDOW / 4));
  const int again = (WINDOW - WINDOW / 4) / (MSG + NM_WIRE_CREDIT_MSG_COST);
  for (int i = 0; i < again; i++)
    ck_assert_int_eq(nm_sr_irecv(srx, nm_core_gate(rx, 1), 3, got[i], MSG, &rreq[i]), 0);
  memset(got, 0, sizeof(got));
  send_all(0, again);
  pump();
  nm_core_get_stats(tx, &ts);
  ck_assert_uint_eq(ts.rdv_for_credit, NMSG - WINDOW / (MSG + NM_WIRE_CREDIT_MSG_COST)); /* none more */
  for (int i = 0; i < again; i++) {
    ck_assert_int_eq(nm_sr_rtest(srx, &rreq[i]), 0);
    ck_assert(memcmp(got[i], sent[i], MSG) == 0);
  }
}
END_TEST

static void inject_credit(nm_core_t core, uint64_t bytes)
{
  uint8_t pkt[64];
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_credit(pkt + off, bytes);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  nm_core_packet(core, &core->drvs[0], pkt, off, 1);
}

START_TEST(test_credit_beyond_window_fails_gate)
{
  nm_sr_request_t r;
  static char b[MSG];
  ck_assert_int_eq(nm_sr_isend(srx, nm_core_gate(rx, 1), 4, b, MSG, &r), 0); /* takes MSG + 128 of credit */
  inject_credit(rx, MSG + NM_WIRE_CREDIT_MSG_COST); /* exactly what it took back: fine */
  ck_assert_int_eq(nm_core_gate(rx, 1)->status, 0);
  ck_assert_int_eq(nm_core_gate(rx, 1)->credit, (int64_t)WINDOW);
  inject_credit(rx, 1); /* one byte more than the window */
  ck_assert_int_eq(nm_core_gate(rx, 1)->status, -NM_EPROTO);
}
END_TEST

START_TEST(test_zero_credit_malformed)
{
  uint8_t pkt[64];
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_credit(pkt + off, 0);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  struct nm_wire_pkt_s h;
  ck_assert_int_eq(nm_wire_validate(pkt, off, &h), -NM_EPROTO);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("credit");
  TCase *t = tcase_create("flow control");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, test_flood_bounded_then_delivered);
  tcase_add_test(t, test_credit_beyond_window_fails_gate);
  tcase_add_test(t, test_zero_credit_malformed);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
