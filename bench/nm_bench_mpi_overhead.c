/**
 * @file nm_bench_mpi_overhead.c
 * @brief What the MPI shim adds to nmad's latency, measured inside one job: the same two processes alternate
 *        blocks of an MPI ping-pong and of the native sendrecv ping-pong, on the same session and gates.
 *
 * Run: `NMAD_DRIVER=shm mpirun -n 2 --bind-to core ./nm_bench_mpi_overhead [--min 8] [--max 8] [--iters 2000]
 *       [--warmup 200] [--blocks 20] [--csv]` (nmad's mpirun; only ranks 0 and 1 take part).
 *
 * Why one job: a latency comparison between two jobs also compares two placements of the processes and two
 * states of a shared host, which here move the 8 B latency by up to 3x within an hour and by +-5% between runs a
 * minute apart, more than the difference to measure. Inside one job both contenders see the same placement, the
 * same caches and the same host state, block after block.
 *
 * Method, per size:
 *  - `--blocks` rounds; each round times one block of `--iters` iterations of each contender after `--warmup`
 *    untimed ones, the MPI block first on even rounds and the native one first on odd rounds (no order bias);
 *  - each block's figure is the mean one-way latency (round trip / 2, as bench/mpi_bench.c and
 *    bench/nm_bench_pingpong.c report it) of its fastest 90% iterations (oh_block_figure() says why); each round
 *    gives a ratio MPI / native;
 *  - reported: the median over rounds of each contender's block medians and the median, minimum and maximum of
 *    the per-round ratios (overhead = median ratio - 1).
 * The two contenders do the same work as the separate benchmarks: rank 0 posts the receive, sends and waits for
 * both (MPI_Irecv + MPI_Isend + MPI_Waitall / nm_sr_irecv + nm_sr_isend + nm_sr_swait + nm_sr_rwait); rank 1
 * keeps the next receive posted before it replies (MPI_Wait + MPI_Irecv + MPI_Isend + MPI_Wait / the same with
 * nm_sr_*). The native traffic uses the MPI session (MPIX_Comm_get_nmad) with a tag outside every communicator
 * context, so it can never match an MPI message (doc/mpi.md, interoperation).
 */
#include <mpi.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define OH_MPI_TAG 11
/* A context the shim never allocates (it counts up from 0 in steps of 2): native messages cannot match MPI ones. */
#define OH_NATIVE_TAG ((nm_tag_t)0xfffffff1u << 32 | 11u)

struct oh_ctx {
  int rank, blocks;
  struct bench_opts opts;
  nm_session_t session;
  nm_gate_t peer_gate;
  char *sbuf, *rbuf[2];
  double *t_us;           /* per-iteration one-way latency of the current block */
  double *mpi_us, *nat_us; /* per-round block medians */
};

static int oh_fail(const char *what, int rc)
{
  fprintf(stderr, "nm_bench_mpi_overhead: %s failed (%d)\n", what, rc);
  return 1;
}

/* One MPI block: @p warmup + @p iters iterations; rank 0 records the one-way latency of each timed iteration. */
static int oh_mpi_block(struct oh_ctx *c, int n, int warmup, int iters)
{
  int total = warmup + iters, peer = 1 - c->rank;
  if (c->rank == 0) {
    for (int i = 0; i < total; i++) {
      MPI_Request req[2];
      uint64_t t0 = bench_now_ns();
      int rc = MPI_Irecv(c->rbuf[0], n, MPI_BYTE, peer, OH_MPI_TAG, MPI_COMM_WORLD, &req[1]);
      if (!rc)
        rc = MPI_Isend(c->sbuf, n, MPI_BYTE, peer, OH_MPI_TAG, MPI_COMM_WORLD, &req[0]);
      if (!rc)
        rc = MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
      if (rc)
        return oh_fail("MPI ping", rc);
      if (i >= warmup)
        c->t_us[i - warmup] = (double)(bench_now_ns() - t0) / 2000.0;
    }
    return 0;
  }
  MPI_Request rreq[2], sreq;
  int cur = 0, rc = MPI_Irecv(c->rbuf[0], n, MPI_BYTE, peer, OH_MPI_TAG, MPI_COMM_WORLD, &rreq[0]);
  for (int i = 0; i < total && !rc; i++) {
    rc = MPI_Wait(&rreq[cur], MPI_STATUS_IGNORE);
    if (!rc && i + 1 < total)
      rc = MPI_Irecv(c->rbuf[cur ^ 1], n, MPI_BYTE, peer, OH_MPI_TAG, MPI_COMM_WORLD, &rreq[cur ^ 1]);
    if (!rc)
      rc = MPI_Isend(c->sbuf, n, MPI_BYTE, peer, OH_MPI_TAG, MPI_COMM_WORLD, &sreq);
    if (!rc)
      rc = MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    cur ^= 1;
  }
  return rc ? oh_fail("MPI pong", rc) : 0;
}

/* The same block on nmad's sendrecv interface. */
static int oh_native_block(struct oh_ctx *c, int n, int warmup, int iters)
{
  int total = warmup + iters;
  nm_sr_request_t sreq, rreq[2];
  if (c->rank == 0) {
    for (int i = 0; i < total; i++) {
      uint64_t t0 = bench_now_ns();
      int rc = nm_sr_irecv(c->session, c->peer_gate, OH_NATIVE_TAG, c->rbuf[0], (nm_len_t)n, &rreq[0]);
      if (!rc)
        rc = nm_sr_isend(c->session, c->peer_gate, OH_NATIVE_TAG, c->sbuf, (nm_len_t)n, &sreq);
      if (!rc)
        rc = nm_sr_swait(c->session, &sreq);
      if (!rc)
        rc = nm_sr_rwait(c->session, &rreq[0]);
      if (rc)
        return oh_fail("native ping", rc);
      if (i >= warmup)
        c->t_us[i - warmup] = (double)(bench_now_ns() - t0) / 2000.0;
    }
    return 0;
  }
  int cur = 0, rc = nm_sr_irecv(c->session, c->peer_gate, OH_NATIVE_TAG, c->rbuf[0], (nm_len_t)n, &rreq[0]);
  for (int i = 0; i < total && !rc; i++) {
    rc = nm_sr_rwait(c->session, &rreq[cur]);
    if (!rc && i + 1 < total)
      rc = nm_sr_irecv(c->session, c->peer_gate, OH_NATIVE_TAG, c->rbuf[cur ^ 1], (nm_len_t)n, &rreq[cur ^ 1]);
    if (!rc)
      rc = nm_sr_isend(c->session, c->peer_gate, OH_NATIVE_TAG, c->sbuf, (nm_len_t)n, &sreq);
    if (!rc)
      rc = nm_sr_swait(c->session, &sreq);
    cur ^= 1;
  }
  return rc ? oh_fail("native pong", rc) : 0;
}

/* A block's figure: the mean of its fastest 90% iterations. Not the median: the clock ticks in steps of a few ns,
 * and at 0.35 us a median moves by whole steps (1.5% each); the mean of 90% of the values does not, and leaving
 * the slowest 10% out keeps a preemption or a timer interrupt from weighing on it. Sorts @p t. */
static double oh_block_figure(double *t, int n)
{
  bench_median(t, n); /* sorts */
  int keep = n - n / 10;
  return bench_mean(t, keep > 0 ? keep : n);
}

/* Every round of one size. @return 0, or 1 on a failure (reported). */
static int oh_size(struct oh_ctx *c, size_t size)
{
  int n = (int)size, iters = bench_iters_for_size(&c->opts, size), warmup = bench_warmup_for_size(&c->opts, size);
  double *ratio = malloc(sizeof(double) * (size_t)c->blocks);
  if (!ratio)
    return oh_fail("malloc", 0);
  for (int b = 0; b < c->blocks; b++) {
    for (int k = 0; k < 2; k++) {
      int mpi_turn = (b + k) % 2 == 0; /* MPI first on even rounds */
      int rc = mpi_turn ? oh_mpi_block(c, n, warmup, iters) : oh_native_block(c, n, warmup, iters);
      if (rc) {
        free(ratio);
        return 1;
      }
      if (c->rank == 0)
        (mpi_turn ? c->mpi_us : c->nat_us)[b] = oh_block_figure(c->t_us, iters);
    }
    if (c->rank == 0)
      ratio[b] = c->mpi_us[b] / c->nat_us[b];
  }
  if (c->rank == 0) {
    double r_med = bench_median(ratio, c->blocks), r_min = bench_min(ratio, c->blocks), r_max = r_min;
    for (int b = 0; b < c->blocks; b++)
      r_max = ratio[b] > r_max ? ratio[b] : r_max;
    double mpi_med = bench_median(c->mpi_us, c->blocks), nat_med = bench_median(c->nat_us, c->blocks);
    if (c->opts.csv)
      printf("%zu,%.3f,%.3f,%.4f,%.4f,%.4f,%d\n", size, mpi_med, nat_med, r_med, r_min, r_max, c->blocks);
    else
      printf("%10zu %10.3f %10.3f %9.3f %9.3f %9.3f %+8.1f%%\n", size, mpi_med, nat_med, r_med, r_min, r_max,
             (r_med - 1.0) * 100.0);
  }
  free(ratio);
  return 0;
}

/* Take "--blocks N" out of argv (the other options are bench_parse_opts()'s). @return -1 on a bad value. */
static int oh_take_blocks(int *argc, char **argv, int *blocks)
{
  int j = 1;
  for (int i = 1; i < *argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--blocks") && i + 1 < *argc)
      v = argv[++i];
    else if (!strncmp(argv[i], "--blocks=", 9))
      v = argv[i] + 9;
    else {
      argv[j++] = argv[i];
      continue;
    }
    char *end;
    long b = strtol(v, &end, 10);
    if (*end || b < 1 || b > 100000)
      return -1;
    *blocks = (int)b;
  }
  *argc = j;
  argv[j] = NULL;
  return 0;
}

int main(int argc, char **argv)
{
  struct oh_ctx c = {.blocks = 20,
                     .opts = {.min_size = 8, .max_size = 8, .iters = 2000, .warmup = 200, .window = 1}};
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int prc = oh_take_blocks(&argc, argv, &c.blocks);
  if (prc < 0) {
    if (c.rank == 0)
      fprintf(stderr, "nm_bench_mpi_overhead: --blocks takes an integer in [1, 100000]\n");
  } else {
    prc = bench_parse_opts(argc, argv, &c.opts,
                           "MPI shim latency over native nmad, alternated blocks in one job (also --blocks N)");
  }
  if (prc != 0 || size < 2) {
    if (prc == 0 && c.rank == 0)
      fprintf(stderr, "nm_bench_mpi_overhead: needs 2 processes: mpirun -n 2 %s\n", argv[0]);
    MPI_Finalize();
    return prc > 0 ? 0 : 2;
  }
  void *session = NULL, *gate = NULL;
  int rc = c.rank < 2 ? MPIX_Comm_get_nmad(MPI_COMM_WORLD, 1 - c.rank, &session, &gate) : MPI_SUCCESS;
  c.session = session;
  c.peer_gate = gate;
  c.sbuf = bench_alloc(c.opts.max_size);
  c.rbuf[0] = bench_alloc(c.opts.max_size);
  c.rbuf[1] = bench_alloc(c.opts.max_size);
  c.t_us = malloc(sizeof(double) * (size_t)(c.opts.iters > 0 ? c.opts.iters : 1));
  c.mpi_us = malloc(sizeof(double) * (size_t)c.blocks);
  c.nat_us = malloc(sizeof(double) * (size_t)c.blocks);
  if (rc != MPI_SUCCESS || !c.sbuf || !c.rbuf[0] || !c.rbuf[1] || !c.t_us || !c.mpi_us || !c.nat_us) {
    fprintf(stderr, "nm_bench_mpi_overhead: set-up failed (MPIX_Comm_get_nmad %d or out of memory)\n", rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(c.sbuf, 0x5a, c.opts.max_size);
  if (c.rank == 0) {
    printf("# nm_bench_mpi_overhead: ranks 0 <-> 1, %d rounds of %d iterations per contender and size, "
           "alternated\n", c.blocks, c.opts.iters);
    if (c.opts.csv)
      printf("size,mpi_us,native_us,ratio_median,ratio_min,ratio_max,rounds\n");
    else
      printf("%10s %10s %10s %9s %9s %9s %9s\n", "size(B)", "mpi(us)", "native(us)", "ratio", "min", "max",
             "overhead");
  }
  int bad = 0;
  for (size_t s = bench_first_size(&c.opts); s != SIZE_MAX && !bad; s = bench_next_size(&c.opts, s)) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (c.rank < 2)
      bad = oh_size(&c, s);
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bench_free(c.sbuf);
  bench_free(c.rbuf[0]);
  bench_free(c.rbuf[1]);
  free(c.t_us);
  free(c.mpi_us);
  free(c.nat_us);
  MPI_Finalize();
  return any ? 1 : 0;
}
