/* Shared by the driver unit tests (test_sm.c, test_tcp.c): NEP endpoints of one driver in this process, ranks 0 to
 * NEP - 1 of one address table, and what each one's upcalls saw. Packet k that an endpoint receives must carry
 * fill(k) (checked on arrival, in order). */
#ifndef DRV_ENDPOINTS_H
#define DRV_ENDPOINTS_H

#include <check.h>
#include <string.h>
#include "drivers/nm_driver.h"

#define MAX_SEEN 4096
#define NEP 3

struct seen_s {
  int n_pkts;
  size_t lens[MAX_SEEN];
  uint64_t srcs[MAX_SEEN];
  int large_at_pkt[MAX_SEEN]; /* large transfers ended when packet k came */
  int bad_content;
  int nest;  /* the packet upcall progresses its endpoint again (a handler that waits, a forwarding hook) */
  int depth;
  int nested_calls;
  int n_large;
  void *large_ctx[16];
  int large_err[16];
  size_t large_len[16];
};

static struct nm_drv_s ep[NEP];
static struct seen_s seen[NEP];

/* Packet k of length len: byte i is (k + i) mod 251, so that any shift or mix-up shows. */
static void fill(unsigned char *buf, size_t len, int k)
{
  for (size_t i = 0; i < len; i++)
    buf[i] = (unsigned char)((k + i) % 251);
}

static void up_packet(void *ref, struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src)
{
  struct seen_s *s = ref;
  if (s->n_pkts >= MAX_SEEN)
    return;
  const unsigned char *b = buf;
  int k = s->n_pkts;
  for (size_t i = 0; i < len; i++)
    if (b[i] != (unsigned char)((k + i) % 251))
      s->bad_content++;
  s->lens[k] = len;
  s->srcs[k] = src;
  s->large_at_pkt[k] = s->n_large;
  s->n_pkts++;
  if (s->nest && s->depth < 3) {
    s->depth++;
    s->nested_calls++;
    drv->ops->progress(drv);
    s->depth--;
  }
}

static void up_send_done(void *ref, void *ctx, int err) { (void)ref, (void)ctx, (void)err; }

static void up_large_done(void *ref, void *ctx, int err, size_t len)
{
  struct seen_s *s = ref;
  if (s->n_large < 16) {
    s->large_ctx[s->n_large] = ctx;
    s->large_err[s->n_large] = err;
    s->large_len[s->n_large] = len;
    s->n_large++;
  }
}

/* Endpoint @p i saw exactly one large transfer end, without error, and @p dst holds the @p len bytes of @p src. */
static void expect_one_large_whole(int i, const void *src, const void *dst, size_t len)
{
  ck_assert_int_eq(seen[i].n_large, 1);
  ck_assert_int_eq(seen[i].large_err[0], 0);
  ck_assert_int_eq(memcmp(src, dst, len), 0);
}

/* Open NEP endpoints of @p ops (NMAD_DRIVER word @p word, all ranks local) and connect each to every address. */
static void endpoints_open(const struct nm_drv_ops_s *ops, const char *word)
{
  memset(seen, 0, sizeof(seen));
  memset(ep, 0, sizeof(ep));
  unsigned char addr[NEP][NM_DRV_ADDR_MAX];
  size_t len[NEP];
  for (int i = 0; i < NEP; i++) {
    ep[i].ops = ops;
    ep[i].up = (struct nm_drv_upcalls_s){&seen[i], up_send_done, up_packet, up_large_done};
    ck_assert_int_eq(ep[i].ops->open(&ep[i], word, 1), 0);
    len[i] = sizeof(addr[i]);
    ck_assert_int_eq(ep[i].ops->get_address(&ep[i], addr[i], &len[i]), 0);
  }
  for (int i = 0; i < NEP; i++)
    for (int j = 0; j < NEP; j++)
      ck_assert_int_eq(ep[i].ops->connect(&ep[i], (uint64_t)j, addr[j], len[j]), 0);
}

static void teardown(void)
{
  for (int i = 0; i < NEP; i++)
    ep[i].ops->close(&ep[i]);
}

static void progress_all(void)
{
  for (int i = 0; i < NEP; i++)
    ep[i].ops->progress(&ep[i]);
}

#endif /* DRV_ENDPOINTS_H */
