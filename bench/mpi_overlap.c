/**
 * @file mpi_overlap.c
 * @brief Plain-MPI benchmark of communication/computation overlap for non-blocking collectives, built with nmad's
 *        mpicc and with Open MPI's (bench/mpi_overlap_compare.sh): how much of an MPI_Ibcast or MPI_Iallreduce
 *        is hidden behind computation done between its start and its MPI_Wait.
 *
 * Usage: mpirun -n N mpi_overlap [--op ibcast|iallreduce] [--min SIZE] [--max SIZE] [--iters N] [--warmup N]
 *                                [--csv] [--check]
 *
 * Method (that of the OSU micro-benchmarks' non-blocking collectives, osu_ibcast / osu_iallreduce, so that the
 * numbers read the same):
 *  - t_pure: the operation alone (start, then MPI_Wait at once);
 *  - the computation is a fixed amount of arithmetic (no MPI call, no clock read inside), calibrated on each rank
 *    beforehand to take t_pure when it runs alone; t_cpu is its time measured alone;
 *  - t_total: start, compute, MPI_Wait;
 *  - overlap = 100 * (1 - (t_total - t_cpu) / t_pure), clamped to [0, 100]: 100 when the whole operation was
 *    hidden by the computation, 0 when nothing was.
 * Each quantity is the median over iterations, each iteration after an MPI_Barrier, of the slowest rank's time
 * (MPI_Reduce MAX). The computation is work, not wall time: a progress thread that takes the processor away
 * from it makes it last longer, which lowers the overlap as it should.
 * Columns: size, nprocs, pure_us, cpu_us, total_us, overlap_pct. Sizes in bytes (iallreduce: MPI_INT sums,
 * size/4 elements). Iterations above 256 KiB are scaled down (bench_common.h).
 * Exit status: 0, 1 on an MPI error or a failed --check, 2 on a bad command line.
 */
#include "bench_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ov_op { OV_IBCAST, OV_IALLREDUCE };
static const char *const ov_op_name[] = {"ibcast", "iallreduce", NULL}; /* enum ov_op order */

struct ov_ctx {
  struct bench_opts opts;
  enum ov_op op;
  int rank, size;
  int *sbuf, *rbuf;
  double *t, *tmax;    /* per-iteration times of this rank, their maximum over ranks (rank 0) */
  double loops_per_us; /* calibrated computation speed */
  int nfailed;
};

/* The computation: @p loops rounds of dependent floating-point work the compiler cannot remove. */
static volatile double ov_sink;
static void ov_compute(uint64_t loops)
{
  double x = 1.0;
  for (uint64_t i = 0; i < loops; i++)
    x = x * 1.0000001 + 1e-9;
  ov_sink = x;
}

/* Loops per microsecond on this rank, alone: the fastest of a few 20 ms runs (least disturbed). */
static double ov_calibrate(void)
{
  double best = 0;
  for (int k = 0; k < 5; k++) {
    uint64_t loops = 2000000, t0 = bench_now_ns();
    ov_compute(loops);
    double us = (double)(bench_now_ns() - t0) / 1000.0;
    if (us > 0 && loops / us > best)
      best = loops / us;
  }
  return best > 0 ? best : 1000.0;
}

static int ov_start(struct ov_ctx *c, size_t size, MPI_Request *req)
{
  int n = (int)(size / sizeof(int));
  if (c->op == OV_IBCAST)
    return MPI_Ibcast(c->sbuf, n, MPI_INT, 0, MPI_COMM_WORLD, req);
  return MPI_Iallreduce(c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
}

static void ov_fill(struct ov_ctx *c, size_t size, int iter)
{
  int n = (int)(size / sizeof(int));
  for (int i = 0; i < n; i++) {
    c->sbuf[i] = c->op == OV_IBCAST ? (c->rank == 0 ? iter + i : -1) : c->rank + iter + i;
    c->rbuf[i] = -1;
  }
}

static void ov_verify(struct ov_ctx *c, size_t size, int iter)
{
  int n = (int)(size / sizeof(int));
  long long ranks = (long long)c->size * (c->size - 1) / 2;
  for (int i = 0; i < n; i++) {
    long long want = c->op == OV_IBCAST ? iter + i : ranks + (long long)c->size * (iter + i);
    long long got = c->op == OV_IBCAST ? c->sbuf[i] : c->rbuf[i];
    if (got != want) {
      fprintf(stderr, "mpi_overlap: rank %d: check failed at size %zu iteration %d element %d: %lld, expected %lld\n",
              c->rank, size, iter, i, got, want);
      c->nfailed++;
      return;
    }
  }
}

/* One phase: @p with_op starts the operation, @p loops of computation follow, then the wait. @return the median
 * over iterations of the slowest rank's time in us (rank 0; others get 0), or -1 on an MPI error. */
static double ov_phase(struct ov_ctx *c, size_t size, int warmup, int iters, int with_op, uint64_t loops)
{
  int err = 0;
  for (int i = 0; i < warmup + iters && !err; i++) {
    if (c->opts.check && with_op)
      ov_fill(c, size, i);
    err = MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request req = MPI_REQUEST_NULL;
    uint64_t t0 = bench_now_ns();
    if (!err && with_op)
      err = ov_start(c, size, &req);
    ov_compute(loops);
    if (!err && with_op)
      err = MPI_Wait(&req, MPI_STATUS_IGNORE);
    uint64_t t1 = bench_now_ns();
    if (i >= warmup)
      c->t[i - warmup] = (double)(t1 - t0) / 1000.0;
    if (!err && c->opts.check && with_op)
      ov_verify(c, size, i);
  }
  if (!err)
    err = MPI_Reduce(c->t, c->tmax, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (err) {
    fprintf(stderr, "mpi_overlap: rank %d: MPI error %d at size %zu\n", c->rank, err, size);
    return -1;
  }
  return c->rank == 0 ? bench_median(c->tmax, iters) : 0;
}

static int ov_size(struct ov_ctx *c, size_t size, int warmup, int iters)
{
  double pure = ov_phase(c, size, warmup, iters, 1, 0);
  if (pure < 0)
    return 1;
  /* every rank computes as long as the operation took on the slowest rank */
  MPI_Bcast(&pure, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  uint64_t loops = (uint64_t)(pure * c->loops_per_us);
  double cpu = ov_phase(c, size, warmup, iters, 0, loops);
  double total = ov_phase(c, size, warmup, iters, 1, loops);
  if (cpu < 0 || total < 0)
    return 1;
  if (c->rank == 0) {
    double ov = pure > 0 ? 100.0 * (1.0 - (total - cpu) / pure) : 0.0;
    ov = ov < 0 ? 0 : ov > 100 ? 100 : ov;
    if (c->opts.csv)
      printf("%zu,%d,%.3f,%.3f,%.3f,%.1f\n", size, c->size, pure, cpu, total, ov);
    else
      printf("%12zu %8d %12.3f %12.3f %12.3f %12.1f\n", size, c->size, pure, cpu, total, ov);
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct ov_ctx c;
  memset(&c, 0, sizeof(c));
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int op = OV_IBCAST;
  int taken = bench_take_choice(&argc, argv, "--op", ov_op_name, &op);
  c.op = (enum ov_op)op;
  if (taken) {
    MPI_Finalize();
    return 2;
  }
  c.opts.min_size = 8;
  c.opts.max_size = (size_t)1 << 20;
  c.opts.iters = 100;
  c.opts.warmup = 10;
  int rc = bench_parse_opts(argc, argv, &c.opts,
                            "MPI overlap benchmark (--op ibcast|iallreduce): how much of a non-blocking collective "
                            "the computation hides");
  if (rc != 0) {
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  if (c.opts.max_size > (size_t)2147483647 || c.opts.min_size < sizeof(int)) {
    if (c.rank == 0)
      fprintf(stderr, "mpi_overlap: sizes must be from 4 B to 2 GiB\n");
    MPI_Finalize();
    return 2;
  }
  c.sbuf = bench_alloc(c.opts.max_size);
  c.rbuf = bench_alloc(c.opts.max_size);
  c.t = calloc((size_t)c.opts.iters, sizeof(double));
  c.tmax = calloc((size_t)c.opts.iters, sizeof(double));
  if (!c.sbuf || !c.rbuf || !c.t || !c.tmax) {
    fprintf(stderr, "mpi_overlap: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(c.sbuf, 0, c.opts.max_size);
  c.loops_per_us = ov_calibrate();
  if (c.rank == 0) {
    if (c.opts.csv) {
      printf("size,nprocs,pure_us,cpu_us,total_us,overlap_pct\n");
    } else {
      char lib[MPI_MAX_LIBRARY_VERSION_STRING];
      int len = 0;
      MPI_Get_library_version(lib, &len);
      lib[strcspn(lib, "\n,")] = '\0';
      printf("# mpi_overlap %s, %d ranks, %s\n", ov_op_name[c.op], c.size, lib);
      printf("%12s %8s %12s %12s %12s %12s\n", "size", "nprocs", "pure_us", "cpu_us", "total_us", "overlap_pct");
    }
    fflush(stdout);
  }
  int status = 0;
  for (size_t size = bench_first_size(&c.opts); size != SIZE_MAX && !status; size = bench_next_size(&c.opts, size))
    status = ov_size(&c, size, bench_warmup_for_size(&c.opts, size), bench_iters_for_size(&c.opts, size));
  int bad = status || c.nfailed, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bench_free(c.sbuf);
  bench_free(c.rbuf);
  free(c.t);
  free(c.tmax);
  MPI_Finalize();
  return any ? 1 : 0;
}
