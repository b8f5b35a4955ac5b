/**
 * @file mpi_coll_bench.c
 * @brief One plain-MPI program for the collectives of issue 18 (deliverable 4), built unchanged with nmad's mpicc
 *        and with Open MPI's, so that bench/mpi_coll_compare.sh compares the two libraries on the same source.
 *
 * Usage: mpirun -n N mpi_coll_bench --coll bcast|reduce|allreduce|allgather|alltoall|gather|scatter|barrier
 *                                   [--sizes LIST | --min SIZE --max SIZE] [--iters N] [--warmup N] [--csv] [--check]
 * (the common options are those of bench/bench_common.h).
 *
 * Method (OSU micro-benchmarks style): for each size, --warmup untimed then --iters timed iterations; each iteration
 * is MPI_Barrier, then the collective timed on every rank. The iteration's time is the slowest rank's (MPI_Reduce
 * MAX over ranks after the size); the row gives the median and the minimum over iterations of that maximum.
 * The root is **fixed at rank 0** (bcast, reduce, gather, scatter), as in osu_bcast/osu_reduce/osu_gather.
 * What SIZE means, per collective (OSU's convention):
 *  - bcast: SIZE bytes (MPI_BYTE) from the root;
 *  - reduce, allreduce: SIZE / 8 MPI_DOUBLEs (at least one) combined with MPI_SUM;
 *  - allgather, gather: every rank contributes SIZE bytes (the result holds N * SIZE);
 *  - alltoall: SIZE bytes from every rank to every rank (N * SIZE sent and received per rank);
 *  - scatter: the root sends SIZE bytes to every rank;
 *  - barrier: no data; one row, size 0.
 * Iterations above 256 KiB are scaled down (bench_common.h). --check fills the buffers with a per-(rank, block,
 * iteration) pattern and verifies every received byte (reductions: exact sums in double), so that a library that
 * skips work is caught; the timing runs without it.
 * CSV columns: coll,nprocs,size,lat_median_us,lat_min_us,iters.
 * Exit status: 0, 1 on an MPI error or a failed check, 2 on a bad command line.
 */
#include "bench_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cb_kind { CB_BCAST, CB_REDUCE, CB_ALLREDUCE, CB_ALLGATHER, CB_ALLTOALL, CB_GATHER, CB_SCATTER, CB_BARRIER };
static const char *const coll_name[] = {"bcast",    "reduce", "allreduce", "allgather", "alltoall",
                                        "gather",   "scatter", "barrier", NULL}; /* enum order */

struct cb_ctx {
  struct bench_opts opts;
  enum cb_kind kind;
  int rank, size;
  char *sbuf, *rbuf; /* max_size * nprocs bytes each (alltoall, allgather, gather, scatter) */
  double *t_us;      /* this rank's per-iteration times */
  double *t_max;     /* per-iteration maximum over ranks (rank 0) */
  int nfailed;
};

/* Seed of the block that @p from sends to @p to at iteration @p it (to = -1: the same block for every rank). */
static uint64_t seed_of(size_t size, int it, int from, int to)
{
  return ((uint64_t)size << 40) ^ ((uint64_t)(unsigned)it << 20) ^ ((uint64_t)(unsigned)(from + 1) << 10) ^
         (uint64_t)(unsigned)(to + 1);
}

/* Reductions --check: element j of rank r is r + (j + it) % 5, exact in double, so the sum is known. */
static void red_fill(struct cb_ctx *c, size_t n, int it)
{
  double *x = (double *)c->sbuf;
  for (size_t j = 0; j < n; j++)
    x[j] = c->rank + (double)((j + (size_t)it) % 5);
  memset(c->rbuf, 0, n * sizeof(double));
}

static int red_ok(const struct cb_ctx *c, size_t n, int it)
{
  const double *y = (const double *)c->rbuf;
  double ranks = (double)c->size * (c->size - 1) / 2;
  for (size_t j = 0; j < n; j++)
    if (y[j] != ranks + (double)c->size * (double)((j + (size_t)it) % 5))
      return 0;
  return 1;
}

/* Fill what this rank sends at iteration @p it, and clear what it receives. */
static void fill(struct cb_ctx *c, size_t size, size_t nd, int it)
{
  int p = c->size, r = c->rank;
  switch (c->kind) {
  case CB_BCAST:
    if (r == 0)
      bench_fill(c->sbuf, size, seed_of(size, it, 0, -1));
    else
      memset(c->sbuf, 0, size);
    break;
  case CB_REDUCE:
  case CB_ALLREDUCE:
    red_fill(c, nd, it);
    break;
  case CB_ALLGATHER:
  case CB_GATHER:
    bench_fill(c->sbuf, size, seed_of(size, it, r, -1));
    memset(c->rbuf, 0, size * (size_t)p);
    break;
  case CB_ALLTOALL:
    for (int j = 0; j < p; j++)
      bench_fill(c->sbuf + (size_t)j * size, size, seed_of(size, it, r, j));
    memset(c->rbuf, 0, size * (size_t)p);
    break;
  case CB_SCATTER:
    if (r == 0)
      for (int j = 0; j < p; j++)
        bench_fill(c->sbuf + (size_t)j * size, size, seed_of(size, it, 0, j));
    memset(c->rbuf, 0, size);
    break;
  case CB_BARRIER:
    break;
  }
}

/* Verify what this rank received at iteration @p it. @return 1 if right. */
static int verify(const struct cb_ctx *c, size_t size, size_t nd, int it)
{
  int p = c->size, r = c->rank;
  switch (c->kind) {
  case CB_BCAST:
    return bench_verify(c->sbuf, size, seed_of(size, it, 0, -1)) < 0;
  case CB_REDUCE:
    return r != 0 || red_ok(c, nd, it);
  case CB_ALLREDUCE:
    return red_ok(c, nd, it);
  case CB_GATHER: /* only the root receives */
  case CB_ALLGATHER:
    for (int j = 0; j < p && (r == 0 || c->kind == CB_ALLGATHER); j++)
      if (bench_verify(c->rbuf + (size_t)j * size, size, seed_of(size, it, j, -1)) >= 0)
        return 0;
    return 1;
  case CB_ALLTOALL:
    for (int j = 0; j < p; j++)
      if (bench_verify(c->rbuf + (size_t)j * size, size, seed_of(size, it, j, r)) >= 0)
        return 0;
    return 1;
  case CB_SCATTER:
    return bench_verify(c->rbuf, size, seed_of(size, it, 0, r)) < 0;
  case CB_BARRIER:
    return 1;
  }
  return 0;
}

/* The collective itself, once. */
static int run_once(struct cb_ctx *c, size_t size, size_t nd)
{
  int n = (int)size;
  MPI_Comm w = MPI_COMM_WORLD;
  switch (c->kind) {
  case CB_BCAST:
    return MPI_Bcast(c->sbuf, n, MPI_BYTE, 0, w);
  case CB_REDUCE:
    return MPI_Reduce(c->sbuf, c->rbuf, (int)nd, MPI_DOUBLE, MPI_SUM, 0, w);
  case CB_ALLREDUCE:
    return MPI_Allreduce(c->sbuf, c->rbuf, (int)nd, MPI_DOUBLE, MPI_SUM, w);
  case CB_ALLGATHER:
    return MPI_Allgather(c->sbuf, n, MPI_BYTE, c->rbuf, n, MPI_BYTE, w);
  case CB_ALLTOALL:
    return MPI_Alltoall(c->sbuf, n, MPI_BYTE, c->rbuf, n, MPI_BYTE, w);
  case CB_GATHER:
    return MPI_Gather(c->sbuf, n, MPI_BYTE, c->rbuf, n, MPI_BYTE, 0, w);
  case CB_SCATTER:
    return MPI_Scatter(c->sbuf, n, MPI_BYTE, c->rbuf, n, MPI_BYTE, 0, w);
  case CB_BARRIER:
    return MPI_Barrier(w);
  }
  return MPI_ERR_ARG;
}

static int cb_check(int rc, const char *what, size_t size, int it)
{
  if (rc == MPI_SUCCESS)
    return 0;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "mpi_coll_bench: %s failed at size %zu iteration %d: %s\n", what, size, it, msg);
  return 1;
}

static int one_size(struct cb_ctx *c, size_t size, int warmup, int iters)
{
  size_t nd = size / sizeof(double) > 0 ? size / sizeof(double) : 1;
  for (int i = 0; i < warmup + iters; i++) {
    if (c->opts.check)
      fill(c, size, nd, i);
    if (cb_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", size, i))
      return 1;
    uint64_t t0 = bench_now_ns();
    if (cb_check(run_once(c, size, nd), coll_name[c->kind], size, i))
      return 1;
    uint64_t t1 = bench_now_ns();
    if (i >= warmup)
      c->t_us[i - warmup] = (double)(t1 - t0) / 1000.0;
    if (c->opts.check && !verify(c, size, nd, i)) {
      fprintf(stderr, "mpi_coll_bench: rank %d %s check failed at size %zu iteration %d\n", c->rank,
              coll_name[c->kind], size, i);
      c->nfailed++;
    }
  }
  return cb_check(MPI_Reduce(c->t_us, c->t_max, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce", size,
                  0);
}

static void print_header(const struct cb_ctx *c)
{
  if (c->opts.csv) {
    printf("coll,nprocs,size,lat_median_us,lat_min_us,iters\n");
  } else {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = '\0';
    printf("# mpi_coll_bench %s, %d ranks, root 0, %s\n", coll_name[c->kind], c->size, lib);
    printf("# iters %d, warmup %d (scaled down above %zu KiB)%s; time = slowest rank's, per iteration\n",
           c->opts.iters, c->opts.warmup, BENCH_SCALE_THRESHOLD / 1024, c->opts.check ? ", data checked" : "");
    printf("%10s %8s %12s %14s %12s %6s\n", "coll", "nprocs", "size", "lat_median_us", "lat_min_us", "iters");
  }
  fflush(stdout);
}

static void print_row(struct cb_ctx *c, size_t size, int iters)
{
  double lmin = bench_min(c->t_max, iters), lmed = bench_median(c->t_max, iters);
  if (c->opts.csv)
    printf("%s,%d,%zu,%.3f,%.3f,%d\n", coll_name[c->kind], c->size, size, lmed, lmin, iters);
  else
    printf("%10s %8d %12zu %14.3f %12.3f %6d\n", coll_name[c->kind], c->size, size, lmed, lmin, iters);
  fflush(stdout);
}

int main(int argc, char **argv)
{
  struct cb_ctx c;
  memset(&c, 0, sizeof(c));
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int kind = CB_ALLREDUCE;
  if (bench_take_choice(&argc, argv, "--coll", coll_name, &kind)) {
    MPI_Finalize();
    return 2;
  }
  c.kind = (enum cb_kind)kind;
  c.opts.min_size = 8;
  c.opts.max_size = (size_t)4 << 20;
  c.opts.iters = 100;
  c.opts.warmup = 10;
  c.opts.window = 1;
  int rc = bench_parse_opts(argc, argv, &c.opts,
                            "MPI collectives (--coll bcast|reduce|allreduce|allgather|alltoall|gather|scatter|"
                            "barrier): median of the slowest rank's time per iteration, root 0");
  if (rc != 0) {
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  size_t largest = c.opts.n_sizes > 0 ? c.opts.sizes[c.opts.n_sizes - 1] : c.opts.max_size;
  if (largest > (size_t)2147483647 / (size_t)c.size) {
    if (c.rank == 0)
      fprintf(stderr, "mpi_coll_bench: the largest size times the ranks must fit in an int\n");
    MPI_Finalize();
    return 2;
  }
  size_t alloc = largest * (size_t)c.size;
  c.sbuf = bench_alloc(alloc);
  c.rbuf = bench_alloc(alloc);
  c.t_us = calloc((size_t)c.opts.iters, sizeof(double));
  c.t_max = calloc((size_t)c.opts.iters, sizeof(double));
  if (!c.sbuf || !c.rbuf || !c.t_us || !c.t_max) {
    fprintf(stderr, "mpi_coll_bench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (c.rank == 0)
    print_header(&c);
  int status = 0;
  if (c.kind == CB_BARRIER) { /* no data: one row */
    status = one_size(&c, 0, c.opts.warmup, c.opts.iters);
    if (!status && c.rank == 0)
      print_row(&c, 0, c.opts.iters);
  } else {
    for (size_t size = bench_first_size(&c.opts); size != SIZE_MAX && !status;
         size = bench_next_size(&c.opts, size)) {
      int warmup = bench_warmup_for_size(&c.opts, size), iters = bench_iters_for_size(&c.opts, size);
      status = one_size(&c, size, warmup, iters);
      if (!status && c.rank == 0)
        print_row(&c, size, iters);
    }
  }
  int bad = c.nfailed, allbad = 0;
  MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (allbad && c.rank == 0)
    fprintf(stderr, "mpi_coll_bench: %d failed checks\n", allbad);
  bench_free(c.sbuf);
  bench_free(c.rbuf);
  free(c.t_us);
  free(c.t_max);
  MPI_Finalize();
  return status || allbad ? 1 : 0;
}
