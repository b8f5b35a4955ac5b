/**
 * @file nm_coll_model.c
 * @brief Cost models of Hasanov & Lastovetsky 2015's broadcasts (section 2.1), of their hierarchical
 * transformation (section 3), and the model-driven choice of algorithm, groups and segment size (issue 17,
 * deliverable 4). Pure computation: no state, no allocation; doc/collectives.md explains the rule.
 */
#include <nmad/nm_coll_model.h>
#include <nmad/nm_errno.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The override's names, in the enum's order (a constant table: rule 1 allows it). */
static const char *const nm_coll_model_names[NM_COLL_BCAST_NALGOS] = {
  [NM_COLL_BCAST_FLAT] = "flat",
  [NM_COLL_BCAST_CHAIN] = "chain",
  [NM_COLL_BCAST_PIPELINED_CHAIN] = "pipelined_chain",
  [NM_COLL_BCAST_BINARY] = "binary",
  [NM_COLL_BCAST_SPLIT_BINARY] = "split_binary",
  [NM_COLL_BCAST_BINOMIAL] = "binomial",
  [NM_COLL_BCAST_SCATTER_RING] = "scatter_ring",
  [NM_COLL_BCAST_SCATTER_RD] = "scatter_rd",
};

const char *nm_coll_model_algo_name(enum nm_coll_bcast_algo_e algo)
{
  return (int)algo >= 0 && algo < NM_COLL_BCAST_NALGOS ? nm_coll_model_names[algo] : NULL;
}

int nm_coll_model_hockney(uint32_t latency_ns, uint32_t bandwidth_MBps, double *alpha, double *beta)
{
  if (bandwidth_MBps == 0 || !alpha || !beta)
    return -NM_EINVAL;
  *alpha = (double)latency_ns * 1e-9;
  *beta = 1.0 / ((double)bandwidth_MBps * 1e6);
  return NM_ESUCCESS;
}

/* Whole steps of a tree on p >= 1 processes: the paper's log2 terms assume p = 2^k (or 2^k - 1). */
static int nm_ceil_log2(int p)
{
  int k = 0;
  while ((1LL << k) < (long long)p)
    k++;
  return k;
}

static int nm_floor_log2(int p)
{
  int k = 0;
  while ((1LL << (k + 1)) <= (long long)p)
    k++;
  return k;
}

static int nm_model_args_ok(enum nm_coll_bcast_algo_e algo, int p, double alpha, double beta)
{
  return (int)algo >= 0 && algo < NM_COLL_BCAST_NALGOS && p >= 1 && isfinite(alpha) && isfinite(beta) &&
         alpha >= 0 && beta >= 0;
}

/* The formulas, arguments already checked; X >= 1. */
static double nm_model_flat(enum nm_coll_bcast_algo_e algo, int p, double m, double alpha, double beta, double x)
{
  if (p <= 1)
    return 0;
  const double n = p, t1 = alpha + m * beta; /* one whole message, Hockney (section 2) */
  switch (algo) {
  case NM_COLL_BCAST_FLAT:  /* 2.1.1: (p - 1)(alpha + m beta) */
  case NM_COLL_BCAST_CHAIN: /* 2.1.2: the same, (p - 1)(alpha + m beta) */
    return (n - 1) * t1;
  case NM_COLL_BCAST_PIPELINED_CHAIN: { /* 2.1.3: (X + p - 2)(alpha + (m / X) beta) */
    /* a segment holds at least one byte: X above m is priced as X = m */
    if (x > m && m >= 1)
      x = m;
    return (x + n - 2) * (alpha + m / x * beta);
  }
  case NM_COLL_BCAST_BINARY: /* 2.1.4: 2 (log2(p + 1) - 1)(alpha + m beta); log2(p+1) - 1 = floor(log2 p),
                                the depth of the heap-ordered tree, for every p */
    return 2.0 * nm_floor_log2(p) * t1;
  case NM_COLL_BCAST_SPLIT_BINARY: {
    if (p == 2) /* no second subtree: one plain send */
      return t1;
    /* 2.1.5: 2 (log2(p + 1) - 2)(alpha + m beta) + alpha + (m / 2) beta, with log2(p+1) - 1 = floor(log2 p).
     * Below p = 7 the formula undercounts (p = 3 would cost less than one message); the root must at least
     * send both halves and the pairs exchange theirs: 3 alpha + 1.5 m beta, which is exact at p = 3. */
    double paper = 2.0 * (nm_floor_log2(p) - 1) * t1 + alpha + m / 2 * beta;
    double floor_cost = 3 * alpha + 1.5 * m * beta;
    return paper > floor_cost ? paper : floor_cost;
  }
  case NM_COLL_BCAST_BINOMIAL: /* 2.1.6: log2(p) (alpha + m beta), log2 rounded up to whole rounds */
    return nm_ceil_log2(p) * t1;
  case NM_COLL_BCAST_SCATTER_RING: /* 2.1.7: (log2(p) + p - 1) alpha + 2 (p - 1) / p m beta */
    return (nm_ceil_log2(p) + n - 1) * alpha + 2 * (n - 1) / n * m * beta;
  case NM_COLL_BCAST_SCATTER_RD: { /* 2.1.8: 2 log2(p) alpha + 2 (p - 1) / p m beta */
    /* p not a power of two: the broadcast (collectives/bcast_classic.c, as MPICH) runs over the first
     * p' = 2^floor(log2 p) members, then member v >= p' gets the whole message from v - p': + alpha + m beta */
    int k = nm_floor_log2(p);
    double q = (double)(1LL << k), extra = (1LL << k) < (long long)p ? t1 : 0;
    return 2.0 * k * alpha + 2 * (q - 1) / q * m * beta + extra;
  }
  default:
    return 0;
  }
}

int nm_coll_model_bcast_time(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta,
                             size_t segments, double *time_s)
{
  if (!nm_model_args_ok(algo, p, alpha, beta) || !time_s ||
      (algo == NM_COLL_BCAST_PIPELINED_CHAIN && segments == 0))
    return -NM_EINVAL;
  *time_s = nm_model_flat(algo, p, (double)m, alpha, beta, segments ? (double)segments : 1);
  return NM_ESUCCESS;
}

/* Section 3, Algorithm 1: outer broadcast among G leaders, then inner broadcast in groups of ceil(p / G).
 * Each of eqs. (1), (3), (5) and the costs of 3.3, 3.5, 3.6 is this sum of the flat formula at G and p / G. */
static double nm_model_hier(enum nm_coll_bcast_algo_e algo, int p, int g, double m, double alpha, double beta,
                            double x)
{
  int inner = (p + g - 1) / g;
  return nm_model_flat(algo, g, m, alpha, beta, x) + nm_model_flat(algo, inner, m, alpha, beta, x);
}

int nm_coll_model_bcast_hier_time(enum nm_coll_bcast_algo_e algo, int p, int groups, size_t m, double alpha,
                                  double beta, size_t segments, double *time_s)
{
  if (!nm_model_args_ok(algo, p, alpha, beta) || !time_s || groups < 1 || groups > p ||
      (algo == NM_COLL_BCAST_PIPELINED_CHAIN && segments == 0))
    return -NM_EINVAL;
  *time_s = nm_model_hier(algo, p, groups, (double)m, alpha, beta, segments ? (double)segments : 1);
  return NM_ESUCCESS;
}

size_t nm_coll_model_best_segments(int p, int groups, size_t m, double alpha, double beta)
{
  if (!nm_model_args_ok(NM_COLL_BCAST_PIPELINED_CHAIN, p, alpha, beta) || groups < 1 || groups > p || m == 0)
    return 1;
  /* Each level of n >= 2 processes costs X alpha + m beta + (n - 2) alpha + (n - 2) m beta / X; with k such
   * levels and S = sum of (n - 2), d/dX = 0 at X* = sqrt(S m beta / (k alpha)): section 2.1.3's
   * sqrt((p - 2) m beta / alpha) flat, eq. (3)'s sqrt((G + p/G - 4) m beta / (2 alpha)) hierarchical. */
  int sizes[2] = {groups, (p + groups - 1) / groups};
  if (groups == 1) {
    sizes[0] = p;
    sizes[1] = 1;
  }
  double k = 0, s = 0;
  for (int i = 0; i < 2; i++)
    if (sizes[i] >= 2) {
      k++;
      s += sizes[i] - 2;
    }
  const double md = (double)m;
  if (k == 0 || s == 0 || md * beta == 0)
    return 1;
  double xs = alpha > 0 ? sqrt(s * md * beta / (k * alpha)) : md;
  if (xs > md)
    xs = md;
  if (xs < 1)
    xs = 1;
  /* the cost is convex in X: the better of the two integers around X* is the integer optimum */
  double lo = floor(xs), hi = ceil(xs);
  double tlo = nm_model_hier(NM_COLL_BCAST_PIPELINED_CHAIN, p, groups, md, alpha, beta, lo);
  double thi = nm_model_hier(NM_COLL_BCAST_PIPELINED_CHAIN, p, groups, md, alpha, beta, hi);
  return (size_t)(thi < tlo ? hi : lo);
}

/* Time of @p algo with G groups (G = 1: flat) and its best X where it has one. */
static double nm_model_best_at(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m, double alpha, double beta,
                               size_t *x_out)
{
  size_t x = algo == NM_COLL_BCAST_PIPELINED_CHAIN ? nm_coll_model_best_segments(p, g, m, alpha, beta) : 1;
  if (x_out)
    *x_out = x;
  return nm_model_hier(algo, p, g, (double)m, alpha, beta, (double)x);
}

/* The cheapest G among 1 and the integers from sqrt(p) / 2 to 2 sqrt(p), around the minimum sections 3.1, 3.2
 * and 3.4 put at sqrt(p): when G does not divide p, groups of ceil(p / G) move the integer minimum to a nearby
 * divisor (p = 6142 = 74 x 83: G = 74, not 78). About 1.5 sqrt(p) evaluations, 120 at p = 6142. */
static int nm_model_groups_near_sqrt(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta,
                                     int allow_one)
{
  int r = (int)floor(sqrt((double)p)), best = allow_one ? 1 : 0;
  double tbest = allow_one ? nm_model_best_at(algo, p, 1, m, alpha, beta, NULL) : INFINITY;
  for (int g = r / 2; g <= 2 * r + 1; g++) {
    if (g < 2 || g >= p)
      continue;
    double t = nm_model_best_at(algo, p, g, m, alpha, beta, NULL);
    if (t < tbest) {
      tbest = t;
      best = g;
    }
  }
  return best ? best : 1;
}

int nm_coll_model_best_groups(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta)
{
  if (!nm_model_args_ok(algo, p, alpha, beta) || p < 4)
    return 1;
  switch (algo) {
  case NM_COLL_BCAST_FLAT: /* 3.1: F(G) = (G + p/G - 2)(alpha + m beta), minimum at sqrt(p) */
  case NM_COLL_BCAST_CHAIN:
  case NM_COLL_BCAST_PIPELINED_CHAIN: /* 3.2: eq. (3), minimum at sqrt(p) whatever X */
    return nm_model_groups_near_sqrt(algo, p, m, alpha, beta, 1);
  case NM_COLL_BCAST_SCATTER_RING:
    /* 3.4: F'(G) = (G^2 - p) / G^2 (alpha - 2 m beta / p): sqrt(p) is the minimum iff alpha / beta > 2 m / p
     * (eq. (6)); otherwise it is a maximum and G = 1 (or p, the same cost) is best. */
    if (alpha * p > 2.0 * (double)m * beta)
      return nm_model_groups_near_sqrt(algo, p, m, alpha, beta, 1);
    return 1;
  default: /* 3.3, 3.5, 3.6: binary, binomial, scatter-rd, split-binary gain nothing from groups */
    return 1;
  }
}

/* Sections 3.1-3.4 and 3.7: the four algorithms whose hierarchical transformation can pay. */
static int nm_model_hier_pays(enum nm_coll_bcast_algo_e algo)
{
  return algo == NM_COLL_BCAST_FLAT || algo == NM_COLL_BCAST_CHAIN || algo == NM_COLL_BCAST_PIPELINED_CHAIN ||
         algo == NM_COLL_BCAST_SCATTER_RING;
}

static void nm_model_fill(struct nm_coll_bcast_choice_s *c, enum nm_coll_bcast_algo_e algo, int g, size_t m,
                          size_t x, double t)
{
  c->algo = algo;
  c->hierarchical = g > 1;
  c->groups = g;
  c->segment = algo == NM_COLL_BCAST_PIPELINED_CHAIN ? (m + x - 1) / x : 0;
  c->predicted_s = t;
}

int nm_coll_bcast_choose(int p, size_t m, double alpha, double beta, struct nm_coll_bcast_choice_s *out)
{
  if (!nm_model_args_ok(NM_COLL_BCAST_FLAT, p, alpha, beta) || !out)
    return -NM_EINVAL;
  struct nm_coll_bcast_choice_s best = {.predicted_s = INFINITY};
  size_t x;
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    double t = nm_model_best_at((enum nm_coll_bcast_algo_e)a, p, 1, m, alpha, beta, &x);
    if (t < best.predicted_s)
      nm_model_fill(&best, (enum nm_coll_bcast_algo_e)a, 1, m, x, t);
  }
  /* second pass: a hierarchy (two group communicators to build and keep) only when strictly cheaper than
   * every flat algorithm, so that ties (p = 4: two flat steps = binomial) go to the flat one */
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    enum nm_coll_bcast_algo_e algo = (enum nm_coll_bcast_algo_e)a;
    if (!nm_model_hier_pays(algo))
      continue;
    int g = nm_coll_model_best_groups(algo, p, m, alpha, beta);
    if (g <= 1 || g >= p)
      continue;
    double t = nm_model_best_at(algo, p, g, m, alpha, beta, &x);
    if (t < best.predicted_s * (1 - 1e-12))
      nm_model_fill(&best, algo, g, m, x, t);
  }
  *out = best;
  return NM_ESUCCESS;
}

int nm_coll_bcast_choice_complete(const struct nm_coll_bcast_choice_s *forced, int p, size_t m, double alpha,
                                  double beta, struct nm_coll_bcast_choice_s *out)
{
  if (!forced || !out || !nm_model_args_ok(forced->algo, p, alpha, beta) || forced->groups < 0)
    return -NM_EINVAL;
  struct nm_coll_bcast_choice_s c = *forced;
  if (!c.hierarchical)
    c.groups = 1;
  else if (c.groups == 0) {
    c.groups = nm_coll_model_best_groups(c.algo, p, m, alpha, beta);
    /* the expert asked for groups where the paper finds no gain (3.3, 3.5, 3.6): its extremum, sqrt(p) */
    if (c.groups == 1 && p >= 4)
      c.groups = nm_model_groups_near_sqrt(c.algo, p, m, alpha, beta, 0);
  }
  if (c.groups > p)
    c.groups = p;
  size_t x = 1;
  if (c.algo == NM_COLL_BCAST_PIPELINED_CHAIN) {
    if (c.segment && m)
      x = m / c.segment + (m % c.segment != 0); /* no m + segment - 1: a forced segment may be near SIZE_MAX */
    else
      x = nm_coll_model_best_segments(p, c.groups, m, alpha, beta);
    c.segment = m / x + (m % x != 0);
  }
  c.predicted_s = nm_model_hier(c.algo, p, c.groups, (double)m, alpha, beta, (double)x);
  *out = c;
  return NM_ESUCCESS;
}

/* ---- the override: [hier:]ALGO[:groups=G][:segment=SIZE] */

#define NM_COLL_MODEL_ACCEPTED \
  "[hier:]ALGO[:groups=G][:segment=SIZE] with ALGO one of flat, chain, pipelined_chain, binary, split_binary, " \
  "binomial, scatter_ring, scatter_rd; G >= 1; SIZE > 0 bytes, suffix K, M or G"

static int nm_model_parse_fail(const char *spec, const char *why, const char *part)
{
  fprintf(stderr, "nmad: broadcast algorithm '%s' is invalid (%s '%s'); accepted: %s\n", spec, why, part,
          NM_COLL_MODEL_ACCEPTED);
  return -NM_EINVAL;
}

/* A byte count with an optional K, M or G suffix; 0 on a bad or zero value. */
static size_t nm_model_parse_size(const char *s)
{
  char *end;
  errno = 0;
  if (*s < '0' || *s > '9')
    return 0;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  default: break;
  }
  if (errno || *end != '\0' || v > (SIZE_MAX >> shift))
    return 0;
  return (size_t)(v << shift);
}

int nm_coll_bcast_choice_parse(const char *spec, struct nm_coll_bcast_choice_s *out)
{
  if (!spec || !out)
    return -NM_EINVAL;
  char buf[256];
  if (strlen(spec) >= sizeof(buf))
    return nm_model_parse_fail(spec, "longer than 255 characters:", "...");
  strcpy(buf, spec);
  struct nm_coll_bcast_choice_s c = {.groups = 1};
  int have_algo = 0, want_hier = 0, have_groups = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
    if (!have_algo) {
      if (!want_hier && strcmp(tok, "hier") == 0) {
        want_hier = 1;
        continue;
      }
      for (char *c = tok; *c; c++) /* nm_coll_bcast_algo_name() spells them with '-': accept both */
        if (*c == '-')
          *c = '_';
      int a = 0;
      while (a < NM_COLL_BCAST_NALGOS && strcmp(tok, nm_coll_model_names[a]) != 0)
        a++;
      if (a == NM_COLL_BCAST_NALGOS)
        return nm_model_parse_fail(spec, "unknown algorithm", tok);
      c.algo = (enum nm_coll_bcast_algo_e)a;
      have_algo = 1;
    } else if (strncmp(tok, "groups=", 7) == 0) {
      char *end;
      errno = 0;
      long g = strtol(tok + 7, &end, 10);
      if (errno || end == tok + 7 || *end || g < 1 || g > INT_MAX)
        return nm_model_parse_fail(spec, "bad group count", tok);
      c.groups = (int)g;
      want_hier = have_groups = 1;
    } else if (strncmp(tok, "segment=", 8) == 0) {
      if (!(c.segment = nm_model_parse_size(tok + 8)))
        return nm_model_parse_fail(spec, "bad segment size", tok);
    } else
      return nm_model_parse_fail(spec, "unknown option", tok);
  }
  if (!have_algo)
    return nm_model_parse_fail(spec, "no algorithm in", spec);
  /* "hier:ALGO" without groups=: G is the model's, chosen when p and m are known */
  if (want_hier && !have_groups)
    c.groups = 0;
  c.hierarchical = want_hier;
  *out = c;
  return NM_ESUCCESS;
}
