/* Unit tests of the sm driver (drivers/sm/nm_sm.c) through its ops table: three endpoints in this process, ranks
 * 0, 1 and 2 of a three-rank table (rank 2 only where a send goes to two peers) (a process may open its own memfd and pipe through /proc and read its own memory by
 * CMA, so the whole path runs). Packets of every size across many ring wraps, a full ring, large transfers in
 * both orders and their cancel, staged sends read by two peers, the wake-up pipe, and records forged in a ring (untrusted bytes). */
#include <check.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "drivers/sm/nm_sm_private.h"
#include "tests/drv_endpoints.h"
#include <nmad/nm_errno.h>

static void setup(void)
{
  endpoints_open(&nm_drv_sm_ops, "sm");
  /* as the launcher would say on a host with a core per rank (the guess from the online processors would turn
   * the shared copy off on a machine with fewer cores than these three endpoints) */
  for (int i = 0; i < NEP; i++)
    ep[i].ops->host_oversubscribed(&ep[i], 0);
}

static void progress_both(void)
{
  ep[0].ops->progress(&ep[0]);
  ep[1].ops->progress(&ep[1]);
}

START_TEST(test_open_refuses_remote_ranks)
{
  struct nm_drv_s d = {.ops = &nm_drv_sm_ops};
  ck_assert_int_eq(d.ops->open(&d, "sm", 0), -NM_ENOTSUP);
  ck_assert_ptr_null(d.priv);
}
END_TEST

/* 3,000 packets of 1 B to 64 KiB (about 25 MiB: the 256 KiB ring wraps ~100 times), received in order and intact. */
START_TEST(test_packets_all_sizes_wrap)
{
  static unsigned char buf[NM_SM_MAX_PACKET];
  const int n = 3000;
  int sent = 0;
  size_t lens[3000];
  while (sent < n) {
    size_t len = 1 + ((size_t)sent * 7919u) % NM_SM_MAX_PACKET;
    if (sent % 100 == 0)
      len = NM_SM_MAX_PACKET;
    fill(buf, len, sent);
    int rc = ep[0].ops->send(&ep[0], 1, buf, len, NULL);
    if (rc == -NM_EAGAIN) { /* ring full: the receiver's progress makes room */
      ck_assert_int_gt(ep[1].ops->progress(&ep[1]), 0);
      continue;
    }
    ck_assert_int_eq(rc, 1); /* complete at post */
    lens[sent++] = len;
  }
  while (ep[1].ops->progress(&ep[1]) > 0)
    ;
  ck_assert_int_eq(seen[1].n_pkts, n);
  ck_assert_int_eq(seen[1].bad_content, 0);
  for (int k = 0; k < n; k++) {
    ck_assert_uint_eq(seen[1].lens[k], lens[k]);
    ck_assert_uint_eq(seen[1].srcs[k], 0);
  }
  ck_assert_int_eq(seen[0].n_pkts, 0);
}
END_TEST

/* Every packet upcall progresses the receiver again, three deep: each record is delivered once, in order, and
 * none is overwritten by the sender while an outer upcall still reads it (its space is given back only when the
 * outermost read is done). */
START_TEST(test_nested_progress)
{
  static unsigned char buf[8192];
  const int n = 400;
  seen[1].nest = 1;
  int sent = 0;
  while (sent < n) {
    size_t len = 1 + ((size_t)sent * 977u) % sizeof(buf);
    fill(buf, len, sent);
    int rc = ep[0].ops->send(&ep[0], 1, buf, len, NULL);
    if (rc == -NM_EAGAIN) {
      ep[1].ops->progress(&ep[1]);
      continue;
    }
    ck_assert_int_eq(rc, 1);
    sent++;
    if (sent % 37 == 0) /* interleave: some records arrive while nested reads are under way */
      ep[1].ops->progress(&ep[1]);
  }
  while (ep[1].ops->progress(&ep[1]) > 0)
    ;
  ck_assert_int_eq(seen[1].n_pkts, n);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_int_gt(seen[1].nested_calls, 0);
  for (int k = 0; k < n; k++)
    ck_assert_uint_eq(seen[1].lens[k], 1 + ((size_t)k * 977u) % sizeof(buf));
}
END_TEST

START_TEST(test_ring_full_then_room)
{
  static unsigned char buf[NM_SM_MAX_PACKET];
  int k = 0, rc;
  while ((rc = ep[1].ops->send(&ep[1], 0, (fill(buf, sizeof(buf), k), buf), sizeof(buf), NULL)) == 1)
    k++;
  ck_assert_int_eq(rc, -NM_EAGAIN);
  ck_assert_int_eq(k, NM_SM_RING_BYTES / (NM_SM_MAX_PACKET + NM_SM_REC_ALIGN)); /* 3 whole records fit */
  ck_assert_int_eq(ep[0].ops->progress(&ep[0]), k);
  fill(buf, sizeof(buf), k);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, buf, sizeof(buf), NULL), 1);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 0, buf, NM_SM_MAX_PACKET + 1, NULL), -NM_EINVAL);
  ck_assert_int_eq(ep[1].ops->send(&ep[1], 7, buf, 8, NULL), -NM_EINVAL);
}
END_TEST

/* Rank 0's position in its ring in rank 1's segment: where its next record goes (before a rewind). */
static uint64_t out_tail(void) { return ((struct nm_sm_s *)ep[0].priv)->peers[1].out_tail; }

static uint64_t rec_bytes(size_t len)
{
  return (NM_SM_REC_HDR + len + NM_SM_REC_ALIGN - 1) / NM_SM_REC_ALIGN * NM_SM_REC_ALIGN;
}

/* A record of up to NM_SM_REWIND_MAX bytes into an empty ring goes at its start (its lines are the cached ones);
 * into a ring with unread records, or larger, it goes on along the ring. Every packet arrives intact and in order,
 * two of them sent in three pieces (sendv). */
START_TEST(test_rewind_when_empty)
{
  static unsigned char buf[8000];
  const uint64_t rb = NM_SM_RING_BYTES;
  const struct iovec three[3] = {{buf, 10}, {buf + 10, 900}, {buf + 910, 90}};
  int k = 0;
  fill(buf, 100, k++);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, 100, NULL), 1); /* at the ring's start already */
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  fill(buf, 1000, k++);
  ck_assert_int_eq(ep[0].ops->sendv(&ep[0], 1, three, 3, 1000, NULL), 1);
  ck_assert_uint_eq(out_tail(), rb + rec_bytes(1000)); /* empty: rewound to the start of the ring's next lap */
  ck_assert_int_eq(ep[0].ops->sendv(&ep[0], 1, three, 3, 999, NULL), -NM_EINVAL); /* pieces != length */
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  fill(buf, 1000, k++);
  ck_assert_int_eq(ep[0].ops->sendv(&ep[0], 1, three, 3, 1000, NULL), 1); /* rewound again */
  ck_assert_uint_eq(out_tail(), 2 * rb + rec_bytes(1000));
  fill(buf, 1000, k++);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, 1000, NULL), 1); /* one record unread: next to it */
  ck_assert_uint_eq(out_tail(), 2 * rb + 2 * rec_bytes(1000));
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 2);
  fill(buf, sizeof(buf), k++);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, sizeof(buf), NULL), 1); /* too large to rewind */
  ck_assert_uint_eq(out_tail(), 2 * rb + 2 * rec_bytes(1000) + rec_bytes(sizeof(buf)));
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  ck_assert_int_eq(seen[1].n_pkts, k);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_uint_eq(seen[1].lens[1], 1000);
  ck_assert_uint_eq(seen[1].lens[4], sizeof(buf));
}
END_TEST

/* A reader waiting at position H takes a record at the next lap's start only if its stamp says that it was
 * rewound from H (nm_sm_stamp_rewind()): the first record of the next lap, stamped with its own position, is not
 * taken for one, which would skip whatever is still to come at H. */
START_TEST(test_rewind_stamp_names_its_position)
{
  unsigned char b[8];
  fill(b, 1, 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, 1, NULL), 1);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1); /* the reader waits at 64 */
  struct nm_sm_peer_s *p = &((struct nm_sm_s *)ep[0].priv)->peers[1];
  struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)p->out_data;
  r->len = 1;
  r->kind = NM_SM_PKT;
  fill((unsigned char *)r + NM_SM_REC_HDR, 1, 1);
  atomic_store(&r->stamp, ((uint64_t)NM_SM_RING_BYTES + 1) ^ p->addr.nonce); /* its own position's stamp */
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 0);
  atomic_store(&r->stamp, ((uint64_t)NM_SM_REC_ALIGN + 1) ^ p->addr.nonce ^ (1ull << 63)); /* rewound from 64 */
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  ck_assert_int_eq(seen[1].n_pkts, 2);
  ck_assert_int_eq(seen[1].bad_content, 0);
}
END_TEST

/* A large transfer, receive posted first or send first, of a size that is not a multiple of anything. */
static void large_round(int recv_first)
{
  const size_t len = 3 * 1024 * 1024 + 17;
  unsigned char *src = malloc(len), *dst = calloc(1, len);
  ck_assert(src && dst);
  fill(src, len, 5);
  int sctx, rctx;
  if (recv_first)
    ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 42, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 42, &sctx), 0);
  progress_both();
  if (!recv_first)
    ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 42, &rctx), 0);
  /* the copy runs NM_SM_PULL_STEP bytes per progress pass: 49 passes for 3 MiB, then LFIN */
  for (int i = 0; i < 200 && (seen[0].n_large == 0 || seen[1].n_large == 0); i++)
    progress_both();
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_ptr_eq(seen[1].large_ctx[0], &rctx);
  ck_assert_int_eq(seen[1].large_err[0], 0);
  ck_assert_uint_eq(seen[1].large_len[0], len);
  ck_assert_int_eq(seen[0].n_large, 1);
  ck_assert_ptr_eq(seen[0].large_ctx[0], &sctx);
  ck_assert_int_eq(seen[0].large_err[0], 0);
  ck_assert_uint_eq(seen[0].large_len[0], len);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  free(src);
  free(dst);
}

START_TEST(test_large_recv_first) { large_round(1); }
END_TEST

START_TEST(test_large_send_first) { large_round(0); }
END_TEST

/* A packet sent while a large copy is under way is delivered at the next pass, not after the whole copy: the copy
 * goes NM_SM_PULL_STEP bytes per pass (an urgent message passes between the pieces of a bulk transfer). */
START_TEST(test_packet_passes_large_copy)
{
  const size_t len = 8 * NM_SM_PULL_STEP;
  unsigned char *src = malloc(len), *dst = malloc(len);
  ck_assert(src && dst);
  fill(src, len, 3);
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 7, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 7, &sctx), 0);
  ep[1].ops->progress(&ep[1]); /* LRTS read, first step copied */
  unsigned char b[8];
  fill(b, sizeof(b), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, sizeof(b), NULL), 1);
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, 1);  /* the packet is in */
  ck_assert_int_eq(seen[1].n_large, 0); /* the copy is not done yet */
  for (int i = 0; i < 20 && seen[1].n_large == 0; i++)
    ep[1].ops->progress(&ep[1]);
  expect_one_large_whole(1, src, dst, len);
  free(src);
  free(dst);
}
END_TEST

static struct nm_sm_s *priv(int i) { return ep[i].priv; }

/* Mark urgent traffic through endpoint @p i just now, as an express packet sent or read there does (nm_sm.c, "step
 * sizes"): its copies then go by NM_SM_PULL_STEP. */
static void urgent_now(int i)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  priv(i)->urgent_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether bytes [from, from + len) of dst are src's (1) or still zero (0); -1 if neither. */
static int step_state(const unsigned char *src, const unsigned char *dst, size_t from, size_t len)
{
  if (memcmp(src + from, dst + from, len) == 0)
    return 1;
  for (size_t i = from; i < from + len; i++)
    if (dst[i])
      return -1;
  return 0;
}

/* A pass that delivers packets leaves its copy step to the next pass, so that what they carry is answered first;
 * the next pass copies even if packets came again, so that a stream of packets cannot starve the copy. */
START_TEST(test_packet_pass_defers_copy_once)
{
  const size_t step = NM_SM_PULL_STEP, len = 4 * step;
  unsigned char *src = malloc(len), *dst = calloc(1, len), b[8];
  ck_assert(src && dst);
  urgent_now(1); /* steps of NM_SM_PULL_STEP */
  for (size_t i = 0; i < len; i++)
    src[i] = (unsigned char)(1 + i % 250); /* never 0: a copied byte always shows */
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 9, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 9, &sctx), 0);
  ep[1].ops->progress(&ep[1]); /* reads the LRTS (a record): no copy in this pass */
  ck_assert_int_eq(step_state(src, dst, 0, step), 0);
  ep[1].ops->progress(&ep[1]); /* nothing arrived: step 1 */
  ck_assert_int_eq(step_state(src, dst, 0, step), 1);
  ck_assert_int_eq(step_state(src, dst, step, step), 0);
  fill(b, sizeof(b), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, sizeof(b), NULL), 1);
  ep[1].ops->progress(&ep[1]); /* a packet: delivered, step 2 deferred */
  ck_assert_int_eq(seen[1].n_pkts, 1);
  ck_assert_int_eq(step_state(src, dst, step, step), 0);
  fill(b, sizeof(b), 1);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, sizeof(b), NULL), 1);
  ep[1].ops->progress(&ep[1]); /* a packet again, but the last pass deferred: step 2 copied too */
  ck_assert_int_eq(seen[1].n_pkts, 2);
  ck_assert_int_eq(step_state(src, dst, step, step), 1);
  ck_assert_int_eq(step_state(src, dst, 2 * step, step), 0);
  for (int i = 0; i < 20 && seen[1].n_large == 0; i++)
    ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  free(src);
  free(dst);
}
END_TEST

/* ---- cooperative copy: a large copy shared by the receiver (reads) and the sender (writes) ---- */


/* Post a large receive on ep[1] and its send on ep[0], then progress ep[1] always and ep[0] only while
 * @p sender_progresses, until both transfers are reported (ep[0] is progressed at the end to take its LFIN).
 * @return the receive's error. */
static int coop_round(unsigned char *src, unsigned char *dst, size_t len, int sender_progresses)
{
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 77, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 77, &sctx), 0);
  for (int i = 0; i < 10000 && seen[1].n_large == 0; i++) {
    ep[1].ops->progress(&ep[1]);
    if (sender_progresses)
      ep[0].ops->progress(&ep[0]);
  }
  for (int i = 0; i < 100 && seen[0].n_large == 0; i++)
    ep[0].ops->progress(&ep[0]);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(seen[0].n_large, 1);
  ck_assert_ptr_eq(seen[1].large_ctx[0], &rctx);
  ck_assert_ptr_eq(seen[0].large_ctx[0], &sctx);
  ck_assert_int_eq(priv(0)->coop_invited, 0); /* no invitation left behind */
  return seen[1].large_err[0];
}

/* Both sides progress: both copy chunks, every chunk exactly once, the bytes are the sender's (urgent traffic
 * through the receiver: chunks of NM_SM_PULL_STEP). */
START_TEST(test_coop_copy_shared)
{
  const size_t len = 4 * 1024 * 1024 + 5, chunks = (len + NM_SM_PULL_STEP - 1) / NM_SM_PULL_STEP;
  unsigned char *src = malloc(len), *dst = calloc(1, len);
  ck_assert(src && dst);
  fill(src, len, 11);
  urgent_now(1);
  ck_assert(priv(1)->coop_on);
  ck_assert_int_eq(coop_round(src, dst, len, 1), 0);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  ck_assert_uint_eq(seen[1].large_len[0], len);
  ck_assert_uint_eq(seen[0].large_len[0], len);
  ck_assert_uint_gt(priv(0)->coop_pushed, 0);
  ck_assert_uint_gt(priv(1)->coop_pulled, 0);
  ck_assert_uint_eq(priv(0)->coop_pushed + priv(1)->coop_pulled, chunks);
  free(src);
  free(dst);
}
END_TEST

/* One shared copy of @p len bytes (fill(@p k)), both sides progressing, checked; *pushed and *pulled get the chunks
 * the sender and the receiver copied. */
static void coop_counted(size_t len, int k, uint64_t *pushed, uint64_t *pulled)
{
  unsigned char *src = malloc(len), *dst = calloc(1, len);
  ck_assert(src && dst);
  fill(src, len, k);
  memset(seen, 0, sizeof(seen));
  uint64_t pushed0 = priv(0)->coop_pushed, pulled0 = priv(1)->coop_pulled;
  ck_assert_int_eq(coop_round(src, dst, len, 1), 0);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  *pushed = priv(0)->coop_pushed - pushed0;
  *pulled = priv(1)->coop_pulled - pulled0;
  free(src);
  free(dst);
}

/* Chunk sizes follow urgent traffic (nm_sm.c, "step sizes"): without any, a shared copy goes by chunks of half the
 * transfer (at most NM_SM_STEP_MAX), one per side; once the receiver has read an express packet, by NM_SM_PULL_STEP;
 * a sender with urgent traffic of its own leaves long chunks to the receiver. */
START_TEST(test_coop_chunks_follow_urgent_traffic)
{
  const size_t len = 1024 * 1024, big = 4 * 1024 * 1024 + 5;
  uint64_t pushed, pulled;
  coop_counted(len, 21, &pushed, &pulled);
  ck_assert_uint_eq(pushed + pulled, 2);
  coop_counted(big, 22, &pushed, &pulled); /* capped at NM_SM_STEP_MAX per chunk */
  ck_assert_uint_eq(pushed + pulled, (big + NM_SM_STEP_MAX - 1) / NM_SM_STEP_MAX);
  /* an express packet read by the receiver: the next copy goes by NM_SM_PULL_STEP */
  unsigned char b[8];
  fill(b, sizeof(b), 23);
  struct iovec iov = {b, sizeof(b)};
  ck_assert_int_eq(ep[0].ops->send_urgent(&ep[0], 1, &iov, 1, sizeof(b), NULL), 1);
  memset(seen, 0, sizeof(seen));
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, 1);
  coop_counted(len, 24, &pushed, &pulled);
  ck_assert_uint_eq(pushed + pulled, len / NM_SM_PULL_STEP);
  /* the receiver calm again, the sender urgent (it has just sent that express packet): the receiver copies both
   * long chunks alone */
  priv(1)->urgent_ns = 0;
  urgent_now(0);
  coop_counted(len, 25, &pushed, &pulled);
  ck_assert_uint_eq(pushed, 0);
  ck_assert_uint_eq(pulled, 2);
}
END_TEST

/* A sender that does not progress (it computes) leaves every chunk to the receiver; its invitation, read after
 * the copy is over, claims nothing. */
START_TEST(test_coop_copy_sender_away)
{
  const size_t len = 2 * 1024 * 1024, chunks = 2; /* no urgent traffic: half the transfer per chunk */
  unsigned char *src = malloc(len), *dst = calloc(1, len);
  ck_assert(src && dst);
  fill(src, len, 12);
  ck_assert_int_eq(coop_round(src, dst, len, 0), 0);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  ck_assert_uint_eq(priv(1)->coop_pulled, chunks);
  ck_assert_uint_eq(priv(0)->coop_pushed, 0);
  /* a second transfer (a new generation) is shared again, not confused with the first */
  memset(seen, 0, sizeof(seen));
  memset(dst, 0, len);
  fill(src, len, 13);
  ck_assert_int_eq(coop_round(src, dst, len, 1), 0);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  ck_assert_uint_gt(priv(0)->coop_pushed, 0);
  free(src);
  free(dst);
}
END_TEST

/* Told by the launcher that the host's ranks outnumber its cores (nm_core_configure()), the receiver copies
 * alone: the sender may have no core to copy its chunks with. */
START_TEST(test_coop_copy_off_when_oversubscribed)
{
  const size_t len = 2 * 1024 * 1024;
  unsigned char *src = malloc(len), *dst = calloc(1, len);
  ck_assert(src && dst);
  fill(src, len, 15);
  ck_assert(priv(1)->coop_on);
  ep[1].ops->host_oversubscribed(&ep[1], 1);
  ck_assert(!priv(1)->coop_on);
  ck_assert_int_eq(coop_round(src, dst, len, 1), 0);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  ck_assert_uint_eq(priv(1)->coop_pulled, 0); /* no shared copy opened: its chunks are not counted */
  ck_assert_uint_eq(priv(0)->coop_pushed, 0);
  ep[1].ops->host_oversubscribed(&ep[1], 0);
  ck_assert(priv(1)->coop_on);
  free(src);
  free(dst);
}
END_TEST

/* A copy that fails (part of the receive buffer is read-only: both sides' chunks there fail) ends, on both sides,
 * with an error, after the chunks in flight. */
START_TEST(test_coop_copy_fails)
{
  const size_t len = 2 * 1024 * 1024;
  unsigned char *src = malloc(len);
  unsigned char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(src && dst != MAP_FAILED);
  fill(src, len, 14);
  ck_assert_int_eq(mprotect(dst + len / 2, len / 2, PROT_READ), 0);
  ck_assert_int_ne(coop_round(src, dst, len, 1), 0);
  ck_assert_int_ne(seen[0].large_err[0], 0);
  munmap(dst, len);
  free(src);
}
END_TEST

START_TEST(test_large_cancel)
{
  char dst[64];
  int rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, sizeof(dst), 9, &rctx), 0);
  ck_assert_int_eq(ep[1].ops->large_cancel(&ep[1], &rctx), 0);
  ck_assert_int_eq(seen[1].n_large, 0); /* reported by progress, not from inside the call */
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(seen[1].large_err[0], -NM_ECANCELED);
  ck_assert_int_eq(ep[1].ops->large_cancel(&ep[1], &rctx), -NM_ENOTFOUND);
}
END_TEST

/* Both sides reported one large transfer each, without error. */
static void assert_one_large_each_ok(void)
{
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(seen[1].large_err[0], 0);
  ck_assert_int_eq(seen[0].n_large, 1);
  ck_assert_int_eq(seen[0].large_err[0], 0);
}

/* A sender announcing more than the receive holds (a truncated get rendezvous): the receive gets the first bytes,
 * nothing is written past it, and both sides complete without error (the core reports the truncation). */
START_TEST(test_large_longer_than_receive)
{
  unsigned char src[256], dst[128 + 16];
  for (size_t i = 0; i < sizeof(src); i++)
    src[i] = (unsigned char)i;
  memset(dst, 0, sizeof(dst));
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, 128, 3, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, sizeof(src), 3, &sctx), 0);
  for (int i = 0; i < 3; i++)
    progress_both();
  assert_one_large_each_ok();
  ck_assert_int_eq(memcmp(dst, src, 128), 0);
  for (size_t i = 128; i < sizeof(dst); i++)
    ck_assert_int_eq(dst[i], 0);
}
END_TEST

/* A discarded get rendezvous: a receive of 0 bytes releases the sender. */
START_TEST(test_large_discarded)
{
  unsigned char src[256];
  memset(src, 0xab, sizeof(src));
  int sctx, rctx;
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, sizeof(src), 5, &sctx), 0);
  progress_both();
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, NULL, 0, 5, &rctx), 0);
  for (int i = 0; i < 3; i++)
    progress_both();
  assert_one_large_each_ok();
}
END_TEST

/* A send withdrawn (its receiver dropped the message, nm_cancel.c): reported cancelled, once. */
START_TEST(test_large_send_cancel)
{
  unsigned char src[256];
  memset(src, 0xab, sizeof(src));
  int sctx;
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, sizeof(src), 6, &sctx), 0);
  ck_assert_int_eq(ep[0].ops->large_cancel(&ep[0], &sctx), 0);
  ep[0].ops->progress(&ep[0]);
  ck_assert_int_eq(seen[0].n_large, 1);
  ck_assert_int_eq(seen[0].large_err[0], -NM_ECANCELED);
  ck_assert_int_eq(ep[0].ops->large_cancel(&ep[0], &sctx), -NM_ENOTFOUND);
}
END_TEST

/* ---- staged sends: one buffer sent to ranks 1 and 2 at once ---- */


static int slot_refs(int i)
{
  int n = 0;
  for (unsigned k = 0; k < NM_SM_STAGE_SLOTS; k++)
    n += priv(i)->stage[k].refs;
  return n;
}

/* Rank 0 sends @p src to ranks 1 and 2 (tag @p tag, receives posted first), and everything completes.
 * @return how many of the two receives were copied from a staging slot. */
static int send_to_two(const unsigned char *src, unsigned char *dst1, unsigned char *dst2, size_t len, uint64_t tag)
{
  int s1, s2, r1, r2;
  uint64_t reads = priv(1)->staged_reads + priv(2)->staged_reads;
  int before[NEP];
  for (int i = 0; i < NEP; i++)
    before[i] = seen[i].n_large;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst1, len, tag, &r1), 0);
  ck_assert_int_eq(ep[2].ops->large_recv(&ep[2], 0, dst2, len, tag, &r2), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, tag, &s1), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 2, src, len, tag, &s2), 0);
  for (int i = 0; i < 400 && (seen[0].n_large < before[0] + 2 || seen[1].n_large == before[1] ||
                              seen[2].n_large == before[2]); i++)
    progress_all();
  ck_assert_int_eq(seen[0].n_large, before[0] + 2);
  for (int i = 0; i < NEP; i++)
    for (int k = before[i]; k < seen[i].n_large; k++) {
      ck_assert_int_eq(seen[i].large_err[k], 0);
      ck_assert_uint_eq(seen[i].large_len[k], len);
    }
  ck_assert_int_eq(memcmp(src, dst1, len), 0);
  ck_assert_int_eq(memcmp(src, dst2, len), 0);
  ck_assert_int_eq(slot_refs(0), 0); /* every LFIN released its slot */
  return (int)(priv(1)->staged_reads + priv(2)->staged_reads - reads);
}

/* The second concurrent send of a buffer is staged (the first stays a CMA read); once both are done the slot is
 * free, and the same buffer with new bytes sent again carries the new bytes (a finished send's slot is never
 * reused for a later one). */
START_TEST(test_staged_send_read_by_second_peer)
{
  const size_t len = NM_SM_STAGE_SLOT - 4096 + 17;
  unsigned char *src = malloc(len), *d1 = malloc(len), *d2 = malloc(len);
  ck_assert(src && d1 && d2);
  fill(src, len, 3);
  ck_assert_int_eq(send_to_two(src, d1, d2, len, 7), 1);
  ck_assert_uint_eq(priv(0)->staged_sends, 1);
  ck_assert_uint_eq(priv(1)->staged_reads, 0); /* the first send: read by CMA */
  ck_assert_uint_eq(priv(2)->staged_reads, 1);
  fill(src, len, 9);
  ck_assert_int_eq(send_to_two(src, d1, d2, len, 8), 1);
  ck_assert_uint_eq(priv(0)->staged_sends, 2);
  free(src);
  free(d1);
  free(d2);
}
END_TEST

/* Sends shorter than NM_SM_STAGE_MIN or longer than a slot are read by CMA, however many peers read them. */
START_TEST(test_staged_send_bounds)
{
  const size_t lens[] = {NM_SM_STAGE_MIN - 1, NM_SM_STAGE_SLOT + 1};
  for (int i = 0; i < 2; i++) {
    unsigned char *src = malloc(lens[i]), *d1 = malloc(lens[i]), *d2 = malloc(lens[i]);
    ck_assert(src && d1 && d2);
    fill(src, lens[i], i);
    ck_assert_int_eq(send_to_two(src, d1, d2, lens[i], 20 + (uint64_t)i), 0);
    free(src);
    free(d1);
    free(d2);
  }
  ck_assert_uint_eq(priv(0)->staged_sends, 0);
}
END_TEST

/* A slot holding a buffer that is still being sent serves a third send of it (no second slot); a staged send
 * withdrawn before it was read gives its reference back. */
START_TEST(test_staged_slot_shared_and_cancelled)
{
  const size_t len = 256 * 1024;
  unsigned char *src = malloc(len);
  ck_assert(src);
  fill(src, len, 4);
  int s1, s2, s3;
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 30, &s1), 0);
  ck_assert_int_eq(slot_refs(0), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 2, src, len, 30, &s2), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 31, &s3), 0);
  ck_assert_uint_eq(priv(0)->staged_sends, 2);
  ck_assert_int_eq(slot_refs(0), 2);
  ck_assert_int_eq(priv(0)->stage[0].refs, 2); /* one slot, two references */
  ck_assert_int_eq(ep[0].ops->large_cancel(&ep[0], &s2), 0);
  ck_assert_int_eq(ep[0].ops->large_cancel(&ep[0], &s3), 0);
  ck_assert_int_eq(slot_refs(0), 0);
  ck_assert_int_eq(ep[0].ops->large_cancel(&ep[0], &s1), 0);
  free(src);
}
END_TEST

/* On a host with more ranks than cores (the shared copy off), a lone large send is staged too: its reader
 * memcpys from the slot, the bytes are the sender's, and the slot is free once the LFIN is in. With a core per
 * rank, the same send stays a CMA read (test_staged_send_read_by_second_peer: the first of two sends). */
START_TEST(test_staged_lone_send_when_oversubscribed)
{
  ep[0].ops->host_oversubscribed(&ep[0], 1);
  large_round(1); /* 3 MiB + 17: one slot */
  ck_assert_uint_eq(priv(0)->staged_sends, 1);
  ck_assert_uint_eq(priv(1)->staged_reads, 1);
  ck_assert_uint_eq(priv(1)->coop_pulled, 0);
  ck_assert_int_eq(slot_refs(0), 0);
}
END_TEST

/* On an oversubscribed host a lone staged send's slot is filled NM_SM_STAGE_STEP bytes per progress pass, not in
 * the send call, and its LRTS goes once the slot is full: a packet sent after the large send arrives first, the
 * receiver has nothing to copy before, and the bytes arrive whole from the slot. */
START_TEST(test_staged_fill_by_steps)
{
  const size_t len = 1024 * 1024, steps = len / NM_SM_STAGE_STEP;
  unsigned char *src = malloc(len), *dst = calloc(1, len), pkt[8];
  ck_assert(src && dst);
  fill(src, len, 3);
  ep[0].ops->host_oversubscribed(&ep[0], 1);
  int sctx, rctx;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, dst, len, 7, &rctx), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 7, &sctx), 0);
  ck_assert_uint_eq(priv(0)->stage[0].refs, 1);
  ck_assert_uint_eq(priv(0)->stage[0].filled, 0); /* nothing copied in the call */
  fill(pkt, sizeof(pkt), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, pkt, sizeof(pkt), NULL), 1);
  for (size_t k = 1; k < steps; k++) {
    ck_assert_int_gt(ep[0].ops->progress(&ep[0]), 0);
    ck_assert_uint_eq(priv(0)->stage[0].filled, k * NM_SM_STAGE_STEP);
  }
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, 1);           /* the packet passed */
  ck_assert_ptr_null(priv(1)->pulls);            /* no LRTS yet: nothing to copy */
  for (int i = 0; i < 200 && (seen[0].n_large == 0 || seen[1].n_large == 0); i++)
    progress_both();
  ck_assert_uint_eq(priv(0)->stage[0].filled, len);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(seen[1].large_err[0], 0);
  ck_assert_int_eq(seen[0].n_large, 1);
  ck_assert_uint_eq(priv(1)->staged_reads, 1);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
  free(src);
  free(dst);
}
END_TEST

/* A staged read from a segment that is not the one its sender published (a reused pid: the nonce differs) maps
 * nothing and fails the receive, which writes nothing. (Its LFIN cannot reach that "other process" either: the
 * sender's fault handling ends such a send; here it is withdrawn, which frees its slot.) */
START_TEST(test_staged_read_checks_nonce)
{
  const size_t len = 256 * 1024;
  unsigned char *src = malloc(len), *d1 = malloc(len), *d2 = calloc(1, len);
  ck_assert(src && d1 && d2);
  fill(src, len, 6);
  priv(2)->peers[0].addr.nonce ^= 1; /* rank 2's view of rank 0 */
  int s1, s2, r1, r2;
  ck_assert_int_eq(ep[1].ops->large_recv(&ep[1], 0, d1, len, 40, &r1), 0);
  ck_assert_int_eq(ep[2].ops->large_recv(&ep[2], 0, d2, len, 40, &r2), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 1, src, len, 40, &s1), 0);
  ck_assert_int_eq(ep[0].ops->large_send(&ep[0], 2, src, len, 40, &s2), 0);
  ck_assert_uint_eq(priv(0)->staged_sends, 1);
  for (int i = 0; i < 100 && (seen[0].n_large < 1 || seen[2].n_large < 1); i++)
    progress_all();
  ck_assert_int_eq(seen[2].n_large, 1);
  ck_assert_int_ne(seen[2].large_err[0], 0);
  ck_assert_uint_eq(priv(2)->staged_reads, 0);
  ck_assert_ptr_null(priv(2)->peers[0].stage);
  ck_assert_int_eq(seen[1].n_large, 1);
  ck_assert_int_eq(seen[1].large_err[0], 0);
  ck_assert_int_eq(memcmp(src, d1, len), 0);
  ck_assert_int_eq(seen[0].n_large, 1); /* rank 1's LFIN */
  ck_assert_ptr_eq(seen[0].large_ctx[0], &s1);
  ck_assert_int_eq(seen[0].large_err[0], 0);
  ck_assert_int_eq(slot_refs(0), 1);
  ck_assert_int_eq(ep[0].ops->large_cancel(&ep[0], &s2), 0);
  ck_assert_int_eq(slot_refs(0), 0);
  for (size_t i = 0; i < len; i++)
    ck_assert_int_eq(d2[i], 0);
  free(src);
  free(d1);
  free(d2);
}
END_TEST

/* trywait arms the flag when nothing is pending; a send then makes the wait fd readable; a pending record makes
 * trywait refuse. */
START_TEST(test_wakeup)
{
  struct pollfd pfd = {.fd = ep[1].ops->wait_fd(&ep[1]), .events = POLLIN};
  ck_assert_int_ge(pfd.fd, 0);
  ck_assert_int_eq(ep[1].ops->trywait(&ep[1]), 0);
  ck_assert_int_eq(poll(&pfd, 1, 0), 0);
  unsigned char b[8];
  fill(b, sizeof(b), 0);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, sizeof(b), NULL), 1);
  ck_assert_int_eq(poll(&pfd, 1, 0), 1);
  ck_assert_int_eq(ep[1].ops->trywait(&ep[1]), -NM_EAGAIN);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* progress drained the pipe */
  /* awake receiver: a send writes no byte */
  fill(b, sizeof(b), 1);
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, sizeof(b), NULL), 1);
  ck_assert_int_eq(poll(&pfd, 1, 0), 0);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  ck_assert_int_eq(seen[1].n_pkts, 2);
}
END_TEST

/* Write a record header straight into rank 0's ring in rank 1's segment (the sender's mapping), as a buggy or
 * hostile peer could, and publish it by its stamp: the one its position calls for, plus @p stamp_off. */
static void forge_stamped(uint32_t len, uint32_t kind, uint64_t stamp_off)
{
  unsigned char b[8] = {0};
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, 1, NULL), 1); /* maps the ring; packet 0 is valid */
  struct nm_sm_s *s = ep[0].priv;
  struct nm_sm_peer_s *p = &s->peers[1];
  struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)(p->out_data + p->out_tail % NM_SM_RING_BYTES);
  r->len = len;
  r->kind = kind;
  atomic_store(&r->stamp, (p->out_tail + stamp_off + 1) ^ p->addr.nonce); /* nm_sm_stamp() */
  p->out_tail += NM_SM_REC_ALIGN;
}

static void forge(uint32_t len, uint32_t kind) { forge_stamped(len, kind, 0); }

/* @p before: packets delivered before the forged record is seen (1: the valid one; 0 when the published tail
 * itself is impossible, so that nothing in the ring can be trusted). */
static void check_forged_refused(int before)
{
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, before);
  /* the peer's ring is no longer read: a valid packet after the forged record is not delivered either */
  unsigned char b[8] = {0};
  ep[0].ops->send(&ep[0], 1, b, 1, NULL);
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, before);
  ck_assert_int_eq(seen[1].n_large, 0);
}

START_TEST(test_forged_length) { forge(NM_SM_MAX_PACKET + 1, NM_SM_PKT); check_forged_refused(1); }
END_TEST

START_TEST(test_forged_kind) { forge(8, 99); check_forged_refused(1); }
END_TEST

START_TEST(test_forged_fin) { forge(sizeof(struct nm_sm_lfin_s), NM_SM_LFIN); check_forged_refused(1); }
END_TEST

/* A record is there once its stamp names its position (nm_sm_rec_at()): one stamped for a later lap is not read,
 * and the same record stamped right is. */
START_TEST(test_forged_stamp)
{
  forge_stamped(8, NM_SM_PKT, 10 * NM_SM_RING_BYTES);
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, 1);
  struct nm_sm_peer_s *p = &((struct nm_sm_s *)ep[0].priv)->peers[1];
  uint64_t at = p->out_tail - NM_SM_REC_ALIGN;
  atomic_store(&((struct nm_sm_rec_s *)(p->out_data + at % NM_SM_RING_BYTES))->stamp, (at + 1) ^ p->addr.nonce);
  ep[1].ops->progress(&ep[1]);
  ck_assert_int_eq(seen[1].n_pkts, 2);
}
END_TEST

/* A wrap record at a lap's start would skip a whole lap: refused. The reader gets there by a first wrap record. */
START_TEST(test_forged_wrap_at_lap_start)
{
  unsigned char b[8] = {0};
  ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, b, 1, NULL), 1); /* packet 0, valid, at the ring's start */
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  struct nm_sm_peer_s *p = &((struct nm_sm_s *)ep[0].priv)->peers[1];
  struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)(p->out_data + NM_SM_REC_ALIGN);
  r->len = 0;
  r->kind = NM_SM_WRAP; /* at 64, a well-formed wrap: the reader goes on at the next lap's start */
  atomic_store(&r->stamp, ((uint64_t)NM_SM_REC_ALIGN + 1) ^ p->addr.nonce);
  r = (struct nm_sm_rec_s *)p->out_data;
  r->len = 0;
  r->kind = NM_SM_WRAP;
  atomic_store(&r->stamp, ((uint64_t)NM_SM_RING_BYTES + 1) ^ p->addr.nonce);
  p->out_tail = NM_SM_RING_BYTES + NM_SM_REC_ALIGN;
  check_forged_refused(1);
}
END_TEST

/* Rank 0 posts an express packet (send_urgent) of @p len bytes carrying fill(@p k) to rank 1. */
static int send_express(size_t len, int k)
{
  static unsigned char b[NM_SM_XMAX + 1];
  fill(b, len, k);
  const struct iovec iov[2] = {{b, len / 2}, {b + len / 2, len - len / 2}};
  return ep[0].ops->send_urgent(&ep[0], 1, iov, 2, len, NULL);
}

/* Express packets: one posted behind three 16 KiB records of the main ring is delivered first, then those in
 * order; at most NM_SM_XSLOTS wait unread; a packet larger than NM_SM_XMAX is refused (the core sends it by the
 * main ring). */
START_TEST(test_express_overtakes_ring)
{
  static unsigned char buf[16384];
  for (int k = 1; k <= 3; k++) {
    fill(buf, sizeof(buf), k);
    ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, sizeof(buf), NULL), 1);
  }
  ck_assert_int_eq(send_express(64, 0), 1);
  ck_assert_uint_eq(ep[1].props.urgent_max, NM_SM_XMAX);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 4);
  ck_assert_int_eq(seen[1].n_pkts, 4);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_uint_eq(seen[1].lens[0], 64);
  for (int k = 1; k <= 3; k++)
    ck_assert_uint_eq(seen[1].lens[k], sizeof(buf));
  /* the slots: NM_SM_XSLOTS unread, then no room until the receiver reads */
  for (int k = 0; k < (int)NM_SM_XSLOTS; k++)
    ck_assert_int_eq(send_express(NM_SM_XMAX - (size_t)k, 4 + k), 1);
  ck_assert_int_eq(send_express(8, 4 + NM_SM_XSLOTS), -NM_EAGAIN);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), NM_SM_XSLOTS);
  ck_assert_int_eq(send_express(8, 4 + NM_SM_XSLOTS), 1);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  ck_assert_int_eq(seen[1].n_pkts, 5 + NM_SM_XSLOTS);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_int_eq(send_express(NM_SM_XMAX + 1, 0), -NM_EINVAL);
}
END_TEST

/* An express packet that comes while the receiver reads a main ring goes before the rest of that ring: the first
 * record's upcall stands for the sender posting meanwhile. */
static int express_posted_in_upcall;
static void up_packet_posting_express(void *ref, struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src)
{
  up_packet(ref, drv, buf, len, src);
  if (!express_posted_in_upcall++)
    ck_assert_int_eq(send_express(32, 1), 1);
}

START_TEST(test_express_between_records)
{
  static unsigned char buf[4096];
  for (int k = 0; k < 4; k++) {
    fill(buf, sizeof(buf), k == 0 ? 0 : k + 1);
    ck_assert_int_eq(ep[0].ops->send(&ep[0], 1, buf, sizeof(buf), NULL), 1);
  }
  express_posted_in_upcall = 0;
  ep[1].up.packet = up_packet_posting_express;
  while (ep[1].ops->progress(&ep[1]) > 0)
    ;
  ep[1].up.packet = up_packet;
  ck_assert_int_eq(seen[1].n_pkts, 5);
  ck_assert_int_eq(seen[1].bad_content, 0); /* arrival order: record 0, the express packet, records 1-3 */
  ck_assert_uint_eq(seen[1].lens[1], 32);
}
END_TEST

/* Two senders' express packets: each sender's bit in the receiver's header says whose ring to read (lowest rank
 * first), and the reading clears it. */
START_TEST(test_express_from_two_senders)
{
  struct nm_sm_seg_hdr_s *hdr = (struct nm_sm_seg_hdr_s *)priv(1)->seg;
  ck_assert_int_eq(send_express(16, 0), 1);
  ck_assert_uint_eq(atomic_load(&hdr->express_from[0]), 1u << 0);
  static unsigned char b[24];
  fill(b, sizeof(b), 1);
  const struct iovec iov = {b, sizeof(b)};
  ck_assert_int_eq(ep[2].ops->send_urgent(&ep[2], 1, &iov, 1, sizeof(b), NULL), 1);
  ck_assert_uint_eq(atomic_load(&hdr->express_from[0]), (1u << 0) | (1u << 2));
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 2);
  ck_assert_int_eq(seen[1].n_pkts, 2);
  ck_assert_int_eq(seen[1].bad_content, 0);
  ck_assert_uint_eq(seen[1].srcs[0], 0);
  ck_assert_uint_eq(seen[1].srcs[1], 2);
  ck_assert_uint_eq(atomic_load(&hdr->express_from[0]), 0);
  ck_assert_uint_eq(atomic_load(&hdr->express), 0);
}
END_TEST

/* A sleeping receiver wakes up for an express packet, and trywait refuses while one is unread. */
START_TEST(test_express_wakeup)
{
  struct pollfd pfd = {.fd = ep[1].ops->wait_fd(&ep[1]), .events = POLLIN};
  ck_assert_int_eq(ep[1].ops->trywait(&ep[1]), 0);
  ck_assert_int_eq(send_express(16, 0), 1);
  ck_assert_int_eq(poll(&pfd, 1, 0), 1);
  ck_assert_int_eq(ep[1].ops->trywait(&ep[1]), -NM_EAGAIN);
  ck_assert_int_eq(ep[1].ops->progress(&ep[1]), 1);
  ck_assert_int_eq(seen[1].n_pkts, 1);
}
END_TEST

/* A slot whose record is no packet, or longer than a slot holds, or a tail too far ahead: the peer is no longer
 * read, by either ring. */
static void forge_express(uint32_t len, uint32_t kind, uint64_t tail_extra)
{
  ck_assert_int_eq(send_express(8, 0), 1); /* maps the ring; packet 0 is valid */
  struct nm_sm_peer_s *p = &priv(0)->peers[1];
  struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)p->out->x_slots[p->x_tail % NM_SM_XSLOTS];
  r->len = len;
  r->kind = kind;
  p->x_tail += 1 + tail_extra;
  atomic_store(&p->out->x_tail, p->x_tail);
  atomic_store(&p->hdr->express, 1);
}

START_TEST(test_forged_express_length) { forge_express(NM_SM_XMAX + 1, NM_SM_PKT, 0); check_forged_refused(1); }
END_TEST

START_TEST(test_forged_express_kind) { forge_express(8, NM_SM_LFIN, 0); check_forged_refused(1); }
END_TEST

START_TEST(test_forged_express_tail) { forge_express(8, NM_SM_PKT, NM_SM_XSLOTS); check_forged_refused(0); }
END_TEST

/* An LRTS naming a staging slot that does not exist, or more bytes than a slot holds: refused before any read. */
static void forge_staged_lrts(uint64_t stage, uint64_t len)
{
  forge(sizeof(struct nm_sm_lrts_s), NM_SM_LRTS);
  struct nm_sm_peer_s *p = &priv(0)->peers[1];
  struct nm_sm_lrts_s rts = {.rtag = 1, .addr = 4096, .len = len, .id = 1, .stage = stage};
  uint64_t at = (p->out_tail - NM_SM_REC_ALIGN) % NM_SM_RING_BYTES + NM_SM_REC_HDR;
  memcpy(p->out_data + at, &rts, sizeof(rts));
  check_forged_refused(1);
}

START_TEST(test_forged_stage_slot) { forge_staged_lrts(NM_SM_STAGE_SLOTS + 1, 4096); }
END_TEST

START_TEST(test_forged_stage_len) { forge_staged_lrts(1, (uint64_t)NM_SM_STAGE_SLOT + 1); }
END_TEST

int main(void)
{
  Suite *s = suite_create("sm driver");
  TCase *tc = tcase_create("sm");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_open_refuses_remote_ranks);
  tcase_add_test(tc, test_packets_all_sizes_wrap);
  tcase_add_test(tc, test_nested_progress);
  tcase_add_test(tc, test_ring_full_then_room);
  tcase_add_test(tc, test_rewind_when_empty);
  tcase_add_test(tc, test_rewind_stamp_names_its_position);
  tcase_add_test(tc, test_large_recv_first);
  tcase_add_test(tc, test_large_send_first);
  tcase_add_test(tc, test_packet_passes_large_copy);
  tcase_add_test(tc, test_packet_pass_defers_copy_once);
  tcase_add_test(tc, test_coop_copy_shared);
  tcase_add_test(tc, test_coop_chunks_follow_urgent_traffic);
  tcase_add_test(tc, test_coop_copy_sender_away);
  tcase_add_test(tc, test_coop_copy_fails);
  tcase_add_test(tc, test_coop_copy_off_when_oversubscribed);
  tcase_add_test(tc, test_large_cancel);
  tcase_add_test(tc, test_large_longer_than_receive);
  tcase_add_test(tc, test_large_discarded);
  tcase_add_test(tc, test_large_send_cancel);
  tcase_add_test(tc, test_staged_send_read_by_second_peer);
  tcase_add_test(tc, test_staged_send_bounds);
  tcase_add_test(tc, test_staged_slot_shared_and_cancelled);
  tcase_add_test(tc, test_staged_read_checks_nonce);
  tcase_add_test(tc, test_staged_lone_send_when_oversubscribed);
  tcase_add_test(tc, test_staged_fill_by_steps);
  tcase_add_test(tc, test_wakeup);
  tcase_add_test(tc, test_forged_length);
  tcase_add_test(tc, test_forged_kind);
  tcase_add_test(tc, test_forged_fin);
  tcase_add_test(tc, test_forged_stamp);
  tcase_add_test(tc, test_forged_wrap_at_lap_start);
  tcase_add_test(tc, test_forged_stage_slot);
  tcase_add_test(tc, test_forged_stage_len);
  tcase_add_test(tc, test_express_overtakes_ring);
  tcase_add_test(tc, test_express_between_records);
  tcase_add_test(tc, test_express_wakeup);
  tcase_add_test(tc, test_express_from_two_senders);
  tcase_add_test(tc, test_forged_express_length);
  tcase_add_test(tc, test_forged_express_kind);
  tcase_add_test(tc, test_forged_express_tail);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
