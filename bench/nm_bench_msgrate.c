/**
 * @file nm_bench_msgrate.c
 * @brief Message rate between ranks 0 and 1 over nmad's sendrecv interface (OSU mbw_mr-like, one pair).
 *
 * Run: `NMAD_DRIVER=tcp NMAD_STRATEGY=aggreg nmad-run -n 2 ./nm_bench_msgrate [--window 64] [--csv]`.
 *
 * Method: rank 1 keeps a window of W receives posted (W = --window, default 64). Rank 0 posts W non-blocking
 * sends of s bytes back to back, waits for them, then waits for a zero-byte ack that rank 1 sends once all W
 * arrived (rank 1 posts the next window's receives before the ack, so sends always meet posted receives).
 * Every window is timed on its own on rank 0 (from the first send to the ack); the reported rate is
 * W / median window time. This is where a strategy that aggregates small messages into one packet
 * (NMAD_STRATEGY=aggreg) should beat the default one.
 * Sizes: 8 B .. 4 KiB by default (--min/--max), --iters windows per size after --warmup windows.
 * Columns: size (bytes), window, msgs_per_s, Mmsgs_per_s (millions), bw_MBps (size * msgs_per_s / 1e6).
 * Exit status: 0, or 1 if an nmad call failed (its nm_strerror() text is printed) or --check found bad data.
 */
#include "bench_common.h"

#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MR_TAG_DATA ((nm_tag_t)0x4d52)
#define MR_TAG_ACK ((nm_tag_t)0x4d53)

struct mr_ctx {
  struct bench_opts opts;
  nm_session_t session;
  nm_gate_t peer;
  int rank;
  char *buf;              /* window slots: slot k is buf + k * max_size */
  nm_sr_request_t *reqs;  /* one request per slot */
  double *win_us;         /* timed windows, rank 0 */
  char ackbuf[8];         /* the ack carries 0 bytes; a real address avoids relying on NULL being accepted */
  int nfailed;
};

static int nm_fail(const char *what, int rc, size_t size, int win)
{
  fprintf(stderr, "nm_bench_msgrate: %s failed at size %zu window %d: %s (%d)\n", what, size, win,
          nm_strerror(rc), rc);
  return rc;
}

static uint64_t seed_of(size_t size, int win, int k)
{
  return ((uint64_t)size << 40) ^ ((uint64_t)(unsigned)win << 12) ^ (uint64_t)(unsigned)k;
}

static char *slot(struct mr_ctx *c, int k)
{
  return c->buf + (size_t)k * c->opts.max_size;
}

static int mr_rank0_size(struct mr_ctx *c, size_t size, int warmup, int iters)
{
  const int W = c->opts.window;
  int total = warmup + iters;
  int w, k, rc;

  for (w = 0; w < total; w++) {
    nm_sr_request_t ack;
    uint64_t t0, t1;

    if (c->opts.check)
      for (k = 0; k < W; k++)
        bench_fill(slot(c, k), size, seed_of(size, w, k));
    rc = nm_sr_irecv(c->session, c->peer, MR_TAG_ACK, c->ackbuf, 0, &ack);
    if (rc != 0)
      return nm_fail("nm_sr_irecv(ack)", rc, size, w);
    t0 = nm_core_time_ns(nm_session_get_core(c->session));
    for (k = 0; k < W; k++) {
      rc = nm_sr_isend(c->session, c->peer, MR_TAG_DATA, slot(c, k), size, &c->reqs[k]);
      if (rc != 0)
        return nm_fail("nm_sr_isend", rc, size, w);
    }
    for (k = 0; k < W; k++) {
      rc = nm_sr_swait(c->session, &c->reqs[k]);
      if (rc != 0)
        return nm_fail("nm_sr_swait", rc, size, w);
    }
    rc = nm_sr_rwait(c->session, &ack);
    if (rc != 0)
      return nm_fail("nm_sr_rwait(ack)", rc, size, w);
    t1 = nm_core_time_ns(nm_session_get_core(c->session));
    if (w >= warmup)
      c->win_us[w - warmup] = (double)(t1 - t0) / 1000.0;
  }
  return 0;
}

static int mr_post_window(struct mr_ctx *c, size_t size, int w)
{
  int k, rc;

  for (k = 0; k < c->opts.window; k++) {
    rc = nm_sr_irecv(c->session, c->peer, MR_TAG_DATA, slot(c, k), size, &c->reqs[k]);
    if (rc != 0)
      return nm_fail("nm_sr_irecv", rc, size, w);
  }
  return 0;
}

static int mr_rank1_size(struct mr_ctx *c, size_t size, int warmup, int iters)
{
  const int W = c->opts.window;
  int total = warmup + iters;
  int w, k, rc;

  rc = mr_post_window(c, size, 0);
  if (rc != 0)
    return rc;
  for (w = 0; w < total; w++) {
    nm_sr_request_t ack;

    for (k = 0; k < W; k++) {
      rc = nm_sr_rwait(c->session, &c->reqs[k]);
      if (rc != 0)
        return nm_fail("nm_sr_rwait", rc, size, w);
    }
    if (c->opts.check) {
      for (k = 0; k < W; k++) {
        long bad = bench_verify(slot(c, k), size, seed_of(size, w, k));
        if (bad >= 0) {
          fprintf(stderr, "nm_bench_msgrate: check failed at size %zu window %d message %d, first bad byte %ld\n",
                  size, w, k, bad);
          c->nfailed++;
        }
      }
    }
    if (w + 1 < total) {
      rc = mr_post_window(c, size, w + 1);
      if (rc != 0)
        return rc;
    }
    rc = nm_sr_isend(c->session, c->peer, MR_TAG_ACK, c->ackbuf, 0, &ack);
    if (rc != 0)
      return nm_fail("nm_sr_isend(ack)", rc, size, w);
    rc = nm_sr_swait(c->session, &ack);
    if (rc != 0)
      return nm_fail("nm_sr_swait(ack)", rc, size, w);
  }
  return 0;
}

static void print_header(const struct mr_ctx *c, nm_launcher_t l)
{
  const char *drv = getenv("NMAD_DRIVER");
  const char *strat = getenv("NMAD_STRATEGY");

  if (c->opts.csv) {
    printf("size,window,msgs_per_s,Mmsgs_per_s,bw_MBps\n");
  } else {
    printf("# nm_bench_msgrate: rank 0 -> rank 1, bootstrap %s, NMAD_DRIVER=%s, NMAD_STRATEGY=%s\n",
           nm_launcher_get_bootstrap(l), drv ? drv : "(default)", strat ? strat : "(default)");
    printf("# rate = window / median window time (window sent, then a zero-byte ack); %d windows, %d warm-up%s\n",
           c->opts.iters, c->opts.warmup, c->opts.check ? ", data checked" : "");
    printf("%10s %8s %14s %12s %12s\n", "size", "window", "msgs_per_s", "Mmsgs_per_s", "bw_MBps");
  }
  fflush(stdout);
}

static void print_row(const struct mr_ctx *c, size_t size, double med_us)
{
  double rate = med_us > 0.0 ? (double)c->opts.window * 1e6 / med_us : 0.0;
  double bw = rate * (double)size / 1e6;

  if (c->opts.csv)
    printf("%zu,%d,%.1f,%.4f,%.3f\n", size, c->opts.window, rate, rate / 1e6, bw);
  else
    printf("%10zu %8d %14.0f %12.4f %12.2f\n", size, c->opts.window, rate, rate / 1e6, bw);
  fflush(stdout);
}

static int run(struct mr_ctx *c, nm_launcher_t l)
{
  size_t size;
  int rc;

  if (c->rank == 0)
    print_header(c, l);
  for (size = bench_first_size(&c->opts); size != SIZE_MAX; size = bench_next_size(&c->opts, size)) {
    int warmup = bench_warmup_for_size(&c->opts, size);
    int iters = bench_iters_for_size(&c->opts, size);

    if (c->rank == 0) {
      rc = mr_rank0_size(c, size, warmup, iters);
      if (rc != 0)
        return rc;
      print_row(c, size, bench_median(c->win_us, iters));
    } else {
      rc = mr_rank1_size(c, size, warmup, iters);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct mr_ctx c;
  nm_launcher_t l = NULL;
  int size = 0, rc, status = 0;

  memset(&c, 0, sizeof(c));
  c.opts.min_size = 8;
  c.opts.max_size = 4096;
  c.opts.iters = 200;
  c.opts.warmup = 20;
  c.opts.window = 64;
  rc = bench_parse_opts(argc, argv, &c.opts,
                        "nmad message rate, rank 0 -> rank 1 (start with: nmad-run -n 2 nm_bench_msgrate);\n"
                        "--iters/--warmup count windows of --window messages");
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  if (c.opts.max_size > ((size_t)64 << 20) / (size_t)c.opts.window) {
    fprintf(stderr, "nm_bench_msgrate: --max %zu x --window %d needs more than 64 MiB of buffers\n",
            c.opts.max_size, c.opts.window);
    return 2;
  }

  rc = nm_launcher_init(&l, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_msgrate: nm_launcher_init failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }
  nm_launcher_get_rank(l, &c.rank);
  nm_launcher_get_size(l, &size);
  if (size < 2) {
    if (c.rank == 0)
      fprintf(stderr, "nm_bench_msgrate: needs 2 processes (got %d): nmad-run -n 2 %s\n", size, argv[0]);
    nm_launcher_exit(l);
    return 1;
  }
  rc = nm_session_open(nm_launcher_get_core(l), "bench", &c.session);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_msgrate: nm_session_open failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }

  if (c.rank <= 1) {
    rc = nm_launcher_get_gate(l, 1 - c.rank, &c.peer);
    if (rc != 0) {
      fprintf(stderr, "nm_bench_msgrate: nm_launcher_get_gate failed: %s (%d)\n", nm_strerror(rc), rc);
      return 1;
    }
    c.buf = bench_alloc((size_t)c.opts.window * c.opts.max_size);
    c.reqs = calloc((size_t)c.opts.window, sizeof(*c.reqs));
    c.win_us = calloc((size_t)c.opts.iters, sizeof(double));
    if (c.buf == NULL || c.reqs == NULL || c.win_us == NULL) {
      fprintf(stderr, "nm_bench_msgrate: out of memory\n");
      return 1;
    }
    rc = run(&c, l);
    if (rc != 0)
      return 1; /* do not call the collective nm_launcher_exit(): the peer may be stuck waiting for us */
    if (c.nfailed != 0) {
      fprintf(stderr, "nm_bench_msgrate: rank %d: %d data check failures\n", c.rank, c.nfailed);
      status = 1;
    }
  }

  rc = nm_session_close(c.session);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_msgrate: nm_session_close failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  rc = nm_launcher_exit(l);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_msgrate: nm_launcher_exit failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  bench_free(c.buf);
  free(c.reqs);
  free(c.win_us);
  return status;
}
