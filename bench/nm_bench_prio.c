/**
 * @file nm_bench_prio.c
 * @brief Latency of an urgent 8 B message queued behind low-priority bulk (issue 15, benchmark 7(a)).
 *
 * Run: `NMAD_DRIVER=shm nmad-run -n 3 ./nm_bench_prio [--bulk 64M] [--piece 1M] [--iters 20] [--warmup 2] [--csv]`;
 * bench/nm_bench_prio_compare.sh runs it over shm and tcp with priorities on (the default strategy) and off
 * (NMAD_STRATEGY=aggreg) and prints one table of ratios.
 *
 * Three scenarios, interleaved round by round so that a burst of load on the machine hits them all alike:
 * - idle:  rank 0 ping-pongs 8 B with rank 1, nothing else in flight;
 * - same:  rank 0 first posts --bulk bytes to rank 1 (messages of --piece bytes, priority 0), then the 8 B ping
 *          (priority --prio) to rank 1: the urgent message and the bulk share the gate;
 * - other: the same bulk to rank 1, the 8 B ping to rank 2: a forwarder's urgent child and its bulk child.
 * Latency = (time from posting the ping to the pong's arrival) / 2, in us, read on the core's clock (simulated
 * time under nmad-sim). The pong is sent at priority --prio too. Every round starts when the receivers have posted
 * their receives (bulk and ping), so the bulk really flows while the ping travels, and ends when the bulk is in.
 * Columns: scenario, lat_min_us, lat_median_us, ratio (median / idle median), bulk_MBps (median rate of the bulk
 * as its sender sees it: from posting the first piece to the last one's send completion, MB = 10^6 B; 0 for idle):
 * what keeping bulk short behind urgent traffic costs it (nm_strat_bulk_held()).
 * Exit status: 0, or 1 if an nmad call failed (its nm_strerror() text is printed).
 */
#include "bench_common.h"

#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_TAG_BULK ((nm_tag_t)0x5052)
#define PR_TAG_PING ((nm_tag_t)0x5053)
#define PR_TAG_PONG ((nm_tag_t)0x5054)
#define PR_TAG_READY ((nm_tag_t)0x5055)
#define PR_PING_LEN 8

enum { PR_IDLE, PR_SAME, PR_OTHER, PR_NSCEN };
static const char *const pr_names[PR_NSCEN] = {"idle", "same_peer", "other_peer"};

struct pr_ctx {
  nm_session_t session;
  nm_core_t core;
  nm_gate_t gate[3]; /* gates to ranks 0, 1, 2 (NULL for oneself) */
  int rank;
  size_t bulk, piece;
  int npieces;
  nm_prio_t prio;
  char *big;                /* bulk buffer: rank 0 sends from it, rank 1 receives into it */
  nm_sr_request_t *bulk_reqs;
  char ping[PR_PING_LEN], pong[PR_PING_LEN], token[8];
};

static int pr_fail(const char *what, int rc)
{
  fprintf(stderr, "nm_bench_prio: %s failed: %s (%d)\n", what, nm_strerror(rc), rc);
  return 1;
}

static int pr_isend(struct pr_ctx *c, int to, nm_tag_t tag, nm_prio_t prio, const void *buf, nm_len_t len,
                    nm_sr_request_t *r)
{
  nm_sr_send_init(c->session, r);
  int rc = nm_sr_send_set_priority(c->session, r, prio);
  if (rc == 0)
    rc = nm_sr_send_isend(c->session, r, c->gate[to], tag, buf, len);
  return rc;
}

static int pr_wait_bulk(struct pr_ctx *c, int send)
{
  for (int k = 0; k < c->npieces; k++) {
    int rc = send ? nm_sr_swait(c->session, &c->bulk_reqs[k]) : nm_sr_rwait(c->session, &c->bulk_reqs[k]);
    if (rc != 0)
      return pr_fail(send ? "nm_sr_swait(bulk)" : "nm_sr_rwait(bulk)", rc);
  }
  return 0;
}

static size_t pr_piece_len(const struct pr_ctx *c, int k)
{
  size_t off = (size_t)k * c->piece;
  return c->bulk - off < c->piece ? c->bulk - off : c->piece;
}

/* Rank 0: one round of scenario s. *lat_us gets the one-way latency of the urgent message, *bulk_MBps the bulk's
 * rate (0 without bulk). */
static int pr_rank0_round(struct pr_ctx *c, int s, double *lat_us, double *bulk_MBps)
{
  nm_sr_request_t ready[2], pong, ping;
  int target = s == PR_OTHER ? 2 : 1, rc;
  for (int i = 0; i < 2; i++)
    if ((rc = nm_sr_irecv(c->session, c->gate[1 + i], PR_TAG_READY, c->token, 0, &ready[i])) != 0)
      return pr_fail("nm_sr_irecv(ready)", rc);
  for (int i = 0; i < 2; i++)
    if ((rc = nm_sr_rwait(c->session, &ready[i])) != 0)
      return pr_fail("nm_sr_rwait(ready)", rc);
  if ((rc = nm_sr_irecv(c->session, c->gate[target], PR_TAG_PONG, c->pong, PR_PING_LEN, &pong)) != 0)
    return pr_fail("nm_sr_irecv(pong)", rc);
  uint64_t tb = nm_core_time_ns(c->core);
  if (s != PR_IDLE)
    for (int k = 0; k < c->npieces; k++)
      if ((rc = pr_isend(c, 1, PR_TAG_BULK, 0, c->big + (size_t)k * c->piece, pr_piece_len(c, k),
                         &c->bulk_reqs[k])) != 0)
        return pr_fail("nm_sr_isend(bulk)", rc);
  uint64_t t0 = nm_core_time_ns(c->core);
  if ((rc = pr_isend(c, target, PR_TAG_PING, c->prio, c->ping, PR_PING_LEN, &ping)) != 0)
    return pr_fail("nm_sr_isend(ping)", rc);
  if ((rc = nm_sr_rwait(c->session, &pong)) != 0)
    return pr_fail("nm_sr_rwait(pong)", rc);
  uint64_t t1 = nm_core_time_ns(c->core);
  *lat_us = (double)(t1 - t0) / 2e3;
  if ((rc = nm_sr_swait(c->session, &ping)) != 0)
    return pr_fail("nm_sr_swait(ping)", rc);
  *bulk_MBps = 0;
  if (s == PR_IDLE)
    return 0;
  if (pr_wait_bulk(c, 1) != 0)
    return 1;
  uint64_t te = nm_core_time_ns(c->core);
  *bulk_MBps = te > tb ? (double)c->bulk * 1e3 / (double)(te - tb) : 0;
  return 0;
}

/* Ranks 1 and 2: one round of scenario s. */
static int pr_peer_round(struct pr_ctx *c, int s)
{
  nm_sr_request_t ready, ping, pong;
  int target = s == PR_OTHER ? 2 : 1, rc;
  int bulk = c->rank == 1 && s != PR_IDLE;
  if (bulk)
    for (int k = 0; k < c->npieces; k++)
      if ((rc = nm_sr_irecv(c->session, c->gate[0], PR_TAG_BULK, c->big + (size_t)k * c->piece, pr_piece_len(c, k),
                            &c->bulk_reqs[k])) != 0)
        return pr_fail("nm_sr_irecv(bulk)", rc);
  if (c->rank == target && (rc = nm_sr_irecv(c->session, c->gate[0], PR_TAG_PING, c->ping, PR_PING_LEN, &ping)) != 0)
    return pr_fail("nm_sr_irecv(ping)", rc);
  if ((rc = nm_sr_isend(c->session, c->gate[0], PR_TAG_READY, c->token, 0, &ready)) != 0)
    return pr_fail("nm_sr_isend(ready)", rc);
  if (c->rank == target) {
    if ((rc = nm_sr_rwait(c->session, &ping)) != 0)
      return pr_fail("nm_sr_rwait(ping)", rc);
    if ((rc = pr_isend(c, 0, PR_TAG_PONG, c->prio, c->pong, PR_PING_LEN, &pong)) != 0)
      return pr_fail("nm_sr_isend(pong)", rc);
    if ((rc = nm_sr_swait(c->session, &pong)) != 0)
      return pr_fail("nm_sr_swait(pong)", rc);
  }
  if ((rc = nm_sr_swait(c->session, &ready)) != 0)
    return pr_fail("nm_sr_swait(ready)", rc);
  return bulk ? pr_wait_bulk(c, 0) : 0;
}

/* Take "--name SIZE" / "--name=SIZE" out of argv (bench_parse_opts() knows only the common options). */
static int pr_take_size(int *argc, char **argv, const char *name, size_t *out)
{
  size_t n = strlen(name);
  for (int i = 1; i < *argc; i++) {
    const char *v = NULL;
    int used = 1;
    if (strcmp(argv[i], name) == 0 && i + 1 < *argc) {
      v = argv[i + 1];
      used = 2;
    } else if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
      v = argv[i] + n + 1;
    } else {
      continue;
    }
    if (bench_parse_size(v, out) != 0) {
      fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], v, name);
      return -1;
    }
    memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof(char *));
    *argc -= used;
    i--;
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct pr_ctx c;
  struct bench_opts o;
  nm_launcher_t l = NULL;
  int size = 0, rc;
  size_t prio = 10;

  memset(&c, 0, sizeof(c));
  memset(&o, 0, sizeof(o));
  c.bulk = (size_t)64 << 20;
  c.piece = (size_t)1 << 20;
  o.iters = 20;
  o.warmup = 2;
  o.window = 1;
  if (pr_take_size(&argc, argv, "--bulk", &c.bulk) || pr_take_size(&argc, argv, "--piece", &c.piece) ||
      pr_take_size(&argc, argv, "--prio", &prio))
    return 2;
  rc = bench_parse_opts(argc, argv, &o,
                        "urgent 8 B latency behind low-priority bulk (nmad-run -n 3 nm_bench_prio "
                        "[--bulk 64M] [--piece 1M] [--prio 10]); --min/--max/--window are ignored");
  if (rc != 0)
    return rc > 0 ? 0 : 2;
  if (c.piece == 0 || c.bulk == 0 || o.iters < 1) {
    fprintf(stderr, "nm_bench_prio: --bulk, --piece and --iters must be positive\n");
    return 2;
  }
  c.prio = (nm_prio_t)prio;
  c.npieces = (int)((c.bulk + c.piece - 1) / c.piece);

  rc = nm_launcher_init(&l, &argc, &argv);
  if (rc != 0)
    return pr_fail("nm_launcher_init", rc);
  nm_launcher_get_rank(l, &c.rank);
  nm_launcher_get_size(l, &size);
  if (size != 3) {
    if (c.rank == 0)
      fprintf(stderr, "nm_bench_prio: needs 3 processes (got %d): nmad-run -n 3 %s\n", size, argv[0]);
    nm_launcher_exit(l);
    return 1;
  }
  c.core = nm_launcher_get_core(l);
  if ((rc = nm_session_open(c.core, "bench_prio", &c.session)) != 0)
    return pr_fail("nm_session_open", rc);
  for (int r = 0; r < 3; r++)
    if (r != c.rank && (rc = nm_launcher_get_gate(l, r, &c.gate[r])) != 0)
      return pr_fail("nm_launcher_get_gate", rc);
  if (c.rank <= 1) {
    c.big = bench_alloc(c.bulk);
    c.bulk_reqs = calloc((size_t)c.npieces, sizeof(*c.bulk_reqs));
    if (!c.big || !c.bulk_reqs) {
      fprintf(stderr, "nm_bench_prio: out of memory for %zu bytes of bulk\n", c.bulk);
      return 1;
    }
  }
  int total = o.warmup + o.iters;
  double *lat = calloc((size_t)PR_NSCEN * (size_t)o.iters, sizeof(double));
  double *rate = calloc((size_t)PR_NSCEN * (size_t)o.iters, sizeof(double));
  if (!lat || !rate)
    return 1;
  for (int i = 0; i < total; i++)
    for (int s = 0; s < PR_NSCEN; s++) {
      double us = 0, MBps = 0;
      rc = c.rank == 0 ? pr_rank0_round(&c, s, &us, &MBps) : pr_peer_round(&c, s);
      if (rc != 0)
        return 1; /* the launcher ends the other ranks */
      if (c.rank == 0 && i >= o.warmup) {
        lat[s * o.iters + (i - o.warmup)] = us;
        rate[s * o.iters + (i - o.warmup)] = MBps;
      }
    }
  if (c.rank == 0) {
    const char *drv = getenv("NMAD_DRIVER"), *strat = getenv("NMAD_STRATEGY");
    if (o.csv) {
      printf("scenario,lat_min_us,lat_median_us,ratio,bulk_MBps\n");
    } else {
      printf("# nm_bench_prio: 8 B at priority %d behind %zu B of priority-0 bulk in %zu-B messages, "
             "NMAD_DRIVER=%s, NMAD_STRATEGY=%s\n",
             (int)c.prio, c.bulk, c.piece, drv ? drv : "(default)", strat ? strat : "(default)");
      printf("# one-way latency = round trip / 2 (us), %d rounds after %d warm-up; ratio = median / idle median\n",
             o.iters, o.warmup);
      printf("%12s %12s %14s %8s %10s\n", "scenario", "lat_min_us", "lat_median_us", "ratio", "bulk_MBps");
    }
    double idle = bench_median(lat, o.iters);
    for (int s = 0; s < PR_NSCEN; s++) {
      double med = s == PR_IDLE ? idle : bench_median(lat + s * o.iters, o.iters);
      double mn = bench_min(lat + s * o.iters, o.iters);
      double mbps = bench_median(rate + s * o.iters, o.iters);
      if (o.csv)
        printf("%s,%.3f,%.3f,%.3f,%.0f\n", pr_names[s], mn, med, med / idle, mbps);
      else
        printf("%12s %12.3f %14.3f %8.2f %10.0f\n", pr_names[s], mn, med, med / idle, mbps);
    }
    fflush(stdout);
  }
  free(lat);
  free(rate);
  free(c.bulk_reqs);
  bench_free(c.big);
  nm_launcher_exit(l);
  return 0;
}
