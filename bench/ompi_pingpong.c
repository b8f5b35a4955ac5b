/**
 * @file ompi_pingpong.c
 * @brief The nmad ping-pong (bench/nm_bench_pingpong.c) written in plain MPI, as the Open MPI reference.
 *
 * Not part of the nmad build: bench/nm_bench_compare.sh compiles it with Open MPI's wrapper,
 *   mpicc.openmpi -O2 -I bench bench/ompi_pingpong.c bench/bench_common.c -o ompi_pingpong
 * and runs it with
 *   mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,vader ./ompi_pingpong
 * (or --mca btl self,tcp --mca btl_tcp_if_include lo for TCP over loopback).
 *
 * Same options, sizes, iteration counts, warm-up, statistics and output as nm_bench_pingpong (osu_latency style,
 * but every iteration timed on its own so min and median can be reported): rank 0 posts the receive of the
 * reply, sends, waits for both; rank 1 has the next receive posted before it replies (from its own send buffer,
 * see bench/README.md).
 * Columns: size, lat_min_us, lat_median_us (one-way = round trip / 2), bw_MBps (size / median, 1 MB = 1e6 B).
 */
#include "bench_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_TAG 0x5050

struct pp_ctx {
  struct bench_opts opts;
  int rank, peer;
  void *sbuf;
  void *rbuf[2];
  double *lat_us;
  int nfailed;
};

static uint64_t seed_of(size_t size, int iter)
{
  return ((uint64_t)size << 24) ^ (uint64_t)(unsigned)iter;
}

static int mpi_fail(const char *what, int rc, size_t size, int iter)
{
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;

  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "ompi_pingpong: %s failed at size %zu iteration %d: %s\n", what, size, iter, msg);
  return rc;
}

static int pp_rank0_size(struct pp_ctx *c, size_t size, int warmup, int iters)
{
  int total = warmup + iters + 1; /* the last round trip closes the last timed one */
  int i, rc;
  uint64_t t0 = 0, check_ns = 0; /* --check's fill and verification: not part of the round trip */

  for (i = 0; i < total; i++) {
    MPI_Request req[2];
    MPI_Status st[2];
    uint64_t t1;

    if (c->opts.check) {
      uint64_t f0 = bench_now_ns();
      bench_fill(c->sbuf, size, seed_of(size, i));
      memset(c->rbuf[0], 0, size);
      check_ns += bench_now_ns() - f0;
    }
    rc = MPI_Irecv(c->rbuf[0], (int)size, MPI_BYTE, c->peer, PP_TAG, MPI_COMM_WORLD, &req[1]);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Irecv", rc, size, i);
    rc = MPI_Isend(c->sbuf, (int)size, MPI_BYTE, c->peer, PP_TAG, MPI_COMM_WORLD, &req[0]);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Isend", rc, size, i);
    t1 = bench_now_ns(); /* one clock read per round trip, while the message travels, as in nm_bench_pingpong.c */
    if (i > warmup)
      c->lat_us[i - 1 - warmup] = (double)(t1 - t0 - check_ns) / 2000.0;
    t0 = t1;
    check_ns = 0;
    rc = MPI_Waitall(2, req, st);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Waitall", rc, size, i);
    if (c->opts.check) {
      uint64_t v0 = bench_now_ns();
      int got = 0;
      long bad;
      MPI_Get_count(&st[1], MPI_BYTE, &got);
      bad = bench_verify(c->rbuf[0], size, seed_of(size, i));
      if ((size_t)got != size || bad >= 0) {
        fprintf(stderr, "ompi_pingpong: check failed at size %zu iteration %d: got %d bytes, first bad byte %ld\n",
                size, i, got, bad);
        c->nfailed++;
      }
      check_ns += bench_now_ns() - v0;
    }
  }
  return 0;
}

static int pp_rank1_size(struct pp_ctx *c, size_t size, int warmup, int iters)
{
  MPI_Request rreq[2];
  int total = warmup + iters + 1; /* as rank 0's */
  int cur = 0;
  int i, rc;

  rc = MPI_Irecv(c->rbuf[0], (int)size, MPI_BYTE, c->peer, PP_TAG, MPI_COMM_WORLD, &rreq[0]);
  if (rc != MPI_SUCCESS)
    return mpi_fail("MPI_Irecv", rc, size, 0);
  for (i = 0; i < total; i++) {
    MPI_Request sreq;

    rc = MPI_Wait(&rreq[cur], MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Wait(recv)", rc, size, i);
    if (i + 1 < total) {
      rc = MPI_Irecv(c->rbuf[cur ^ 1], (int)size, MPI_BYTE, c->peer, PP_TAG, MPI_COMM_WORLD, &rreq[cur ^ 1]);
      if (rc != MPI_SUCCESS)
        return mpi_fail("MPI_Irecv", rc, size, i + 1);
    }
    if (c->opts.check) /* the pattern rank 0 sent, so that it can verify the reply */
      bench_fill(c->sbuf, size, seed_of(size, i));
    /* From rank 1's own send buffer, as nm_bench_pingpong (see there why), fi_pingpong and osu_latency do. */
    rc = MPI_Isend(c->sbuf, (int)size, MPI_BYTE, c->peer, PP_TAG, MPI_COMM_WORLD, &sreq);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Isend", rc, size, i);
    rc = MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Wait(send)", rc, size, i);
    /* Checked after the echo so the check is not on the timed round trip of rank 0. */
    if (c->opts.check) {
      long bad = bench_verify(c->rbuf[cur], size, seed_of(size, i));
      if (bad >= 0) {
        fprintf(stderr, "ompi_pingpong: rank 1 check failed at size %zu iteration %d, first bad byte %ld\n", size,
                i, bad);
        c->nfailed++;
      }
    }
    cur ^= 1;
  }
  return 0;
}

static void print_header(const struct pp_ctx *c)
{
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  char *nl;

  if (c->opts.csv) {
    printf("size,lat_min_us,lat_median_us,bw_MBps\n");
  } else {
    MPI_Get_library_version(lib, &len);
    nl = strchr(lib, '\n');
    if (nl != NULL)
      *nl = '\0';
    nl = strchr(lib, ',');
    if (nl != NULL)
      *nl = '\0';
    printf("# ompi_pingpong: ranks 0 <-> 1, %s\n", lib);
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

int main(int argc, char **argv)
{
  struct pp_ctx c;
  int nprocs = 0, rc, status = 0;
  size_t size;

  memset(&c, 0, sizeof(c));
  c.opts.min_size = 0;
  c.opts.max_size = (size_t)64 << 20;
  c.opts.iters = 1000;
  c.opts.warmup = 100;
  c.opts.window = 64;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  /* Errors become return codes, so a failure is reported like nmad's instead of aborting silently. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  rc = bench_parse_opts(argc, argv, &c.opts, "Open MPI reference ping-pong between ranks 0 and 1");
  if (rc != 0) {
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  if (nprocs < 2) {
    if (c.rank == 0)
      fprintf(stderr, "ompi_pingpong: needs 2 processes (got %d)\n", nprocs);
    MPI_Finalize();
    return 1;
  }
  if (c.opts.max_size > (size_t)2147483647) {
    if (c.rank == 0)
      fprintf(stderr, "ompi_pingpong: --max must fit in an int count\n");
    MPI_Finalize();
    return 2;
  }

  if (c.rank <= 1) {
    c.peer = 1 - c.rank;
    c.rbuf[0] = bench_alloc(c.opts.max_size);
    c.sbuf = bench_alloc(c.opts.max_size);
    if (c.rank == 1)
      c.rbuf[1] = bench_alloc(c.opts.max_size);
    c.lat_us = calloc((size_t)c.opts.iters, sizeof(double));
    if (c.rbuf[0] == NULL || c.sbuf == NULL || (c.rank == 1 && c.rbuf[1] == NULL) || c.lat_us == NULL) {
      fprintf(stderr, "ompi_pingpong: out of memory\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (c.rank == 0)
      print_header(&c);
    for (size = bench_first_size(&c.opts); size != SIZE_MAX; size = bench_next_size(&c.opts, size)) {
      int warmup = bench_warmup_for_size(&c.opts, size);
      int iters = bench_iters_for_size(&c.opts, size);

      if (c.rank == 0) {
        rc = pp_rank0_size(&c, size, warmup, iters);
        if (rc == 0)
          print_row(&c, size, bench_min(c.lat_us, iters), bench_median(c.lat_us, iters));
      } else {
        rc = pp_rank1_size(&c, size, warmup, iters);
      }
      if (rc != 0)
        MPI_Abort(MPI_COMM_WORLD, 1); /* the peer would wait forever otherwise */
    }
    if (c.nfailed != 0) {
      fprintf(stderr, "ompi_pingpong: rank %d: %d data check failures\n", c.rank, c.nfailed);
      status = 1;
    }
  }
  MPI_Finalize();
  bench_free(c.sbuf);
  bench_free(c.rbuf[0]);
  bench_free(c.rbuf[1]);
  free(c.lat_us);
  return status;
}
