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

static int nm_model_net_ok(const struct nm_coll_model_net_s *net)
{
  return net && isfinite(net->L) && isfinite(net->o) && isfinite(net->beta) && net->L >= 0 && net->o >= 0 &&
         net->beta >= 0 && isfinite(net->burst) && net->burst >= 0 && isfinite(net->o_burst) && net->o_burst >= 0;
}

static int nm_model_args_ok(enum nm_coll_bcast_algo_e algo, int p, const struct nm_coll_model_net_s *net)
{
  return (int)algo >= 0 && algo < NM_COLL_BCAST_NALGOS && p >= 1 && nm_model_net_ok(net);
}

/* Hasanov's Hockney model is the special case L = 0, o = alpha: every alpha of the paper is one message sent on
 * the critical path, charged at its sender. */
static struct nm_coll_model_net_s nm_model_net_of_hockney(double alpha, double beta)
{
  struct nm_coll_model_net_s net = {.L = 0, .o = alpha, .beta = beta, .burst = 0, .o_burst = 0};
  return net;
}

void nm_coll_model_net_hockney(double alpha, double beta, struct nm_coll_model_net_s *net)
{
  if (net)
    *net = nm_model_net_of_hockney(alpha, beta);
}

int nm_coll_model_logp(uint32_t latency_ns, uint32_t overhead_ns, uint32_t gap_ns, uint32_t gap_free,
                       uint32_t bandwidth_MBps, struct nm_coll_model_net_s *net)
{
  if (bandwidth_MBps == 0 || !net)
    return -NM_EINVAL;
  /* a lone message pays o + L (LogP): the wire's share is what the sender's overhead leaves of the latency */
  net->L = (double)(latency_ns > overhead_ns ? latency_ns - overhead_ns : 0) * 1e-9;
  /* a broadcast's senders send back to back: each message holds the sender for o, or for g when the next
   * message cannot leave sooner (LogP's gap) */
  net->o = (double)(gap_ns > overhead_ns ? gap_ns : overhead_ns) * 1e-9;
  net->beta = 1.0 / ((double)bandwidth_MBps * 1e6);
  /* the first messages after a pause leave at the sender's own overhead: the gap binds only on a longer burst */
  net->burst = (double)gap_free;
  net->o_burst = (double)(overhead_ns < latency_ns ? overhead_ns : latency_ns) * 1e-9;
  return NM_ESUCCESS;
}

/* The overheads of k messages one sender posts back to back after a pause (it received, or had nothing to send):
 * the first net->burst hold it o_burst each, the others o each. Without a burst (Hockney, most drivers) k o.
 * A forwarder starts its row when the message it forwards arrives, so each algorithm's rows are its senders'
 * messages between two receptions. */
static double nm_model_row(const struct nm_coll_model_net_s *net, double k)
{
  if (k <= 0)
    return 0;
  double in_burst = k < net->burst ? k : net->burst;
  return in_burst * net->o_burst + (k - in_burst) * net->o;
}

/* The formulas in LogP form, arguments already checked; X >= 1. A message of m bytes holds its sender for
 * o + m beta (its overhead, then its bytes on the sender's link) and reaches its receiver L later; a sender's
 * messages leave one after the other. Each formula counts the messages sent one after the other on the
 * critical path (each o + m beta) and the hops along it (each L); where the paper writes k (alpha + m beta),
 * the path has k messages, and L = 0, o = alpha gives back the paper's formula term for term. With a send queue
 * (net->burst > 0), a sender's overheads are those of its row of messages (nm_model_row()): o1 for a message
 * sent right after a reception, row(k) for a root's k messages in a row. */
static double nm_model_flat(enum nm_coll_bcast_algo_e algo, int p, double m, const struct nm_coll_model_net_s *net,
                            double x)
{
  if (p <= 1)
    return 0;
  const double n = p, L = net->L, beta = net->beta;
  const double o1 = nm_model_row(net, 1); /* a message sent after a reception */
  const double s1 = o1 + m * beta;        /* one whole message at its sender, after a reception */
  switch (algo) {
  case NM_COLL_BCAST_FLAT:
    /* 2.1.1, (p - 1)(alpha + m beta): the root sends p - 1 messages in a row; the last one then needs one hop */
    return L + (n - 1) * m * beta + nm_model_row(net, n - 1);
  case NM_COLL_BCAST_CHAIN:
    /* 2.1.2, (p - 1)(alpha + m beta): p - 1 messages, each one hop further */
    return (n - 1) * (s1 + L);
  case NM_COLL_BCAST_PIPELINED_CHAIN: {
    /* 2.1.3, (X + p - 2)(alpha + (m / X) beta): the first segment crosses p - 1 hops, each o + (m/X) beta + L;
     * then X - 1 segments follow, one per period. Each segment is sent synchronously (collectives/bcast_classic.c,
     * nm_bc_pipelined_chain(): one segment at a time on a link), so a period also holds the receiver's answer,
     * a round trip: o + (m/X) beta + 2L. A segment holds at least one byte: X above m is priced as X = m. */
    if (x > m && m >= 1)
      x = m;
    const double sx = o1 + m / x * beta;
    return (n - 1) * (sx + L) + (x - 1) * (sx + 2 * L);
  }
  case NM_COLL_BCAST_BINARY:
    /* 2.1.4, 2 (log2(p + 1) - 1)(alpha + m beta): per level of the tree, two messages from the parent, then one
     * hop; log2(p + 1) - 1 = floor(log2 p), the depth of the heap-ordered tree, for every p */
    return nm_floor_log2(p) * (nm_model_row(net, 2) + 2 * m * beta + L);
  case NM_COLL_BCAST_SPLIT_BINARY: {
    const double two = nm_model_row(net, 2) + 2 * m * beta, half = o1 + m / 2 * beta;
    if (p == 2) /* no second subtree: one plain send */
      return s1 + L;
    /* 2.1.5, 2 (log2(p + 1) - 2)(alpha + m beta) + alpha + (m / 2) beta: floor(log2 p) - 1 levels of two messages
     * and one hop, then the exchange, one half-message and one hop. Below p = 7 the formula undercounts (p = 3
     * would cost less than one message); the root must at least send both halves (2o + m beta, one hop) and the
     * pairs exchange theirs (one more half, one more hop): 3o + 1.5 m beta + 2L, exact at p = 3. */
    double paper = (nm_floor_log2(p) - 1) * (two + L) + half + L;
    double floor_cost = nm_model_row(net, 2) + o1 + 1.5 * m * beta + 2 * L;
    return paper > floor_cost ? paper : floor_cost;
  }
  case NM_COLL_BCAST_BINOMIAL:
    /* 2.1.6, log2(p)(alpha + m beta), log2 rounded up to whole rounds: every path from the root to the last
     * member has ceil(log2 p) messages in a row, and the one through each first child has as many hops */
    return nm_ceil_log2(p) * (s1 + L);
  case NM_COLL_BCAST_SCATTER_RING:
    /* 2.1.7, (log2(p) + p - 1) alpha + 2 (p - 1) / p m beta: the binomial scatter's log2(p) steps and the ring's
     * p - 1 steps each send one piece and wait one hop for the next; the pieces add up to m (p - 1)/p per phase */
    return (nm_ceil_log2(p) + n - 1) * (o1 + L) + 2 * (n - 1) / n * m * beta;
  case NM_COLL_BCAST_SCATTER_RD: {
    /* 2.1.8, 2 log2(p) alpha + 2 (p - 1) / p m beta: log2(p) scatter steps and log2(p) exchange steps, each a
     * message and a hop. p not a power of two: the broadcast (collectives/bcast_classic.c, as MPICH) runs over
     * the first p' = 2^floor(log2 p) members, then member v >= p' gets the whole message from v - p' */
    int k = nm_floor_log2(p);
    double q = (double)(1LL << k), extra = (1LL << k) < (long long)p ? s1 + L : 0;
    return 2.0 * k * (o1 + L) + 2 * (q - 1) / q * m * beta + extra;
  }
  default:
    return 0;
  }
}

int nm_coll_model_bcast_time_logp(enum nm_coll_bcast_algo_e algo, int p, size_t m,
                                  const struct nm_coll_model_net_s *net, size_t segments, double *time_s)
{
  if (!nm_model_args_ok(algo, p, net) || !time_s || (algo == NM_COLL_BCAST_PIPELINED_CHAIN && segments == 0))
    return -NM_EINVAL;
  *time_s = nm_model_flat(algo, p, (double)m, net, segments ? (double)segments : 1);
  return NM_ESUCCESS;
}

int nm_coll_model_bcast_time(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta,
                             size_t segments, double *time_s)
{
  struct nm_coll_model_net_s net = nm_model_net_of_hockney(alpha, beta);
  return nm_coll_model_bcast_time_logp(algo, p, m, &net, segments, time_s);
}

/* Section 3, Algorithm 1: outer broadcast among G leaders, then inner broadcast in groups of ceil(p / G).
 * Each of eqs. (1), (3), (5) and the costs of 3.3, 3.5, 3.6 is this sum of the flat formula at G and p / G; in
 * LogP form the two phases follow each other too, so the sum holds with each phase's LogP cost. */
static double nm_model_hier(enum nm_coll_bcast_algo_e algo, int p, int g, double m,
                            const struct nm_coll_model_net_s *net, double x)
{
  int inner = (p + g - 1) / g;
  double t = nm_model_flat(algo, g, m, net, x) + nm_model_flat(algo, inner, m, net, x);
  if (algo == NM_COLL_BCAST_FLAT && g > 1 && inner > 1) {
    /* the root leads its own group: its outer and inner messages are one row, which a send queue may not take
     * at once (without one this path is never the longest: it has one hop less) */
    double k = (double)(g - 1) + (double)(inner - 1), root_row = net->L + k * m * net->beta + nm_model_row(net, k);
    if (root_row > t)
      t = root_row;
  }
  return t;
}

int nm_coll_model_bcast_hier_time_logp(enum nm_coll_bcast_algo_e algo, int p, int groups, size_t m,
                                       const struct nm_coll_model_net_s *net, size_t segments, double *time_s)
{
  if (!nm_model_args_ok(algo, p, net) || !time_s || groups < 1 || groups > p ||
      (algo == NM_COLL_BCAST_PIPELINED_CHAIN && segments == 0))
    return -NM_EINVAL;
  *time_s = nm_model_hier(algo, p, groups, (double)m, net, segments ? (double)segments : 1);
  return NM_ESUCCESS;
}

int nm_coll_model_bcast_hier_time(enum nm_coll_bcast_algo_e algo, int p, int groups, size_t m, double alpha,
                                  double beta, size_t segments, double *time_s)
{
  struct nm_coll_model_net_s net = nm_model_net_of_hockney(alpha, beta);
  return nm_coll_model_bcast_hier_time_logp(algo, p, groups, m, &net, segments, time_s);
}

size_t nm_coll_model_best_segments_logp(int p, int groups, size_t m, const struct nm_coll_model_net_s *net)
{
  if (!nm_model_args_ok(NM_COLL_BCAST_PIPELINED_CHAIN, p, net) || groups < 1 || groups > p || m == 0)
    return 1;
  /* Each level of n >= 2 processes costs (X - 1)(o + 2L) + (n - 1)(o + L) + (X + n - 2) m beta / X; with k such
   * levels and S = sum of (n - 2), d/dX = 0 at X* = sqrt(S m beta / (k (o + 2L))). With L = 0, o = alpha this is
   * section 2.1.3's sqrt((p - 2) m beta / alpha) flat, eq. (3)'s sqrt((G + p/G - 4) m beta / (2 alpha))
   * hierarchical. */
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
  const double md = (double)m, per_segment = nm_model_row(net, 1) + 2 * net->L;
  if (k == 0 || s == 0 || md * net->beta == 0)
    return 1;
  double xs = per_segment > 0 ? sqrt(s * md * net->beta / (k * per_segment)) : md;
  if (xs > md)
    xs = md;
  if (xs < 1)
    xs = 1;
  /* the cost is convex in X: the better of the two integers around X* is the integer optimum */
  double lo = floor(xs), hi = ceil(xs);
  double tlo = nm_model_hier(NM_COLL_BCAST_PIPELINED_CHAIN, p, groups, md, net, lo);
  double thi = nm_model_hier(NM_COLL_BCAST_PIPELINED_CHAIN, p, groups, md, net, hi);
  return (size_t)(thi < tlo ? hi : lo);
}

size_t nm_coll_model_best_segments(int p, int groups, size_t m, double alpha, double beta)
{
  struct nm_coll_model_net_s net = nm_model_net_of_hockney(alpha, beta);
  return nm_coll_model_best_segments_logp(p, groups, m, &net);
}

/* Time of @p algo with G groups (G = 1: flat) and its best X where it has one. */
static double nm_model_best_at(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m,
                               const struct nm_coll_model_net_s *net, size_t *x_out)
{
  size_t x = algo == NM_COLL_BCAST_PIPELINED_CHAIN ? nm_coll_model_best_segments_logp(p, g, m, net) : 1;
  if (x_out)
    *x_out = x;
  return nm_model_hier(algo, p, g, (double)m, net, (double)x);
}

/* The cheapest G among 1 and the integers from sqrt(p) / 2 to 2 sqrt(p), around the minimum sections 3.1, 3.2
 * and 3.4 put at sqrt(p): when G does not divide p, groups of ceil(p / G) move the integer minimum to a nearby
 * divisor (p = 6142 = 74 x 83: G = 74, not 78). About 1.5 sqrt(p) evaluations, 120 at p = 6142. */
static int nm_model_groups_near_sqrt(enum nm_coll_bcast_algo_e algo, int p, size_t m,
                                     const struct nm_coll_model_net_s *net, int allow_one)
{
  int r = (int)floor(sqrt((double)p)), best = allow_one ? 1 : 0;
  double tbest = allow_one ? nm_model_best_at(algo, p, 1, m, net, NULL) : INFINITY;
  for (int g = r / 2; g <= 2 * r + 1; g++) {
    if (g < 2 || g >= p)
      continue;
    double t = nm_model_best_at(algo, p, g, m, net, NULL);
    if (t < tbest) {
      tbest = t;
      best = g;
    }
  }
  return best ? best : 1;
}

int nm_coll_model_best_groups_logp(enum nm_coll_bcast_algo_e algo, int p, size_t m,
                                   const struct nm_coll_model_net_s *net)
{
  if (!nm_model_args_ok(algo, p, net) || p < 4)
    return 1;
  switch (algo) {
  case NM_COLL_BCAST_FLAT:
    /* 3.1: F(G) = (G + p/G - 2)(alpha + m beta), minimum at sqrt(p); in LogP form 2L + (G + p/G - 2)(o + m beta),
     * the same minimum */
  case NM_COLL_BCAST_CHAIN:
  case NM_COLL_BCAST_PIPELINED_CHAIN: /* 3.2: eq. (3), minimum at sqrt(p) whatever X (LogP: the same) */
    return nm_model_groups_near_sqrt(algo, p, m, net, 1);
  case NM_COLL_BCAST_SCATTER_RING:
    /* 3.4: F'(G) = (G^2 - p) / G^2 (alpha - 2 m beta / p): sqrt(p) is the minimum iff alpha / beta > 2 m / p
     * (eq. (6)); otherwise it is a maximum and G = 1 (or p, the same cost) is best. In LogP form every alpha of
     * F is a step of one message and one hop: alpha reads o + L. */
    if ((nm_model_row(net, 1) + net->L) * p > 2.0 * (double)m * net->beta)
      return nm_model_groups_near_sqrt(algo, p, m, net, 1);
    return 1;
  default: /* 3.3, 3.5, 3.6: binary, binomial, scatter-rd, split-binary gain nothing from groups */
    return 1;
  }
}

int nm_coll_model_best_groups(enum nm_coll_bcast_algo_e algo, int p, size_t m, double alpha, double beta)
{
  struct nm_coll_model_net_s net = nm_model_net_of_hockney(alpha, beta);
  return nm_coll_model_best_groups_logp(algo, p, m, &net);
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

int nm_coll_bcast_choose_logp(int p, size_t m, const struct nm_coll_model_net_s *net,
                              struct nm_coll_bcast_choice_s *out)
{
  if (!nm_model_args_ok(NM_COLL_BCAST_FLAT, p, net) || !out)
    return -NM_EINVAL;
  struct nm_coll_bcast_choice_s best = {.predicted_s = INFINITY};
  size_t x;
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    double t = nm_model_best_at((enum nm_coll_bcast_algo_e)a, p, 1, m, net, &x);
    if (t < best.predicted_s)
      nm_model_fill(&best, (enum nm_coll_bcast_algo_e)a, 1, m, x, t);
  }
  /* second pass: a hierarchy (two group communicators to build and keep) only when strictly cheaper than
   * every flat algorithm, so that ties (p = 4: two flat steps = binomial) go to the flat one */
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    enum nm_coll_bcast_algo_e algo = (enum nm_coll_bcast_algo_e)a;
    if (!nm_model_hier_pays(algo))
      continue;
    int g = nm_coll_model_best_groups_logp(algo, p, m, net);
    if (g <= 1 || g >= p)
      continue;
    double t = nm_model_best_at(algo, p, g, m, net, &x);
    if (t < best.predicted_s * (1 - 1e-12))
      nm_model_fill(&best, algo, g, m, x, t);
  }
  *out = best;
  return NM_ESUCCESS;
}

int nm_coll_bcast_choose(int p, size_t m, double alpha, double beta, struct nm_coll_bcast_choice_s *out)
{
  struct nm_coll_model_net_s net = nm_model_net_of_hockney(alpha, beta);
  return nm_coll_bcast_choose_logp(p, m, &net, out);
}

int nm_coll_bcast_choice_complete_logp(const struct nm_coll_bcast_choice_s *forced, int p, size_t m,
                                       const struct nm_coll_model_net_s *net, struct nm_coll_bcast_choice_s *out)
{
  if (!forced || !out || !nm_model_args_ok(forced->algo, p, net) || forced->groups < 0)
    return -NM_EINVAL;
  struct nm_coll_bcast_choice_s c = *forced;
  if (!c.hierarchical)
    c.groups = 1;
  else if (c.groups == 0) {
    c.groups = nm_coll_model_best_groups_logp(c.algo, p, m, net);
    /* the expert asked for groups where the paper finds no gain (3.3, 3.5, 3.6): its extremum, sqrt(p) */
    if (c.groups == 1 && p >= 4)
      c.groups = nm_model_groups_near_sqrt(c.algo, p, m, net, 0);
  }
  if (c.groups > p)
    c.groups = p;
  size_t x = 1;
  if (c.algo == NM_COLL_BCAST_PIPELINED_CHAIN) {
    if (c.segment && m)
      x = m / c.segment + (m % c.segment != 0); /* no m + segment - 1: a forced segment may be near SIZE_MAX */
    else
      x = nm_coll_model_best_segments_logp(p, c.groups, m, net);
    c.segment = m / x + (m % x != 0);
  }
  c.predicted_s = nm_model_hier(c.algo, p, c.groups, (double)m, net, (double)x);
  *out = c;
  return NM_ESUCCESS;
}

int nm_coll_bcast_choice_complete(const struct nm_coll_bcast_choice_s *forced, int p, size_t m, double alpha,
                                  double beta, struct nm_coll_bcast_choice_s *out)
{
  struct nm_coll_model_net_s net = nm_model_net_of_hockney(alpha, beta);
  return nm_coll_bcast_choice_complete_logp(forced, p, m, &net, out);
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
