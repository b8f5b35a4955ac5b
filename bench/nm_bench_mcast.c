/**
 * @file nm_bench_mcast.c
 * @brief Broadcast duration from rank 0 to every other rank: nmad's dynamic broadcast (nm_mcast.h) against the
 *        static naive and binomial broadcasts (nm_coll.h). The micro-benchmark of Denis 2020, section 5.1.
 *
 * Run: `NMAD_DRIVER=shm NMAD_STRATEGY=prio nmad-run -n 8 ./nm_bench_mcast [--mode all] [--min 8] [--max 8M]
 *       [--iters 200] [--warmup 20] [--csv] [--check]`.
 *
 * Modes (--mode, default all; "all" runs naive, then binomial, then dynamic, each over every size):
 *  - dynamic:  rank 0 calls nm_mcast_isend() to ranks 1..N-1 (binomial tree, no priorities) and nm_mcast_wait();
 *              the receivers post a plain nm_sr_irecv(session, gate of rank 0, tag) and wait for it;
 *              --tree binomial|flat|chain|binary|topo picks the tree, --seg S (bytes, K/M suffix) pipelines it in
 *              segments of S bytes (nm_mcast_isend_seg(); 0, the default: store-and-forward; issue 17, part 5);
 *  - naive:    nm_coll_bcast_naive() (the root sends to every rank in turn; Hasanov 2015, section 2.1.1);
 *  - binomial: nm_coll_bcast_binomial() (Denis 2020 fig. 1; Hasanov 2015, section 2.1.6).
 *
 * Method (identical in bench/ompi_bcast.c): "the duration of the broadcast is the time difference between the
 * start on the root node and the last received data on the last node" (Denis 2020, section 5.1). It is measured
 * on the root alone, so clock offsets between processes play no part: every receiver sends a zero-byte ack to
 * rank 0 as soon as its broadcast completed, and rank 0 times each iteration from just before the broadcast to
 * the arrival of the last ack. The duration thus includes one zero-byte message latency (the last ack), the
 * same for every mode. Rank 0 posts the ack receives before the clock starts; dynamic-mode receivers post the
 * receive of broadcast i+1 before they ack broadcast i, so broadcasts meet posted receives (the static
 * broadcasts post theirs when called, right after the ack).
 * Each size runs --warmup untimed then --iters timed iterations (both scaled down above 256 KiB, as in every
 * nmad benchmark); reported are the min and median duration in microseconds.
 * Tags: data and acks use distinct tags per mode, and data tags alternate with the iteration's parity.
 * Columns: mode, nprocs, size (bytes), min_us, median_us.
 * Exit status: 0, or 1 if an nmad call failed (its nm_strerror() text is printed), --check found bad data, or
 * the dynamic mode was requested alone and is not available.
 */
#include "bench_common.h"

#include <nmad/nm_coll.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_mcast.h>
#include <nmad/nm_sendrecv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MC_TAG_DATA ((nm_tag_t)0x4d430000) /* | mode << 4 | iteration parity */
#define MC_TAG_ACK ((nm_tag_t)0x4d410000)  /* | mode << 4 */
#define MC_TAG_AGREE ((nm_tag_t)0x4d4700)  /* start-up agreement on the dynamic mode */

enum mc_mode { MC_NAIVE = 0, MC_BINOMIAL = 1, MC_DYNAMIC = 2, MC_NMODES = 3 };
static const char *const mc_mode_names[MC_NMODES] = {"naive", "binomial", "dynamic"};

/** Everything one rank needs; passed around instead of globals (DESIGN.md rule 1). */
struct mc_ctx {
  struct bench_opts opts;
  unsigned modes;          /* bit mask of enum mc_mode to run */
  nm_launcher_t launcher;
  nm_session_t session;
  int rank, size;
  struct nm_coll_group_s world; /* every rank; gates made on first use (only the peers a rank talks to) */
  int *dests;              /* 1..N-1, the dynamic broadcast's destinations */
  nm_sr_request_t *acks;   /* rank 0: one ack receive per rank */
  nm_mcast_service_t mcast;
  int mcast_ok;            /* 1 if every rank started the dynamic broadcast service */
  void *buf[2];            /* rank 0 sends buf[0]; receivers alternate (one is posted while the other is checked) */
  double *dur_us;
  int nfailed;             /* --check mismatches */
  int tree;                /* dynamic mode: enum nm_mcast_tree_e (--tree) */
  size_t seg;              /* dynamic mode: segment size, 0 = store-and-forward (--seg) */
};

static nm_gate_t gate(struct mc_ctx *c, int rank) { return nm_launcher_gate_of(c->launcher, rank); }

static int nm_fail(const char *what, int rc, enum mc_mode m, size_t size, int iter)
{
  fprintf(stderr, "nm_bench_mcast: %s failed (mode %s, size %zu, iteration %d): %s (%d)\n", what, mc_mode_names[m],
          size, iter, nm_strerror(rc), rc);
  return rc != 0 ? rc : -NM_EUNKNOWN;
}

static uint64_t seed_of(enum mc_mode m, size_t size, int iter)
{
  return ((uint64_t)m << 56) ^ ((uint64_t)size << 24) ^ (uint64_t)(unsigned)iter;
}

static nm_tag_t data_tag(enum mc_mode m, int iter)
{
  return MC_TAG_DATA | ((nm_tag_t)m << 4) | (nm_tag_t)(iter & 1);
}

static nm_tag_t ack_tag(enum mc_mode m)
{
  return MC_TAG_ACK | ((nm_tag_t)m << 4);
}

/* One broadcast of the static kinds: same call on every rank. */
static int static_bcast(struct mc_ctx *c, enum mc_mode m, void *buf, size_t size, nm_tag_t tag)
{
  if (m == MC_NAIVE)
    return nm_coll_bcast_naive_group(c->session, &c->world, c->rank, 0, buf, size, tag);
  return nm_coll_bcast_binomial_group(c->session, &c->world, c->rank, 0, buf, size, tag);
}

/* Rank 0: post the acks, time broadcast + last ack. */
static int mc_root_size(struct mc_ctx *c, enum mc_mode m, size_t size, int warmup, int iters)
{
  int total = warmup + iters;
  int i, r, rc;

  for (i = 0; i < total; i++) {
    uint64_t t0, t1;

    if (c->opts.check)
      bench_fill(c->buf[0], size, seed_of(m, size, i));
    for (r = 1; r < c->size; r++) {
      rc = nm_sr_irecv(c->session, gate(c, r), ack_tag(m), NULL, 0, &c->acks[r]);
      if (rc != 0)
        return nm_fail("nm_sr_irecv(ack)", rc, m, size, i);
    }
    t0 = nm_core_time_ns(nm_session_get_core(c->session));
    if (m == MC_DYNAMIC) {
      nm_mcast_req_t req;
      memset(&req, 0, sizeof(req));
      rc = nm_mcast_isend_seg(c->mcast, c->dests, NULL, c->size - 1, data_tag(m, i), c->buf[0], size,
                              (enum nm_mcast_tree_e)c->tree, c->seg, &req);
      if (rc != 0)
        return nm_fail("nm_mcast_isend", rc, m, size, i);
      rc = nm_mcast_wait(c->mcast, &req);
      if (rc != 0)
        return nm_fail("nm_mcast_wait", rc, m, size, i);
    } else {
      rc = static_bcast(c, m, c->buf[0], size, data_tag(m, i));
      if (rc != 0)
        return nm_fail(m == MC_NAIVE ? "nm_coll_bcast_naive" : "nm_coll_bcast_binomial", rc, m, size, i);
    }
    for (r = 1; r < c->size; r++) {
      rc = nm_sr_rwait(c->session, &c->acks[r]);
      if (rc != 0)
        return nm_fail("nm_sr_rwait(ack)", rc, m, size, i);
    }
    t1 = nm_core_time_ns(nm_session_get_core(c->session));
    if (i >= warmup)
      c->dur_us[i - warmup] = (double)(t1 - t0) / 1000.0;
  }
  return 0;
}

static int send_ack(struct mc_ctx *c, enum mc_mode m, size_t size, int iter)
{
  nm_sr_request_t sreq;
  int rc = nm_sr_isend(c->session, gate(c, 0), ack_tag(m), NULL, 0, &sreq);

  if (rc == 0)
    rc = nm_sr_swait(c->session, &sreq);
  return rc != 0 ? nm_fail("ack send", rc, m, size, iter) : 0;
}

/* Checked after the ack, so the check is not timed by rank 0. */
static void check_data(struct mc_ctx *c, enum mc_mode m, const void *buf, size_t size, int iter)
{
  long bad;

  if (!c->opts.check)
    return;
  bad = bench_verify(buf, size, seed_of(m, size, iter));
  if (bad >= 0) {
    fprintf(stderr, "nm_bench_mcast: rank %d check failed (mode %s, size %zu, iteration %d), first bad byte %ld\n",
            c->rank, mc_mode_names[m], size, iter, bad);
    c->nfailed++;
  }
}

/* Receivers of the static broadcasts: take part (and forward, in the binomial tree), ack, check. */
static int mc_static_recv_size(struct mc_ctx *c, enum mc_mode m, size_t size, int total)
{
  int i, rc;

  for (i = 0; i < total; i++) {
    rc = static_bcast(c, m, c->buf[0], size, data_tag(m, i));
    if (rc != 0)
      return nm_fail(m == MC_NAIVE ? "nm_coll_bcast_naive" : "nm_coll_bcast_binomial", rc, m, size, i);
    rc = send_ack(c, m, size, i);
    if (rc != 0)
      return rc;
    check_data(c, m, c->buf[0], size, i);
  }
  return 0;
}

/* Receivers of the dynamic broadcast: plain receives from rank 0; broadcast i+1's is posted before the ack of i. */
static int mc_dynamic_recv_size(struct mc_ctx *c, size_t size, int total)
{
  nm_sr_request_t rreq[2];
  int cur = 0;
  int i, rc;

  rc = nm_sr_irecv(c->session, gate(c, 0), data_tag(MC_DYNAMIC, 0), c->buf[0], size, &rreq[0]);
  if (rc != 0)
    return nm_fail("nm_sr_irecv", rc, MC_DYNAMIC, size, 0);
  for (i = 0; i < total; i++) {
    rc = nm_sr_rwait(c->session, &rreq[cur]);
    if (rc != 0)
      return nm_fail("nm_sr_rwait", rc, MC_DYNAMIC, size, i);
    if (i + 1 < total) {
      rc = nm_sr_irecv(c->session, gate(c, 0), data_tag(MC_DYNAMIC, i + 1), c->buf[cur ^ 1], size, &rreq[cur ^ 1]);
      if (rc != 0)
        return nm_fail("nm_sr_irecv", rc, MC_DYNAMIC, size, i + 1);
    }
    rc = send_ack(c, MC_DYNAMIC, size, i);
    if (rc != 0)
      return rc;
    check_data(c, MC_DYNAMIC, c->buf[cur], size, i);
    cur ^= 1;
  }
  return 0;
}

/*
 * Start the dynamic broadcast service on every rank and agree on whether it works everywhere: each rank sends
 * its nm_mcast_init() status to rank 0, which broadcasts the verdict (naive broadcast, on its own tag).
 * Returns 0 (c->mcast_ok says the verdict) or an error of the agreement itself.
 */
static int mc_start_dynamic(struct mc_ctx *c)
{
  int32_t mine, verdict = 0;
  int rc, r;

  mine = nm_mcast_init(c->session, &c->mcast);
  if (mine != 0)
    fprintf(stderr, "nm_bench_mcast: rank %d: nm_mcast_init failed: %s (%d)\n", c->rank, nm_strerror(mine),
            (int)mine);
  if (c->rank == 0) {
    verdict = mine;
    for (r = 1; r < c->size; r++) {
      nm_sr_request_t req;
      int32_t theirs = 0;
      rc = nm_sr_irecv(c->session, gate(c, r), MC_TAG_AGREE, &theirs, sizeof(theirs), &req);
      if (rc == 0)
        rc = nm_sr_rwait(c->session, &req);
      if (rc != 0)
        return rc;
      if (verdict == 0 && theirs != 0)
        verdict = theirs;
    }
  } else {
    nm_sr_request_t req;
    rc = nm_sr_isend(c->session, gate(c, 0), MC_TAG_AGREE, &mine, sizeof(mine), &req);
    if (rc == 0)
      rc = nm_sr_swait(c->session, &req);
    if (rc != 0)
      return rc;
  }
  rc = nm_coll_bcast_naive_group(c->session, &c->world, c->rank, 0, &verdict, sizeof(verdict), MC_TAG_AGREE + 1);
  if (rc != 0)
    return rc;
  if (mine == 0 && verdict != 0) {
    nm_mcast_finalize(c->mcast);
    c->mcast = NULL;
  }
  c->mcast_ok = (verdict == 0);
  return 0;
}

static void print_header(const struct mc_ctx *c)
{
  const char *drv = getenv("NMAD_DRIVER");
  const char *strat = getenv("NMAD_STRATEGY");

  if (c->opts.csv) {
    printf("mode,nprocs,size,min_us,median_us\n");
  } else {
    printf("# nm_bench_mcast: root 0 -> %d receivers, bootstrap %s, NMAD_DRIVER=%s, NMAD_STRATEGY=%s\n",
           c->size - 1, nm_launcher_get_bootstrap(c->launcher), drv ? drv : "(default)",
           strat ? strat : "(default)");
    printf("# duration = root's start to the last receiver's zero-byte ack (us); min and median over iterations\n");
    printf("# dynamic: tree %d (0 binomial, 1 flat, 2 chain, 3 binary, 4 topo), segment %zu bytes (0: store-and-forward)\n",
           c->tree, c->seg);
    printf("# iters %d, warmup %d (scaled down above %zu KiB)%s\n", c->opts.iters, c->opts.warmup,
           BENCH_SCALE_THRESHOLD / 1024, c->opts.check ? ", data checked" : "");
    printf("%-9s %6s %10s %12s %12s\n", "mode", "nprocs", "size", "min_us", "median_us");
  }
  fflush(stdout);
}

static void print_row(const struct mc_ctx *c, enum mc_mode m, size_t size, double dmin, double dmed)
{
  if (c->opts.csv)
    printf("%s,%d,%zu,%.3f,%.3f\n", mc_mode_names[m], c->size, size, dmin, dmed);
  else
    printf("%-9s %6d %10zu %12.3f %12.3f\n", mc_mode_names[m], c->size, size, dmin, dmed);
  fflush(stdout);
}

static int run_mode(struct mc_ctx *c, enum mc_mode m)
{
  size_t size;
  int rc;

  for (size = bench_first_size(&c->opts); size != SIZE_MAX; size = bench_next_size(&c->opts, size)) {
    int warmup = bench_warmup_for_size(&c->opts, size);
    int iters = bench_iters_for_size(&c->opts, size);

    if (c->rank == 0) {
      rc = mc_root_size(c, m, size, warmup, iters);
      if (rc != 0)
        return rc;
      print_row(c, m, size, bench_min(c->dur_us, iters), bench_median(c->dur_us, iters));
    } else if (m == MC_DYNAMIC) {
      rc = mc_dynamic_recv_size(c, size, warmup + iters);
      if (rc != 0)
        return rc;
    } else {
      rc = mc_static_recv_size(c, m, size, warmup + iters);
      if (rc != 0)
        return rc;
    }
  }
  return 0;
}

/* --mode: one of the three broadcasts (enum mc_mode order), or all of them. @return 0, or -1 if bad. */
static int parse_mode(int *argc, char **argv, unsigned *modes)
{
  static const char *const names[] = {"naive", "binomial", "dynamic", "all", NULL};
  int m = MC_NMODES; /* "all" */
  if (bench_take_choice(argc, argv, "--mode", names, &m) != 0)
    return -1;
  *modes = m == MC_NMODES ? (1u << MC_NAIVE) | (1u << MC_BINOMIAL) | (1u << MC_DYNAMIC) : 1u << m;
  return 0;
}

/* --seg SIZE: take it out of argv before bench_parse_opts(). @return 0, or -1 on a bad value. */
static int take_seg(int *argc, char **argv, size_t *seg)
{
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--seg") != 0)
      continue;
    if (i + 1 >= *argc || bench_parse_size(argv[i + 1], seg) != 0) {
      fprintf(stderr, "%s: --seg needs a size in bytes (K, M suffix allowed)\n", argv[0]);
      return -1;
    }
    memmove(&argv[i], &argv[i + 2], sizeof(char *) * (size_t)(*argc - i - 1)); /* with the final NULL */
    *argc -= 2;
    i--;
  }
  return 0;
}

static int setup(struct mc_ctx *c)
{
  int r;
  /* Under nmad-sim --fake-payload, large messages move only their size: nothing to check, and the buffers are
   * left untouched so that thousands of simulated ranks do not each fault in max_size bytes. */
  int delivered = nm_core_payload_delivered(nm_session_get_core(c->session), c->opts.max_size);
  if (!delivered && c->opts.check) {
    if (c->rank == 0)
      fprintf(stderr, "nm_bench_mcast: --check ignored: payloads above the fake-payload size are not delivered\n");
    c->opts.check = 0;
  }
  void *(*alloc)(size_t) = delivered ? bench_alloc : bench_alloc_untouched;

  c->world = (struct nm_coll_group_s){c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  c->dests = c->rank == 0 ? calloc((size_t)c->size, sizeof(*c->dests)) : NULL;
  c->acks = c->rank == 0 ? calloc((size_t)c->size, sizeof(*c->acks)) : NULL;
  c->dur_us = calloc((size_t)c->opts.iters, sizeof(double));
  c->buf[0] = alloc(c->opts.max_size);
  c->buf[1] = c->rank == 0 ? NULL : alloc(c->opts.max_size);
  if ((c->rank == 0 && (c->dests == NULL || c->acks == NULL)) || c->dur_us == NULL || c->buf[0] == NULL ||
      (c->rank != 0 && c->buf[1] == NULL)) {
    fprintf(stderr, "nm_bench_mcast: out of memory for %zu-byte buffers\n", c->opts.max_size);
    return -NM_ENOMEM;
  }
  for (r = 1; c->rank == 0 && r < c->size; r++)
    c->dests[r - 1] = r;
  return 0;
}

int main(int argc, char **argv)
{
  struct mc_ctx c;
  int rc, status = 0;
  unsigned m;

  memset(&c, 0, sizeof(c));
  c.opts.min_size = 8;
  c.opts.max_size = (size_t)8 << 20;
  c.opts.iters = 200;
  c.opts.warmup = 20;
  c.opts.window = 1;
  if (parse_mode(&argc, argv, &c.modes) != 0)
    return 2;
  static const char *const trees[] = {"binomial", "flat", "chain", "binary", "topo", NULL}; /* enum nm_mcast_tree_e */
  if (bench_take_choice(&argc, argv, "--tree", trees, &c.tree) != 0 || take_seg(&argc, argv, &c.seg) != 0)
    return 2;
  rc = bench_parse_opts(argc, argv, &c.opts,
                        "nmad broadcast duration from rank 0 to all (start with: nmad-run -n N nm_bench_mcast)\n"
                        "  --mode M      dynamic (nm_mcast_isend), naive, binomial (nm_coll_bcast_*) or all (default)");
  if (rc != 0)
    return rc > 0 ? 0 : 2;

  rc = nm_launcher_init(&c.launcher, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_mcast: nm_launcher_init failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }
  nm_launcher_get_rank(c.launcher, &c.rank);
  nm_launcher_get_size(c.launcher, &c.size);
  if (c.size < 2) {
    fprintf(stderr, "nm_bench_mcast: needs at least 2 processes (got %d): nmad-run -n N %s\n", c.size, argv[0]);
    nm_launcher_exit(c.launcher);
    return 1;
  }
  rc = nm_session_open(nm_launcher_get_core(c.launcher), "bench", &c.session);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_mcast: nm_session_open failed: %s (%d)\n", nm_strerror(rc), rc);
    return 1;
  }
  if (setup(&c) != 0)
    return 1;
  if (c.modes & (1u << MC_DYNAMIC)) {
    rc = mc_start_dynamic(&c);
    if (rc != 0) {
      fprintf(stderr, "nm_bench_mcast: start-up agreement failed: %s (%d)\n", nm_strerror(rc), rc);
      return 1;
    }
    if (!c.mcast_ok) {
      if (c.rank == 0)
        fprintf(stderr, "nm_bench_mcast: dynamic broadcasts unavailable on some rank: mode dynamic %s\n",
                c.modes == (1u << MC_DYNAMIC) ? "cannot run" : "skipped");
      if (c.modes == (1u << MC_DYNAMIC))
        status = 1;
      c.modes &= ~(1u << MC_DYNAMIC);
    }
  }

  if (c.rank == 0)
    print_header(&c);
  for (m = 0; m < MC_NMODES; m++) {
    if (!(c.modes & (1u << m)))
      continue;
    if (run_mode(&c, (enum mc_mode)m) != 0)
      return 1; /* the others may be stuck waiting for us: nm_launcher_exit() would not return; just leave */
  }
  if (c.nfailed != 0) {
    fprintf(stderr, "nm_bench_mcast: rank %d: %d data check failures\n", c.rank, c.nfailed);
    status = 1;
  }

  if (c.mcast != NULL) {
    rc = nm_mcast_finalize(c.mcast);
    if (rc != 0) {
      fprintf(stderr, "nm_bench_mcast: nm_mcast_finalize failed: %s (%d)\n", nm_strerror(rc), rc);
      status = 1;
    }
  }
  rc = nm_session_close(c.session);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_mcast: nm_session_close failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  rc = nm_launcher_exit(c.launcher);
  if (rc != 0) {
    fprintf(stderr, "nm_bench_mcast: nm_launcher_exit failed: %s (%d)\n", nm_strerror(rc), rc);
    status = 1;
  }
  bench_free(c.buf[0]);
  bench_free(c.buf[1]);
  free(c.dests);
  free(c.acks);
  free(c.dur_us);
  return status;
}
