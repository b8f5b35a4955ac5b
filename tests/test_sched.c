/* Unit tests of the packet scheduler and its strategies through the fake driver (issue 15, "Strategies own
 * scheduling" and "Priorities everywhere"): the most urgent gate is served first when the driver frees up,
 * control chunks (RTR) and data are merged by priority, per-(gate, tag) order holds whatever the priorities,
 * and the default strategy (NMAD_STRATEGY unset) honours priorities and aggregates.
 * The fake driver completes sends at post (like fi_inject) and is paced (NM_DRV_F_PACED, its peers share one
 * queue), which makes the core treat the driver as busy until the next progress pass: one packet per pass, so what
 * queues meanwhile shows the scheduler's order. Unpaced (sm), only the gate that just sent waits. */
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

static void setup_strategy(const char *strategy)
{
  core = fake_core_new(4, strategy, 1024, &fake);
  ck_assert_ptr_nonnull(core);
  ck_assert_int_eq(nm_session_open(core, "sched", &sess), 0);
}
static void teardown(void) { fake_core_free(core); }

static nm_gate_t gate(int r) { return nm_core_gate(core, r); }

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

static void isend_prio(nm_gate_t g, nm_tag_t tag, nm_prio_t prio, const void *buf, nm_len_t len,
                       nm_sr_request_t *r)
{
  nm_sr_send_init(sess, r);
  ck_assert_int_eq(nm_sr_send_set_priority(sess, r, prio), 0);
  ck_assert_int_eq(nm_sr_send_isend(sess, r, g, tag, buf, len), 0);
}

/* A first send takes the driver (it completes at post and leaves the driver busy for this pass), so that what
 * is posted next waits for the scheduler. */
static void occupy_driver(nm_sr_request_t *lead)
{
  ck_assert_int_eq(nm_sr_isend(sess, gate(3), 99, "lead", 5, lead), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
}

/* Bulk to gate 1 queued first, then an urgent message to gate 2: when the driver frees up, gate 2 goes first
 * under "prio"; "aggreg" serves the gates in the order they got work. */
static void check_across_gates(const char *strategy, int urgent_first)
{
  setup_strategy(strategy);
  nm_sr_request_t lead, bulk[4], urgent;
  static char data[4][512];
  occupy_driver(&lead);
  for (int i = 0; i < 4; i++)
    isend_prio(gate(1), 1, 0, data[i], sizeof(data[i]), &bulk[i]);
  isend_prio(gate(2), 2, 10, "urgent", 7, &urgent);
  ck_assert_int_eq(fake->n_pkts, 1); /* nothing left while the driver is busy */
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2); /* one packet per pass */
  ck_assert_uint_eq(fake->pkts[1].peer, urgent_first ? 2 : 1);
  for (int pass = 0; pass < 4; pass++)
    nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 3); /* bulk aggregated in one packet, urgent in another */
  ck_assert_uint_eq(fake->pkts[2].peer, urgent_first ? 1 : 2);
  ck_assert_int_eq(nm_sr_stest(sess, &urgent), 0);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(nm_sr_stest(sess, &bulk[i]), 0);
  teardown();
}

/* An unpaced driver (one queue per peer, as sm's rings): a packet completed at post holds back only its own gate,
 * whose next sends are aggregated at the next pass; sends to other gates leave at once (a flat broadcast's root
 * posts its p - 1 packets in one pass). */
START_TEST(test_unpaced_driver_holds_one_gate)
{
  setup_strategy("prio");
  struct nm_drv_s *drv = nm_core_gate(core, 1)->rails[0].drv;
  drv->props.flags &= ~NM_DRV_F_PACED;
  nm_sr_request_t r1, r2, r3, a, b;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 1, "one", 4, &r1), 0);
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 1, "two", 4, &r2), 0);
  ck_assert_int_eq(nm_sr_isend(sess, gate(3), 1, "three", 6, &r3), 0);
  ck_assert_int_eq(fake->n_pkts, 3); /* three gates, three packets, no pass in between */
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 2, "a", 2, &a), 0);
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 3, "b", 2, &b), 0);
  ck_assert_int_eq(fake->n_pkts, 3); /* gate 1 is busy for this pass */
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 4);
  struct nm_wire_chunk_s ch[2];
  ck_assert_uint_eq(fake->pkts[3].peer, 1);
  ck_assert_int_eq(decode(3, ch, 2), 2); /* a and b aggregated */
  ck_assert_int_eq(nm_sr_stest(sess, &a), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &b), 0);
  teardown();
}
END_TEST

/* A driver that copies packets at post (NM_DRV_F_SEND_AT_POST, as sm): the core writes the packet of a lone small
 * send around the caller's bytes (a header piece and a payload piece, no packet wrapper) and the send completes at
 * post; what follows it to the same gate in the same pass still waits for the next pass and aggregates, and a sync
 * send still waits for its ACK. */
static struct nm_drv_s *send_at_post_driver(void)
{
  struct nm_drv_s *drv = gate(1)->rails[0].drv;
  drv->ops = &fake_drv_gather_ops; /* sendv() */
  drv->props.flags = (drv->props.flags & ~NM_DRV_F_PACED) | NM_DRV_F_SEND_AT_POST;
  drv->props.inject_size = drv->props.max_packet;
  return drv;
}

START_TEST(test_direct_send_lone_small)
{
  setup_strategy("prio");
  send_at_post_driver();
  nm_sr_request_t r1, a, b, sync;
  struct nm_wire_chunk_s ch[2];
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 7, "one", 4, &r1), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_int_eq(fake->pkts[0].pieces, 2); /* written around the caller's bytes */
  ck_assert_int_eq(nm_sr_stest(sess, &r1), 0); /* done at post, no progress call */
  ck_assert_int_eq(decode(0, ch, 2), 1);
  ck_assert_uint_eq(ch[0].tag, 7);
  ck_assert_uint_eq(ch[0].len, 4);
  ck_assert_str_eq((const char *)ch[0].payload, "one");
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 8, "a", 2, &a), 0);
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 8, "b", 2, &b), 0);
  ck_assert_int_eq(fake->n_pkts, 1); /* the gate is busy for this pass */
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  ck_assert_int_eq(decode(1, ch, 2), 2); /* a and b aggregated, in order */
  ck_assert_str_eq((const char *)ch[0].payload, "a");
  ck_assert_str_eq((const char *)ch[1].payload, "b");
  ck_assert_int_eq(nm_sr_stest(sess, &b), 0);
  struct nm_req_s withhdr; /* a header prefix (rpc) travels in the same packet, as a third piece */
  ck_assert_int_eq(nm_core_req_isend(&withhdr, sess, gate(3), 4, "HDR", 4, "body", 5, NM_CORE_REQ_FRESH), 0);
  ck_assert_int_eq(fake->n_pkts, 3);
  ck_assert_int_eq(fake->pkts[2].pieces, 3);
  ck_assert_int_eq(decode(2, ch, 2), 1);
  ck_assert_uint_eq(ch[0].prefix_len, 4);
  ck_assert_uint_eq(ch[0].len, 9);
  ck_assert_mem_eq(ch[0].payload, "HDR\0body", 9);
  ck_assert_int_eq(nm_sr_issend(sess, gate(2), 9, "s", 2, &sync), 0);
  ck_assert_int_eq(fake->n_pkts, 4);
  ck_assert_int_eq(nm_sr_stest(sess, &sync), -NM_EAGAIN); /* a sync send waits for its ACK */
  teardown();
}
END_TEST

/* nm_sr_send_now(): a lone small message leaves at once without a request, taking the next sequence number of
 * (gate, tag); while the gate is busy for this pass, or a request is queued on it, or the driver is not one that
 * copies at post, it is not taken and nothing is consumed: the request posted instead keeps the order. */
START_TEST(test_send_now)
{
  setup_strategy("prio");
  send_at_post_driver();
  nm_sr_request_t r;
  struct nm_wire_chunk_s ch[2];
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 6, "zero", 5), 1);
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_int_eq(decode(0, ch, 2), 1);
  ck_assert_uint_eq(ch[0].seq, 0);
  ck_assert_str_eq((const char *)ch[0].payload, "zero");
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 6, "one", 4), 0); /* busy for this pass: not taken */
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 6, "one", 4, &r), 0); /* queued instead, with sequence 1 */
  nm_core_progress(core);
  ck_assert_int_eq(nm_sr_stest(sess, &r), 0);
  ck_assert_int_eq(fake->n_pkts, 2);
  ck_assert_int_eq(decode(1, ch, 2), 1);
  ck_assert_uint_eq(ch[0].seq, 1);
  nm_core_progress(core);
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 6, "two", 4), 1); /* idle again */
  ck_assert_int_eq(decode(2, ch, 2), 1);
  ck_assert_uint_eq(ch[0].seq, 2);
  ck_assert_str_eq((const char *)ch[0].payload, "two");
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 6, "three", 6), 0); /* busy again for this pass... */
  nm_core_end_burst(core); /* ...until the caller ends its burst (a blocking collective that returns) */
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 6, "three", 6), 1);
  ck_assert_int_eq(decode(3, ch, 2), 1);
  ck_assert_uint_eq(ch[0].seq, 3);
  static char big[8192];
  ck_assert_int_eq(nm_sr_send_now(sess, gate(2), 6, big, sizeof(big)), 0); /* above 4 KiB */
  ck_assert_int_eq(nm_sr_send_now(sess, gate(2), 6, NULL, 4), -NM_EINVAL);
  ck_assert_int_eq(nm_sr_send_now(sess, NULL, 6, "x", 2), -NM_EINVAL);
  ck_assert_int_eq(fake->n_pkts, 4);
  teardown();
  setup_strategy("prio"); /* a driver that does not copy at post (paced fake): never taken */
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 6, "x", 2), 0);
  ck_assert_int_eq(fake->n_pkts, 0);
  teardown();
}
END_TEST

/* A driver without sendv() whose send() injects packets up to its inject size (NM_DRV_F_SEND_AT_POST, as libfabric
 * with fi_inject): a lone small message is gathered into one piece and leaves at post, after which the paced driver
 * is busy for the rest of the pass (every gate); a message whose packet exceeds the inject size is not taken and
 * leaves through the strategy. */
START_TEST(test_direct_send_inject)
{
  setup_strategy("prio");
  struct nm_drv_s *drv = gate(1)->rails[0].drv;
  drv->props.flags |= NM_DRV_F_SEND_AT_POST; /* still paced, no sendv() */
  drv->props.inject_size = 256;
  struct nm_wire_chunk_s ch[2];
  ck_assert_int_eq(nm_sr_send_now(sess, gate(1), 3, "inj", 4), 1);
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_int_eq(fake->pkts[0].pieces, 1);
  ck_assert_int_eq(decode(0, ch, 2), 1);
  ck_assert_str_eq((const char *)ch[0].payload, "inj");
  ck_assert_int_eq(nm_sr_send_now(sess, gate(2), 3, "x", 2), 0); /* the driver is busy for this pass */
  nm_core_progress(core);
  static char data[512];
  memset(data, 0x3C, sizeof(data));
  ck_assert_int_eq(nm_sr_send_now(sess, gate(2), 3, data, sizeof(data)), 0); /* above the inject size */
  ck_assert_int_eq(fake->n_pkts, 1);
  nm_sr_request_t big;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 3, data, sizeof(data), &big), 0);
  nm_core_progress(core);
  ck_assert_int_eq(nm_sr_stest(sess, &big), 0);
  ck_assert_int_eq(fake->n_pkts, 2);
  ck_assert_int_eq(decode(1, ch, 2), 1);
  ck_assert_uint_eq(ch[0].len, sizeof(data));
  ck_assert_uint_eq(ch[0].seq, 0);
  teardown();
}
END_TEST

/* A send refused by the driver waits for a retry; the next send to that gate must not pass it. */
START_TEST(test_direct_send_behind_refused)
{
  setup_strategy("prio");
  send_at_post_driver();
  nm_sr_request_t r0, r1;
  fake->refuse = 1;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 5, "first", 6, &r0), 0);
  ck_assert_int_eq(fake->n_pkts, 0);
  fake->refuse = 0;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 5, "second", 7, &r1), 0); /* not before the refused packet */
  for (int pass = 0; pass < 3; pass++)
    nm_core_progress(core);
  ck_assert_int_ge(fake->n_pkts, 1);
  struct nm_wire_chunk_s ch[2];
  int n = decode(0, ch, 2);
  ck_assert_str_eq((const char *)ch[0].payload, "first");
  if (n == 1) {
    ck_assert_int_eq(fake->n_pkts, 2);
    ck_assert_int_eq(decode(1, ch, 2), 1);
    ck_assert_str_eq((const char *)ch[0].payload, "second");
  } else {
    ck_assert_str_eq((const char *)ch[1].payload, "second");
  }
  ck_assert_uint_lt(ch[0].seq, 2);
  ck_assert_int_eq(nm_sr_stest(sess, &r0), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &r1), 0);
  teardown();
}
END_TEST

START_TEST(test_prio_across_gates)
{
  check_across_gates("prio", 1);
}
END_TEST

START_TEST(test_aggreg_gates_fifo)
{
  check_across_gates("aggreg", 0);
}
END_TEST

/* A send's completion monitor runs inside the scheduling pass (the driver completes at post) and posts to a gate
 * that waits further down the work list: every gate listed must still be served, none dropped from the list. */
struct repost_s {
  nm_sr_request_t req;
  int done;
};
static void repost_monitor(struct nm_req_s *req, unsigned event, void *ref)
{
  struct repost_s *rp = ref;
  (void)req;
  (void)event;
  if (!rp->done++)
    ck_assert_int_eq(nm_sr_isend(sess, gate(2), 7, "again", 6, &rp->req), 0);
}

START_TEST(test_monitor_posts_during_schedule)
{
  setup_strategy("prio");
  nm_sr_request_t lead, a, b, c;
  struct repost_s rp = {.done = 0};
  occupy_driver(&lead);
  nm_sr_send_init(sess, &a);
  ck_assert_int_eq(nm_sr_send_set_priority(sess, &a, 9), 0);
  ck_assert_int_eq(nm_sr_request_set_monitor(sess, &a, NM_EVENT_SEND_COMPLETED, repost_monitor, &rp), 0);
  ck_assert_int_eq(nm_sr_send_isend(sess, &a, gate(1), 1, "a", 2), 0);
  isend_prio(gate(2), 2, 5, "b", 2, &b);
  isend_prio(gate(3), 3, 1, "c", 2, &c);
  for (int pass = 0; pass < 8; pass++)
    nm_core_progress(core);
  ck_assert_int_eq(rp.done, 1);
  ck_assert_int_eq(nm_sr_stest(sess, &a), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &b), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &c), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &rp.req), 0);
  ck_assert_int_eq(fake->n_pkts, 4); /* lead, a, b + again (aggregated), c */
  struct nm_wire_chunk_s ch[2];
  ck_assert_uint_eq(fake->pkts[2].peer, 2);
  ck_assert_int_eq(decode(2, ch, 2), 2);
  ck_assert_uint_eq(fake->pkts[3].peer, 3);
  teardown();
}
END_TEST

/* Three gates with work at priorities 1, 7, 4 are served 7, 4, 1; a control chunk counts for its gate's
 * priority like data does. */
START_TEST(test_prio_gate_order_with_ctrl)
{
  setup_strategy("prio");
  nm_sr_request_t lead, s1, s3;
  occupy_driver(&lead);
  isend_prio(gate(1), 1, 1, "one", 4, &s1);
  /* gate 2 has only a control chunk: a CANCEL_REPLY-free way to queue one is an RTR for an RDV it sent */
  nm_sr_request_t r;
  static char big[4096];
  ck_assert_int_eq(nm_sr_irecv(sess, gate(2), 8, big, sizeof(big), &r), 0);
  r.prio = 7; /* the receive's priority: its RTR carries it (no sendrecv call sets it yet) */
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rdv(pkt + off, sess->id, 8, 0, sizeof(big), 77, 0);
  nm_wire_put_pkt_hdr(pkt, 1, 2, (uint32_t)off);
  nm_core_packet(core, &core->drvs[0], pkt, off, 2);
  isend_prio(gate(3), 3, 4, "three", 6, &s3);
  int expect[3] = {2, 3, 1};
  for (int i = 0; i < 3; i++) {
    nm_core_progress(core);
    ck_assert_int_eq(fake->n_pkts, 2 + i);
    ck_assert_uint_eq(fake->pkts[1 + i].peer, (uint64_t)expect[i]);
  }
  struct nm_wire_chunk_s c[2];
  ck_assert_int_eq(decode(1, c, 2), 1);
  ck_assert_uint_eq(c[0].type, NM_WIRE_RTR);
  teardown();
}
END_TEST

/* Across kinds on one gate: sends of priority 9 and 1 and the RTR of a receive of priority 5 share one packet
 * in the order 9, RTR, 1; a receive of priority 0 puts its RTR after the data of priority 1 (but "aggreg" sends
 * control chunks first). */
static void rdv_in(nm_sr_request_t *r, void *buf, size_t len, nm_prio_t prio, nm_tag_t tag, uint32_t seq,
                   uint64_t cookie)
{
  ck_assert_int_eq(nm_sr_irecv(sess, gate(1), tag, buf, len, r), 0);
  r->prio = prio;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_rdv(pkt + off, sess->id, tag, seq, len, cookie, 0);
  nm_wire_put_pkt_hdr(pkt, 1, 1, (uint32_t)off);
  nm_core_packet(core, &core->drvs[0], pkt, off, 1);
}

START_TEST(test_prio_data_vs_rtr)
{
  setup_strategy("prio");
  nm_sr_request_t lead, lo, hi, r5, r0;
  static char big5[4096], big0[4096];
  occupy_driver(&lead);
  isend_prio(gate(1), 1, 1, "low", 4, &lo);
  rdv_in(&r0, big0, sizeof(big0), 0, 20, 0, 500);
  rdv_in(&r5, big5, sizeof(big5), 5, 21, 0, 555);
  isend_prio(gate(1), 2, 9, "high", 5, &hi);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  struct nm_wire_chunk_s c[4];
  ck_assert_int_eq(decode(1, c, 4), 4);
  ck_assert_uint_eq(c[0].type, NM_WIRE_DATA);
  ck_assert_str_eq((const char *)c[0].payload, "high");
  ck_assert_uint_eq(c[1].type, NM_WIRE_RTR);
  ck_assert_uint_eq(c[1].cookie, 555);
  ck_assert_uint_eq(c[2].type, NM_WIRE_DATA);
  ck_assert_str_eq((const char *)c[2].payload, "low");
  ck_assert_uint_eq(c[3].type, NM_WIRE_RTR);
  ck_assert_uint_eq(c[3].cookie, 500);
  teardown();
}
END_TEST

/* 300 sends on 4 tags with pseudo-random priorities: whatever the priorities, each (gate, tag) stream leaves in
 * its sequence order, and nothing is lost or duplicated. */
START_TEST(test_prio_keeps_tag_order)
{
  setup_strategy("prio");
  enum { N = 300 };
  static nm_sr_request_t reqs[N];
  static char payload[N][4];
  nm_sr_request_t lead;
  occupy_driver(&lead);
  unsigned x = 12345;
  int count[4] = {0, 0, 0, 0};
  for (int i = 0; i < N; i++) {
    x = x * 1103515245u + 12345u;
    int tag = (int)((x >> 16) % 4);
    nm_prio_t prio = (nm_prio_t)((x >> 8) % 7) - 3;
    count[tag]++;
    snprintf(payload[i], sizeof(payload[i]), "%d", tag);
    isend_prio(gate(1), (nm_tag_t)tag, prio, payload[i], sizeof(payload[i]), &reqs[i]);
  }
  for (int pass = 0; pass < 10; pass++)
    nm_core_progress(core);
  uint32_t next_seq[4] = {0, 0, 0, 0};
  int total = 0;
  static struct nm_wire_chunk_s c[N];
  for (int p = 1; p < fake->n_pkts; p++) {
    int n = decode(p, c, N);
    for (int k = 0; k < n; k++) {
      ck_assert_uint_eq(c[k].type, NM_WIRE_DATA);
      ck_assert_uint_lt(c[k].tag, 4);
      ck_assert_uint_eq(c[k].seq, next_seq[c[k].tag]);
      next_seq[c[k].tag]++;
      total++;
    }
  }
  ck_assert_int_eq(total, N);
  for (int t = 0; t < 4; t++)
    ck_assert_uint_eq(next_seq[t], (uint32_t)count[t]);
  teardown();
}
END_TEST

/* 64 sends on distinct tags (no ordering constraint between them) with pseudo-random priorities leave in
 * decreasing priority, in post order among equal priorities. */
START_TEST(test_prio_sorted_distinct_tags)
{
  setup_strategy("prio");
  enum { N = 64 };
  static nm_sr_request_t reqs[N];
  static int32_t idx[N];
  nm_prio_t prio[N];
  nm_sr_request_t lead;
  occupy_driver(&lead);
  unsigned x = 777;
  for (int i = 0; i < N; i++) {
    x = x * 1103515245u + 12345u;
    prio[i] = (nm_prio_t)((x >> 8) % 5);
    idx[i] = i;
    isend_prio(gate(1), (nm_tag_t)(100 + i), prio[i], &idx[i], sizeof(idx[i]), &reqs[i]);
  }
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  struct nm_wire_chunk_s c[N];
  ck_assert_int_eq(decode(1, c, N), N);
  for (int k = 1; k < N; k++) {
    int32_t a, b;
    memcpy(&a, c[k - 1].payload, 4);
    memcpy(&b, c[k].payload, 4);
    ck_assert(prio[a] > prio[b] || (prio[a] == prio[b] && a < b));
  }
  teardown();
}
END_TEST

/* Aggregation is for small messages: queued 8 KiB sends leave four to a packet (NM_STRAT_AGGREG_MAX, 32 KiB),
 * not seven to a 64 KiB packet, so that an urgent packet behind them waits for less copying; queued 8 B sends
 * still all share one packet. */
START_TEST(test_prio_aggregation_capped)
{
  setup_strategy("prio");
  core->cfg.rdv_threshold = 65536;
  enum { N = 8, BIG = 8192 };
  static nm_sr_request_t reqs[N], small[N];
  static char big[N][BIG];
  nm_sr_request_t lead;
  occupy_driver(&lead);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(nm_sr_isend(sess, gate(1), (nm_tag_t)i, big[i], BIG, &reqs[i]), 0);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  struct nm_wire_chunk_s c[N];
  ck_assert_int_eq(decode(1, c, N), NM_STRAT_AGGREG_MAX / BIG);
  while (gate(1)->send_queue.head)
    nm_core_progress(core);
  nm_core_progress(core); /* the driver free again */
  fake->n_pkts = 0;
  nm_sr_request_t lead2;
  occupy_driver(&lead2);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(nm_sr_isend(sess, gate(1), (nm_tag_t)i, "8 bytes", 8, &small[i]), 0);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  ck_assert_int_eq(decode(1, c, N), N);
  teardown();
}
END_TEST

/* A fake driver that reports a backlog (nm_drv_ops_s.backlog, bytes the peer has not read) and is the core's clock,
 * both set by the test. */
static struct {
  size_t backlog;
  uint64_t now_ns;
} backlog;
static size_t backlog_of(struct nm_drv_s *drv, uint64_t peer) { return backlog.backlog; }
static uint64_t backlog_now_ns(struct nm_drv_s *drv) { return backlog.now_ns; }

static void setup_backlog(const char *strategy)
{
  static struct nm_drv_ops_s ops;
  setup_strategy(strategy);
  ops = *core->drvs[0].ops;
  ops.backlog = backlog_of;
  ops.now_ns = backlog_now_ns;
  core->drvs[0].ops = &ops;
  core->clock_drv = &core->drvs[0];
  backlog.backlog = 2 * NM_STRAT_BACKLOG_MAX;
  backlog.now_ns = 1000;
}

static int pkts_to(int peer)
{
  int n = 0;
  for (int i = 0; i < fake->n_pkts; i++)
    n += fake->pkts[i].peer == (uint64_t)peer;
  return n;
}

static void passes(int n)
{
  for (int i = 0; i < n; i++)
    nm_core_progress(core);
}

/* Bulk to a peer whose unread backlog is above NM_STRAT_BACKLOG_MAX waits while urgent traffic went to it within
 * NM_STRAT_URGENT_LIVE_NS (the prio strategy); bulk to a peer that had no urgent traffic does not, nor does urgent
 * work, nor bulk once the backlog is read or the urgent traffic is old. */
START_TEST(test_bulk_held_behind_backlog)
{
  setup_backlog("prio");
  static char bulk[4][512];
  nm_sr_request_t plain, urgent, b[4];
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 1, bulk[0], sizeof(bulk[0]), &plain), 0);
  passes(3);
  ck_assert_int_eq(pkts_to(2), 1); /* no urgent traffic to peer 2: its backlog holds nothing */
  isend_prio(gate(1), 7, 5, "urgent", 7, &urgent);
  passes(3);
  ck_assert_int_eq(pkts_to(1), 1); /* urgent work passes the backlog */
  ck_assert_int_eq(nm_sr_stest(sess, &urgent), 0);
  ck_assert_uint_eq(gate(1)->urgent_ns, 1000);
  isend_prio(gate(1), 1, 0, bulk[1], sizeof(bulk[1]), &b[1]);
  isend_prio(gate(1), 1, 0, bulk[2], sizeof(bulk[2]), &b[2]);
  passes(5);
  ck_assert_int_eq(pkts_to(1), 1); /* held */
  ck_assert_int_eq(nm_sr_stest(sess, &b[1]), -NM_EAGAIN);
  ck_assert_uint_eq(core->bulk_held_pass, core->pass);
  backlog.backlog = NM_STRAT_BACKLOG_MAX; /* read down to the bound: bulk goes */
  passes(3);
  ck_assert_int_eq(pkts_to(1), 2);
  ck_assert_int_eq(nm_sr_stest(sess, &b[1]), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &b[2]), 0);
  /* held again behind a backlog, until the urgent traffic is NM_STRAT_URGENT_LIVE_NS old */
  backlog.backlog = 2 * NM_STRAT_BACKLOG_MAX;
  isend_prio(gate(1), 1, 0, bulk[3], sizeof(bulk[3]), &b[3]);
  backlog.now_ns += NM_STRAT_URGENT_LIVE_NS;
  passes(3);
  ck_assert_int_eq(pkts_to(1), 2);
  backlog.now_ns += 1;
  passes(3);
  ck_assert_int_eq(pkts_to(1), 3);
  ck_assert_int_eq(nm_sr_stest(sess, &b[3]), 0);
  ck_assert_uint_eq(gate(1)->urgent_ns, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &plain), 0);
  teardown();
}
END_TEST

/* Priorities off (aggreg): urgent traffic does not make bulk wait for a backlog. */
START_TEST(test_bulk_not_held_without_prio)
{
  setup_backlog("aggreg");
  static char bulk[512];
  nm_sr_request_t urgent, b;
  isend_prio(gate(1), 7, 5, "urgent", 7, &urgent);
  passes(3);
  isend_prio(gate(1), 1, 0, bulk, sizeof(bulk), &b);
  passes(3);
  ck_assert_int_eq(pkts_to(1), 2);
  ck_assert_int_eq(nm_sr_stest(sess, &b), 0);
  ck_assert_uint_eq(gate(1)->urgent_ns, 0);
  teardown();
}
END_TEST

/* A driver with send_urgent (sm's express ring): the packets it took, by index in fake->pkts. */
static int urgent_pkts[8], n_urgent_pkts;
static int fake_send_urgent(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len,
                            void *ctx)
{
  int rc = fake_drv_gather_ops.sendv(drv, peer, iov, iovcnt, len, ctx);
  if (rc >= 0 && n_urgent_pkts < 8)
    urgent_pkts[n_urgent_pkts++] = fake->n_pkts - 1;
  return rc;
}

/* Urgent work behind queued bulk to the same gate, over a driver with send_urgent: its packet goes by send_urgent
 * and holds the urgent chunk only (the bulk follows in a packet of its own); without send_urgent the urgent packet
 * aggregates the bulk behind it, as before. */
static void check_urgent_packet(int with_op)
{
  static struct nm_drv_ops_s ops;
  setup_strategy("prio");
  if (with_op) {
    ops = *core->drvs[0].ops;
    ops.send_urgent = fake_send_urgent;
    core->drvs[0].ops = &ops;
    core->drvs[0].props.urgent_max = 256;
  }
  n_urgent_pkts = 0;
  nm_sr_request_t lead, bulk[4], urgent;
  static char data[4][512];
  occupy_driver(&lead);
  for (int i = 0; i < 4; i++)
    isend_prio(gate(1), 1, 0, data[i], sizeof(data[i]), &bulk[i]);
  isend_prio(gate(1), 2, 10, "urgent", 7, &urgent);
  passes(4);
  ck_assert_int_eq(fake->n_pkts, with_op ? 3 : 2);
  struct nm_wire_chunk_s c[8];
  ck_assert_int_eq(decode(1, c, 8), with_op ? 1 : 5);
  ck_assert_uint_eq(c[0].tag, 2); /* the urgent message first in either case */
  ck_assert_int_eq(n_urgent_pkts, with_op);
  if (with_op) {
    ck_assert_int_eq(urgent_pkts[0], 1);
    ck_assert_int_eq(decode(2, c, 8), 4);
  }
  ck_assert_int_eq(nm_sr_stest(sess, &urgent), 0);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(nm_sr_stest(sess, &bulk[i]), 0);
  teardown();
}

START_TEST(test_urgent_packet_by_send_urgent) { check_urgent_packet(1); }
END_TEST

START_TEST(test_urgent_packet_aggregates_without_op) { check_urgent_packet(0); }
END_TEST

/* Over a driver with send_urgent and a backlog op (sm): urgent packets that go by send_urgent leave the bulk
 * alone; one too large for it goes into the main queue, and then the bulk is held behind a backlog. */
START_TEST(test_bulk_held_only_after_main_queue_urgent)
{
  static struct nm_drv_ops_s ops;
  setup_backlog("prio");
  ops = *core->drvs[0].ops;
  ops.send_urgent = fake_send_urgent;
  core->drvs[0].ops = &ops;
  core->drvs[0].props.urgent_max = 256;
  n_urgent_pkts = 0;
  static char bulk[2][512], big[1024];
  nm_sr_request_t u1, u2, b1, b2;
  isend_prio(gate(1), 7, 5, "urgent", 7, &u1);
  passes(3);
  ck_assert_int_eq(n_urgent_pkts, 1);
  ck_assert_uint_eq(gate(1)->urgent_ns, 0);
  isend_prio(gate(1), 1, 0, bulk[0], sizeof(bulk[0]), &b1);
  passes(3);
  ck_assert_int_eq(pkts_to(1), 2); /* not held: the urgent packet did not wait in the main queue */
  isend_prio(gate(1), 7, 5, big, sizeof(big), &u2); /* larger than urgent_max: the main queue */
  passes(3);
  ck_assert_int_eq(pkts_to(1), 3);
  ck_assert_int_eq(n_urgent_pkts, 1);
  ck_assert_uint_eq(gate(1)->urgent_ns, 1000);
  isend_prio(gate(1), 1, 0, bulk[1], sizeof(bulk[1]), &b2);
  passes(3);
  ck_assert_int_eq(pkts_to(1), 3); /* held */
  backlog.backlog = 0;
  passes(3);
  ck_assert_int_eq(pkts_to(1), 4);
  ck_assert_int_eq(nm_sr_stest(sess, &u1), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &u2), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &b1), 0);
  ck_assert_int_eq(nm_sr_stest(sess, &b2), 0);
  teardown();
}
END_TEST

/* An urgent send to a gate whose rail is held until the next pass (a packet of that gate just completed at post:
 * the burst rule) leaves at once over an unpaced driver (sm); an unprioritised one waits for the pass. */
START_TEST(test_urgent_skips_gate_hold)
{
  setup_strategy("prio");
  core->drvs[0].props.flags &= ~NM_DRV_F_PACED;
  nm_sr_request_t a, b, u;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 1, "first", 6, &a), 0);
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 2, "held", 5, &b), 0);
  ck_assert_int_eq(fake->n_pkts, 1); /* held for the pass: a burst would aggregate */
  isend_prio(gate(1), 3, 5, "urgent", 7, &u);
  ck_assert_int_eq(fake->n_pkts, 2); /* the urgent one leaves now (with the held one behind it) */
  struct nm_wire_chunk_s c[2];
  ck_assert_int_eq(decode(1, c, 2), 2);
  ck_assert_uint_eq(c[0].tag, 3);
  teardown();
}
END_TEST

/* The prio strategy places a send after the last queued send at least as urgent or of its stream, by an index
 * (strategies/nm_strat_prio.c) instead of a walk from the tail. Against a model that walks: 4,000 sends with
 * pseudo-random priorities (3 distinct values, then 12: more than the index holds, so it falls back to the walk
 * until the queue empties) and tags (streams), the queue drained by progress passes now and then; after every send
 * the queue holds the same sends in the same order as the model. */
static void check_place_against_walk(int n_prios)
{
  setup_strategy("prio");
  enum { N = 4000 };
  static nm_sr_request_t reqs[N];
  static int32_t ids[N];
  static int model[N];
  int m_head = 0, m_len = 0; /* model queue: model[m_head .. m_head + m_len) as a list kept in an array */
  static int order[N];
  nm_prio_t prio[N];
  int tag[N];
  nm_sr_request_t lead;
  occupy_driver(&lead);
  unsigned x = 4242u + (unsigned)n_prios;
  struct nm_req_list_s *q = &gate(1)->send_queue;
  for (int i = 0; i < N; i++) {
    x = x * 1103515245u + 12345u;
    prio[i] = (nm_prio_t)((x >> 8) % (unsigned)n_prios) - 1;
    tag[i] = (int)((x >> 20) % 6);
    ids[i] = i;
    /* the model's walk: after the last queued send at least as urgent or on the same tag */
    int pos = m_len - 1;
    while (pos >= 0 && prio[model[m_head + pos]] < prio[i] && tag[model[m_head + pos]] != tag[i])
      pos--;
    memmove(&model[m_head + pos + 2], &model[m_head + pos + 1], (size_t)(m_len - pos - 1) * sizeof(int));
    model[m_head + pos + 1] = i;
    m_len++;
    isend_prio(gate(1), (nm_tag_t)tag[i], prio[i], &ids[i], sizeof(ids[i]), &reqs[i]);
    int k = 0;
    for (struct nm_req_s *r = q->head; r; r = r->next)
      order[k++] = *(const int32_t *)r->buf;
    /* what the progress passes sent left from the queue's head */
    ck_assert_int_le(k, m_len);
    m_head += m_len - k;
    m_len = k;
    for (int j = 0; j < k; j++)
      ck_assert_int_eq(order[j], model[m_head + j]);
    if (x % 128 == 0) { /* now and then the driver frees up: a packet leaves from the head */
      nm_core_progress(core);
      k = 0;
      for (struct nm_req_s *r = q->head; r; r = r->next)
        k++;
      m_head += m_len - k;
      m_len = k;
    }
  }
  while (q->head)
    nm_core_progress(core);
  teardown();
}

/* 64 urgent sends, each placed between the previous one and the queued bulk: the order keys between them run out
 * after 20 halvings and the queue is renumbered; the order stays urgent sends in post order, then the bulk. */
START_TEST(test_prio_place_renumbers)
{
  setup_strategy("prio");
  enum { BULK = 10, URGENT = 64 };
  static nm_sr_request_t reqs[BULK + URGENT];
  static int32_t ids[BULK + URGENT];
  nm_sr_request_t lead;
  occupy_driver(&lead);
  for (int i = 0; i < BULK + URGENT; i++) {
    ids[i] = i;
    isend_prio(gate(1), (nm_tag_t)(i < BULK ? 1 : 100 + i), i < BULK ? 0 : 5, &ids[i], sizeof(ids[i]), &reqs[i]);
  }
  int k = 0;
  for (struct nm_req_s *r = gate(1)->send_queue.head; r; r = r->next, k++)
    ck_assert_int_eq(*(const int32_t *)r->buf, k < URGENT ? BULK + k : k - URGENT);
  ck_assert_int_eq(k, BULK + URGENT);
  while (gate(1)->send_queue.head)
    nm_core_progress(core);
  teardown();
}
END_TEST

START_TEST(test_prio_place_few_prios) { check_place_against_walk(3); }
END_TEST

START_TEST(test_prio_place_many_prios) { check_place_against_walk(12); }
END_TEST

/* NMAD_STRATEGY unset selects a strategy that honours priorities and aggregates: 16 small sends queued while
 * the driver is busy leave in one packet, the urgent one first. */
START_TEST(test_default_strategy_prio_aggreg)
{
  struct nm_config_s cfg;
  memset(&cfg, 0, sizeof(cfg));
  unsetenv("NMAD_STRATEGY");
  ck_assert_int_eq(nm_config_load(&cfg, 65536, 0, 0), 0);
  ck_assert_ptr_nonnull(cfg.strategy->gate_prio); /* priority-aware */
  setup_strategy(cfg.strategy->name);
  nm_sr_request_t lead, reqs[16];
  char msgs[16][8];
  occupy_driver(&lead);
  for (int i = 0; i < 16; i++) {
    snprintf(msgs[i], sizeof(msgs[i]), "m%d", i);
    isend_prio(gate(1), (nm_tag_t)i, i == 11 ? 3 : 0, msgs[i], sizeof(msgs[i]), &reqs[i]);
  }
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  struct nm_wire_chunk_s c[16];
  ck_assert_int_eq(decode(1, c, 16), 16);
  ck_assert_str_eq((const char *)c[0].payload, "m11");
  for (int k = 1, i = 0; k < 16; k++, i++) {
    if (i == 11)
      i++;
    ck_assert_str_eq((const char *)c[k].payload, msgs[i]); /* the others in post order */
  }
  teardown();
}
END_TEST

/* The yield phase before blocking: 1 ms when ranks outnumber the host's cores (a yielding waiter is picked last
 * while the ranks that share its core are busy), 10 ms otherwise; NMAD_YIELD_US overrides both. */
START_TEST(test_yield_phase_by_oversubscription)
{
  struct nm_config_s cfg;
  unsetenv("NMAD_YIELD_US");
  unsetenv("NMAD_SPIN_US");
  memset(&cfg, 0, sizeof(cfg));
  ck_assert_int_eq(nm_config_load(&cfg, 65536, 1, 1), 0);
  ck_assert_uint_eq(cfg.spin_ns, 0);
  ck_assert_uint_eq(cfg.yield_ns, 1000 * 1000);
  memset(&cfg, 0, sizeof(cfg));
  ck_assert_int_eq(nm_config_load(&cfg, 65536, 0, 0), 0);
  ck_assert_uint_eq(cfg.spin_ns, 10 * 1000);
  ck_assert_uint_eq(cfg.yield_ns, 10 * 1000 * 1000);
  setenv("NMAD_YIELD_US", "250", 1);
  for (int over = 0; over < 2; over++) {
    memset(&cfg, 0, sizeof(cfg));
    ck_assert_int_eq(nm_config_load(&cfg, 65536, over, over), 0);
    ck_assert_uint_eq(cfg.yield_ns, 250 * 1000);
  }
  unsetenv("NMAD_YIELD_US");
}
END_TEST

/* Every strategy answers the receiver's rendezvous cut with chunks covering [0, len) exactly. */
START_TEST(test_rdv_accept_covers)
{
  const char *names[] = {"default", "aggreg", "prio"};
  for (int s = 0; s < 3; s++) {
    setup_strategy(names[s]);
    struct nm_rdv_chunk_s ch[NM_MAX_RAILS];
    nm_len_t len = 3 * 1024 * 1024 + 7;
    int n = core->cfg.strategy->rdv_accept(gate(1), len, 0, ch, NM_MAX_RAILS);
    ck_assert_int_ge(n, 1);
    ck_assert_int_le(n, NM_MAX_RAILS);
    nm_len_t next = 0;
    for (int i = 0; i < n; i++) {
      ck_assert_uint_eq(ch[i].offset, next);
      ck_assert_int_lt(ch[i].rail, gate(1)->n_rails);
      next += ch[i].len;
    }
    ck_assert_uint_eq(next, len);
    teardown();
  }
}
END_TEST

/* A packet the driver refuses (-NM_EAGAIN: no room, as a full sm ring) waits on its rail and is counted in
 * n_retry, which makes the core sleep by the short back-off meanwhile (nm_core_block(): the room comes without a
 * driver event).
 * It leaves at the first pass with room, and a gate that fails drops it from the count. */
START_TEST(test_refused_packet_counted)
{
  setup_strategy("prio");
  nm_sr_request_t a, b;
  fake->refuse = 1;
  ck_assert_int_eq(nm_sr_isend(sess, gate(1), 5, "abc", 4, &a), 0);
  nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 0);
  ck_assert_int_eq(core->n_retry, 1);
  nm_core_progress(core); /* refused again: still one */
  ck_assert_int_eq(core->n_retry, 1);
  fake->refuse = 0;
  for (int pass = 0; pass < 3 && fake->n_pkts == 0; pass++)
    nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 1);
  ck_assert_uint_eq(fake->pkts[0].peer, 1);
  ck_assert_int_eq(core->n_retry, 0);
  ck_assert_int_eq(nm_sr_stest(sess, &a), 0);
  fake->refuse = 1;
  ck_assert_int_eq(nm_sr_isend(sess, gate(2), 6, "def", 4, &b), 0);
  nm_core_progress(core);
  ck_assert_int_eq(core->n_retry, 1);
  nm_gate_fail(gate(2), -NM_ECLOSED);
  ck_assert_int_eq(core->n_retry, 0);
  ck_assert_int_ne(nm_sr_stest(sess, &b), 0);
  teardown();
}
END_TEST

/* The packet of six eager messages to one gate (100 to 1,000 B, each its own bytes), as the driver got it: the
 * plain driver (send), the gathering one (sendv: the payloads from 256 B on stay in the senders' buffers, four at
 * most), or the gathering one refusing the packet first (it then waits whole, copied). */
static size_t gathered_packet(const struct nm_drv_ops_s *ops, int refuse_first, uint8_t *out, int *pieces)
{
  static const nm_len_t lens[6] = {100, 300, 1000, 512, 700, 600};
  static uint8_t data[6][1000];
  nm_sr_request_t lead, r[6];
  setup_strategy("prio");
  core->drvs[0].ops = ops;
  for (int m = 0; m < 6; m++)
    for (nm_len_t i = 0; i < lens[m]; i++)
      data[m][i] = (uint8_t)(m * 37 + i * 11 + 1);
  occupy_driver(&lead); /* the six wait for the next pass, and go in one packet */
  for (int m = 0; m < 6; m++)
    ck_assert_int_eq(nm_sr_isend(sess, gate(1), (nm_tag_t)m, data[m], lens[m], &r[m]), 0);
  fake->refuse = refuse_first;
  nm_core_progress(core);
  fake->refuse = 0;
  for (int pass = 0; pass < 3 && fake->n_pkts < 2; pass++)
    nm_core_progress(core);
  ck_assert_int_eq(fake->n_pkts, 2);
  for (int m = 0; m < 6; m++)
    ck_assert_int_eq(nm_sr_stest(sess, &r[m]), 0);
  ck_assert_int_eq(decode(1, (struct nm_wire_chunk_s[6]){0}, 6), 6);
  size_t len = fake->pkts[1].len;
  memcpy(out, fake->pkts[1].buf, len);
  *pieces = fake->pkts[1].pieces;
  teardown();
  return len;
}

/* A driver with sendv() gets the same packet bytes as one without, in 2 NM_PW_GAPS + 1 pieces (the core's bytes
 * around four payloads; the fifth large one and the short one copied); a packet that waited is whole. */
START_TEST(test_gather_same_packet)
{
  static uint8_t plain[8192], gathered[8192], waited[8192];
  int pieces_plain, pieces_gathered, pieces_waited;
  size_t n_plain = gathered_packet(&fake_drv_ops, 0, plain, &pieces_plain);
  size_t n_gathered = gathered_packet(&fake_drv_gather_ops, 0, gathered, &pieces_gathered);
  size_t n_waited = gathered_packet(&fake_drv_gather_ops, 1, waited, &pieces_waited);
  ck_assert_int_eq(pieces_plain, 1);
  ck_assert_int_eq(pieces_gathered, 2 * NM_PW_GAPS + 1);
  ck_assert_int_eq(pieces_waited, 1);
  ck_assert_uint_eq(n_gathered, n_plain);
  ck_assert_uint_eq(n_waited, n_plain);
  ck_assert_mem_eq(gathered, plain, n_plain);
  ck_assert_mem_eq(waited, plain, n_plain);
}
END_TEST

/* A second network rail that only listens (nm_drv_ops_s.idle): its progress calls are counted, its idle() answer,
 * the events its next calls report and its clock (the core's time: nm_drv_ops_s.now_ns) are set by the test. */
static struct {
  int calls, idle, events;
  uint64_t now_ns;
} quiet;
static int quiet_progress(struct nm_drv_s *drv)
{
  quiet.calls++;
  if (quiet.events) {
    quiet.events--;
    return 1;
  }
  return fake_drv_ops.progress(drv);
}
static int quiet_idle(struct nm_drv_s *drv) { return quiet.idle; }
static uint64_t quiet_now_ns(struct nm_drv_s *drv) { return quiet.now_ns; }

/* A core with the self driver, then: a plain fake rail and the counted rail (QUIET_BESIDE_FAKE), the counted rail
 * alone (QUIET_ALONE), or two counted rails (QUIET_TWO: two idle NICs; their calls add up in quiet.calls). */
enum { QUIET_BESIDE_FAKE, QUIET_ALONE, QUIET_TWO };
static nm_core_t quiet_core(int kind)
{
  static struct nm_drv_ops_s ops;
  ops = fake_drv_ops;
  ops.progress = quiet_progress;
  ops.idle = quiet_idle;
  ops.now_ns = quiet_now_ns;
  nm_core_t c;
  struct nm_drv_s *d;
  ck_assert_int_eq(nm_core_create(0, 2, &c), 0);
  ck_assert_int_eq(nm_core_add_driver(c, &nm_drv_self_ops, "self", 1, &d), 0);
  if (kind == QUIET_BESIDE_FAKE)
    ck_assert_int_eq(nm_core_add_driver(c, &fake_drv_ops, "fake", 1, &d), 0);
  ck_assert_int_eq(nm_core_add_driver(c, &ops, "quiet", 1, &d), 0);
  if (kind == QUIET_TWO)
    ck_assert_int_eq(nm_core_add_driver(c, &ops, "quiet", 1, &d), 0);
  memset(&quiet, 0, sizeof(quiet));
  quiet.idle = 1;
  return c;
}

/* Calls of the counted rail during @p passes progress passes. */
static int quiet_calls_in(nm_core_t c, int passes)
{
  int before = quiet.calls;
  for (int i = 0; i < passes; i++)
    nm_core_progress(c);
  return quiet.calls - before;
}

START_TEST(test_quiet_rail_polled_less)
{
  nm_core_t c = quiet_core(QUIET_BESIDE_FAKE);
  quiet.now_ns = 5 * NM_DRV_QUIET_NS;
  /* polled every pass until NM_DRV_QUIET_AFTER calls found nothing, then once more at once (its last quiet poll
   * is older than NM_DRV_QUIET_NS), then not while the clock stands still */
  ck_assert_int_eq(quiet_calls_in(c, NM_DRV_QUIET_AFTER), NM_DRV_QUIET_AFTER);
  ck_assert_int_eq(quiet_calls_in(c, 10 * NM_DRV_QUIET_EVERY), 1);
  ck_assert_int_eq(quiet_calls_in(c, 10 * NM_DRV_QUIET_EVERY), 0);
  /* once per NM_DRV_QUIET_NS, found within NM_DRV_QUIET_EVERY passes of it */
  quiet.now_ns += NM_DRV_QUIET_NS - 1;
  ck_assert_int_eq(quiet_calls_in(c, 2 * NM_DRV_QUIET_EVERY), 0);
  quiet.now_ns += 1;
  ck_assert_int_eq(quiet_calls_in(c, NM_DRV_QUIET_EVERY), 1);
  ck_assert_int_eq(quiet_calls_in(c, 2 * NM_DRV_QUIET_EVERY), 0);
  /* something of its own in flight: every pass */
  quiet.idle = 0;
  ck_assert_int_eq(quiet_calls_in(c, 3 * NM_DRV_QUIET_EVERY), 3 * NM_DRV_QUIET_EVERY);
  /* idle again but its last calls were not quiet: every pass again for NM_DRV_QUIET_AFTER calls */
  quiet.idle = 1;
  quiet.events = 1;
  ck_assert_int_eq(quiet_calls_in(c, 2 * NM_DRV_QUIET_EVERY), 0);
  quiet.now_ns += NM_DRV_QUIET_NS; /* the arrival is found at the next poll, within NM_DRV_QUIET_EVERY passes */
  ck_assert_int_eq(quiet_calls_in(c, NM_DRV_QUIET_EVERY), 1);
  ck_assert_int_eq(quiet.events, 0);
  ck_assert_int_eq(quiet_calls_in(c, NM_DRV_QUIET_AFTER), NM_DRV_QUIET_AFTER);
  ck_assert_int_eq(quiet_calls_in(c, 2 * NM_DRV_QUIET_EVERY), 0);
  nm_core_destroy(c);
}
END_TEST

START_TEST(test_lone_rail_polled_every_pass)
{
  nm_core_t c = quiet_core(QUIET_ALONE); /* the self driver is no network rail: nothing else would find arrivals */
  ck_assert_int_eq(quiet_calls_in(c, NM_DRV_QUIET_AFTER + 10 * NM_DRV_QUIET_EVERY),
                   NM_DRV_QUIET_AFTER + 10 * NM_DRV_QUIET_EVERY);
  nm_core_destroy(c);
}
END_TEST

/* Two idle NICs, both quiet: neither is skipped, or an arrival on either would wait NM_DRV_QUIET_NS. */
START_TEST(test_all_quiet_rails_polled_every_pass)
{
  nm_core_t c = quiet_core(QUIET_TWO);
  quiet.now_ns = 5 * NM_DRV_QUIET_NS;
  ck_assert_int_eq(quiet_calls_in(c, NM_DRV_QUIET_AFTER + 10 * NM_DRV_QUIET_EVERY),
                   2 * (NM_DRV_QUIET_AFTER + 10 * NM_DRV_QUIET_EVERY));
  nm_core_destroy(c);
}
END_TEST

/* Two equal fake rails: a burst to one gate waits for the rail its first packet took (busy until the next pass)
 * and aggregates there, instead of sending every other packet on the next rail (with sm+tcp, over tcp). */
START_TEST(test_burst_waits_for_first_rail)
{
  struct fake_drv_s *fa, *fb;
  struct nm_drv_s *b;
  nm_core_t c = fake_core_new(2, "prio", 1024, &fa);
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(nm_core_add_driver(c, &fake_drv_ops, "fake", 1, &b), 0);
  fb = b->priv;
  fa->inject = fb->inject = 1;
  nm_session_t s;
  ck_assert_int_eq(nm_session_open(c, "burst", &s), 0);
  nm_gate_t g = nm_core_gate(c, 1);
  ck_assert_ptr_nonnull(g);
  ck_assert_int_eq(g->n_rails, 2);
  char data[4][8] = {"first", "second", "third", "fourth"};
  nm_sr_request_t r[4];
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(nm_sr_isend(s, g, 1, data[i], sizeof(data[i]), &r[i]), 0);
  ck_assert_int_eq(fa->n_pkts + fb->n_pkts, 1); /* the first left at once; the others wait for the next pass */
  nm_core_progress(c);
  ck_assert_int_eq(fa->n_pkts + fb->n_pkts, 2); /* and leave together, on the same rail */
  ck_assert_int_eq(fa->n_pkts == 2 || fb->n_pkts == 2, 1);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(nm_sr_stest(s, &r[i]), 0);
  nm_session_close(s);
  fake_core_free(c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("sched");
  TCase *t = tcase_create("priorities");
  tcase_add_test(t, test_prio_across_gates);
  tcase_add_test(t, test_unpaced_driver_holds_one_gate);
  tcase_add_test(t, test_aggreg_gates_fifo);
  tcase_add_test(t, test_prio_gate_order_with_ctrl);
  tcase_add_test(t, test_monitor_posts_during_schedule);
  tcase_add_test(t, test_prio_data_vs_rtr);
  tcase_add_test(t, test_prio_keeps_tag_order);
  tcase_add_test(t, test_prio_sorted_distinct_tags);
  tcase_add_test(t, test_prio_aggregation_capped);
  tcase_add_test(t, test_urgent_skips_gate_hold);
  tcase_add_test(t, test_bulk_held_behind_backlog);
  tcase_add_test(t, test_bulk_not_held_without_prio);
  tcase_add_test(t, test_urgent_packet_by_send_urgent);
  tcase_add_test(t, test_urgent_packet_aggregates_without_op);
  tcase_add_test(t, test_bulk_held_only_after_main_queue_urgent);
  tcase_add_test(t, test_prio_place_renumbers);
  tcase_add_test(t, test_prio_place_few_prios);
  tcase_add_test(t, test_prio_place_many_prios);
  tcase_add_test(t, test_default_strategy_prio_aggreg);
  tcase_add_test(t, test_yield_phase_by_oversubscription);
  tcase_add_test(t, test_direct_send_lone_small);
  tcase_add_test(t, test_direct_send_behind_refused);
  tcase_add_test(t, test_send_now);
  tcase_add_test(t, test_direct_send_inject);
  tcase_add_test(t, test_rdv_accept_covers);
  tcase_add_test(t, test_refused_packet_counted);
  tcase_add_test(t, test_burst_waits_for_first_rail);
  suite_add_tcase(s, t);
  t = tcase_create("gather");
  tcase_add_test(t, test_gather_same_packet);
  suite_add_tcase(s, t);
  t = tcase_create("quiet rail");
  tcase_add_test(t, test_quiet_rail_polled_less);
  tcase_add_test(t, test_lone_rail_polled_every_pass);
  tcase_add_test(t, test_all_quiet_rails_polled_every_pass);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
