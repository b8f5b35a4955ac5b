/**
 * @file mpi_bench.c
 * @brief Plain-MPI benchmark, built both with nmad's mpicc (the MPI shim) and with another MPI (Open MPI) so
 *        that bench/mpi_bench_compare.sh can compare them: ping-pong latency and bandwidth, message rate with a
 *        window, and MPI_Bcast time.
 *
 * Usage: mpirun -n 2 mpi_bench [--bench pingpong|msgrate|bcast|allreduce] [--min SIZE] [--max SIZE] [--iters N]
 *                              [--warmup N] [--window W] [--csv] [--check]
 * (the common options are those of bench/bench_common.h; one benchmark per run).
 *
 * Methods (identical to the native nmad benchmarks, so that ratios mean something):
 *  - pingpong (bench/nm_bench_pingpong.c, bench/ompi_pingpong.c): ranks 0 and 1; rank 0 posts the receive of
 *    the reply, sends, waits for both; rank 1 has its next receive posted before it replies (from its own send
 *    buffer, see bench/README.md). Every iteration is
 *    timed on its own; one-way latency = round trip / 2. Columns: size, lat_min_us, lat_median_us, bw_MBps
 *    (size / median one-way latency, 1 MB = 1e6 B). Default sizes 8 B .. 4 MiB.
 *  - msgrate (bench/nm_bench_msgrate.c): rank 1 keeps W receives posted; rank 0 sends W messages with MPI_Isend,
 *    waits for them (MPI_Waitall), then for a zero-byte ack that rank 1 sends once all W arrived and the next
 *    window's receives are posted. Rate = W / median window time. Columns: size, window, msgs_per_s,
 *    Mmsgs_per_s, bw_MBps. Default sizes 8 B .. 4 KiB, W = 64.
 *  - bcast: MPI_Bcast from rank 0 over MPI_COMM_WORLD (every rank). Each iteration: MPI_Barrier, then the
 *    broadcast timed on every rank; the iteration's time is the slowest rank's (MPI_Reduce MAX afterwards).
 *    Columns: size, nprocs, lat_min_us, lat_median_us (min and median over iterations of that maximum).
 *    Default sizes 8 B .. 4 MiB.
 *  - allreduce: MPI_Allreduce (MPI_SUM) of size / 8 MPI_DOUBLEs over MPI_COMM_WORLD, timed as bcast (osu_allreduce
 *    measures the same way). Same columns.
 * Iterations above 256 KiB are scaled down (bench_common.h). --check fills and verifies the data.
 * Exit status: 0, 1 on an MPI error or a failed check, 2 on a bad command line.
 */
#include "bench_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_DATA 0x4d50
#define TAG_ACK 0x4d51

enum mb_kind { MB_PINGPONG, MB_MSGRATE, MB_BCAST, MB_ALLREDUCE };
static const char *const kind_name[] = {"pingpong", "msgrate", "bcast", "allreduce", NULL}; /* enum order */

struct mb_ctx {
  struct bench_opts opts;
  enum mb_kind kind;
  int rank, size;
  char *sbuf, *rbuf[2];
  char *wbuf;          /* message-rate window: slot k at wbuf + k * max_size */
  MPI_Request *wreq;
  double *t_us;        /* per-iteration times (or per-window) */
  double *t_max;       /* collectives: per-iteration maximum over ranks (rank 0) */
  int nfailed;
};

static uint64_t seed_of(size_t size, int iter)
{
  return ((uint64_t)size << 24) ^ (uint64_t)(unsigned)iter;
}

static int mb_check(int rc, const char *what, size_t size, int iter)
{
  if (rc == MPI_SUCCESS)
    return 0;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "mpi_bench: %s failed at size %zu iteration %d: %s\n", what, size, iter, msg);
  return 1;
}

/* ---------------------------------------------------------------- ping-pong */

static int pp_size(struct mb_ctx *c, size_t size, int warmup, int iters)
{
  int total = warmup + iters, peer = 1 - c->rank, n = (int)size;
  if (c->rank == 0) {
    for (int i = 0; i < total; i++) {
      MPI_Request req[2];
      MPI_Status st[2];
      if (c->opts.check)
        bench_fill(c->sbuf, size, seed_of(size, i));
      uint64_t t0 = bench_now_ns();
      if (mb_check(MPI_Irecv(c->rbuf[0], n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[1]), "MPI_Irecv", size, i) ||
          mb_check(MPI_Isend(c->sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[0]), "MPI_Isend", size, i) ||
          mb_check(MPI_Waitall(2, req, st), "MPI_Waitall", size, i))
        return 1;
      uint64_t t1 = bench_now_ns();
      if (i >= warmup)
        c->t_us[i - warmup] = (double)(t1 - t0) / 2000.0;
      if (c->opts.check) {
        int got = -1;
        MPI_Get_count(&st[1], MPI_BYTE, &got);
        long bad = bench_verify(c->rbuf[0], size, seed_of(size, i));
        if (got != n || bad >= 0) {
          fprintf(stderr, "mpi_bench: check failed at size %zu iteration %d (%d bytes, bad byte %ld)\n", size, i,
                  got, bad);
          c->nfailed++;
        }
      }
    }
  } else if (c->rank == 1) {
    MPI_Request rreq[2];
    int cur = 0;
    if (mb_check(MPI_Irecv(c->rbuf[0], n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &rreq[0]), "MPI_Irecv", size, 0))
      return 1;
    for (int i = 0; i < total; i++) {
      MPI_Request sreq;
      if (mb_check(MPI_Wait(&rreq[cur], MPI_STATUS_IGNORE), "MPI_Wait(recv)", size, i))
        return 1;
      if (i + 1 < total &&
          mb_check(MPI_Irecv(c->rbuf[cur ^ 1], n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &rreq[cur ^ 1]),
                   "MPI_Irecv", size, i + 1))
        return 1;
      if (c->opts.check) /* the pattern rank 0 sent, so that it can verify the reply */
        bench_fill(c->sbuf, size, seed_of(size, i));
      /* From rank 1's own send buffer, as nm_bench_pingpong (see there why), fi_pingpong and osu_latency do. */
      if (mb_check(MPI_Isend(c->sbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &sreq), "MPI_Isend", size, i) ||
          mb_check(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "MPI_Wait(send)", size, i))
        return 1;
      cur ^= 1;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- message rate */

static int mr_size(struct mb_ctx *c, size_t size, int warmup, int iters)
{
  int total = warmup + iters, peer = 1 - c->rank, n = (int)size, w = c->opts.window;
  char ack = 0;
  if (c->rank == 1) {
    for (int k = 0; k < w; k++)
      if (mb_check(MPI_Irecv(c->wbuf + (size_t)k * c->opts.max_size, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                             &c->wreq[k]), "MPI_Irecv", size, 0))
        return 1;
    for (int i = 0; i < total; i++) {
      if (mb_check(MPI_Waitall(w, c->wreq, MPI_STATUSES_IGNORE), "MPI_Waitall(recv)", size, i))
        return 1;
      if (c->opts.check)
        for (int k = 0; k < w; k++)
          if (bench_verify(c->wbuf + (size_t)k * c->opts.max_size, size, seed_of(size, i * w + k)) >= 0) {
            fprintf(stderr, "mpi_bench: msgrate check failed at size %zu window %d slot %d\n", size, i, k);
            c->nfailed++;
          }
      if (i + 1 < total) /* the next window's receives are posted before the ack */
        for (int k = 0; k < w; k++)
          if (mb_check(MPI_Irecv(c->wbuf + (size_t)k * c->opts.max_size, n, MPI_BYTE, peer, TAG_DATA,
                                 MPI_COMM_WORLD, &c->wreq[k]), "MPI_Irecv", size, i + 1))
            return 1;
      if (mb_check(MPI_Send(&ack, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD), "MPI_Send(ack)", size, i))
        return 1;
    }
  } else if (c->rank == 0) {
    for (int i = 0; i < total; i++) {
      if (c->opts.check)
        for (int k = 0; k < w; k++)
          bench_fill(c->wbuf + (size_t)k * c->opts.max_size, size, seed_of(size, i * w + k));
      uint64_t t0 = bench_now_ns();
      for (int k = 0; k < w; k++)
        if (mb_check(MPI_Isend(c->wbuf + (size_t)(c->opts.check ? k : 0) * c->opts.max_size, n, MPI_BYTE, peer,
                               TAG_DATA, MPI_COMM_WORLD, &c->wreq[k]), "MPI_Isend", size, i))
          return 1;
      if (mb_check(MPI_Waitall(w, c->wreq, MPI_STATUSES_IGNORE), "MPI_Waitall(send)", size, i) ||
          mb_check(MPI_Recv(&ack, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv(ack)",
                   size, i))
        return 1;
      uint64_t t1 = bench_now_ns();
      if (i >= warmup)
        c->t_us[i - warmup] = (double)(t1 - t0) / 1000.0;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- collectives */

/* Allreduce --check: element j of rank r is r + (j + i) % 5, exact in double; the sum is then known. */
static void ar_fill(struct mb_ctx *c, size_t n, int i)
{
  double *x = (double *)c->sbuf;
  for (size_t j = 0; j < n; j++)
    x[j] = c->rank + (double)((j + (size_t)i) % 5);
  memset(c->rbuf[0], 0, n * sizeof(double));
}

static int ar_verify(struct mb_ctx *c, size_t n, int i)
{
  const double *y = (const double *)c->rbuf[0];
  double ranks = (double)c->size * (c->size - 1) / 2;
  for (size_t j = 0; j < n; j++)
    if (y[j] != ranks + (double)c->size * (double)((j + (size_t)i) % 5))
      return 0;
  return 1;
}

/* One timed collective per iteration, after a barrier; the iteration's time is the slowest rank's. */
static int coll_size(struct mb_ctx *c, size_t size, int warmup, int iters)
{
  int total = warmup + iters, n = (int)size;
  size_t nd = size / sizeof(double);
  for (int i = 0; i < total; i++) {
    if (c->opts.check && c->kind == MB_ALLREDUCE)
      ar_fill(c, nd, i);
    else if (c->opts.check && c->rank == 0)
      bench_fill(c->sbuf, size, seed_of(size, i));
    else if (c->opts.check)
      memset(c->sbuf, 0, size);
    if (mb_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", size, i))
      return 1;
    uint64_t t0 = bench_now_ns();
    int rc = c->kind == MB_ALLREDUCE
                 ? MPI_Allreduce(c->sbuf, c->rbuf[0], (int)nd, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
                 : MPI_Bcast(c->sbuf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (mb_check(rc, kind_name[c->kind], size, i))
      return 1;
    uint64_t t1 = bench_now_ns();
    if (i >= warmup)
      c->t_us[i - warmup] = (double)(t1 - t0) / 1000.0;
    int ok = !c->opts.check ||
             (c->kind == MB_ALLREDUCE ? ar_verify(c, nd, i) : bench_verify(c->sbuf, size, seed_of(size, i)) < 0);
    if (!ok) {
      fprintf(stderr, "mpi_bench: rank %d %s check failed at size %zu iteration %d\n", c->rank, kind_name[c->kind],
              size, i);
      c->nfailed++;
    }
  }
  return mb_check(MPI_Reduce(c->t_us, c->t_max, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce", size,
                  0);
}

/* ---------------------------------------------------------------- output */

static void print_header(const struct mb_ctx *c)
{
  if (c->opts.csv) {
    if (c->kind == MB_PINGPONG)
      printf("size,lat_min_us,lat_median_us,bw_MBps\n");
    else if (c->kind == MB_MSGRATE)
      printf("size,window,msgs_per_s,Mmsgs_per_s,bw_MBps\n");
    else
      printf("size,nprocs,lat_min_us,lat_median_us\n");
  } else {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = '\0';
    printf("# mpi_bench %s, %d ranks, %s\n", kind_name[c->kind], c->size, lib);
    printf("# iters %d, warmup %d (scaled down above %zu KiB)%s\n", c->opts.iters, c->opts.warmup,
           BENCH_SCALE_THRESHOLD / 1024, c->opts.check ? ", data checked" : "");
    if (c->kind == MB_PINGPONG)
      printf("%12s %12s %14s %12s\n", "size", "lat_min_us", "lat_median_us", "bw_MBps");
    else if (c->kind == MB_MSGRATE)
      printf("%12s %8s %14s %12s %12s\n", "size", "window", "msgs_per_s", "Mmsgs_per_s", "bw_MBps");
    else
      printf("%12s %8s %12s %14s\n", "size", "nprocs", "lat_min_us", "lat_median_us");
  }
  fflush(stdout);
}

static void print_row(struct mb_ctx *c, size_t size, int iters)
{
  if (c->kind == MB_PINGPONG) {
    double lmin = bench_min(c->t_us, iters), lmed = bench_median(c->t_us, iters);
    if (c->opts.csv)
      printf("%zu,%.3f,%.3f,%.3f\n", size, lmin, lmed, bench_mbps(size, lmed));
    else
      printf("%12zu %12.3f %14.3f %12.2f\n", size, lmin, lmed, bench_mbps(size, lmed));
  } else if (c->kind == MB_MSGRATE) {
    double med = bench_median(c->t_us, iters);
    double rate = med > 0 ? c->opts.window / (med * 1e-6) : 0.0;
    double bw = (double)size * rate / 1e6;
    if (c->opts.csv)
      printf("%zu,%d,%.1f,%.4f,%.3f\n", size, c->opts.window, rate, rate / 1e6, bw);
    else
      printf("%12zu %8d %14.1f %12.4f %12.2f\n", size, c->opts.window, rate, rate / 1e6, bw);
  } else {
    double lmin = bench_min(c->t_max, iters), lmed = bench_median(c->t_max, iters);
    if (c->opts.csv)
      printf("%zu,%d,%.3f,%.3f\n", size, c->size, lmin, lmed);
    else
      printf("%12zu %8d %12.3f %14.3f\n", size, c->size, lmin, lmed);
  }
  fflush(stdout);
}

int main(int argc, char **argv)
{
  struct mb_ctx c;
  memset(&c, 0, sizeof(c));
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int kind = MB_PINGPONG;
  int taken = bench_take_choice(&argc, argv, "--bench", kind_name, &kind);
  c.kind = (enum mb_kind)kind;
  if (taken) {
    MPI_Finalize();
    return 2;
  }
  c.opts.min_size = 8;
  c.opts.max_size = c.kind == MB_MSGRATE ? 4096 : (size_t)4 << 20;
  c.opts.iters = c.kind == MB_PINGPONG ? 1000 : 200; /* msgrate: windows, as nm_bench_msgrate */
  c.opts.warmup = c.kind == MB_PINGPONG ? 100 : 20;
  c.opts.window = 64;
  int rc = bench_parse_opts(argc, argv, &c.opts,
                            "MPI benchmark (--bench pingpong|msgrate|bcast|allreduce): latency/bandwidth, message "
                            "rate, MPI_Bcast, MPI_Allreduce");
  if (rc != 0) {
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  if ((c.kind == MB_PINGPONG || c.kind == MB_MSGRATE) && c.size < 2) {
    if (c.rank == 0)
      fprintf(stderr, "mpi_bench: %s needs 2 processes\n", kind_name[c.kind]);
    MPI_Finalize();
    return 2;
  }
  if (c.opts.max_size > (size_t)2147483647 || c.opts.window < 1) {
    if (c.rank == 0)
      fprintf(stderr, "mpi_bench: --max must fit in an int, --window must be >= 1\n");
    MPI_Finalize();
    return 2;
  }
  size_t alloc = c.opts.max_size;
  c.sbuf = bench_alloc(alloc);
  c.rbuf[0] = bench_alloc(alloc);
  c.rbuf[1] = bench_alloc(alloc);
  c.t_us = calloc((size_t)c.opts.iters, sizeof(double));
  c.t_max = calloc((size_t)c.opts.iters, sizeof(double));
  if (c.kind == MB_MSGRATE) {
    c.wbuf = bench_alloc(alloc * (size_t)c.opts.window);
    c.wreq = calloc((size_t)c.opts.window, sizeof(MPI_Request));
  }
  if (!c.sbuf || !c.rbuf[0] || !c.rbuf[1] || !c.t_us || !c.t_max || (c.kind == MB_MSGRATE && (!c.wbuf || !c.wreq))) {
    fprintf(stderr, "mpi_bench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (c.rank == 0)
    print_header(&c);
  int status = 0;
  for (size_t size = bench_first_size(&c.opts); size != SIZE_MAX && !status; size = bench_next_size(&c.opts, size)) {
    int warmup = bench_warmup_for_size(&c.opts, size), iters = bench_iters_for_size(&c.opts, size);
    if (c.kind == MB_MSGRATE) { /* windows, not messages: keep the counts of nm_bench_msgrate */
      iters = c.opts.iters;
      warmup = c.opts.warmup;
    }
    if (c.kind == MB_PINGPONG)
      status = pp_size(&c, size, warmup, iters);
    else if (c.kind == MB_MSGRATE)
      status = mr_size(&c, size, warmup, iters);
    else
      status = coll_size(&c, size, warmup, iters);
    if (!status && c.rank == 0)
      print_row(&c, size, iters);
  }
  int bad = status || c.nfailed, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bench_free(c.sbuf);
  bench_free(c.rbuf[0]);
  bench_free(c.rbuf[1]);
  bench_free(c.wbuf);
  free(c.wreq);
  free(c.t_us);
  free(c.t_max);
  MPI_Finalize();
  return any ? 1 : 0;
}
