/**
 * @file nm_bench_pingpong.c
 * @brief Ping-pong latency and bandwidth between ranks 0 and 1 over nmad's sendrecv interface.
 *
 * Run: `NMAD_DRIVER=shm nmad-run -n 2 ./nm_bench_pingpong [--min 0] [--max 64M] [--iters 1000] [--csv] [--check]`.
 *
 * Method (identical in bench/ompi_pingpong.c so the two can be compared):
 *  - sizes: --min, then powers of two, up to --max (bench_next_size());
 *  - per size: a warm-up, then every iteration is timed on its own on rank 0 with CLOCK_MONOTONIC:
 *    post the receive of the reply, send, wait for both; one-way latency = round trip / 2; one clock read per
 *    round trip, right after the send is posted, while the message travels: the time between two reads is one
 *    round trip, and the read (~20 ns on this VM) does not delay the next send, as fi_pingpong, which times its
 *    whole loop, pays none (one more round trip than timed runs, to close the last interval);
 *  - rank 1 always has the next receive posted before it sends the reply (as fi_pingpong does), so the
 *    measurement is the matched (expected) path, not the unexpected one;
 *  - reported: min and median one-way latency in microseconds, and bandwidth = size / median one-way
 *    latency in MB/s with MB = 1e6 bytes.
 * Exit status: 0, or 1 if any nmad call failed (the nm_strerror() text is printed) or --check found bad data.
 */
#include "bench_common.h"

#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_TAG ((nm_tag_t)0x5050)

/** Everything one rank needs; passed around instead of globals (DESIGN.md rule 1). */
struct pp_ctx {
  struct bench_opts opts;
  nm_session_t session;
  nm_gate_t peer;
  int rank;
  void *sbuf;    /* rank 0: data sent */
  void *rbuf[2]; /* rank 0 uses rbuf[0]; rank 1 alternates between both (one is posted while the other is sent) */
  double *lat_us;
  int nfailed;   /* --check mismatches */
};

/* Report a failed nmad call; the caller turns it into a non-zero exit status. */
static int nm_fail(const char *what, int rc, size_t size, int iter)
{
  fprintf(stderr, "nm_bench_pingpong: %s failed at size %zu iteration %d: %s (%d)\n", what, size, iter,
          nm_strerror(rc), rc);
  return rc;
}

static uint64_t seed_of(size_t size, int iter)
{
  return ((uint64_t)size << 24) ^ (uint64_t)(unsigned)iter;
}

/* Rank 0: send, receive the echo, time the round trip. */
static int pp_rank0_size(struct pp_ctx *c, size_t size, int warmup, int iters)
{
  nm_sr_request_t sreq, rreq;
  int total = warmup + iters + 1; /* the last round trip closes the last timed one */
  int i, rc;
  nm_core_t core = nm_session_get_core(c->session);
  uint64_t t0 = 0, check_ns = 0; /* --check's fill and verification: not part of the round trip */

  for (i = 0; i < total; i++) {
    uint64_t t1;

    if (c->opts.check) {
      uint64_t f0 = nm_core_time_ns(core);
      bench_fill(c->sbuf, size, seed_of(size, i));
      memset(c->rbuf[0], 0, size);
      check_ns += nm_core_time_ns(core) - f0;
    }
    rc = nm_sr_irecv(c->session, c->peer, PP_TAG, c->rbuf[0], size, &rreq);
    if (rc != 0)
      return nm_fail("nm_sr_irecv", rc, size, i);
    rc = nm_sr_isend(c->session, c->peer, PP_TAG, c->sbuf, size, &sreq);
    if (rc != 0)
      return nm_fail("nm_sr_isend", rc, size, i);
    /* One clock read per round trip, while the message travels: from one read to the next is one round trip
     * (this loop's period), and the read (~20 ns on this VM) does not delay the next send, as it did read between
     * the reply's arrival and the next send (until 2026-11-30: doc/performance.md, "The ping-pong's clock read
     * off the critical path"). */
    t1 = nm_core_time_ns(core);
    if (i > warmup)
      c->lat_us[i - 1 - warmup] = (double)(t1 - t0 - check_ns) / 2000.0;
    t0 = t1;
    check_ns = 0;
    rc = nm_sr_swait(c->session, &sreq);
    if (rc != 0)
      return nm_fail("nm_sr_swait", rc, size, i);
    rc = nm_sr_rwait(c->session, &rreq);
    if (rc != 0)
      return nm_fail("nm_sr_rwait", rc, size, i);

    if (c->opts.check) {
      uint64_t v0 = nm_core_time_ns(core);
      nm_len_t got = 0;
      long bad;
      rc = nm_sr_get_size(c->session, &rreq, &got);
      if (rc != 0)
        return nm_fail("nm_sr_get_size", rc, size, i);
      bad = bench_verify(c->rbuf[0], size, seed_of(size, i));
      if (got != size || bad >= 0) {
        fprintf(stderr, "nm_bench_pingpong: check failed at size %zu iteration %d: got %llu bytes, first bad byte %ld\n",
                size, i, (unsigned long long)got, bad);
        c->nfailed++;
      }
      check_ns += nm_core_time_ns(core) - v0;
    }
  }
  return 0;
}

/* Rank 1: answer every message with one of the same size; the receive of message i+1 is posted before the reply
 * to message i. The reply leaves from rank 1's own send buffer, as in fi_pingpong and OSU's osu_latency, not
 * from the buffer just received into: sending freshly received data makes the peer read cache lines that are
 * dirty in another core's cache, which on this VM's CPUs costs up to 2x at 4 MiB depending on where the
 * vCPUs sit, and measures the machine rather than the library. */
static int pp_rank1_size(struct pp_ctx *c, size_t size, int warmup, int iters)
{
  nm_sr_request_t rreq[2], sreq;
  int total = warmup + iters + 1; /* as rank 0's */
  int cur = 0;
  int i, rc;

  rc = nm_sr_irecv(c->session, c->peer, PP_TAG, c->rbuf[0], size, &rreq[0]);
  if (rc != 0)
    return nm_fail("nm_sr_irecv", rc, size, 0);
  for (i = 0; i < total; i++) {
    rc = nm_sr_rwait(c->session, &rreq[cur]);
    if (rc != 0)
      return nm_fail("nm_sr_rwait", rc, size, i);
    if (i + 1 < total) {
      rc = nm_sr_irecv(c->session, c->peer, PP_TAG, c->rbuf[cur ^ 1], size, &rreq[cur ^ 1]);
      if (rc != 0)
        return nm_fail("nm_sr_irecv", rc, size, i + 1);
    }
    if (c->opts.check) /* the same pattern rank 0 sent, so that rank 0 can verify the reply */
      bench_fill(c->sbuf, size, seed_of(size, i));
    rc = nm_sr_isend(c->session, c->peer, PP_TAG, c->sbuf, size, &sreq);
    if (rc != 0)
      return nm_fail("nm_sr_isend", rc, size, i);
    rc = nm_sr_swait(c->session, &sreq);
    if (rc != 0)
      return nm_fail("nm_sr_swait", rc, size, i);
    /* Checked after the echo so the check is not on the timed round trip of rank 0. */
    if (c->opts.check) {
      long bad = bench_verify(c->rbuf[cur], size, seed_of(size, i));
      if (bad >= 0) {
        fprintf(stderr, "nm_bench_pingpong: rank 1 check failed at size %zu iteration %d, first bad byte %ld\n",
                size, i, bad);
        c->nfailed++;
      }
    }
    cur ^= 1;
  }
  return 0;
}

static void print_header(const struct pp_ctx *c, nm_launcher_t l)
{
  const char *drv = getenv("NMAD_DRIVER");
  const char *strat = getenv("NMAD_STRATEGY");

  if (c->opts.csv) {
    printf("size,lat_min_us,lat_median_us,bw_MBps\n");
  } else {
    printf("# nm_bench_pingpong: ranks 0 <-> 1, bootstrap %s, NMAD_DRIVER=%s, NMAD_STRATEGY=%s\n",
           nm_launcher_get_bootstrap(l), drv ? drv : "(default)", strat ? strat : "(default)");
    printf("# one-way latency = round trip / 2 (us); bw = size / median one-way latency (MB/s, 1 MB = 1e6 B)\n");
    printf("# iters %d, warmup %d (scaled down above %zu KiB)%s\n", c->opts.iters, c->opts.warmup,
           BENCH_SCALE_THRESHOLD / 1024, c->opts.check ? ", data checked" : "");
    printf("%12s %12s %14s %12s\n", "size", "lat_min_us", "lat_median_us", "bw_MBps");
  }
  fflush(stdout);
}

static void print_row(const struct pp_ctx *c, size_t size, double lmin, double lmed)
{
  double bw = bench_mbps(size, lmed);

  if (c->opts.csv)
    printf("%zu,%.3f,%.3f,%.3f\n", size, lmin, lmed, bw);
  else
    printf("%12zu %12.3f %14.3f %12.2f\n", size, lmin, lmed, bw);
  fflush(stdout);
}

static int run(struct pp_ctx *c, nm_launcher_t l)
{
  size_t size;
  int rc;

  if (c->rank == 0)
    print_header(c, l);
  for (size = bench_first_size(&c->opts); size != SIZE_MAX; size = bench_next_size(&c->opts, size)) {
    int warmup = bench_warmup_for_size(&c->opts, size);
    int iters = bench_iters_for_size(&c->opts, size);

    if (c->rank == 0) {
      rc = pp_rank0_size(c, size, warmup, iters);
      if (rc != 0)
        return rc;
      print_row(c, size, bench_min(c->lat_us, iters), bench_median(c->lat_us, iters));
    } else {
      rc = pp_rank1_size(c, size, warmup, iters);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct pp_ctx c;
  nm_launcher_t l = NULL;
  int size = 0, rc, status = 0;

  memset(&c, 0, sizeof(c));
  c.opts.min_size = 0;
  c.opts.max_size = (size_t)64 << 20;
  c.opts.iters = 1000;
  c.opts.warmup = 100;
  c.opts.window = 64;
  rc = bench_parse_opts(argc, argv, &c.opts,
                        "nmad ping-pong between ranks 0 and 1 (start with: nmad-run -n 2 nm_bench_pingpong)");
  if (rc != 0)
    return rc > 0 ? 0 : 2;

  rc = nm_launcher_init(&l, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_pingpong: nm_launcher_init failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }
  nm_launcher_get_rank(l, &c.rank);
  nm_launcher_get_size(l, &size);
  if (size < 2) {
    if (c.rank == 0)
      fprintf(stderr, "nm_bench_pingpong: needs 2 processes (got %d): nmad-run -n 2 %s\n", size, argv[0]);
    nm_launcher_exit(l);
    return 1;
  }
  rc = nm_session_open(nm_launcher_get_core(l), "bench", &c.session);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_pingpong: nm_session_open failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }

  if (c.rank <= 1) {
    rc = nm_launcher_get_gate(l, 1 - c.rank, &c.peer);
    if (rc != 0) {
      fprintf(stderr, "nm_bench_pingpong: nm_launcher_get_gate failed: %s (%d)\n", nm_strerror(rc), rc);
      return 1;
    }
    /* Both send from sbuf; rank 0 receives into rbuf[0], rank 1 into rbuf[0] and rbuf[1] in turn. */
    c.rbuf[0] = bench_alloc(c.opts.max_size);
    c.sbuf = bench_alloc(c.opts.max_size);
    if (c.rank == 1)
      c.rbuf[1] = bench_alloc(c.opts.max_size);
    c.lat_us = calloc((size_t)c.opts.iters, sizeof(double));
    if (c.rbuf[0] == NULL || c.sbuf == NULL || (c.rank == 1 && c.rbuf[1] == NULL) || c.lat_us == NULL) {
      fprintf(stderr, "nm_bench_pingpong: out of memory for %zu-byte buffers\n", c.opts.max_size);
      return 1;
    }
    rc = run(&c, l);
    if (rc != 0) {
      /* nm_launcher_exit() synchronizes with the peer, which may be stuck waiting for us: just leave. */
      return 1;
    }
    if (c.nfailed != 0) {
      fprintf(stderr, "nm_bench_pingpong: rank %d: %d data check failures\n", c.rank, c.nfailed);
      status = 1;
    }
  }
  /* Ranks above 1 (nmad-run -n 3 or more) take no part in the measurement. */

  rc = nm_session_close(c.session);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_pingpong: nm_session_close failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  rc = nm_launcher_exit(l);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_pingpong: nm_launcher_exit failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  bench_free(c.sbuf);
  bench_free(c.rbuf[0]);
  bench_free(c.rbuf[1]);
  free(c.lat_us);
  return status;
}
