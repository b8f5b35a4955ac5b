/**
 * @file nm_bench_match.c
 * @brief Matching cost: message rate from rank 0 to rank 1 while rank 1 holds N other receives outstanding
 *        (issue 15, benchmark 7(d)).
 *
 * Run: `NMAD_DRIVER=shm nmad-run -n 2 ./nm_bench_match [--outstanding 1,1000,100000] [--window 64] [--csv]`.
 *
 * Method: for each N, rank 1 first posts N receives from rank 0 on distinct tags that are never sent (the
 * outstanding receives), then the window's receives, on W more distinct tags: with a matching that scans the
 * posted receives in post order (nmad before issue 15), every message is found behind all N. Then as
 * nm_bench_msgrate: rank 0 sends W messages of --min bytes (default 8) back to back, waits for a zero-byte ack
 * that rank 1 sends once all W arrived and the next window is posted; each window is timed on rank 0; the rate is
 * W / median window time. Rank 1 says "ready" before the first window of each N (its N receives are posted), and
 * cancels them after the last. Columns: outstanding, size, window, msgs_per_s, ratio (rate / rate of the first N).
 * The judged line of the issue: the rate with 100,000 outstanding is within 2x of the rate with 1 (ratio >= 0.5).
 * Uses only the public sendrecv interface, so the same source builds against an older nmad for a before/after run
 * (bench/nm_bench_match_compare.sh). Exit status: 0, or 1 if an nmad call failed (its text is printed).
 */
#include "bench_common.h"

#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BM_TAG_ACK ((nm_tag_t)1)
#define BM_TAG_READY ((nm_tag_t)2)
#define BM_TAG_DATA ((nm_tag_t)1 << 32)  /* window slot k: BM_TAG_DATA + k */
#define BM_TAG_IDLE ((nm_tag_t)2 << 32)  /* outstanding receive i: BM_TAG_IDLE + i, never sent */
#define BM_MAX_COUNTS 8

struct bm_ctx {
  struct bench_opts opts;
  nm_session_t session;
  nm_gate_t peer;
  int rank;
  char *buf;              /* window slots, opts.min_size bytes each */
  nm_sr_request_t *reqs;  /* one request per slot */
  nm_sr_request_t *idle;  /* the outstanding receives (rank 1) */
  char idle_buf[8];       /* they never receive: one buffer serves them all */
  double *win_us;
  char ackbuf[8];
};

static int bm_fail(const char *what, int rc, long n)
{
  fprintf(stderr, "nm_bench_match: %s failed (outstanding %ld): %s (%d)\n", what, n, nm_strerror(rc), rc);
  return rc;
}

/* Parse "1,1000,100000" into counts[]. @return how many, or -1. */
static int bm_parse_counts(const char *s, long *counts, int max)
{
  int n = 0;
  while (*s && n < max) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0 || v > 10000000)
      return -1;
    counts[n++] = v;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return -1;
  }
  return *s ? -1 : n;
}

static int bm_rank0(struct bm_ctx *c, long n, int total)
{
  const int W = c->opts.window;
  const size_t size = c->opts.min_size;
  nm_sr_request_t ready;
  int rc = nm_sr_irecv(c->session, c->peer, BM_TAG_READY, c->ackbuf, 0, &ready);
  if (rc == 0)
    rc = nm_sr_rwait(c->session, &ready);
  if (rc != 0)
    return bm_fail("ready", rc, n);
  for (int w = 0; w < total; w++) {
    nm_sr_request_t ack;
    rc = nm_sr_irecv(c->session, c->peer, BM_TAG_ACK, c->ackbuf, 0, &ack);
    if (rc != 0)
      return bm_fail("nm_sr_irecv(ack)", rc, n);
    uint64_t t0 = nm_core_time_ns(nm_session_get_core(c->session));
    for (int k = 0; k < W; k++)
      if ((rc = nm_sr_isend(c->session, c->peer, BM_TAG_DATA + (nm_tag_t)k, c->buf + (size_t)k * size, size,
                            &c->reqs[k])) != 0)
        return bm_fail("nm_sr_isend", rc, n);
    for (int k = 0; k < W; k++)
      if ((rc = nm_sr_swait(c->session, &c->reqs[k])) != 0)
        return bm_fail("nm_sr_swait", rc, n);
    if ((rc = nm_sr_rwait(c->session, &ack)) != 0)
      return bm_fail("nm_sr_rwait(ack)", rc, n);
    uint64_t t1 = nm_core_time_ns(nm_session_get_core(c->session));
    if (w >= c->opts.warmup)
      c->win_us[w - c->opts.warmup] = (double)(t1 - t0) / 1000.0;
  }
  return 0;
}

static int bm_post_window(struct bm_ctx *c, long n)
{
  const size_t size = c->opts.min_size;
  for (int k = 0; k < c->opts.window; k++) {
    int rc = nm_sr_irecv(c->session, c->peer, BM_TAG_DATA + (nm_tag_t)k, c->buf + (size_t)k * size, size,
                         &c->reqs[k]);
    if (rc != 0)
      return bm_fail("nm_sr_irecv", rc, n);
  }
  return 0;
}

static int bm_rank1(struct bm_ctx *c, long n, int total)
{
  int rc;
  /* The outstanding receives are posted first: a matching that scans in post order meets them all. */
  for (long i = 0; i < n; i++)
    if ((rc = nm_sr_irecv(c->session, c->peer, BM_TAG_IDLE + (nm_tag_t)i, c->idle_buf, sizeof(c->idle_buf),
                          &c->idle[i])) != 0)
      return bm_fail("nm_sr_irecv(outstanding)", rc, n);
  if ((rc = bm_post_window(c, n)) != 0)
    return rc;
  nm_sr_request_t ready;
  rc = nm_sr_isend(c->session, c->peer, BM_TAG_READY, c->ackbuf, 0, &ready);
  if (rc == 0)
    rc = nm_sr_swait(c->session, &ready);
  if (rc != 0)
    return bm_fail("ready", rc, n);
  for (int w = 0; w < total; w++) {
    for (int k = 0; k < c->opts.window; k++)
      if ((rc = nm_sr_rwait(c->session, &c->reqs[k])) != 0)
        return bm_fail("nm_sr_rwait", rc, n);
    if (w + 1 < total && (rc = bm_post_window(c, n)) != 0)
      return rc;
    nm_sr_request_t ack;
    rc = nm_sr_isend(c->session, c->peer, BM_TAG_ACK, c->ackbuf, 0, &ack);
    if (rc == 0)
      rc = nm_sr_swait(c->session, &ack);
    if (rc != 0)
      return bm_fail("ack", rc, n);
  }
  for (long i = 0; i < n; i++) {
    if ((rc = nm_sr_rcancel(c->session, &c->idle[i])) != 0)
      return bm_fail("nm_sr_rcancel(outstanding)", rc, n);
    nm_sr_rwait(c->session, &c->idle[i]); /* -NM_ECANCELED, at once */
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct bm_ctx c;
  memset(&c, 0, sizeof(c));
  c.opts.min_size = 8;
  c.opts.max_size = 8;
  c.opts.iters = 200;
  c.opts.warmup = 20;
  c.opts.window = 64;
  long counts[BM_MAX_COUNTS] = {1, 1000, 100000};
  int n_counts = 3;
  for (int i = 1; i < argc; i++) { /* our own option, taken out before the common ones */
    const char *v = NULL;
    int drop = 1; /* arguments taken: 1 for --outstanding=LIST, 2 for --outstanding LIST */
    if (strncmp(argv[i], "--outstanding=", 14) == 0) {
      v = argv[i] + 14;
    } else if (strcmp(argv[i], "--outstanding") == 0 && i + 1 < argc) {
      v = argv[i + 1];
      drop = 2;
    }
    if (!v)
      continue;
    n_counts = bm_parse_counts(v, counts, BM_MAX_COUNTS);
    if (n_counts <= 0) {
      fprintf(stderr, "nm_bench_match: --outstanding takes up to %d counts separated by commas, e.g. 1,1000,100000\n",
              BM_MAX_COUNTS);
      return 2;
    }
    memmove(&argv[i], &argv[i + drop], (size_t)(argc - i - drop + 1) * sizeof(*argv));
    argc -= drop;
    i--;
  }
  int rc = bench_parse_opts(argc, argv, &c.opts,
                            "nmad message rate with N receives outstanding on other tags (nmad-run -n 2 nm_bench_match);\n"
                            "--outstanding N1,N2,... (default 1,1000,100000); --min is the message size; "
                            "--iters/--warmup count windows of --window messages");
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  long max_n = 0;
  for (int i = 0; i < n_counts; i++)
    max_n = counts[i] > max_n ? counts[i] : max_n;

  nm_launcher_t l = NULL;
  int size = 0, status = 0;
  if ((rc = nm_launcher_init(&l, &argc, &argv)) != 0) {
    fprintf(stderr, "nm_bench_match: nm_launcher_init failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }
  nm_launcher_get_rank(l, &c.rank);
  nm_launcher_get_size(l, &size);
  if (size != 2) {
    if (c.rank == 0)
      fprintf(stderr, "nm_bench_match: needs 2 processes (got %d): nmad-run -n 2 %s\n", size, argv[0]);
    nm_launcher_exit(l);
    return 1;
  }
  if ((rc = nm_session_open(nm_launcher_get_core(l), "bench", &c.session)) != 0 ||
      (rc = nm_launcher_get_gate(l, 1 - c.rank, &c.peer)) != 0) {
    fprintf(stderr, "nm_bench_match: set-up failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }
  c.buf = bench_alloc((size_t)c.opts.window * c.opts.min_size + 1);
  c.reqs = calloc((size_t)c.opts.window, sizeof(*c.reqs));
  c.win_us = calloc((size_t)c.opts.iters, sizeof(double));
  c.idle = c.rank == 1 && max_n ? calloc((size_t)max_n, sizeof(*c.idle)) : NULL;
  if (!c.buf || !c.reqs || !c.win_us || (c.rank == 1 && max_n && !c.idle)) {
    fprintf(stderr, "nm_bench_match: out of memory\n");
    return 1;
  }
  const char *drv = getenv("NMAD_DRIVER"), *strat = getenv("NMAD_STRATEGY");
  if (c.rank == 0) {
    if (c.opts.csv)
      printf("outstanding,size,window,msgs_per_s,ratio\n");
    else
      printf("# nm_bench_match: rank 0 -> rank 1, NMAD_DRIVER=%s, NMAD_STRATEGY=%s; rate = window / median window "
             "time, %d windows, %d warm-up\n# ratio = rate / rate with the first count\n%12s %8s %8s %14s %8s\n",
             drv ? drv : "(default)", strat ? strat : "(default)", c.opts.iters, c.opts.warmup, "outstanding",
             "size", "window", "msgs_per_s", "ratio");
    fflush(stdout);
  }
  double first = 0.0;
  for (int i = 0; i < n_counts; i++) {
    int total = c.opts.warmup + c.opts.iters;
    rc = c.rank == 0 ? bm_rank0(&c, counts[i], total) : bm_rank1(&c, counts[i], total);
    if (rc != 0)
      return 1; /* not the collective exit: the peer may wait for us */
    if (c.rank == 0) {
      double med = bench_median(c.win_us, c.opts.iters);
      double rate = med > 0.0 ? c.opts.window * 1e6 / med : 0.0;
      if (i == 0)
        first = rate;
      double ratio = first > 0.0 ? rate / first : 0.0;
      if (c.opts.csv)
        printf("%ld,%zu,%d,%.1f,%.3f\n", counts[i], c.opts.min_size, c.opts.window, rate, ratio);
      else
        printf("%12ld %8zu %8d %14.0f %8.3f\n", counts[i], c.opts.min_size, c.opts.window, rate, ratio);
      fflush(stdout);
    }
  }
  if ((rc = nm_session_close(c.session)) != 0 || (rc = nm_launcher_exit(l)) != 0) {
    fprintf(stderr, "nm_bench_match: close failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  bench_free(c.buf);
  free(c.reqs);
  free(c.win_us);
  free(c.idle);
  return status;
}
