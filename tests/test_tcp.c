/* Unit tests of the ntcp driver (drivers/tcp/nm_tcp.c) through its ops table: three endpoints in this process,
 * ranks 0, 1 and 2 of a three-rank table, over loopback. Packets of many sizes both ways, a large transfer with a
 * packet posted after it that arrives before its end (the urgent message passes the bulk), replies and a large
 * transfer on the connection the other rank made, a cancelled receive
 * whose bytes are drained, a peer gone, and untrusted bytes: a HELLO with the wrong nonce, a frame of an unknown
 * kind, data for no posted receive. */
#include <check.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "drivers/tcp/nm_tcp_private.h"
#include "tests/drv_endpoints.h"
#include "nmad/core/nm_le.h"
#include <nmad/nm_errno.h>

static struct nm_tcp_s *priv(int i) { return ep[i].priv; }

static void setup(void)
{
  endpoints_open(&nm_drv_tcp_ops, "ntcp");
  for (int i = 0; i < NEP; i++)
    ck_assert_int_eq(priv(i)->self_index, i);
}

/* Progress until endpoint @p i saw @p pkts packets and @p large transfers ended (or a bound is reached). */
static void progress_until(int i, int pkts, int large)
{
  for (int k = 0; k < 200000 && (seen[i].n_pkts < pkts || seen[i].n_large < large); k++)
    progress_all();
}

START_TEST(test_packets_both_ways)
{
  static unsigned char buf[NM_TCP_MAX_PACKET];
  const size_t lens[] = {1, 8, 15, 16, 17, 100, 4095, 4096, 4097, 65536, NM_TCP_MAX_PACKET};
  const int n = (int)(sizeof(lens) / sizeof(lens[0]));
  for (int k = 0; k < n; k++) {
    fill(buf, lens[k], k);
    ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, lens[k], NULL), 1);
    ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, buf, lens[k], NULL), 1);
  }
  progress_until(1, n, 0);
  progress_until(0, n, 0);
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(seen[i].n_pkts, n);
    ck_assert_int_eq(seen[i].bad_content, 0);
    for (int k = 0; k < n; k++) {
      ck_assert_uint_eq(seen[i].lens[k], lens[k]);
      ck_assert_uint_eq(seen[i].srcs[k], (uint64_t)(1 - i)); /* the rank its HELLO proved */
    }
  }
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, NM_TCP_MAX_PACKET + 1, NULL), -NM_EINVAL);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 7, buf, 8, NULL), -NM_EINVAL);
  /* Both connected before either read the other's HELLO: the pair settles on rank 0's connection, rank 1 moving
   * its writes there, and nothing is lost on the way. */
  ck_assert_ptr_nonnull(priv(1)->peers[0].conn[NM_TCP_OUT]);
  ck_assert_ptr_nonnull(priv(1)->peers[0].conn[NM_TCP_IN]);
  fill(buf, 64, n);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, buf, 64, NULL), 1);
  ck_assert_int_eq(priv(1)->peers[0].wc, NM_TCP_IN);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, 64, NULL), 1); /* each side's packet n carries fill(n) */
  ck_assert_int_eq(priv(0)->peers[1].wc, NM_TCP_OUT);
  progress_until(0, n + 1, 0);
  progress_until(1, n + 1, 0);
  ck_assert_int_eq(seen[0].n_pkts, n + 1);
  ck_assert_int_eq(seen[1].n_pkts, n + 1);
  ck_assert_int_eq(seen[0].bad_content + seen[1].bad_content, 0);
}
END_TEST

/* Urgent packets (send_urgent) while bulk packets wait in rank 0's queue for the socket: they go before every
 * queued packet not yet begun, in their own order; with nothing queued the driver leaves them to send. */
START_TEST(test_urgent_passes_queue)
{
  static unsigned char buf[NM_TCP_MAX_PACKET];
  unsigned char u[9] = {0};
  const struct iovec i7 = {u, 7}, i9[2] = {{u, 4}, {u + 4, 5}};
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, 8, NULL), 1); /* connects */
  progress_until(1, 1, 0);
  ck_assert_int_eq(ep[0].ops->send_urgent(&ep[0], 1, &i7, 1, 7, NULL), -NM_EAGAIN); /* nothing queued */
  struct nm_tcp_peer_s *p = &priv(0)->peers[1];
  int n_bulk = 0, queued = 0;
  while (queued < 3 && n_bulk < 200) { /* the socket's buffers full, then three packets queued whole */
    ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, sizeof(buf), NULL), 1);
    n_bulk++;
    queued = 0;
    for (struct nm_tcp_out_s *o = p->pk_head; o; o = o->next)
      queued += o->off == 0;
  }
  ck_assert_int_eq(queued, 3);
  ck_assert_int_eq(ep[0].ops->send_urgent(&ep[0], 1, &i7, 1, 7, NULL), 1);
  ck_assert_int_eq(ep[0].ops->send_urgent(&ep[0], 1, i9, 2, 9, NULL), 1);
  ck_assert_int_eq(ep[0].ops->send_urgent(&ep[0], 1, i9, 2, 8, NULL), -NM_EINVAL);
  progress_until(1, 1 + n_bulk + 2, 0);
  ck_assert_int_eq(seen[1].n_pkts, 1 + n_bulk + 2);
  const int first = 1 + n_bulk - 3; /* after the first packet and the bulk that was not waiting whole */
  ck_assert_uint_eq(seen[1].lens[first], 7);
  ck_assert_uint_eq(seen[1].lens[first + 1], 9);
  for (int k = first + 2; k < 1 + n_bulk + 2; k++)
    ck_assert_uint_eq(seen[1].lens[k], sizeof(buf));
}
END_TEST

/* 3 MiB + 17 from rank 0 to rank 1, then a packet: the packet arrives while most of the bulk is still to come,
 * and the bulk arrives whole and in place. */
START_TEST(test_packet_passes_large)
{
  const size_t len = 3 * 1024 * 1024 + 17;
  unsigned char *src = malloc(len), *dst = calloc(1, len), pkt[8];
  ck_assert(src && dst);
  fill(src, len, 5);
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 42, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 42, &sctx), 0);
  for (int k = 0; k < 4; k++)
    progress_all(); /* a few slices on their way */
  fill(pkt, sizeof(pkt), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, pkt, sizeof(pkt), NULL), 1);
  progress_until(1, 1, 1);
  progress_until(0, 0, 1);
  ck_assert_int_eq(seen[1].n_pkts, 1);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_int_eq(seen[1].large_at_pkt[0], 0); /* the packet before the end of the bulk */
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_ptr_eq(seen[1].large_ctx[0], &rctx);
  ck_assert_int_eq(seen[1].large_err[0], 0);
  ck_assert_uint_eq(seen[1].large_len[0], len);
  ck_assert_int_eq(seen[0].n_large, 1);
  ck_assert_ptr_eq(seen[0].large_ctx[0], &sctx);
  ck_assert_uint_eq(seen[0].large_len[0], len);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  free(src);
  free(dst);
}
END_TEST

/* A receive cancelled before its bytes come: reported cancelled at once; the bytes its sender then writes are read
 * and dropped, and the stream stays in step (a later packet and transfer arrive intact). */
START_TEST(test_cancelled_receive_drained)
{
  const size_t len = 200 * 1024 + 3;
  unsigned char *src = malloc(len), *dst = calloc(1, len), *dst2 = calloc(1, len), pkt[8];
  ck_assert(src && dst && dst2);
  fill(src, len, 9);
  int sctx, rctx, sctx2, rctx2;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 50, &rctx), 0);
  ck_assert_int_eq(ep[1].ops->large_cancel(&ep[1], &rctx), 0);
  ck_assert_int_eq(ep[1].ops->large_cancel(&ep[1], &rctx), -NM_ENOTFOUND);
  progress_until(1, 0, 1);
  ck_assert_int_eq(seen[1].large_err[0], -NM_ECANCELED);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 50, &sctx), 0);
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst2, len, 51, &rctx2), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 51, &sctx2), 0);
  fill(pkt, sizeof(pkt), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, pkt, sizeof(pkt), NULL), 1);
  progress_until(1, 1, 2);
  progress_until(0, 0, 2);
  ck_assert_int_eq(seen[1].n_large, 2);
  ck_assert_ptr_eq(seen[1].large_ctx[1], &rctx2);
  ck_assert_int_eq(seen[1].large_err[1], 0);
  ck_assert_int_eq(memcmp(src, dst2, len), 0);
  for (size_t i = 0; i < len; i++)
    ck_assert_int_eq(dst[i], 0); /* the cancelled buffer is never written */
  ck_assert_int_eq(seen[1].n_pkts, 1);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_ptr_eq(priv(1)->lrecvs, NULL); /* the drained entry is gone */
  free(src);
  free(dst);
  free(dst2);
}
END_TEST

/* A large transfer goes in frames of NM_TCP_SLICE_MAX while the rank sent no urgent packet lately (a system call
 * per frame), and the frames begun after an urgent packet are NM_TCP_SLICE long, so that the next urgent packet
 * finds little bulk ahead of it; the transfer arrives whole either way. */
START_TEST(test_frames_follow_urgent_traffic)
{
  const size_t len = 6 * (size_t)NM_TCP_SLICE_MAX + 5;
  unsigned char *src = malloc(len), *dst = calloc(1, len), u[8] = {0};
  ck_assert(src && dst);
  fill(src, len, 3);
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 9, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 9, &sctx), 0);
  struct nm_tcp_peer_s *p = &priv(0)->peers[1];
  ck_assert_uint_eq(priv(0)->urgent_ns, 0);
  for (int k = 0; k < 1000 && p->slice_len == 0; k++)
    progress_all();
  ck_assert_uint_eq(p->slice_len, NM_TCP_SLICE_MAX); /* calm: a long frame */
  const struct iovec iu = {u, sizeof(u)};
  int rc = ep[0].ops->send_urgent(&ep[0], 1, &iu, 1, sizeof(u), NULL); /* the core's path for an urgent packet */
  ck_assert(rc == -NM_EAGAIN || rc == 1);
  ck_assert_uint_ne(priv(0)->urgent_ns, 0);
  int short_frame = 0;
  for (int k = 0; k < 200000 && seen[1].n_large == 0; k++) {
    progress_all();
    short_frame |= p->in_slice && p->slice_len <= NM_TCP_SLICE;
  }
  ck_assert(short_frame);
  progress_until(0, 0, 1);
  expect_one_large_whole(1, src, dst, len);
  free(src);
  free(dst);
}
END_TEST

/* Rank 1 answers rank 0 on the connection rank 0 made (one connection for the pair: the reply carries the
 * acknowledgement of the request, doc/architecture.md "The ntcp driver"): a packet, then a large transfer back in
 * DATA frames, both read by rank 0 on its own connection; rank 1 makes none. Then rank 0 goes away, and rank 1,
 * which never connected to it, sees it on the connection it writes on. */
START_TEST(test_reply_on_accepted_connection)
{
  unsigned char pkt[100];
  const size_t len = 1024 * 1024 + 3;
  unsigned char *src = malloc(len), *dst = calloc(1, len);
  ck_assert(src && dst);
  fill(src, len, 9);
  fill(pkt, 8, 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, pkt, 8, NULL), 1);
  progress_until(1, 1, 0);
  fill(pkt, sizeof(pkt), 0);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, pkt, sizeof(pkt), NULL), 1);
  ck_assert_int_eq(priv(1)->peers[0].wc, NM_TCP_IN);
  ck_assert_ptr_null(priv(1)->peers[0].conn[NM_TCP_OUT]);
  progress_until(0, 1, 0);
  ck_assert_int_eq(seen[0].n_pkts, 1);
  ck_assert_uint_eq(seen[0].lens[0], sizeof(pkt));
  ck_assert_uint_eq(seen[0].srcs[0], 1);
  ck_assert_int_eq(seen[0].bad_content, 0);
  int sctx, rctx;
  ck_assert_int_eq(ep[0].ops->large_recv(&ep[0], 1, dst, len, 77, &rctx), 0);
  ck_assert_int_eq(ep[1].ops->large_send(&ep[1], 0, src, len, 77, &sctx), 0);
  progress_until(0, 1, 1);
  progress_until(1, 1, 1);
  expect_one_large_whole(0, src, dst, len);
  ck_assert_uint_eq(seen[0].large_len[0], len);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_ptr_null(priv(0)->peers[1].conn[NM_TCP_IN]); /* the pair used one connection */
  ck_assert_ptr_null(priv(1)->peers[0].conn[NM_TCP_OUT]);
  ep[0].ops->close(&ep[0]);
  ep[0].ops->open(&ep[0], "ntcp", 1); /* a fresh endpoint for teardown, connected to nobody */
  for (int k = 0; k < 1000 && !priv(1)->peers[0].dead; k++)
    ep[1].ops->progress(&ep[1]);
  ck_assert(priv(1)->peers[0].dead);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, pkt, sizeof(pkt), NULL), -NM_ECLOSED);
  free(src);
  free(dst);
}
END_TEST

/* A peer that closes: its posted receive fails with -NM_ECLOSED, and later operations with it fail too. */
START_TEST(test_peer_gone)
{
  unsigned char pkt[8], buf[64];
  int rctx;
  fill(pkt, sizeof(pkt), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, pkt, sizeof(pkt), NULL), 1); /* rank 1 accepts rank 0's connection */
  progress_until(1, 1, 0);
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, buf, sizeof(buf), 60, &rctx), 0);
  ep[0].ops->close(&ep[0]);
  ep[0].ops->open(&ep[0], "ntcp", 1); /* a fresh endpoint for teardown, connected to nobody */
  for (int k = 0; k < 1000 && seen[1].n_large == 0; k++)
    ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(seen[1].large_err[0], -NM_ECLOSED);
  ck_assert(priv(1)->peers[0].dead);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, pkt, sizeof(pkt), NULL), -NM_ECLOSED);
}
END_TEST

/* Bytes written to rank 1's port by hand, as a foreign process could. */
static int raw_connect(int to)
{
  struct nm_tcp_addr_s *a = &priv(to)->self;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = a->ip, .sin_port = a->port};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  return fd;
}

static void raw_frame(int fd, uint32_t kind, uint32_t len, uint64_t tag, const void *body, size_t blen)
{
  uint8_t h[NM_TCP_HDR];
  nm_put32(h, kind);
  nm_put32(h + 4, len);
  nm_put64(h + 8, tag);
  ck_assert_int_eq(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
  if (blen)
    ck_assert_int_eq(write(fd, body, blen), (ssize_t)blen);
}

START_TEST(test_hello_wrong_nonce_refused)
{
  int fd = raw_connect(1);
  uint8_t nonce[8];
  nm_put64(nonce, priv(1)->self.nonce ^ 2);
  raw_frame(fd, NM_TCP_HELLO, 8, 0, nonce, sizeof(nonce));
  for (int k = 0; k < 1000; k++)
    ep[1].ops->progress(&ep[1]);
  ck_assert_ptr_null(priv(1)->peers[0].conn[NM_TCP_IN]);
  ck_assert(!priv(1)->peers[0].dead); /* nobody's connection: rank 0 itself is not blamed */
  char c;
  ck_assert_int_eq(read(fd, &c, 1), 0); /* closed by rank 1 */
  close(fd);
}
END_TEST

/* A connection that proved rank 0 (right nonce), then sends @p kind: refused, rank 0 marked gone. */
static void forged_after_hello(uint32_t kind, uint32_t len, uint64_t tag)
{
  int fd = raw_connect(1);
  uint8_t nonce[8], body[64] = {0};
  nm_put64(nonce, priv(1)->self.nonce);
  raw_frame(fd, NM_TCP_HELLO, 8, 0, nonce, sizeof(nonce));
  raw_frame(fd, kind, len, tag, body, len < sizeof(body) ? len : sizeof(body));
  for (int k = 0; k < 1000 && !priv(1)->peers[0].dead; k++)
    ep[1].ops->progress(&ep[1]);
  ck_assert(priv(1)->peers[0].dead);
  ck_assert_int_eq(seen[1].n_pkts, 0);
  close(fd);
}

START_TEST(test_forged_kind) { forged_after_hello(99, 8, 0); }
END_TEST

START_TEST(test_forged_length) { forged_after_hello(NM_TCP_PKT, NM_TCP_MAX_PACKET + 1, 0); }
END_TEST

START_TEST(test_forged_data_no_receive) { forged_after_hello(NM_TCP_DATA, 8, 1234); }
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("ntcp");
  TCase *tc = tcase_create("driver");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_packets_both_ways);
  tcase_add_test(tc, test_packet_passes_large);
  tcase_add_test(tc, test_cancelled_receive_drained);
  tcase_add_test(tc, test_peer_gone);
  tcase_add_test(tc, test_reply_on_accepted_connection);
  tcase_add_test(tc, test_frames_follow_urgent_traffic);
  tcase_add_test(tc, test_hello_wrong_nonce_refused);
  tcase_add_test(tc, test_forged_kind);
  tcase_add_test(tc, test_forged_length);
  tcase_add_test(tc, test_forged_data_no_receive);
  tcase_add_test(tc, test_urgent_passes_queue);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
