/**
 * @file ompi_bcast.c
 * @brief The broadcast benchmark of bench/nm_bench_mcast.c written in plain MPI with MPI_Bcast, as the Open MPI
 *        reference (mode "ompi").
 *
 * Not part of the nmad build: bench/nm_bench_mcast_compare.sh compiles it with Open MPI's wrapper,
 *   mpicc.openmpi -O2 -I bench bench/ompi_bcast.c bench/bench_common.c -o ompi_bcast
 * and runs it with
 *   mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -np 8 --mca pml ob1 --mca btl self,vader \
 *       ./ompi_bcast
 * (or --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo for TCP over loopback).
 *
 * Same options, sizes, iteration counts, warm-up, statistics and output as nm_bench_mcast: the duration of a
 * broadcast from rank 0 is timed on rank 0 from just before MPI_Bcast to the arrival of the last zero-byte
 * ack that every other rank sends as soon as its MPI_Bcast returned (Denis 2020, section 5.1: from the start
 * on the root to the last reception on the last node; acks cancel clock offsets). Rank 0 posts the ack
 * receives before the clock starts. Open MPI chooses its broadcast algorithm itself (coll/tuned decision
 * rules), as an application would get it.
 * Columns: mode (always "ompi"), nprocs, size (bytes), min_us, median_us.
 */
#include "bench_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACK_TAG 0x4d41

struct bc_ctx {
  struct bench_opts opts;
  int rank, size;
  void *buf;
  MPI_Request *acks; /* rank 0: one ack receive per rank */
  double *dur_us;
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
  fprintf(stderr, "ompi_bcast: %s failed at size %zu iteration %d: %s\n", what, size, iter, msg);
  return rc;
}

static int bc_root_size(struct bc_ctx *c, size_t size, int warmup, int iters)
{
  int total = warmup + iters;
  int i, r, rc;

  for (i = 0; i < total; i++) {
    uint64_t t0, t1;

    if (c->opts.check)
      bench_fill(c->buf, size, seed_of(size, i));
    for (r = 1; r < c->size; r++) {
      rc = MPI_Irecv(NULL, 0, MPI_BYTE, r, ACK_TAG, MPI_COMM_WORLD, &c->acks[r - 1]);
      if (rc != MPI_SUCCESS)
        return mpi_fail("MPI_Irecv(ack)", rc, size, i);
    }
    t0 = bench_now_ns();
    rc = MPI_Bcast(c->buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Bcast", rc, size, i);
    rc = MPI_Waitall(c->size - 1, c->acks, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Waitall(acks)", rc, size, i);
    t1 = bench_now_ns();
    if (i >= warmup)
      c->dur_us[i - warmup] = (double)(t1 - t0) / 1000.0;
  }
  return 0;
}

static int bc_recv_size(struct bc_ctx *c, size_t size, int total)
{
  int i, rc;

  for (i = 0; i < total; i++) {
    rc = MPI_Bcast(c->buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Bcast", rc, size, i);
    rc = MPI_Send(NULL, 0, MPI_BYTE, 0, ACK_TAG, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return mpi_fail("MPI_Send(ack)", rc, size, i);
    /* Checked after the ack, so the check is not timed by rank 0. */
    if (c->opts.check) {
      long bad = bench_verify(c->buf, size, seed_of(size, i));
      if (bad >= 0) {
        fprintf(stderr, "ompi_bcast: rank %d check failed at size %zu iteration %d, first bad byte %ld\n", c->rank,
                size, i, bad);
        c->nfailed++;
      }
    }
  }
  return 0;
}

static void print_header(const struct bc_ctx *c)
{
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  char *nl;

  if (c->opts.csv) {
    printf("mode,nprocs,size,min_us,median_us\n");
  } else {
    MPI_Get_library_version(lib, &len);
    nl = strchr(lib, '\n');
    if (nl != NULL)
      *nl = '\0';
    nl = strchr(lib, ',');
    if (nl != NULL)
      *nl = '\0';
    printf("# ompi_bcast: MPI_Bcast root 0 -> %d receivers, %s\n", c->size - 1, lib);
    printf("# duration = root's start to the last receiver's zero-byte ack (us); min and median over iterations\n");
    printf("# iters %d, warmup %d (scaled down above %zu KiB)%s\n", c->opts.iters, c->opts.warmup,
           BENCH_SCALE_THRESHOLD / 1024, c->opts.check ? ", data checked" : "");
    printf("%-9s %6s %10s %12s %12s\n", "mode", "nprocs", "size", "min_us", "median_us");
  }
  fflush(stdout);
}

static void print_row(const struct bc_ctx *c, size_t size, double dmin, double dmed)
{
  if (c->opts.csv)
    printf("ompi,%d,%zu,%.3f,%.3f\n", c->size, size, dmin, dmed);
  else
    printf("%-9s %6d %10zu %12.3f %12.3f\n", "ompi", c->size, size, dmin, dmed);
  fflush(stdout);
}

/* nm_bench_mcast's --mode: only "ompi" makes sense here; accepted so both take the same command line. */
static int drop_mode(int *argc, char **argv)
{
  static const char *const names[] = {"ompi", "all", NULL};
  int m = 0;
  return bench_take_choice(argc, argv, "--mode", names, &m);
}

int main(int argc, char **argv)
{
  struct bc_ctx c;
  int rc, status = 0;
  size_t size;

  memset(&c, 0, sizeof(c));
  c.opts.min_size = 8;
  c.opts.max_size = (size_t)8 << 20;
  c.opts.iters = 200;
  c.opts.warmup = 20;
  c.opts.window = 1;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  /* Errors become return codes, so a failure is reported like nmad's instead of aborting silently. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  rc = drop_mode(&argc, argv);
  if (rc == 0)
    rc = bench_parse_opts(argc, argv, &c.opts, "Open MPI reference: MPI_Bcast duration from rank 0 to all");
  if (rc != 0) {
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  if (c.size < 2) {
    if (c.rank == 0)
      fprintf(stderr, "ompi_bcast: needs at least 2 processes (got %d)\n", c.size);
    MPI_Finalize();
    return 1;
  }
  if (c.opts.max_size > (size_t)2147483647) {
    if (c.rank == 0)
      fprintf(stderr, "ompi_bcast: --max must fit in an int count\n");
    MPI_Finalize();
    return 2;
  }

  c.buf = bench_alloc(c.opts.max_size);
  c.acks = calloc((size_t)c.size, sizeof(*c.acks));
  c.dur_us = calloc((size_t)c.opts.iters, sizeof(double));
  if (c.buf == NULL || c.acks == NULL || c.dur_us == NULL) {
    fprintf(stderr, "ompi_bcast: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (c.rank == 0)
    print_header(&c);
  for (size = bench_first_size(&c.opts); size != SIZE_MAX; size = bench_next_size(&c.opts, size)) {
    int warmup = bench_warmup_for_size(&c.opts, size);
    int iters = bench_iters_for_size(&c.opts, size);

    if (c.rank == 0) {
      rc = bc_root_size(&c, size, warmup, iters);
      if (rc == 0)
        print_row(&c, size, bench_min(c.dur_us, iters), bench_median(c.dur_us, iters));
    } else {
      rc = bc_recv_size(&c, size, warmup + iters);
    }
    if (rc != 0)
      MPI_Abort(MPI_COMM_WORLD, 1); /* the others would wait forever otherwise */
  }
  if (c.nfailed != 0) {
    fprintf(stderr, "ompi_bcast: rank %d: %d data check failures\n", c.rank, c.nfailed);
    status = 1;
  }
  MPI_Finalize();
  bench_free(c.buf);
  free(c.acks);
  free(c.dur_us);
  return status;
}
