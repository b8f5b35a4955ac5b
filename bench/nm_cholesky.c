/**
 * @file nm_cholesky.c
 * @brief The communication pattern of a tiled Cholesky factorization, with dynamic broadcasts or with loops of
 *        point-to-point sends (Denis 2020, "Dynamic broadcasts in StarPU/NewMadeleine", section 5.2,
 *        Algorithm 1; the execution model is the distributed sequential task flow of section 4.1 and the
 *        broadcast detection of section 3.1).
 *
 * Run: `NMAD_DRIVER=shm NMAD_STRATEGY=prio nmad-run -n 4 ./nm_cholesky --tiles 12 --tile-size 128 --grid 2x2
 *       --mode both [--kernels blas|loop] [--check]`.
 *
 * The matrix is T x T tiles of B x B doubles (column-major tiles), lower triangle only, distributed 2-D
 * block-cyclically on a P x Q grid: tile A[m][n] belongs to rank (m mod P) * Q + (n mod Q).
 * Every rank walks the same sequential task flow (the k, m, n loops of Algorithm 1: POTRF, TRSM, SYRK, GEMM) and
 * infers on its own, as distributed StarPU does (section 4.1):
 *  - which tasks it executes: the owner of the tile a task writes runs it;
 *  - which tiles it receives: a tile version read by one of its tasks but owned elsewhere; one receive per
 *    (tile, version), however many local tasks read it (StarPU's data cache, section 3.1);
 *  - which tiles it sends: a tile version it produces that tasks on other ranks read. All the readers of one
 *    version are grouped into one destination set, exactly the detection of section 3.1 (here the whole flow is
 *    submitted before execution starts, so every broadcast is detected with its full recipient list).
 * Each destination gets the priority of the most urgent task reading the tile there (StarPU's cholesky example
 * priorities: POTRF 2T-2k, TRSM 2T-2k-m, SYRK/GEMM 2T-2k-m-n, shifted to stay positive), so tiles on the
 * critical path (the panel) leave first with NMAD_STRATEGY=prio.
 * Sending one tile version to its destination set:
 *  - `p2p`: a loop of nm_sr_isend(), one per destination, highest priority first (the "naive broadcast");
 *  - `dynamic`: one nm_mcast_isend() with the destinations and their priorities when there are two or more of
 *    them (section 3.2), a plain nm_sr_isend() for a single destination (as StarPU does).
 * Receivers always post plain nm_sr_irecv(session, owner_gate, tag): they do not know whether the tile comes by
 * a broadcast (section 3.2, "transparent receive"). The tag identifies (run, tile, version).
 *
 * Execution is a single-threaded event loop: every receive is posted before the clock starts (the submission
 * front is far ahead of execution, section 4.3), with a request monitor that marks the tile as arrived; then
 * the loop runs the most urgent ready task, posts the sends of the tile it produced, makes one progress pass,
 * and blocks in nm_core_wait() when nothing is ready. A task may start as soon as the data of a broadcast is in
 * its buffer (NM_EVENT_RECV_DATA): it only reads remote tiles, while nmad may still be forwarding them.
 *
 * Kernels: `blas` uses LAPACKE_dpotrf, cblas_dtrsm, cblas_dsyrk and cblas_dgemm (single-threaded OpenBLAS)
 * when built with HAVE_BLAS_LAPACKE; `loop` runs a compute loop doing the same number of flops, calibrated on
 * rank 0 so that a kernel of F flops lasts F / R seconds, R = --loop-gflops, else the measured single-core
 * dgemm rate (with BLAS), else the loop's own rate. With `--check` (blas only) rank 0 gathers L and compares it
 * with a sequential run of the same tiled algorithm on its own copy of the matrix, and computes the residual
 * ||A - L L^T||_F / ||A||_F.
 *
 * Output (rank 0): per mode, the time (max over ranks of the time from the start barrier to the completion of
 * every local task, send and receive; median and min over --reps), GFlop/s (N^3/3 flops, N = T B), the fraction
 * of time ranks spent idle waiting for data, the number of tile versions sent, of broadcasts (destination sets
 * of two or more), of messages (one per (tile version, destination): the same in both modes), and of messages
 * posted by the producing ranks themselves (the rest were forwarded inside the broadcast trees); with
 * `--mode both`, the ratio p2p / dynamic of the median times. `--csv` prints the same as CSV.
 * Exit status: 0, 1 on an nmad error or a failed check, 2 on a bad command line.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_mcast.h>
#include <nmad/nm_sendrecv.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_BLAS_LAPACKE
#include <cblas.h>
#include <lapacke.h>
/* OpenBLAS would start one thread per core in every rank; present only when linked with OpenBLAS. */
extern void openblas_set_num_threads(int num_threads) __attribute__((weak));
#define CHOL_HAVE_BLAS 1
#else
#define CHOL_HAVE_BLAS 0
#endif

enum chol_kind_e { K_POTRF = 0, K_TRSM = 1, K_SYRK = 2, K_GEMM = 3 };
static const char *const chol_kind_name[] = {"potrf", "trsm", "syrk", "gemm"};

enum chol_mode_e { MODE_P2P = 0, MODE_DYNAMIC = 1 };
static const char *const chol_mode_name[] = {"p2p", "dynamic"};

/* Tag layout: class (8 bits) | run (8) | version (16) | m (16) | n (16). */
#define TAG_CLASS_TILE ((nm_tag_t)0x01)
#define TAG_CLASS_STATS ((nm_tag_t)0x02)
#define TAG_CLASS_GATHER ((nm_tag_t)0x03)
#define TAG_CLASS_CALIB ((nm_tag_t)0x04)
#define CHOL_MAX_TILES 65535

struct chol_opts {
  int T, B, P, Q;
  int modes[2], nmodes;
  int blas;             /* 1: BLAS kernels, 0: compute loop */
  int check, csv, reps, prio;
  double loop_gflops;   /* target rate of the loop kernels, 0 = default */
  enum nm_mcast_tree_e tree;
};

/* One task of the flow that this rank executes. */
struct chol_task {
  uint8_t kind;
  int k, m, n;          /* writes A[m][n] at step k */
  int prio;
  int ndeps;            /* inputs (local predecessors, receives) not available yet */
  int nsucc, capsucc;
  int *succ;            /* local tasks waiting for this one */
  int group;            /* send group posted when this task completes, or -1 */
  double *out, *in1, *in2;
};

/* A remote tile version read by local tasks: one receive. */
struct chol_recv {
  struct chol_ctx *ctx;
  int owner;
  nm_tag_t tag;
  double *buf;
  int nsucc, capsucc;
  int *succ;            /* local tasks reading it */
  int arrived;          /* data in buf (RECV_DATA or RECV_COMPLETED seen) */
  int completed;        /* request completed (forwarding done for a broadcast) */
  nm_sr_request_t req;
};

/* A tile version produced here and read on other ranks: one broadcast or a loop of sends. */
struct chol_group {
  int tile;
  nm_tag_t tag;
  int ndest;
  int *dests, *prios;   /* size nranks; sorted by decreasing priority before posting */
  int posted, via_mcast, root_msgs;
  nm_mcast_req_t mreq;
  nm_sr_request_t *sreqs;
};

/* Per-tile bookkeeping while walking the flow (every rank tracks every tile). */
struct chol_tile {
  int owner;
  int version;          /* writes so far in the flow */
  int last_writer;      /* local task that produced the current version (owner only), -1 = initial data */
  int cur_group;        /* owner: send group of the current version, or -1 */
  int cur_recv;         /* reader: receive of the current version on this rank, or -1 */
};

/* Per-run statistics of one rank, reduced on rank 0 (all doubles so they travel as one message). */
enum {
  ST_TIME, ST_IDLE, ST_TASKS, ST_FLOPS, ST_GROUPS, ST_BCASTS, ST_MSGS, ST_ROOT_MSGS, ST_RECVS, ST_COUNT
};

struct chol_run {
  int ntasks, nrecv, ngroups;
  int cap_tasks, cap_recv, cap_groups;
  struct chol_task *tasks;
  struct chol_recv *recvs;
  struct chol_group *groups;
  struct chol_tile *tiles;
  int *ready;           /* binary heap of task indices (most urgent first) */
  int nready;
  int *arrived;         /* receives that got their data, filled by the monitor, drained by the loop */
  int narrived;
  int ncompleted;       /* receives completed */
};

struct chol_ctx {
  struct chol_opts o;
  nm_launcher_t launcher;
  nm_core_t core;
  nm_session_t session;
  nm_mcast_service_t mcast;
  nm_gate_t *gates;
  int rank, size;
  int ntiles;           /* T (T + 1) / 2 */
  double **owned;       /* per tile: this rank's data, or NULL */
  double loop_iters_per_flop;
  double loop_gflops_native, loop_gflops_target, dgemm_gflops;
  struct chol_run run;
  /* results on rank 0, per mode */
  double *times[2];
  double stats_sum[2][ST_COUNT], stats_max[2][ST_COUNT];
  double check_diff[2], check_resid[2];
  int check_done[2], check_ok[2];
  double *ref;          /* rank 0, --check: the sequential result, tile by tile */
};

/* ------------------------------------------------------------------------------------------------------------ */
/* Helpers                                                                                                      */

static int tile_id(int m, int n) { return m * (m + 1) / 2 + n; }

static int tile_owner(const struct chol_opts *o, int m, int n) { return (m % o->P) * o->Q + (n % o->Q); }

static size_t tile_bytes(const struct chol_opts *o) { return (size_t)o->B * (size_t)o->B * sizeof(double); }

static nm_tag_t make_tag(nm_tag_t cls, int run, int version, int m, int n)
{
  return (cls << 56) | ((nm_tag_t)(run & 0xff) << 48) | ((nm_tag_t)(version & 0xffff) << 32) |
         ((nm_tag_t)(m & 0xffff) << 16) | (nm_tag_t)(n & 0xffff);
}

static int nm_fail(const char *what, int rc)
{
  fprintf(stderr, "nm_cholesky: %s failed: %s (%d)\n", what, nm_strerror(rc), rc);
  return rc;
}

static void *xcalloc(size_t n, size_t sz)
{
  void *p = calloc(n ? n : 1, sz ? sz : 1);
  if (!p) {
    fprintf(stderr, "nm_cholesky: out of memory\n");
    exit(1);
  }
  return p;
}

static double *tile_alloc(const struct chol_opts *o)
{
  void *p = NULL;
  if (posix_memalign(&p, 64, tile_bytes(o)) != 0) {
    fprintf(stderr, "nm_cholesky: out of memory\n");
    exit(1);
  }
  memset(p, 0, tile_bytes(o));
  return p;
}

static void push_int(int **v, int *n, int *cap, int x)
{
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 4;
    int *nv = realloc(*v, (size_t)*cap * sizeof(int));
    if (!nv) {
      fprintf(stderr, "nm_cholesky: out of memory\n");
      exit(1);
    }
    *v = nv;
  }
  (*v)[(*n)++] = x;
}

static void *grow(void *v, int n, int *cap, size_t elem)
{
  if (n < *cap)
    return v;
  *cap = *cap ? 2 * *cap : 64;
  void *nv = realloc(v, (size_t)*cap * elem);
  if (!nv) {
    fprintf(stderr, "nm_cholesky: out of memory\n");
    exit(1);
  }
  memset((char *)nv + (size_t)n * elem, 0, (size_t)(*cap - n) * elem);
  return nv;
}

/* The matrix: symmetric, entries in [-0.5, 0.5) off the diagonal, N on it, hence diagonally dominant and SPD. */
static double matrix_entry(long i, long j, long N)
{
  if (i == j)
    return (double)N;
  uint64_t a = (uint64_t)(i < j ? i : j), b = (uint64_t)(i < j ? j : i);
  uint64_t z = (a << 32 | b) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

static void tile_fill(const struct chol_opts *o, double *t, int m, int n)
{
  long N = (long)o->T * o->B;
  for (int c = 0; c < o->B; c++)
    for (int r = 0; r < o->B; r++)
      t[(size_t)c * o->B + r] = matrix_entry((long)m * o->B + r, (long)n * o->B + c, N);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Kernels                                                                                                      */

static double kernel_flops(int kind, int B)
{
  double b3 = (double)B * B * B;
  switch (kind) {
  case K_POTRF: return b3 / 3.0;
  case K_TRSM: return b3;
  case K_SYRK: return b3;
  default: return 2.0 * b3;
  }
}

/* 8 independent multiply-add chains: 16 flops per iteration; bounded values, result stored so it is not elided. */
#define LOOP_FLOPS_PER_ITER 16.0
static void loop_kernel(double *out, uint64_t iters)
{
  double a0 = out[0] * 1e-9, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6,
         a7 = a0 + 7;
  const double c = 0.9999999, d = 1e-7;
  for (uint64_t i = 0; i < iters; i++) {
    a0 = a0 * c + d; a1 = a1 * c + d; a2 = a2 * c + d; a3 = a3 * c + d;
    a4 = a4 * c + d; a5 = a5 * c + d; a6 = a6 * c + d; a7 = a7 * c + d;
  }
  out[0] += (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7) * 1e-30;
}

/* Runs one task; returns 0, or the LAPACK info of a failed POTRF. */
static int run_kernel(const struct chol_ctx *c, const struct chol_task *t)
{
  int B = c->o.B;
  if (!c->o.blas) {
    double it = kernel_flops(t->kind, B) * c->loop_iters_per_flop;
    loop_kernel(t->out, (uint64_t)(it + 0.5));
    return 0;
  }
#if CHOL_HAVE_BLAS
  switch (t->kind) {
  case K_POTRF:
    return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', B, t->out, B);
  case K_TRSM: /* A[m][k] <- A[m][k] L[k][k]^-T */
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, B, B, 1.0, t->in1, B, t->out, B);
    return 0;
  case K_SYRK: /* A[n][n] <- A[n][n] - A[n][k] A[n][k]^T */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, B, B, -1.0, t->in1, B, 1.0, t->out, B);
    return 0;
  default: /* A[m][n] <- A[m][n] - A[m][k] A[n][k]^T */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, B, B, B, -1.0, t->in1, B, t->in2, B, 1.0, t->out, B);
    return 0;
  }
#else
  return 0;
#endif
}

/* Calibration measures this processor: CLOCK_MONOTONIC. The run is timed on the core's clock, which is the
 * simulated one under nmad-sim. */
static uint64_t now_ns(void) { return nm_core_time_ns(NULL); }
static uint64_t run_ns(const struct chol_ctx *c) { return nm_core_time_ns(nm_session_get_core(c->session)); }

/* Best-of-5 rate of the loop kernel, in flops per ns (GFlop/s). */
static double calibrate_loop(void)
{
  double x[8] = {0}, best = 0.0;
  uint64_t iters = 1 << 16;
  /* grow until one run lasts about 10 ms */
  for (;;) {
    uint64_t t0 = now_ns();
    loop_kernel(x, iters);
    uint64_t dt = now_ns() - t0;
    if (dt > 10000000ULL || iters > (1ULL << 40))
      break;
    iters *= 2;
  }
  for (int r = 0; r < 5; r++) {
    uint64_t t0 = now_ns();
    loop_kernel(x, iters);
    double rate = (double)iters * LOOP_FLOPS_PER_ITER / (double)(now_ns() - t0 + 1);
    if (rate > best)
      best = rate;
  }
  return best;
}

/* Best-of-5 single-core dgemm rate on B x B tiles, GFlop/s (0 without BLAS). */
static double calibrate_dgemm(int B)
{
#if CHOL_HAVE_BLAS
  double *a = malloc(sizeof(double) * (size_t)B * B), *b = malloc(sizeof(double) * (size_t)B * B),
         *cc = malloc(sizeof(double) * (size_t)B * B), best = 0.0;
  if (!a || !b || !cc) {
    free(a); free(b); free(cc);
    return 0.0;
  }
  for (long i = 0; i < (long)B * B; i++) {
    a[i] = matrix_entry(i, 7, 1000);
    b[i] = matrix_entry(i, 11, 1000);
    cc[i] = 0.0;
  }
  int reps = 1 + (int)(2e8 / (2.0 * B * B * B)); /* ~0.2 GFlop per trial */
  for (int r = 0; r < 5; r++) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < reps; i++)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, B, B, B, -1e-3, a, B, b, B, 1.0, cc, B);
    double rate = reps * 2.0 * B * B * B / (double)(now_ns() - t0 + 1);
    if (rate > best)
      best = rate;
  }
  free(a); free(b); free(cc);
  return best;
#else
  (void)B;
  return 0.0;
#endif
}

/* Rank 0 calibrates while the others sleep in the launcher barrier (a busy rank would skew the measurement on an
 * oversubscribed machine), then sends the result to everybody so every rank runs the same loops. */
static int calibrate(struct chol_ctx *c)
{
  double v[3] = {0, 0, 0};
  int rc;
  if (c->rank == 0) {
    v[0] = calibrate_loop();
    v[1] = c->o.blas || CHOL_HAVE_BLAS ? calibrate_dgemm(c->o.B) : 0.0;
    v[2] = c->o.loop_gflops > 0 ? c->o.loop_gflops : v[1] > 0 ? v[1] : v[0];
  }
  rc = nm_launcher_barrier(c->launcher);
  if (rc)
    return nm_fail("nm_launcher_barrier", rc);
  nm_tag_t tag = make_tag(TAG_CLASS_CALIB, 0, 0, 0, 0);
  if (c->rank == 0) {
    nm_sr_request_t *reqs = xcalloc((size_t)c->size, sizeof(*reqs));
    for (int r = 1; r < c->size; r++)
      if ((rc = nm_sr_isend(c->session, c->gates[r], tag, v, sizeof(v), &reqs[r])) != 0)
        return nm_fail("nm_sr_isend(calibration)", rc);
    for (int r = 1; r < c->size; r++)
      if ((rc = nm_sr_swait(c->session, &reqs[r])) != 0)
        return nm_fail("nm_sr_swait(calibration)", rc);
    free(reqs);
  } else {
    nm_sr_request_t req;
    if ((rc = nm_sr_irecv(c->session, c->gates[0], tag, v, sizeof(v), &req)) != 0 ||
        (rc = nm_sr_rwait(c->session, &req)) != 0)
      return nm_fail("receive of the calibration", rc);
  }
  c->loop_gflops_native = v[0];
  c->dgemm_gflops = v[1];
  c->loop_gflops_target = v[2];
  /* iterations per flop such that F flops last F / target ns */
  c->loop_iters_per_flop = v[0] / (v[2] * LOOP_FLOPS_PER_ITER);
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* The task flow (Algorithm 1), walked identically on every rank                                                */

/* StarPU's examples/cholesky priorities (the "unbound" variant), shifted by 2T so they stay positive. */
static int task_prio(const struct chol_opts *o, int kind, int k, int m, int n)
{
  if (!o->prio)
    return 0;
  int T = o->T;
  switch (kind) {
  case K_POTRF: return 4 * T - 2 * k;
  case K_TRSM: return 4 * T - 2 * k - m;
  default: return 4 * T - 2 * k - m - n;
  }
}

static void add_dep(struct chol_run *run, int *succ_n, int *succ_cap, int **succ, int task)
{
  push_int(succ, succ_n, succ_cap, task);
  run->tasks[task].ndeps++;
}

/* Task @p ti (executed by @p exec) reads the current version of tile (tm, tn). */
static int flow_read(struct chol_ctx *c, int run_id, int exec, int ti, int tm, int tn, double **in)
{
  struct chol_run *run = &c->run;
  struct chol_tile *tl = &run->tiles[tile_id(tm, tn)];
  int me = c->rank;

  if (tl->owner == exec) {
    if (exec == me) {
      *in = c->owned[tile_id(tm, tn)];
      if (tl->last_writer >= 0) {
        struct chol_task *w = &run->tasks[tl->last_writer];
        add_dep(run, &w->nsucc, &w->capsucc, &w->succ, ti);
      }
    }
    return 0;
  }
  if (tl->owner == me) {
    /* another rank reads a version we produce: add it to the destination set (once per rank) */
    if (tl->cur_group < 0) {
      if (tl->last_writer < 0) {
        fprintf(stderr, "nm_cholesky: the flow sends initial data; not supported by this example\n");
        return -1;
      }
      run->groups = grow(run->groups, run->ngroups, &run->cap_groups, sizeof(*run->groups));
      struct chol_group *g = &run->groups[run->ngroups];
      g->tile = tile_id(tm, tn);
      g->tag = make_tag(TAG_CLASS_TILE, run_id, tl->version, tm, tn);
      g->dests = xcalloc((size_t)c->size, sizeof(int));
      g->prios = xcalloc((size_t)c->size, sizeof(int));
      g->sreqs = xcalloc((size_t)c->size, sizeof(nm_sr_request_t));
      run->tasks[tl->last_writer].group = run->ngroups;
      tl->cur_group = run->ngroups++;
    }
    struct chol_group *g = &run->groups[tl->cur_group];
    int i;
    for (i = 0; i < g->ndest && g->dests[i] != exec; i++)
      ;
    if (i == g->ndest) {
      g->dests[g->ndest] = exec;
      g->prios[g->ndest++] = INT32_MIN; /* raised to the readers' highest priority by the caller */
    }
    return i;
  }
  if (exec == me) {
    /* we read a version produced elsewhere: one receive per version (the cache of section 3.1) */
    if (tl->cur_recv < 0) {
      run->recvs = grow(run->recvs, run->nrecv, &run->cap_recv, sizeof(*run->recvs));
      struct chol_recv *rv = &run->recvs[run->nrecv];
      rv->ctx = c;
      rv->owner = tl->owner;
      rv->tag = make_tag(TAG_CLASS_TILE, run_id, tl->version, tm, tn);
      rv->buf = tile_alloc(&c->o);
      tl->cur_recv = run->nrecv++;
    }
    struct chol_recv *rv = &run->recvs[tl->cur_recv];
    *in = rv->buf;
    add_dep(run, &rv->nsucc, &rv->capsucc, &rv->succ, ti);
  }
  return 0;
}

/* Submits one task of the flow: every rank calls it for every task, in the same order. */
static int flow_task(struct chol_ctx *c, int run_id, int kind, int k, int m, int n)
{
  struct chol_run *run = &c->run;
  const struct chol_opts *o = &c->o;
  int exec = tile_owner(o, m, n), me = c->rank;
  int prio = task_prio(o, kind, k, m, n);
  int ti = -1;
  int rm[2], rn[2], nin = 0;

  switch (kind) {
  case K_POTRF: break;
  case K_TRSM: rm[0] = k; rn[0] = k; nin = 1; break;
  case K_SYRK: rm[0] = n; rn[0] = k; nin = 1; break;
  default: rm[0] = m; rn[0] = k; rm[1] = n; rn[1] = k; nin = 2; break;
  }
  if (exec == me) {
    run->tasks = grow(run->tasks, run->ntasks, &run->cap_tasks, sizeof(*run->tasks));
    ti = run->ntasks++;
    struct chol_task *t = &run->tasks[ti];
    t->kind = (uint8_t)kind;
    t->k = k; t->m = m; t->n = n;
    t->prio = prio;
    t->group = -1;
    t->out = c->owned[tile_id(m, n)];
  }
  for (int i = 0; i < nin; i++) {
    double *in = NULL;
    int r = flow_read(c, run_id, exec, ti, rm[i], rn[i], &in);
    if (r < 0)
      return -1;
    struct chol_tile *tl = &run->tiles[tile_id(rm[i], rn[i])];
    if (tl->owner == me && exec != me) {
      struct chol_group *g = &run->groups[tl->cur_group];
      if (prio > g->prios[r])
        g->prios[r] = prio;
    }
    if (ti >= 0) {
      if (i == 0)
        run->tasks[ti].in1 = in;
      else
        run->tasks[ti].in2 = in;
    }
  }
  /* the written tile: read-write chain on its owner, then a new version everywhere */
  struct chol_tile *out = &run->tiles[tile_id(m, n)];
  if (out->cur_group >= 0) {
    fprintf(stderr, "nm_cholesky: the flow rewrites tile (%d,%d) after sending it; not supported here\n", m, n);
    return -1;
  }
  if (ti >= 0) {
    if (out->last_writer >= 0) {
      struct chol_task *w = &run->tasks[out->last_writer];
      add_dep(run, &w->nsucc, &w->capsucc, &w->succ, ti);
    }
    out->last_writer = ti;
  }
  out->version++;
  out->cur_recv = -1;
  return 0;
}

static void run_free(struct chol_run *run)
{
  for (int i = 0; i < run->ntasks; i++)
    free(run->tasks[i].succ);
  for (int i = 0; i < run->nrecv; i++) {
    free(run->recvs[i].succ);
    free(run->recvs[i].buf);
  }
  for (int i = 0; i < run->ngroups; i++) {
    free(run->groups[i].dests);
    free(run->groups[i].prios);
    free(run->groups[i].sreqs);
  }
  free(run->tasks);
  free(run->recvs);
  free(run->groups);
  free(run->tiles);
  free(run->ready);
  free(run->arrived);
  memset(run, 0, sizeof(*run));
}

/* Algorithm 1. */
static int flow_build(struct chol_ctx *c, int run_id)
{
  const struct chol_opts *o = &c->o;
  struct chol_run *run = &c->run;
  int T = o->T;

  memset(run, 0, sizeof(*run));
  run->tiles = xcalloc((size_t)c->ntiles, sizeof(*run->tiles));
  for (int m = 0; m < T; m++)
    for (int n = 0; n <= m; n++) {
      struct chol_tile *tl = &run->tiles[tile_id(m, n)];
      tl->owner = tile_owner(o, m, n);
      tl->last_writer = tl->cur_group = tl->cur_recv = -1;
    }
  for (int k = 0; k < T; k++) {
    if (flow_task(c, run_id, K_POTRF, k, k, k))
      return -1;
    for (int m = k + 1; m < T; m++)
      if (flow_task(c, run_id, K_TRSM, k, m, k))
        return -1;
    for (int n = k + 1; n < T; n++) {
      if (flow_task(c, run_id, K_SYRK, k, n, n))
        return -1;
      for (int m = n + 1; m < T; m++)
        if (flow_task(c, run_id, K_GEMM, k, m, n))
          return -1;
    }
  }
  run->ready = xcalloc((size_t)run->ntasks + 1, sizeof(int));
  run->arrived = xcalloc((size_t)run->nrecv + 1, sizeof(int));
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Execution                                                                                                    */

static int more_urgent(const struct chol_run *run, int a, int b)
{
  int pa = run->tasks[a].prio, pb = run->tasks[b].prio;
  return pa != pb ? pa > pb : a < b;
}

static void ready_push(struct chol_run *run, int t)
{
  int i = run->nready++;
  run->ready[i] = t;
  while (i > 0 && more_urgent(run, run->ready[i], run->ready[(i - 1) / 2])) {
    int p = (i - 1) / 2, x = run->ready[p];
    run->ready[p] = run->ready[i];
    run->ready[i] = x;
    i = p;
  }
}

static int ready_pop(struct chol_run *run)
{
  int top = run->ready[0], i = 0;
  run->ready[0] = run->ready[--run->nready];
  for (;;) {
    int l = 2 * i + 1, r = l + 1, b = i;
    if (l < run->nready && more_urgent(run, run->ready[l], run->ready[b]))
      b = l;
    if (r < run->nready && more_urgent(run, run->ready[r], run->ready[b]))
      b = r;
    if (b == i)
      break;
    int x = run->ready[b];
    run->ready[b] = run->ready[i];
    run->ready[i] = x;
    i = b;
  }
  return top;
}

static void release(struct chol_run *run, const int *succ, int nsucc)
{
  for (int i = 0; i < nsucc; i++)
    if (--run->tasks[succ[i]].ndeps == 0)
      ready_push(run, succ[i]);
}

/* Request monitor of the tile receives: runs inside progress, only records the event. */
static void recv_notifier(struct nm_req_s *req, unsigned event, void *ref)
{
  struct chol_recv *rv = ref;
  struct chol_run *run = &rv->ctx->run;
  (void)req;
  if ((event & (NM_EVENT_RECV_DATA | NM_EVENT_RECV_COMPLETED)) && !rv->arrived) {
    rv->arrived = 1;
    run->arrived[run->narrived++] = (int)(rv - run->recvs);
  }
  if ((event & NM_EVENT_RECV_COMPLETED) && !rv->completed) {
    rv->completed = 1;
    run->ncompleted++;
  }
}

static int cmp_dest_prio(const void *a, const void *b)
{
  const int *x = a, *y = b; /* pairs (prio, dest) */
  if (x[0] != y[0])
    return x[0] > y[0] ? -1 : 1;
  return x[1] - y[1];
}

/* Posts the sends of one tile version, most urgent destination first. */
static int group_post(struct chol_ctx *c, struct chol_group *g, int mode, double *stats)
{
  int n = g->ndest, rc;
  int *pairs = xcalloc((size_t)n * 2, sizeof(int));
  const void *buf = c->owned[g->tile];
  for (int i = 0; i < n; i++) {
    pairs[2 * i] = g->prios[i];
    pairs[2 * i + 1] = g->dests[i];
  }
  qsort(pairs, (size_t)n, 2 * sizeof(int), cmp_dest_prio);
  for (int i = 0; i < n; i++) {
    g->prios[i] = pairs[2 * i];
    g->dests[i] = pairs[2 * i + 1];
  }
  free(pairs);
  g->posted = 1;
  stats[ST_GROUPS] += 1;
  stats[ST_MSGS] += n;
  if (n >= 2)
    stats[ST_BCASTS] += 1;
  if (mode == MODE_DYNAMIC && n >= 2) {
    g->via_mcast = 1;
    rc = nm_mcast_isend(c->mcast, g->dests, g->prios, n, g->tag, buf, tile_bytes(&c->o), c->o.tree, &g->mreq);
    if (rc)
      return nm_fail("nm_mcast_isend", rc);
    g->root_msgs = g->mreq.n_children > 0 ? g->mreq.n_children : n;
  } else {
    for (int i = 0; i < n; i++) {
      nm_sr_send_init(c->session, &g->sreqs[i]);
      if ((rc = nm_sr_send_set_priority(c->session, &g->sreqs[i], g->prios[i])) != 0)
        return nm_fail("nm_sr_send_set_priority", rc);
      rc = nm_sr_send_isend(c->session, &g->sreqs[i], c->gates[g->dests[i]], g->tag, buf, tile_bytes(&c->o));
      if (rc)
        return nm_fail("nm_sr_send_isend", rc);
    }
    g->root_msgs = n;
  }
  stats[ST_ROOT_MSGS] += g->root_msgs;
  return 0;
}

static int group_wait(struct chol_ctx *c, struct chol_group *g)
{
  int rc;
  if (!g->posted)
    return 0;
  if (g->via_mcast) {
    if ((rc = nm_mcast_wait(c->mcast, &g->mreq)) != 0)
      return nm_fail("nm_mcast_wait", rc);
    return 0;
  }
  for (int i = 0; i < g->ndest; i++)
    if ((rc = nm_sr_swait(c->session, &g->sreqs[i])) != 0)
      return nm_fail("nm_sr_swait", rc);
  return 0;
}

static void tiles_init(struct chol_ctx *c)
{
  for (int m = 0; m < c->o.T; m++)
    for (int n = 0; n <= m; n++)
      if (c->owned[tile_id(m, n)])
        tile_fill(&c->o, c->owned[tile_id(m, n)], m, n);
}

/* One factorization in @p mode. Fills this rank's statistics. */
static int run_once(struct chol_ctx *c, int mode, int run_id, double *stats)
{
  struct chol_run *run = &c->run;
  int rc, done = 0;
  uint64_t idle = 0;

  memset(stats, 0, sizeof(double) * ST_COUNT);
  tiles_init(c);
  if (flow_build(c, run_id))
    return -1;
  /* every receive is posted before the start, as soon as the flow is known */
  for (int i = 0; i < run->nrecv; i++) {
    struct chol_recv *rv = &run->recvs[i];
    nm_sr_recv_init(c->session, &rv->req);
    rc = nm_sr_request_set_monitor(c->session, &rv->req, NM_EVENT_RECV_DATA | NM_EVENT_RECV_COMPLETED,
                                   recv_notifier, rv);
    if (rc)
      return nm_fail("nm_sr_request_set_monitor", rc);
    rc = nm_sr_recv_irecv(c->session, &rv->req, c->gates[rv->owner], rv->tag, NM_TAG_MASK_FULL, rv->buf,
                          tile_bytes(&c->o));
    if (rc)
      return nm_fail("nm_sr_recv_irecv", rc);
  }
  if ((rc = nm_launcher_barrier(c->launcher)) != 0)
    return nm_fail("nm_launcher_barrier", rc);

  uint64_t t0 = run_ns(c);
  for (int i = 0; i < run->ntasks; i++)
    if (run->tasks[i].ndeps == 0)
      ready_push(run, i);
  while (done < run->ntasks) {
    nm_core_progress(c->core);
    while (run->narrived > 0) {
      struct chol_recv *rv = &run->recvs[run->arrived[--run->narrived]];
      release(run, rv->succ, rv->nsucc);
    }
    if (run->nready == 0) {
      uint64_t w0 = run_ns(c);
      nm_core_wait(c->core, w0 + 100000000ULL);
      idle += run_ns(c) - w0;
      continue;
    }
    struct chol_task *t = &run->tasks[ready_pop(run)];
    rc = run_kernel(c, t);
    if (rc) {
      fprintf(stderr, "nm_cholesky: %s(%d,%d,%d) failed (info %d)\n", chol_kind_name[t->kind], t->k, t->m, t->n,
              rc);
      return -1;
    }
    stats[ST_FLOPS] += kernel_flops(t->kind, c->o.B);
    done++;
    if (t->group >= 0 && (rc = group_post(c, &run->groups[t->group], mode, stats)) != 0)
      return rc;
    release(run, t->succ, t->nsucc);
  }
  /* drain: our sends, and our receives (a broadcast completes once this rank forwarded it) */
  for (int i = 0; i < run->ngroups; i++)
    if ((rc = group_wait(c, &run->groups[i])) != 0)
      return rc;
  while (run->ncompleted < run->nrecv) {
    uint64_t w0 = run_ns(c);
    nm_core_wait(c->core, w0 + 100000000ULL);
    idle += run_ns(c) - w0;
  }
  for (int i = 0; i < run->nrecv; i++)
    if ((rc = nm_sr_rwait(c->session, &run->recvs[i].req)) != 0)
      return nm_fail("tile receive", rc);
  uint64_t t1 = run_ns(c);

  stats[ST_TIME] = (double)(t1 - t0) * 1e-9;
  stats[ST_IDLE] = (double)idle * 1e-9;
  stats[ST_TASKS] = run->ntasks;
  stats[ST_RECVS] = run->nrecv;
  return 0;
}

/* Rank 0 collects every rank's statistics (sum and max). */
static int stats_reduce(struct chol_ctx *c, int run_id, const double *mine, double *sum, double *max)
{
  nm_tag_t tag = make_tag(TAG_CLASS_STATS, run_id, 0, 0, 0);
  int rc;
  if (c->rank != 0) {
    nm_sr_request_t req;
    if ((rc = nm_sr_isend(c->session, c->gates[0], tag, mine, sizeof(double) * ST_COUNT, &req)) != 0 ||
        (rc = nm_sr_swait(c->session, &req)) != 0)
      return nm_fail("send of the statistics", rc);
    return 0;
  }
  double *all = xcalloc((size_t)c->size * ST_COUNT, sizeof(double));
  nm_sr_request_t *reqs = xcalloc((size_t)c->size, sizeof(*reqs));
  memcpy(all, mine, sizeof(double) * ST_COUNT);
  for (int r = 1; r < c->size; r++)
    if ((rc = nm_sr_irecv(c->session, c->gates[r], tag, all + (size_t)r * ST_COUNT, sizeof(double) * ST_COUNT,
                          &reqs[r])) != 0)
      return nm_fail("nm_sr_irecv(statistics)", rc);
  for (int r = 1; r < c->size; r++)
    if ((rc = nm_sr_rwait(c->session, &reqs[r])) != 0)
      return nm_fail("receive of the statistics", rc);
  for (int s = 0; s < ST_COUNT; s++) {
    sum[s] = 0;
    max[s] = -DBL_MAX;
    for (int r = 0; r < c->size; r++) {
      double v = all[(size_t)r * ST_COUNT + s];
      sum[s] += v;
      if (v > max[s])
        max[s] = v;
    }
  }
  free(all);
  free(reqs);
  return 0;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Check (BLAS kernels only)                                                                                    */

#if CHOL_HAVE_BLAS
/* Rank 0: the same tiled algorithm, sequentially, on its own copy (same kernels in the same order per tile). */
static void reference_compute(struct chol_ctx *c)
{
  const struct chol_opts *o = &c->o;
  size_t tb = (size_t)o->B * o->B;
  int T = o->T, B = o->B;
  double *ref = xcalloc((size_t)c->ntiles * tb, sizeof(double));
#define REF(m, n) (ref + (size_t)tile_id(m, n) * tb)
  for (int m = 0; m < T; m++)
    for (int n = 0; n <= m; n++)
      tile_fill(o, REF(m, n), m, n);
  for (int k = 0; k < T; k++) {
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', B, REF(k, k), B);
    for (int m = k + 1; m < T; m++)
      cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, B, B, 1.0, REF(k, k), B,
                  REF(m, k), B);
    for (int n = k + 1; n < T; n++) {
      cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, B, B, -1.0, REF(n, k), B, 1.0, REF(n, n), B);
      for (int m = n + 1; m < T; m++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, B, B, B, -1.0, REF(m, k), B, REF(n, k), B, 1.0,
                    REF(m, n), B);
    }
  }
#undef REF
  c->ref = ref;
}

/* ||A - L L^T||_F / ||A||_F over the lower triangle, L given tile by tile. */
static double residual(const struct chol_ctx *c, const double *tiles)
{
  const struct chol_opts *o = &c->o;
  long N = (long)o->T * o->B;
  size_t tb = (size_t)o->B * o->B;
  double *L = xcalloc((size_t)N * N, sizeof(double)), *R = xcalloc((size_t)N * N, sizeof(double));
  double num = 0, den = 0;
  for (int m = 0; m < o->T; m++)
    for (int n = 0; n <= m; n++)
      for (int cc = 0; cc < o->B; cc++)
        for (int r = 0; r < o->B; r++) {
          long i = (long)m * o->B + r, j = (long)n * o->B + cc;
          if (i >= j)
            L[j * N + i] = tiles[(size_t)tile_id(m, n) * tb + (size_t)cc * o->B + r];
        }
  for (long j = 0; j < N; j++)
    for (long i = j; i < N; i++)
      R[j * N + i] = matrix_entry(i, j, N);
  for (long j = 0; j < N; j++)
    for (long i = j; i < N; i++)
      den += (i == j ? 1.0 : 2.0) * R[j * N + i] * R[j * N + i];
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)N, (int)N, -1.0, L, (int)N, 1.0, R, (int)N);
  for (long j = 0; j < N; j++)
    for (long i = j; i < N; i++)
      num += (i == j ? 1.0 : 2.0) * R[j * N + i] * R[j * N + i];
  free(L);
  free(R);
  return sqrt(num) / sqrt(den);
}
#endif

/* Gathers the factor on rank 0 and compares it with the sequential result. */
static int check_result(struct chol_ctx *c, int mode, int run_id)
{
#if CHOL_HAVE_BLAS
  const struct chol_opts *o = &c->o;
  size_t tb = (size_t)o->B * o->B;
  int rc;
  if (c->rank != 0) {
    int n = 0;
    nm_sr_request_t *reqs = xcalloc((size_t)c->ntiles, sizeof(*reqs));
    for (int m = 0; m < o->T; m++)
      for (int k = 0; k <= m; k++)
        if (c->owned[tile_id(m, k)] &&
            (rc = nm_sr_isend(c->session, c->gates[0], make_tag(TAG_CLASS_GATHER, run_id, 0, m, k),
                              c->owned[tile_id(m, k)], tile_bytes(o), &reqs[n++])) != 0)
          return nm_fail("nm_sr_isend(gather)", rc);
    for (int i = 0; i < n; i++)
      if ((rc = nm_sr_swait(c->session, &reqs[i])) != 0)
        return nm_fail("nm_sr_swait(gather)", rc);
    free(reqs);
    return 0;
  }
  if (!c->ref)
    reference_compute(c);
  double *all = xcalloc((size_t)c->ntiles * tb, sizeof(double));
  nm_sr_request_t *reqs = xcalloc((size_t)c->ntiles, sizeof(*reqs));
  for (int m = 0; m < o->T; m++)
    for (int k = 0; k <= m; k++) {
      int t = tile_id(m, k);
      if (c->owned[t])
        memcpy(all + (size_t)t * tb, c->owned[t], tile_bytes(o));
      else if ((rc = nm_sr_irecv(c->session, c->gates[tile_owner(o, m, k)],
                                 make_tag(TAG_CLASS_GATHER, run_id, 0, m, k), all + (size_t)t * tb, tile_bytes(o),
                                 &reqs[t])) != 0)
        return nm_fail("nm_sr_irecv(gather)", rc);
    }
  for (int m = 0; m < o->T; m++)
    for (int k = 0; k <= m; k++)
      if (!c->owned[tile_id(m, k)] && (rc = nm_sr_rwait(c->session, &reqs[tile_id(m, k)])) != 0)
        return nm_fail("receive of a gathered tile", rc);
  double diff = 0, scale = 0;
  for (int m = 0; m < o->T; m++)
    for (int k = 0; k <= m; k++)
      for (int cc = 0; cc < o->B; cc++)
        for (int r = (m == k ? cc : 0); r < o->B; r++) { /* lower part of diagonal tiles only */
          size_t i = (size_t)tile_id(m, k) * tb + (size_t)cc * o->B + r;
          diff = fmax(diff, fabs(all[i] - c->ref[i]));
          scale = fmax(scale, fabs(c->ref[i]));
        }
  double res = residual(c, all);
  long N = (long)o->T * o->B;
  c->check_diff[mode] = scale > 0 ? diff / scale : diff;
  c->check_resid[mode] = res;
  c->check_done[mode] = 1;
  /* LAPACK's test ratio: ||A - L L^T|| / (N eps ||A||) must stay O(1) */
  c->check_ok[mode] = c->check_diff[mode] <= 1e-12 && res / ((double)N * DBL_EPSILON) < 10.0;
  free(all);
  free(reqs);
  return c->check_ok[mode] ? 0 : -1;
#else
  (void)c; (void)mode; (void)run_id;
  return 0;
#endif
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Driver                                                                                                       */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *tree_name(enum nm_mcast_tree_e t)
{
  switch (t) {
  case NM_MCAST_TREE_FLAT: return "flat";
  case NM_MCAST_TREE_CHAIN: return "chain";
  case NM_MCAST_TREE_BINARY: return "binary";
  default: return "binomial";
  }
}

static void print_header(const struct chol_ctx *c)
{
  const struct chol_opts *o = &c->o;
  const char *drv = getenv("NMAD_DRIVER"), *strat = getenv("NMAD_STRATEGY");
  if (o->csv) {
    printf("mode,tiles,tile_size,grid,ranks,kernels,tree,reps,time_ms_median,time_ms_min,gflops,idle_pct,"
           "tile_sends,bcasts,msgs,root_msgs,max_root_msgs_per_rank,check\n");
    return;
  }
  printf("# nm_cholesky: T=%d tiles of %dx%d doubles (N=%ld, %.1f KiB per tile), grid %dx%d on %d ranks, "
         "NMAD_DRIVER=%s, NMAD_STRATEGY=%s\n",
         o->T, o->B, o->B, (long)o->T * o->B, (double)tile_bytes(o) / 1024.0, o->P, o->Q, c->size,
         drv ? drv : "(default)", strat ? strat : "(default)");
  if (o->blas)
    printf("# kernels blas (single-threaded), %d reps per mode, tree %s, priorities %s\n", o->reps,
           tree_name(o->tree), o->prio ? "on" : "off");
  else
    printf("# kernels loop at %.2f GFlop/s (loop native %.2f, dgemm %.2f), %d reps per mode, tree %s, "
           "priorities %s\n",
           c->loop_gflops_target, c->loop_gflops_native, c->dgemm_gflops, o->reps, tree_name(o->tree),
           o->prio ? "on" : "off");
  printf("# time = max over ranks (median and min of the reps); idle = share of rank time spent waiting for "
         "data;\n# msgs = tile messages received; root = posted by the producer (the rest forwarded in trees)\n");
  printf("%-8s %10s %10s %8s %7s %10s %7s %6s %9s %9s %s\n", "mode", "time_ms", "min_ms", "GFlop/s", "idle%",
         "tile_sends", "bcasts", "msgs", "root_msgs", "max_root", o->check ? "check" : "");
}

static void print_row(const struct chol_ctx *c, int mode)
{
  const struct chol_opts *o = &c->o;
  double *times = c->times[mode];
  double tmin = times[0];
  for (int i = 1; i < o->reps; i++)
    tmin = fmin(tmin, times[i]);
  double tmed = median(times, o->reps);
  double N = (double)o->T * o->B;
  double gflops = N * N * N / 3.0 / tmed * 1e-9;
  const double *s = c->stats_sum[mode], *mx = c->stats_max[mode];
  double idle = s[ST_TIME] > 0 ? 100.0 * s[ST_IDLE] / s[ST_TIME] : 0.0;
  char chk[96] = "";
  if (c->check_done[mode])
    snprintf(chk, sizeof(chk), "%s (diff %.1e, resid %.1e)", c->check_ok[mode] ? "ok" : "FAILED",
             c->check_diff[mode], c->check_resid[mode]);
  if (o->csv)
    printf("%s,%d,%d,%dx%d,%d,%s,%s,%d,%.3f,%.3f,%.3f,%.1f,%.0f,%.0f,%.0f,%.0f,%.0f,%s\n", chol_mode_name[mode],
           o->T, o->B, o->P, o->Q, c->size, o->blas ? "blas" : "loop", tree_name(o->tree), o->reps, tmed * 1e3,
           tmin * 1e3, gflops, idle, s[ST_GROUPS], s[ST_BCASTS], s[ST_MSGS], s[ST_ROOT_MSGS], mx[ST_ROOT_MSGS],
           c->check_done[mode] ? (c->check_ok[mode] ? "ok" : "failed") : "");
  else
    printf("%-8s %10.2f %10.2f %8.2f %7.1f %10.0f %7.0f %6.0f %9.0f %9.0f %s\n", chol_mode_name[mode], tmed * 1e3,
           tmin * 1e3, gflops, idle, s[ST_GROUPS], s[ST_BCASTS], s[ST_MSGS], s[ST_ROOT_MSGS], mx[ST_ROOT_MSGS],
           chk);
  fflush(stdout);
}

static void usage(FILE *f)
{
  fprintf(f,
          "Usage: nmad-run -n R nm_cholesky [options]\n"
          "Communication pattern of a tiled Cholesky factorization (Denis 2020, section 5.2, Algorithm 1)\n"
          "with dynamic broadcasts (nm_mcast_isend) or loops of point-to-point sends.\n"
          "  --tiles T          tiles per dimension (default 12)\n"
          "  --tile-size B      tile order, in doubles (default 128)\n"
          "  --grid PxQ         2-D block-cyclic process grid, P*Q = number of ranks (default: nearly square)\n"
          "  --mode M           p2p, dynamic or both (default both: p2p then dynamic, each rep)\n"
          "  --kernels K        blas (LAPACKE/CBLAS, if built with them; the default then) or loop\n"
          "  --loop-gflops R    rate emulated by the loop kernels (default: measured dgemm rate, else the loop's)\n"
          "  --tree X           broadcast tree: binomial (default), flat, chain, binary\n"
          "  --no-prio          all priorities 0\n"
          "  --reps N           factorizations per mode (default 5); the median and min are reported\n"
          "  --check            verify L against a sequential factorization on rank 0 (blas kernels)\n"
          "  --csv              CSV output\n"
          "  --help             this help\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return -1;
  *out = (int)v;
  return 0;
}

static int parse_opts(int argc, char **argv, struct chol_opts *o)
{
  o->T = 12;
  o->B = 128;
  o->P = o->Q = 0;
  o->modes[0] = MODE_P2P;
  o->modes[1] = MODE_DYNAMIC;
  o->nmodes = 2;
  o->blas = CHOL_HAVE_BLAS;
  o->reps = 5;
  o->prio = 1;
  o->tree = NM_MCAST_TREE_BINOMIAL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    char name[32];
    const char *eq = strchr(a, '=');
    if (eq && (size_t)(eq - a) < sizeof(name)) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      v = eq + 1;
      a = name;
    }
#define NEED_ARG()                                                                                                   \
  do {                                                                                                               \
    if (!v) {                                                                                                        \
      if (i + 1 >= argc) {                                                                                           \
        fprintf(stderr, "nm_cholesky: %s needs a value\n", a);                                                      \
        return -1;                                                                                                   \
      }                                                                                                              \
      v = argv[++i];                                                                                                 \
    }                                                                                                                \
  } while (0)
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 1;
    } else if (!strcmp(a, "--tiles")) {
      NEED_ARG();
      if (parse_int(v, 1, CHOL_MAX_TILES, &o->T))
        goto bad;
    } else if (!strcmp(a, "--tile-size")) {
      NEED_ARG();
      if (parse_int(v, 1, 8192, &o->B))
        goto bad;
    } else if (!strcmp(a, "--grid")) {
      NEED_ARG();
      char *end;
      long p = strtol(v, &end, 10), q;
      if (end == v || (*end != 'x' && *end != 'X'))
        goto bad;
      const char *qs = end + 1;
      q = strtol(qs, &end, 10);
      if (end == qs || *end || p < 1 || q < 1 || p > 4096 || q > 4096)
        goto bad;
      o->P = (int)p;
      o->Q = (int)q;
    } else if (!strcmp(a, "--mode")) {
      NEED_ARG();
      if (!strcmp(v, "p2p")) {
        o->modes[0] = MODE_P2P;
        o->nmodes = 1;
      } else if (!strcmp(v, "dynamic")) {
        o->modes[0] = MODE_DYNAMIC;
        o->nmodes = 1;
      } else if (!strcmp(v, "both")) {
        o->modes[0] = MODE_P2P;
        o->modes[1] = MODE_DYNAMIC;
        o->nmodes = 2;
      } else
        goto bad;
    } else if (!strcmp(a, "--kernels")) {
      NEED_ARG();
      if (!strcmp(v, "loop"))
        o->blas = 0;
      else if (!strcmp(v, "blas")) {
        if (!CHOL_HAVE_BLAS) {
          fprintf(stderr, "nm_cholesky: built without BLAS/LAPACKE; use --kernels loop\n");
          return -1;
        }
        o->blas = 1;
      } else
        goto bad;
    } else if (!strcmp(a, "--loop-gflops")) {
      NEED_ARG();
      char *end;
      o->loop_gflops = strtod(v, &end);
      if (end == v || *end || !(o->loop_gflops > 0) || o->loop_gflops > 1e6)
        goto bad;
    } else if (!strcmp(a, "--tree")) {
      NEED_ARG();
      if (!strcmp(v, "binomial"))
        o->tree = NM_MCAST_TREE_BINOMIAL;
      else if (!strcmp(v, "flat"))
        o->tree = NM_MCAST_TREE_FLAT;
      else if (!strcmp(v, "chain"))
        o->tree = NM_MCAST_TREE_CHAIN;
      else if (!strcmp(v, "binary"))
        o->tree = NM_MCAST_TREE_BINARY;
      else
        goto bad;
    } else if (!strcmp(a, "--reps")) {
      NEED_ARG();
      if (parse_int(v, 1, 100, &o->reps))
        goto bad;
    } else if (!strcmp(a, "--no-prio") && !v) {
      o->prio = 0;
    } else if (!strcmp(a, "--check") && !v) {
      o->check = 1;
    } else if (!strcmp(a, "--csv") && !v) {
      o->csv = 1;
    } else {
      fprintf(stderr, "nm_cholesky: unknown option %s (see --help)\n", argv[i]);
      return -1;
    }
    continue;
  bad:
    fprintf(stderr, "nm_cholesky: bad value '%s' for %s (see --help)\n", v, a);
    return -1;
#undef NEED_ARG
  }
  if (o->check && !o->blas) {
    fprintf(stderr, "nm_cholesky: --check needs the blas kernels\n");
    return -1;
  }
  return 0;
}

static int run_all(struct chol_ctx *c)
{
  const struct chol_opts *o = &c->o;
  int rc, run_id = 0, failed = 0;
  double stats[ST_COUNT], sum[ST_COUNT], max[ST_COUNT];

  if (c->rank == 0)
    print_header(c);
  for (int mi = 0; mi < o->nmodes; mi++)
    c->times[o->modes[mi]] = xcalloc((size_t)o->reps, sizeof(double));
  /* each rep runs the modes back to back, so slow drifts of a shared machine hit both alike */
  for (int rep = 0; rep < o->reps; rep++)
    for (int mi = 0; mi < o->nmodes; mi++) {
      int mode = o->modes[mi];
      run_id++;
      if ((rc = run_once(c, mode, run_id, stats)) != 0)
        return rc;
      run_free(&c->run);
      if ((rc = stats_reduce(c, run_id, stats, sum, max)) != 0)
        return rc;
      if (c->rank == 0) {
        c->times[mode][rep] = max[ST_TIME];
        if (rep == 0) {
          memcpy(c->stats_sum[mode], sum, sizeof(sum));
          memcpy(c->stats_max[mode], max, sizeof(max));
        } else {
          /* counts are identical from rep to rep; times and idle are accumulated for the idle share */
          c->stats_sum[mode][ST_TIME] += sum[ST_TIME];
          c->stats_sum[mode][ST_IDLE] += sum[ST_IDLE];
        }
      }
      if (o->check && rep == o->reps - 1 && check_result(c, mode, run_id) != 0)
        failed = 1;
      /* the barrier between modes: nobody starts the next run while others still drain this one */
      if ((rc = nm_launcher_barrier(c->launcher)) != 0)
        return nm_fail("nm_launcher_barrier", rc);
    }
  if (c->rank == 0) {
    for (int mi = 0; mi < o->nmodes; mi++)
      print_row(c, o->modes[mi]);
    if (o->nmodes == 2) {
      double tp = median(c->times[MODE_P2P], o->reps), td = median(c->times[MODE_DYNAMIC], o->reps);
      if (o->csv)
        printf("# ratio p2p/dynamic (median time): %.3f\n", tp / td);
      else
        printf("ratio p2p/dynamic (median time): %.3f  (above 1: dynamic broadcasts are faster)\n", tp / td);
    }
  }
  return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
  struct chol_ctx ctx;
  struct chol_ctx *c = &ctx;
  int rc, err = 0, need_mcast = 0;

  memset(c, 0, sizeof(*c));
  rc = parse_opts(argc, argv, &c->o);
  if (rc)
    return rc > 0 ? 0 : 2;
#if CHOL_HAVE_BLAS
  if (openblas_set_num_threads)
    openblas_set_num_threads(1);
#endif
  if ((rc = nm_launcher_init(&c->launcher, &argc, &argv)) != 0)
    return nm_fail("nm_launcher_init", rc), 1;
  nm_launcher_get_rank(c->launcher, &c->rank);
  nm_launcher_get_size(c->launcher, &c->size);
  c->core = nm_launcher_get_core(c->launcher);
  if (c->o.P == 0) {
    int p = 1;
    for (int d = 1; d * d <= c->size; d++)
      if (c->size % d == 0)
        p = d;
    c->o.P = p;
    c->o.Q = c->size / p;
  }
  if (c->o.P * c->o.Q != c->size) {
    if (c->rank == 0)
      fprintf(stderr, "nm_cholesky: grid %dx%d needs %d ranks, not %d\n", c->o.P, c->o.Q, c->o.P * c->o.Q,
              c->size);
    nm_launcher_exit(c->launcher);
    return 2;
  }
  if ((rc = nm_session_open(c->core, "nm_cholesky", &c->session)) != 0) {
    nm_fail("nm_session_open", rc);
    nm_launcher_exit(c->launcher);
    return 1;
  }
  for (int mi = 0; mi < c->o.nmodes; mi++)
    need_mcast |= c->o.modes[mi] == MODE_DYNAMIC;
  if (need_mcast && (rc = nm_mcast_init(c->session, &c->mcast)) != 0) {
    nm_fail("nm_mcast_init", rc);
    err = 1;
    goto out;
  }
  c->gates = xcalloc((size_t)c->size, sizeof(nm_gate_t));
  for (int r = 0; r < c->size; r++)
    nm_launcher_get_gate(c->launcher, r, &c->gates[r]);
  c->ntiles = c->o.T * (c->o.T + 1) / 2;
  c->owned = xcalloc((size_t)c->ntiles, sizeof(double *));
  for (int m = 0; m < c->o.T; m++)
    for (int n = 0; n <= m; n++)
      if (tile_owner(&c->o, m, n) == c->rank)
        c->owned[tile_id(m, n)] = tile_alloc(&c->o);
  if (!c->o.blas && calibrate(c) != 0) {
    err = 1;
    goto out;
  }
  if (run_all(c) != 0)
    err = 1;

out:
  if (c->mcast && (rc = nm_mcast_finalize(c->mcast)) != 0) {
    nm_fail("nm_mcast_finalize", rc);
    err = 1;
  }
  if ((rc = nm_session_close(c->session)) != 0) {
    nm_fail("nm_session_close", rc);
    err = 1;
  }
  if ((rc = nm_launcher_exit(c->launcher)) != 0) {
    nm_fail("nm_launcher_exit", rc);
    err = 1;
  }
  if (c->owned)
    for (int t = 0; t < c->ntiles; t++)
      free(c->owned[t]);
  free(c->owned);
  free(c->gates);
  free(c->times[0]);
  free(c->times[1]);
  free(c->ref);
  return err;
}
