/* Unit tests of the broadcast cost models and the model's choice (issue 17, deliverable 4): the formulas are
 * Hasanov & Lastovetsky 2015's (sections 2.1.1-2.1.8 and 3.1-3.6), checked against the paper's expressions at
 * the values of p it assumes, and against the shapes it reports on its platforms (doc/platforms/README.md). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nmad/nm_coll_model.h>
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_coll_gather.h>
#include <nmad/nm_coll_alltoall.h>
#include <nmad/nm_coll_allgather.h>
#include <nmad/nm_coll_barrier.h>
#include <nmad/nm_coll_sched.h>
#include <float.h>
#include "collectives/nm_coll_reduce_private.h"
#include <nmad/nm_errno.h>

/* Hockney figures of doc/platforms/README.md (CM02). The torus's alpha is the BG/P MPI software latency the
 * README cites (~3 us), the one the paper's platform had; its hardware alone is 0.119 us. */
#define INTI_A 1.4e-6
#define INTI_B (1.0 / 3.3e9)
#define GRAPH_A 48e-6
#define GRAPH_B (1.0 / 117.7e6)
#define TORUS_A 3e-6
#define TORUS_B (1.0 / 425e6)

static const double plat_a[] = {INTI_A, GRAPH_A, TORUS_A, 0.119e-6};
static const double plat_b[] = {INTI_B, GRAPH_B, TORUS_B, TORUS_B};
#define NPLAT 4

/* NaN on an error code, so that every comparison with it fails (and no Check call in the hot loops: each one
 * costs a write to Check's pipe) */
static double flat_t(enum nm_coll_bcast_algo_e algo, int p, size_t m, double a, double b, size_t x)
{
  double t;
  return nm_coll_model_bcast_time(algo, p, m, a, b, x, &t) ? NAN : t;
}

static double hier_t(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m, double a, double b, size_t x)
{
  double t;
  return nm_coll_model_bcast_hier_time(algo, p, g, m, a, b, x, &t) ? NAN : t;
}

#define ck_assert_close(x, y) ck_assert_msg(fabs((x) - (y)) <= 1e-9 * fabs(y) + 1e-15, "%.12g != %.12g", (x), (y))

/* A model's time of (algo, p, G, m, X) on the network @p net (NAN: not defined). */
typedef double (*model_time_fn)(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m, size_t x, const void *net);

/* The brute force the choosers are checked against: every algorithm, every G for those whose hierarchy pays
 * (section 3.7) and every X up to 4096 for the pipelined chain; the least time. */
static double brute_best(int p, size_t m, model_time_fn t_of, const void *net)
{
  double brute = INFINITY;
  for (int algo = 0; algo < NM_COLL_BCAST_NALGOS; algo++) {
    int pays = algo == NM_COLL_BCAST_FLAT || algo == NM_COLL_BCAST_CHAIN || algo == NM_COLL_BCAST_PIPELINED_CHAIN ||
               algo == NM_COLL_BCAST_SCATTER_RING;
    size_t xmax = algo == NM_COLL_BCAST_PIPELINED_CHAIN ? (m < 4096 ? (m ? m : 1) : 4096) : 1;
    for (int g = 1; g <= (pays ? p : 1); g++)
      for (size_t x = 1; x <= xmax; x++) {
        double t = t_of((enum nm_coll_bcast_algo_e)algo, p, g, m, x, net);
        brute = t < brute || isnan(t) ? t : brute;
      }
  }
  return brute;
}

/* Section 2.1: at p = 2^k (2^k - 1 for the binary trees) the model is the paper's formula, term for term. */
START_TEST(test_flat_formulas)
{
  const double a = TORUS_A, b = TORUS_B;
  const size_t m = 512 << 10;
  const double t1 = a + m * b;
  for (int k = 1; k <= 12; k++) {
    const double p = 1 << k, q = (1 << k) - 1, lp = log2(p);
    ck_assert_close(flat_t(NM_COLL_BCAST_FLAT, (int)p, m, a, b, 1), (p - 1) * t1);
    ck_assert_close(flat_t(NM_COLL_BCAST_CHAIN, (int)p, m, a, b, 1), (p - 1) * t1);
    for (size_t x = 1; x <= 4096; x *= 8)
      ck_assert_close(flat_t(NM_COLL_BCAST_PIPELINED_CHAIN, (int)p, m, a, b, x), (x + p - 2) * (a + (double)m / x * b));
    ck_assert_close(flat_t(NM_COLL_BCAST_BINOMIAL, (int)p, m, a, b, 1), lp * t1);
    ck_assert_close(flat_t(NM_COLL_BCAST_SCATTER_RING, (int)p, m, a, b, 1), (lp + p - 1) * a + 2 * (p - 1) / p * m * b);
    ck_assert_close(flat_t(NM_COLL_BCAST_SCATTER_RD, (int)p, m, a, b, 1), 2 * lp * a + 2 * (p - 1) / p * m * b);
    if (k >= 2) {
      ck_assert_close(flat_t(NM_COLL_BCAST_BINARY, (int)q, m, a, b, 1), 2 * (log2(q + 1) - 1) * t1);
      if (k >= 3) /* below p = 7 the paper's split-binary undercounts (doc/collectives.md) */
        ck_assert_close(flat_t(NM_COLL_BCAST_SPLIT_BINARY, (int)q, m, a, b, 1),
                        2 * (log2(q + 1) - 2) * t1 + a + m / 2.0 * b);
    }
  }
  /* one process: nothing to send; split-binary at p = 3: both halves, then the exchange */
  for (int algo = 0; algo < NM_COLL_BCAST_NALGOS; algo++)
    ck_assert(flat_t(algo, 1, m, a, b, 1) == 0);
  ck_assert_close(flat_t(NM_COLL_BCAST_SPLIT_BINARY, 3, m, a, b, 1), 3 * a + 1.5 * m * b);
  /* scatter-rd at p = 6142: over p' = 4096 members, then one whole message to the 2046 others */
  ck_assert_close(flat_t(NM_COLL_BCAST_SCATTER_RD, 6142, m, a, b, 1), 2 * 12 * a + 2 * 4095.0 / 4096 * m * b + t1);
  /* binomial and scatter-ring round log2 up to whole rounds */
  ck_assert_close(flat_t(NM_COLL_BCAST_BINOMIAL, 6142, m, a, b, 1), 13 * t1);
  ck_assert_close(flat_t(NM_COLL_BCAST_SCATTER_RING, 6142, m, a, b, 1), (13 + 6141) * a + 2 * 6141.0 / 6142 * m * b);
}
END_TEST

/* Section 3: eqs. (1), (3), (5), (7) and the costs of 3.3 and 3.5 at p and G powers of two. */
START_TEST(test_hier_equations)
{
  const double a = GRAPH_A, b = GRAPH_B;
  const size_t m = 16 << 10;
  const int p = 4096;
  for (int g = 2; g < p; g *= 2) {
    const double G = g, P = p, t1 = a + m * b;
    ck_assert_close(hier_t(NM_COLL_BCAST_FLAT, p, g, m, a, b, 1), (G + P / G - 2) * t1);  /* (1) */
    ck_assert_close(hier_t(NM_COLL_BCAST_CHAIN, p, g, m, a, b, 1), (G + P / G - 2) * t1); /* (1) */
    for (size_t x = 1; x <= 1024; x *= 4)                                                /* (3) */
      ck_assert_close(hier_t(NM_COLL_BCAST_PIPELINED_CHAIN, p, g, m, a, b, x),
                      (2.0 * x + G + P / G - 4) * (a + (double)m / x * b));
    ck_assert_close(hier_t(NM_COLL_BCAST_SCATTER_RING, p, g, m, a, b, 1),                /* (5) */
                    (log2(P) + G + P / G - 2) * a + 2 * m * (2 - 1 / G - G / P) * b);
    ck_assert_close(hier_t(NM_COLL_BCAST_SCATTER_RD, p, g, m, a, b, 1),                  /* 3.5 */
                    2 * log2(P) * a + 2 * m * (2 - 1 / G - G / P) * b);
    ck_assert_close(hier_t(NM_COLL_BCAST_BINOMIAL, p, g, m, a, b, 1),                    /* 3.3 */
                    flat_t(NM_COLL_BCAST_BINOMIAL, p, m, a, b, 1));
  }
  /* (7): the value at G = sqrt(p) */
  ck_assert_close(hier_t(NM_COLL_BCAST_SCATTER_RING, p, 64, m, a, b, 1),
                  (log2(p) + 2 * 64.0 - 2) * a + 2 * m * (2 - 2 / 64.0) * b);
  /* G = 1 and G = p are the flat algorithm */
  for (int algo = 0; algo < NM_COLL_BCAST_NALGOS; algo++) {
    ck_assert_close(hier_t(algo, 100, 1, m, a, b, 7), flat_t(algo, 100, m, a, b, 7));
    ck_assert_close(hier_t(algo, 100, 100, m, a, b, 7), flat_t(algo, 100, m, a, b, 7));
  }
}
END_TEST

/* Section 4.1 on BG/P parameters: hierarchical scatter-ring-allgather has its minimum near sqrt(p) and beats
 * the flat one at p = 6142, 512 KiB (paper: 3.09x) and 2 MiB; at p = 2048 it gains at 512 KiB (paper: 1.87x)
 * and not at 2 MiB (eq. (6) fails there: alpha / beta = 1275 B < 2 m / p = 2048 B; the paper saw a drop). */
static double srga_best(int p, size_t m, int *gbest)
{
  double best = INFINITY;
  for (int g = 1; g <= p; g++) {
    double t = hier_t(NM_COLL_BCAST_SCATTER_RING, p, g, m, TORUS_A, TORUS_B, 1);
    if (t < best) {
      best = t;
      *gbest = g;
    }
  }
  return best;
}

START_TEST(test_srga_bgp)
{
  int g;
  double flat = flat_t(NM_COLL_BCAST_SCATTER_RING, 6142, 512 << 10, TORUS_A, TORUS_B, 1);
  double best = srga_best(6142, 512 << 10, &g);
  ck_assert_int_ge(g, 78 / 2);
  ck_assert_int_le(g, 78 * 2);
  ck_assert_msg(flat / best >= 2.0, "speedup %.2f at p=6142, 512 KiB", flat / best);
  ck_assert_int_eq(nm_coll_model_best_groups(NM_COLL_BCAST_SCATTER_RING, 6142, 512 << 10, TORUS_A, TORUS_B), g);
  /* the curve is parabola-like (fig. 6): it falls up to its minimum and rises after it */
  ck_assert(hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, 2, 512 << 10, TORUS_A, TORUS_B, 1) >
            hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, 37, 512 << 10, TORUS_A, TORUS_B, 1));
  ck_assert(hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, 37, 512 << 10, TORUS_A, TORUS_B, 1) > best);
  ck_assert(hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, 166, 512 << 10, TORUS_A, TORUS_B, 1) > best);
  ck_assert(hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, 3071, 512 << 10, TORUS_A, TORUS_B, 1) >
            hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, 166, 512 << 10, TORUS_A, TORUS_B, 1));

  flat = flat_t(NM_COLL_BCAST_SCATTER_RING, 6142, 2 << 20, TORUS_A, TORUS_B, 1);
  ck_assert(srga_best(6142, 2 << 20, &g) < flat);
  ck_assert_int_gt(g, 1);

  flat = flat_t(NM_COLL_BCAST_SCATTER_RING, 2048, 512 << 10, TORUS_A, TORUS_B, 1);
  ck_assert(srga_best(2048, 512 << 10, &g) < flat);
  ck_assert_int_ge(g, 45 / 2);
  ck_assert_int_le(g, 45 * 2);

  flat = flat_t(NM_COLL_BCAST_SCATTER_RING, 2048, 2 << 20, TORUS_A, TORUS_B, 1);
  ck_assert_close(srga_best(2048, 2 << 20, &g), flat);
  ck_assert_int_eq(g, 1);
  ck_assert_int_eq(nm_coll_model_best_groups(NM_COLL_BCAST_SCATTER_RING, 2048, 2 << 20, TORUS_A, TORUS_B), 1);
}
END_TEST

/* Sections 3.3, 3.5: hierarchical binomial (any p) and scatter-recursive-doubling (p a power of two, as the
 * paper assumes) never beat the flat ones, whatever G and m; their best G is 1. Hierarchical flat/chain (3.1) always gain from p = 4 on, at G = sqrt(p). */
START_TEST(test_no_gain)
{
  const size_t ms[] = {0, 1, 8, 4096, 65536, 1 << 20, 16 << 20};
  long gains = 0, bad_groups = 0, cases = 0;
  for (int k = 0; k < NPLAT; k++)
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
      for (int p = 1; p <= 300; p++) {
        for (int algo = NM_COLL_BCAST_BINOMIAL; algo <= NM_COLL_BCAST_SCATTER_RD; algo += 2) {
          /* scatter-rd at p not a power of two pays one more whole message (p' = 2^floor(log2 p) members, then
           * the rest), which groups of powers of two can avoid: the paper's claim is for p = 2^k */
          if (algo == NM_COLL_BCAST_SCATTER_RD && (p & (p - 1)))
            continue;
          double flat = flat_t(algo, p, ms[i], plat_a[k], plat_b[k], 1);
          for (int g = 1; g <= p; g++, cases++)
            gains += !(hier_t(algo, p, g, ms[i], plat_a[k], plat_b[k], 1) >= flat * (1 - 1e-12));
        }
        for (int algo = NM_COLL_BCAST_BINARY; algo <= NM_COLL_BCAST_SCATTER_RD; algo++)
          if (algo != NM_COLL_BCAST_SCATTER_RING)
            bad_groups += nm_coll_model_best_groups(algo, p, ms[i], plat_a[k], plat_b[k]) != 1;
        if (p >= 4) {
          /* G + ceil(p/G) is flat around sqrt(p): any G of the minimum will do, within a factor 2 of sqrt(p) */
          int g = nm_coll_model_best_groups(NM_COLL_BCAST_CHAIN, p, ms[i], plat_a[k], plat_b[k]);
          double tg = hier_t(NM_COLL_BCAST_CHAIN, p, g, ms[i], plat_a[k], plat_b[k], 1);
          ck_assert_msg(g >= sqrt(p) / 2 && g <= 2 * sqrt(p) + 1, "p %d G %d", p, g);
          ck_assert(tg <= hier_t(NM_COLL_BCAST_CHAIN, p, (int)lround(sqrt(p)), ms[i], plat_a[k], plat_b[k], 1));
          ck_assert(tg < flat_t(NM_COLL_BCAST_CHAIN, p, ms[i], plat_a[k], plat_b[k], 1));
        }
      }
  ck_assert_int_gt(cases, 500000);
  ck_assert_msg(gains == 0, "%ld (p, G, m) where hierarchical binomial or scatter-rd beat the flat one", gains);
  ck_assert_int_eq(bad_groups, 0);
}
END_TEST

/* Section 2.1.3 / 3.2: X* from the derivative is the integer optimum, clamped to [1, m]. */
START_TEST(test_pipeline_segments)
{
  const size_t m = 16 << 20;
  const int p = 128;
  size_t x = nm_coll_model_best_segments(p, 1, m, GRAPH_A, GRAPH_B);
  ck_assert(fabs((double)x - sqrt((p - 2) * m * GRAPH_B / GRAPH_A)) <= 1);
  double tx = flat_t(NM_COLL_BCAST_PIPELINED_CHAIN, p, m, GRAPH_A, GRAPH_B, x);
  size_t beaten_by = 0;
  for (size_t y = 1; y <= 100000; y += (y < 2000 ? 1 : 97))
    if (!(tx <= flat_t(NM_COLL_BCAST_PIPELINED_CHAIN, p, m, GRAPH_A, GRAPH_B, y)))
      beaten_by = y;
  ck_assert_msg(beaten_by == 0, "X = %zu beats X* = %zu", beaten_by, x);
  /* hierarchical, G = 12 divides p = 144: eq. (3)'s root sqrt((G + p/G - 4) m beta / (2 alpha)) */
  x = nm_coll_model_best_segments(144, 12, m, GRAPH_A, GRAPH_B);
  ck_assert(fabs((double)x - sqrt((12 + 12 - 4) * m * GRAPH_B / (2 * GRAPH_A))) <= 1);
  tx = hier_t(NM_COLL_BCAST_PIPELINED_CHAIN, 144, 12, m, GRAPH_A, GRAPH_B, x);
  ck_assert(tx <= hier_t(NM_COLL_BCAST_PIPELINED_CHAIN, 144, 12, m, GRAPH_A, GRAPH_B, x - 1));
  ck_assert(tx <= hier_t(NM_COLL_BCAST_PIPELINED_CHAIN, 144, 12, m, GRAPH_A, GRAPH_B, x + 1));
  /* clamps: no latency -> one byte per segment; 1 byte, 0 bytes or p <= 2 -> one segment */
  ck_assert_uint_eq(nm_coll_model_best_segments(64, 1, 1000, 0, INTI_B), 1000);
  ck_assert_uint_eq(nm_coll_model_best_segments(64, 1, 1, INTI_A, INTI_B), 1);
  ck_assert_uint_eq(nm_coll_model_best_segments(64, 1, 0, INTI_A, INTI_B), 1);
  ck_assert_uint_eq(nm_coll_model_best_segments(2, 1, m, INTI_A, INTI_B), 1);
  /* more segments than bytes are priced as one byte each */
  ck_assert_close(flat_t(NM_COLL_BCAST_PIPELINED_CHAIN, 8, 10, INTI_A, INTI_B, 1000),
                  flat_t(NM_COLL_BCAST_PIPELINED_CHAIN, 8, 10, INTI_A, INTI_B, 10));
}
END_TEST

/* hier_t as a model_time_fn: @p net is {alpha, beta}. */
static double hockney_t(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m, size_t x, const void *net)
{
  const double *ab = net;
  return hier_t(algo, p, g, m, ab[0], ab[1], x);
}

/* The chooser against a brute force over every algorithm, every G for those whose hierarchy pays (section
 * 3.7) and every X up to 4096 for the pipelined chain; its prediction is its choice's modelled time. */
START_TEST(test_choose_brute_force)
{
  const int ps[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 33, 64};
  const size_t ms[] = {0, 1, 100, 8192, 65536, 1 << 20};
  for (int k = 0; k < NPLAT; k++)
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
      for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++) {
        const int p = ps[i];
        const size_t m = ms[j];
        const double a = plat_a[k], b = plat_b[k];
        const double ab[2] = {a, b};
        double brute = brute_best(p, m, hockney_t, ab);
        struct nm_coll_bcast_choice_s c;
        ck_assert_int_eq(nm_coll_bcast_choose(p, m, a, b, &c), 0);
        ck_assert_msg(c.predicted_s <= brute * (1 + 1e-9) && c.predicted_s >= brute * (1 - 1e-9),
                      "platform %d p %d m %zu: chooser %.9g, brute force %.9g", k, p, m, c.predicted_s, brute);
        ck_assert(c.groups >= 1 && c.groups <= p && (c.hierarchical == (c.groups > 1)));
        size_t x = c.algo == NM_COLL_BCAST_PIPELINED_CHAIN && c.segment ? (m + c.segment - 1) / c.segment : 1;
        ck_assert_close(hier_t(c.algo, p, c.groups, m, a, b, x), c.predicted_s);
      }
}
END_TEST

/* The paper's platforms at its sizes: large messages on many processes go to a bandwidth-optimal algorithm,
 * small ones to a latency-optimal one, and the 128-node Ethernet at 16 MiB to the pipelined chain. */
START_TEST(test_choose_shapes)
{
  struct nm_coll_bcast_choice_s c;
  ck_assert_int_eq(nm_coll_bcast_choose(6142, 8, TORUS_A, TORUS_B, &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_BINOMIAL || c.algo == NM_COLL_BCAST_SCATTER_RD);
  ck_assert_int_eq(nm_coll_bcast_choose(128, 16 << 20, GRAPH_A, GRAPH_B, &c), 0);
  ck_assert_int_eq(c.algo, NM_COLL_BCAST_PIPELINED_CHAIN);
  ck_assert(c.segment > 0 && c.segment < (16u << 20));
  /* never worse than the binomial tree MPI_Bcast uses today */
  for (int k = 0; k < NPLAT; k++)
    for (int p = 2; p <= 6142; p = p * 3 + 1)
      for (size_t m = 1; m <= (1u << 30); m *= 32) {
        ck_assert_int_eq(nm_coll_bcast_choose(p, m, plat_a[k], plat_b[k], &c), 0);
        ck_assert(c.predicted_s <= flat_t(NM_COLL_BCAST_BINOMIAL, p, m, plat_a[k], plat_b[k], 1));
      }
}
END_TEST

START_TEST(test_parse)
{
  struct nm_coll_bcast_choice_s c;
  ck_assert_int_eq(nm_coll_bcast_choice_parse("scatter_ring", &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_SCATTER_RING && !c.hierarchical && c.groups == 1 && c.segment == 0);
  ck_assert_int_eq(nm_coll_bcast_choice_parse("pipelined_chain:segment=64K", &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_PIPELINED_CHAIN && !c.hierarchical && c.segment == 65536);
  ck_assert_int_eq(nm_coll_bcast_choice_parse("hier:scatter_ring:groups=64", &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_SCATTER_RING && c.hierarchical && c.groups == 64);
  ck_assert_int_eq(nm_coll_bcast_choice_parse("hier:chain", &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_CHAIN && c.hierarchical && c.groups == 0);
  ck_assert_int_eq(nm_coll_bcast_choice_parse("hier:scatter-ring", &c), 0); /* nm_coll_bcast_algo_name()'s */
  ck_assert(c.algo == NM_COLL_BCAST_SCATTER_RING && c.hierarchical);
  ck_assert_int_eq(nm_coll_bcast_choice_parse("pipelined_chain:groups=11:segment=1M", &c), 0);
  ck_assert(c.hierarchical && c.groups == 11 && c.segment == (1u << 20));
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    ck_assert_int_eq(nm_coll_bcast_choice_parse(nm_coll_model_algo_name(a), &c), 0);
    ck_assert_int_eq(c.algo, a);
  }
  const char *bad[] = {"", "hier", "foo", "hier:hier:chain", "chain:groups=0", "chain:groups=-3", "chain:groups=x",
                       "chain:groups=99999999999", "pipelined_chain:segment=0", "pipelined_chain:segment=12Q",
                       "pipelined_chain:segment=", "chain:bogus=1", "chain:scatter_ring", "Chain",
                       "pipelined_chain:segment=-1K"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct nm_coll_bcast_choice_s untouched = {.algo = NM_COLL_BCAST_BINARY, .groups = 42};
    ck_assert_msg(nm_coll_bcast_choice_parse(bad[i], &untouched) == -NM_EINVAL, "accepted '%s'", bad[i]);
    ck_assert(untouched.algo == NM_COLL_BCAST_BINARY && untouched.groups == 42);
  }
  char longspec[400];
  memset(longspec, 'a', sizeof(longspec) - 1);
  longspec[sizeof(longspec) - 1] = '\0';
  ck_assert_int_eq(nm_coll_bcast_choice_parse(longspec, &c), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_bcast_choice_parse(NULL, &c), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_bcast_choice_parse("chain", NULL), -NM_EINVAL);
}
END_TEST

/* A parsed override completed for (p, m): what it leaves open is the model's, what it forces is kept. */
START_TEST(test_complete)
{
  struct nm_coll_bcast_choice_s f, c;
  ck_assert_int_eq(nm_coll_bcast_choice_parse("hier:scatter_ring", &f), 0);
  ck_assert_int_eq(nm_coll_bcast_choice_complete(&f, 6142, 512 << 10, TORUS_A, TORUS_B, &c), 0);
  ck_assert_int_eq(c.groups, nm_coll_model_best_groups(NM_COLL_BCAST_SCATTER_RING, 6142, 512 << 10, TORUS_A, TORUS_B));
  ck_assert_close(c.predicted_s, hier_t(NM_COLL_BCAST_SCATTER_RING, 6142, c.groups, 512 << 10, TORUS_A, TORUS_B, 1));

  ck_assert_int_eq(nm_coll_bcast_choice_parse("pipelined_chain:segment=64K", &f), 0);
  ck_assert_int_eq(nm_coll_bcast_choice_complete(&f, 8, 16 << 20, INTI_A, INTI_B, &c), 0);
  ck_assert(c.segment == 65536 && c.groups == 1 && !c.hierarchical);
  ck_assert_close(c.predicted_s, (256.0 + 8 - 2) * (INTI_A + 65536 * INTI_B));

  /* hierarchy forced where the paper finds no gain: G is taken near sqrt(p), the extremum of 3.5 */
  ck_assert_int_eq(nm_coll_bcast_choice_parse("hier:binomial", &f), 0);
  ck_assert_int_eq(nm_coll_bcast_choice_complete(&f, 100, 1 << 20, INTI_A, INTI_B, &c), 0);
  ck_assert(c.hierarchical && c.groups >= 5 && c.groups <= 21);
  ck_assert_close(c.predicted_s, hier_t(NM_COLL_BCAST_BINOMIAL, 100, c.groups, 1 << 20, INTI_A, INTI_B, 1));
  /* a forced segment larger than the message: one segment of the whole message */
  ck_assert_int_eq(nm_coll_bcast_choice_parse("pipelined_chain:segment=18446744073709551615", &f), 0);
  ck_assert_int_eq(nm_coll_bcast_choice_complete(&f, 8, 1000, INTI_A, INTI_B, &c), 0);
  ck_assert_uint_eq(c.segment, 1000);
  ck_assert_close(c.predicted_s, flat_t(NM_COLL_BCAST_PIPELINED_CHAIN, 8, 1000, INTI_A, INTI_B, 1));
  /* a forced G above p is clamped */
  ck_assert_int_eq(nm_coll_bcast_choice_parse("hier:flat:groups=64", &f), 0);
  ck_assert_int_eq(nm_coll_bcast_choice_complete(&f, 8, 100, INTI_A, INTI_B, &c), 0);
  ck_assert_int_eq(c.groups, 8);
  ck_assert_close(c.predicted_s, flat_t(NM_COLL_BCAST_FLAT, 8, 100, INTI_A, INTI_B, 1));
}
END_TEST

START_TEST(test_bad_args)
{
  double t;
  struct nm_coll_bcast_choice_s c;
  ck_assert_int_eq(nm_coll_model_bcast_time(NM_COLL_BCAST_NALGOS, 4, 8, 1e-6, 1e-9, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_time(NM_COLL_BCAST_FLAT, 0, 8, 1e-6, 1e-9, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_time(NM_COLL_BCAST_FLAT, 4, 8, -1e-6, 1e-9, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_time(NM_COLL_BCAST_FLAT, 4, 8, 1e-6, NAN, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_time(NM_COLL_BCAST_PIPELINED_CHAIN, 4, 8, 1e-6, 1e-9, 0, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_time(NM_COLL_BCAST_FLAT, 4, 8, 1e-6, 1e-9, 1, NULL), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_hier_time(NM_COLL_BCAST_FLAT, 4, 5, 8, 1e-6, 1e-9, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_hier_time(NM_COLL_BCAST_FLAT, 4, 0, 8, 1e-6, 1e-9, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_bcast_choose(0, 8, 1e-6, 1e-9, &c), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_bcast_choose(4, 8, INFINITY, 1e-9, &c), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_bcast_choose(4, 8, 1e-6, 1e-9, NULL), -NM_EINVAL);
  ck_assert_ptr_null(nm_coll_model_algo_name(NM_COLL_BCAST_NALGOS));
  /* the drivers' nominal figures (struct nm_drv_props_s) as Hockney parameters */
  double a, b;
  ck_assert_int_eq(nm_coll_model_hockney(1100, 18000, &a, &b), 0);
  ck_assert_close(a, 1.1e-6);
  ck_assert_close(b, 1 / 18e9);
  ck_assert_int_eq(nm_coll_model_hockney(1100, 0, &a, &b), -NM_EINVAL);
}
END_TEST

/* ---- the LogP form (issue 17: wire latency L per hop, sender's overhead o per message, beta per byte) ---- */

static double logp_t(enum nm_coll_bcast_algo_e algo, int p, size_t m, double L, double o, double b, size_t x)
{
  struct nm_coll_model_net_s net = {.L = L, .o = o, .beta = b};
  double t;
  return nm_coll_model_bcast_time_logp(algo, p, m, &net, x, &t) ? NAN : t;
}

static double logp_hier_t(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m, double L, double o, double b,
                          size_t x)
{
  struct nm_coll_model_net_s net = {.L = L, .o = o, .beta = b};
  double t;
  return nm_coll_model_bcast_hier_time_logp(algo, p, g, m, &net, x, &t) ? NAN : t;
}

/* With o = alpha and L = 0 the LogP form is the paper's formula for every algorithm (sections 2.1.1-2.1.8),
 * written out here again, and section 3's equations (1), (3), (5) and 3.5 for the hierarchy. */
START_TEST(test_logp_hockney_case)
{
  for (int k = 0; k < NPLAT; k++) {
    const double a = plat_a[k], b = plat_b[k];
    const size_t ms[] = {0, 8, 65536, 512 << 10, 16 << 20};
    struct nm_coll_model_net_s net;
    nm_coll_model_net_hockney(a, b, &net);
    ck_assert(net.L == 0 && net.o == a && net.beta == b);
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
      const size_t m = ms[i];
      const double t1 = a + m * b;
      for (int e = 1; e <= 12; e++) {
        const double p = 1 << e, q = (1 << e) - 1, lp = log2(p);
        ck_assert_close(logp_t(NM_COLL_BCAST_FLAT, (int)p, m, 0, a, b, 1), (p - 1) * t1);
        ck_assert_close(logp_t(NM_COLL_BCAST_CHAIN, (int)p, m, 0, a, b, 1), (p - 1) * t1);
        for (size_t x = 1; x <= 4096 && (x <= m || x == 1); x *= 8)
          ck_assert_close(logp_t(NM_COLL_BCAST_PIPELINED_CHAIN, (int)p, m, 0, a, b, x),
                          (x + p - 2) * (a + (double)m / x * b));
        ck_assert_close(logp_t(NM_COLL_BCAST_BINOMIAL, (int)p, m, 0, a, b, 1), lp * t1);
        ck_assert_close(logp_t(NM_COLL_BCAST_SCATTER_RING, (int)p, m, 0, a, b, 1),
                        (lp + p - 1) * a + 2 * (p - 1) / p * m * b);
        ck_assert_close(logp_t(NM_COLL_BCAST_SCATTER_RD, (int)p, m, 0, a, b, 1), 2 * lp * a + 2 * (p - 1) / p * m * b);
        if (e >= 2)
          ck_assert_close(logp_t(NM_COLL_BCAST_BINARY, (int)q, m, 0, a, b, 1), 2 * (log2(q + 1) - 1) * t1);
        if (e >= 3)
          ck_assert_close(logp_t(NM_COLL_BCAST_SPLIT_BINARY, (int)q, m, 0, a, b, 1),
                          2 * (log2(q + 1) - 2) * t1 + a + m / 2.0 * b);
      }
      for (int g = 2; g < 4096; g *= 2) { /* section 3 at p = 4096 */
        const double G = g, P = 4096;
        ck_assert_close(logp_hier_t(NM_COLL_BCAST_FLAT, 4096, g, m, 0, a, b, 1), (G + P / G - 2) * t1);
        ck_assert_close(logp_hier_t(NM_COLL_BCAST_CHAIN, 4096, g, m, 0, a, b, 1), (G + P / G - 2) * t1);
        ck_assert_close(logp_hier_t(NM_COLL_BCAST_PIPELINED_CHAIN, 4096, g, m, 0, a, b, 1),
                        (2.0 + G + P / G - 4) * (a + (double)m * b));
        ck_assert_close(logp_hier_t(NM_COLL_BCAST_SCATTER_RING, 4096, g, m, 0, a, b, 1),
                        (log2(P) + G + P / G - 2) * a + 2 * m * (2 - 1 / G - G / P) * b);
        ck_assert_close(logp_hier_t(NM_COLL_BCAST_SCATTER_RD, 4096, g, m, 0, a, b, 1),
                        2 * log2(P) * a + 2 * m * (2 - 1 / G - G / P) * b);
      }
      /* and the whole machinery: best X, best G and the choice are the Hockney ones */
      for (int p = 2; p <= 6142; p = p * 3 + 1) {
        struct nm_coll_bcast_choice_s cl, ch;
        ck_assert_uint_eq(nm_coll_model_best_segments_logp(p, 1, m, &net), nm_coll_model_best_segments(p, 1, m, a, b));
        for (int algo = 0; algo < NM_COLL_BCAST_NALGOS; algo++)
          ck_assert_int_eq(nm_coll_model_best_groups_logp(algo, p, m, &net), nm_coll_model_best_groups(algo, p, m, a, b));
        ck_assert_int_eq(nm_coll_bcast_choose_logp(p, m, &net, &cl), 0);
        ck_assert_int_eq(nm_coll_bcast_choose(p, m, a, b, &ch), 0);
        ck_assert(cl.algo == ch.algo && cl.groups == ch.groups && cl.segment == ch.segment);
        ck_assert_close(cl.predicted_s, ch.predicted_s);
      }
    }
  }
}
END_TEST

/* The LogP formulas themselves, by hand, at L = 10 us, o = 1 us, beta = 1 ns/B, m = 1000 B (1 us of bytes), p = 16:
 * a message holds its sender 2 us and arrives 10 us after it left. */
START_TEST(test_logp_formulas)
{
  const double L = 10e-6, o = 1e-6, b = 1e-9, us = 1e-6;
  const size_t m = 1000;
  ck_assert_close(logp_t(NM_COLL_BCAST_FLAT, 16, m, L, o, b, 1), 40 * us);            /* 10 + 15 x 2 */
  ck_assert_close(logp_t(NM_COLL_BCAST_CHAIN, 16, m, L, o, b, 1), 180 * us);          /* 15 x 12 */
  ck_assert_close(logp_t(NM_COLL_BCAST_PIPELINED_CHAIN, 16, m, L, o, b, 4), 232.5 * us); /* 15 x 11.25 + 3 x 21.25 */
  ck_assert_close(logp_t(NM_COLL_BCAST_BINARY, 16, m, L, o, b, 1), 56 * us);          /* 4 levels x (2 x 2 + 10) */
  ck_assert_close(logp_t(NM_COLL_BCAST_SPLIT_BINARY, 16, m, L, o, b, 1), 53.5 * us);  /* 3 x 14 + 1.5 + 10 */
  ck_assert_close(logp_t(NM_COLL_BCAST_SPLIT_BINARY, 3, m, L, o, b, 1), 24.5 * us);   /* 3 + 1.5 + 2 x 10 */
  ck_assert_close(logp_t(NM_COLL_BCAST_BINOMIAL, 16, m, L, o, b, 1), 48 * us);        /* 4 x 12 */
  ck_assert_close(logp_t(NM_COLL_BCAST_SCATTER_RING, 16, m, L, o, b, 1), 210.875 * us); /* 19 x 11 + 30/16 */
  ck_assert_close(logp_t(NM_COLL_BCAST_SCATTER_RD, 16, m, L, o, b, 1), 89.875 * us);  /* 8 x 11 + 30/16 */
  ck_assert_close(logp_t(NM_COLL_BCAST_SCATTER_RD, 17, m, L, o, b, 1), 101.875 * us); /* + one whole message */
  /* hierarchical flat, G = 4: two flat trees of 4 */
  ck_assert_close(logp_hier_t(NM_COLL_BCAST_FLAT, 16, 4, m, L, o, b, 1), 32 * us);    /* 2 x (10 + 3 x 2) */
  /* the pipelined chain's best X is the root of (X - 1)(o + 2L) + (X + p - 2) m beta / X */
  struct nm_coll_model_net_s net = {.L = L, .o = o, .beta = b};
  size_t x = nm_coll_model_best_segments_logp(64, 1, 16 << 20, &net);
  ck_assert(fabs((double)x - sqrt(62.0 * (16 << 20) * b / (o + 2 * L))) <= 1);
  ck_assert(logp_t(NM_COLL_BCAST_PIPELINED_CHAIN, 64, 16 << 20, L, o, b, x) <=
            logp_t(NM_COLL_BCAST_PIPELINED_CHAIN, 64, 16 << 20, L, o, b, x - 1));
  ck_assert(logp_t(NM_COLL_BCAST_PIPELINED_CHAIN, 64, 16 << 20, L, o, b, x) <=
            logp_t(NM_COLL_BCAST_PIPELINED_CHAIN, 64, 16 << 20, L, o, b, x + 1));
  /* bad networks */
  double t;
  struct nm_coll_model_net_s bad = {.L = -1e-6, .o = o, .beta = b};
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 4, 8, &bad, 1, &t), -NM_EINVAL);
  bad.L = NAN;
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 4, 8, &bad, 1, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 4, 8, NULL, 1, &t), -NM_EINVAL);
  struct nm_coll_bcast_choice_s c;
  ck_assert_int_eq(nm_coll_bcast_choose_logp(4, 8, NULL, &c), -NM_EINVAL);
}
END_TEST

/* The drivers' figures as LogP parameters: L = latency - overhead, o = max(overhead, gap). */
START_TEST(test_logp_of_props)
{
  struct nm_coll_model_net_s net;
  ck_assert_int_eq(nm_coll_model_logp(1400, 0, 1000, 17, 3300, &net), 0); /* nmad-sim on inti, --poll-cost 1000 */
  ck_assert_close(net.L, 1.4e-6);
  ck_assert_close(net.o, 1e-6);
  ck_assert_close(net.beta, 1 / 3.3e9);
  ck_assert(net.burst == 17);
  ck_assert(net.o_burst == 0);
  ck_assert_int_eq(nm_coll_model_logp(1100, 550, 0, 0, 18000, &net), 0); /* shm's nominal figures */
  ck_assert_close(net.L, 0.55e-6);
  ck_assert_close(net.o, 0.55e-6);
  ck_assert(net.burst == 0);
  ck_assert_int_eq(nm_coll_model_logp(1000, 3000, 0, 0, 1000, &net), 0); /* overhead above the latency: no wire */
  ck_assert(net.L == 0);
  ck_assert_close(net.o, 3e-6);
  ck_assert_close(net.o_burst, 1e-6); /* no more than the whole latency */
  ck_assert_int_eq(nm_coll_model_logp(1000, 0, 0, 0, 0, &net), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_model_logp(1000, 0, 0, 0, 1000, NULL), -NM_EINVAL);
}
END_TEST

/* A send queue that takes a burst (nmad-sim: the first 17 packets after a pause leave without the 1 us gap): a
 * root's row of messages pays o only beyond the burst, a forwarder's message after a reception never does. The
 * figures are nmad-sim's on inti, measured (doc/performance.md, "The simulator's send queue in the model"): the
 * flat tree's root at 16 members sends 15 free (1.636 us), at 64 members 17 free and 46 at 1 us (47.416 us);
 * binomial at 16 members, 4 hops (5.758 us); flat trees in 8 groups of 8 at 64 members, the root's row 14 (3.1 us).
 * Without a burst every formula is the one of test_logp_choice. */
START_TEST(test_logp_burst)
{
  struct nm_coll_model_net_s net, plain;
  ck_assert_int_eq(nm_coll_model_logp(1400, 0, 1000, 17, 3300, &net), 0);
  ck_assert_int_eq(nm_coll_model_logp(1400, 0, 1000, 0, 3300, &plain), 0);
  const double mb = 8 / 3.3e9;
  double t;
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 16, 8, &net, 1, &t), 0);
  ck_assert_close(t, 1.4e-6 + 15 * mb);
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 64, 8, &net, 1, &t), 0);
  ck_assert_close(t, 1.4e-6 + 63 * mb + 46e-6);
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_BINOMIAL, 16, 8, &net, 1, &t), 0);
  ck_assert_close(t, 4 * (1.4e-6 + mb));
  ck_assert_int_eq(nm_coll_model_bcast_hier_time_logp(NM_COLL_BCAST_FLAT, 64, 8, 8, &net, 1, &t), 0);
  ck_assert_close(t, 2 * (1.4e-6 + 7 * mb));
  /* the root's own row: 40 + 40 = 80 messages in 41 groups of 41 at p = 1681 pay 63 gaps, more than the path
   * through another leader (2 hops, 23 + 23 gaps) */
  ck_assert_int_eq(nm_coll_model_bcast_hier_time_logp(NM_COLL_BCAST_FLAT, 1681, 41, 8, &net, 1, &t), 0);
  ck_assert_close(t, 1.4e-6 + 80 * mb + 63e-6);
  /* without a burst: o for every message, the plain LogP formulas */
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 16, 8, &plain, 1, &t), 0);
  ck_assert_close(t, 1.4e-6 + 15 * (1e-6 + mb));
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_BINOMIAL, 16, 8, &plain, 1, &t), 0);
  ck_assert_close(t, 4 * (1.4e-6 + 1e-6 + mb));
  /* the choices the simulator rewards: one flat tree at 16 members, flat trees in groups at 64 */
  struct nm_coll_bcast_choice_s c;
  ck_assert_int_eq(nm_coll_bcast_choose_logp(16, 8, &net, &c), 0);
  ck_assert_int_eq(c.algo, NM_COLL_BCAST_FLAT);
  ck_assert_int_eq(c.groups, 1);
  ck_assert_int_eq(nm_coll_bcast_choose_logp(64, 8, &net, &c), 0);
  ck_assert_int_eq(c.algo, NM_COLL_BCAST_FLAT);
  ck_assert_int_gt(c.groups, 1);
  struct nm_coll_model_net_s bad = net;
  bad.burst = -1;
  ck_assert_int_eq(nm_coll_model_bcast_time_logp(NM_COLL_BCAST_FLAT, 16, 8, &bad, 1, &t), -NM_EINVAL);
}
END_TEST

/* Where the split matters: with no sender overhead (o = 0) the root's tiny messages leave at once, and the flat
 * tree (one hop) is the choice at 8 B where Hasanov's Hockney form (o = alpha) picks the binomial tree; a large
 * message (its bytes take 10 times L + o) never goes by the flat tree (it carries (p - 1) m beta at the root). */
START_TEST(test_logp_choice)
{
  struct nm_coll_bcast_choice_s c;
  for (int k = 0; k < NPLAT; k++) {
    const double a = plat_a[k], b = plat_b[k];
    const int ps[] = {16, 64, 128};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
      struct nm_coll_model_net_s net = {.L = a, .o = 0, .beta = b};
      ck_assert_int_eq(nm_coll_bcast_choose_logp(ps[i], 8, &net, &c), 0);
      /* flat, or (when (p - 1) 8 B at the root's link outweigh one more L: many members, a fast wire) flat trees in
       * groups */
      ck_assert_msg(c.algo == NM_COLL_BCAST_FLAT, "platform %d p %d: %s", k, ps[i], nm_coll_model_algo_name(c.algo));
      if (!c.hierarchical)
        ck_assert_close(c.predicted_s, a + (ps[i] - 1) * 8 * b);
      else
        ck_assert(c.predicted_s < a + (ps[i] - 1) * 8 * b);
      if (k == 1) /* graphene: one hop of 48 us is worth 700 messages of 8 B (68 ns each) */
        ck_assert(!c.hierarchical);
      ck_assert_int_eq(nm_coll_bcast_choose(ps[i], 8, a, b, &c), 0);
      ck_assert(c.algo != NM_COLL_BCAST_FLAT);
    }
  }
  /* graphene under nmad-sim (L = 48 us, o = 1 us: one packet per progress pass): flat up to 16 members, groups of
   * flat trees beyond, never the binomial tree's 4 to 7 hops of 48 us */
  struct nm_coll_model_net_s sim = {.L = GRAPH_A, .o = 1e-6, .beta = GRAPH_B};
  ck_assert_int_eq(nm_coll_bcast_choose_logp(16, 8, &sim, &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_FLAT && !c.hierarchical);
  ck_assert_int_eq(nm_coll_bcast_choose_logp(128, 8, &sim, &c), 0);
  ck_assert(c.algo == NM_COLL_BCAST_FLAT && c.hierarchical && c.groups >= 6 && c.groups <= 22);
  /* large messages: never flat, over a range of L and o (from none to 100 us) */
  const double Ls[] = {0, 0.119e-6, 1.4e-6, 48e-6, 100e-6}, os[] = {0, 0.3e-6, 1e-6, 48e-6, 100e-6};
  const size_t ms[] = {1 << 20, 16 << 20};
  long flat = 0, cases = 0;
  for (size_t li = 0; li < sizeof(Ls) / sizeof(Ls[0]); li++)
    for (size_t oi = 0; oi < sizeof(os) / sizeof(os[0]); oi++)
      for (int k = 0; k < NPLAT; k++)
        for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++)
          for (int p = 3; p <= 300; p += (p < 20 ? 1 : 37)) {
            struct nm_coll_model_net_s net = {.L = Ls[li], .o = os[oi], .beta = plat_b[k]};
            /* large: the bytes of one message take ten times its latency and overhead (with L = o = 100 us on
             * inti's 3.3 GB/s, 1 MiB is not: a flat tree in 3 groups is then the model's choice at p = 9) */
            if (ms[j] * plat_b[k] < 10 * (Ls[li] + os[oi]))
              continue;
            cases++;
            ck_assert_int_eq(nm_coll_bcast_choose_logp(p, ms[j], &net, &c), 0);
            flat += c.algo == NM_COLL_BCAST_FLAT;
          }
  ck_assert_int_gt(cases, 4000); /* of 5000 (L, o, beta, m, p) */
  ck_assert_msg(flat == 0, "%ld cases of a large message by the flat tree", flat);
}
END_TEST

/* logp_hier_t as a model_time_fn: @p net is a struct nm_coll_model_net_s. */
static double logp_net_t(enum nm_coll_bcast_algo_e algo, int p, int g, size_t m, size_t x, const void *net)
{
  const struct nm_coll_model_net_s *n = net;
  return logp_hier_t(algo, p, g, m, n->L, n->o, n->beta, x);
}

/* The LogP chooser against a brute force, as test_choose_brute_force does for the Hockney one. */
START_TEST(test_logp_choose_brute_force)
{
  const int ps[] = {2, 3, 5, 8, 16, 33, 64};
  const size_t ms[] = {0, 8, 8192, 1 << 20};
  const struct nm_coll_model_net_s nets[] = {
    {.L = 48e-6, .o = 1e-6, .beta = GRAPH_B}, {.L = 1.4e-6, .o = 0, .beta = INTI_B}, {.L = 0.119e-6, .o = 3e-6, .beta = TORUS_B}};
  for (size_t k = 0; k < sizeof(nets) / sizeof(nets[0]); k++)
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
      for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++) {
        const int p = ps[i];
        const size_t m = ms[j];
        double brute = brute_best(p, m, logp_net_t, &nets[k]);
        struct nm_coll_bcast_choice_s c;
        ck_assert_int_eq(nm_coll_bcast_choose_logp(p, m, &nets[k], &c), 0);
        ck_assert_msg(c.predicted_s <= brute * (1 + 1e-9) && c.predicted_s >= brute * (1 - 1e-9),
                      "net %zu p %d m %zu: chooser %.9g, brute force %.9g", k, p, m, c.predicted_s, brute);
      }
}
END_TEST

/* Reduce's choice (issue 18): MPICH's rule, and on an oversubscribed job the binomial tree from 128 KiB on
 * (reduce-scatter + gather's simultaneous exchanges cannot all run); a forced algorithm stays forced. */
START_TEST(test_reduce_choice_oversubscribed)
{
  enum nm_coll_reduce_algo_e a;
  unsetenv("NMAD_REDUCE_ALGO");
  const nm_len_t mib = 1 << 17; /* 1 MiB of doubles */
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, mib, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_REDUCE_RS_GATHER);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, mib, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_REDUCE_BINOMIAL);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, 8192, 8, 1, &a), 0); /* 64 KiB: below the bound */
  ck_assert_int_eq(a, NM_COLL_REDUCE_RS_GATHER);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, NM_COLL_REDUCE_OVERSUB_BINOMIAL_FROM / 8, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_REDUCE_BINOMIAL);
  ck_assert_int_eq(nm_coll_reduce_choose(4, mib, 8, &a), 0); /* the job-less rule is MPICH's */
  ck_assert_int_eq(a, NM_COLL_REDUCE_RS_GATHER);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, 16, 8, 0, &a), 0); /* 128 B */
  ck_assert_int_eq(a, NM_COLL_REDUCE_BINOMIAL);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, 16, 8, 1, &a), 0); /* 128 B, more ranks than cores: linear */
  ck_assert_int_eq(a, NM_COLL_REDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_reduce_choose_job(3, 256, 8, 1, &a), 0); /* 2 KiB, the bound, 3 ranks */
  ck_assert_int_eq(a, NM_COLL_REDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_reduce_choose_job(2, 16, 8, 1, &a), 0); /* 2 ranks: one message either way, and linear */
  ck_assert_int_eq(a, NM_COLL_REDUCE_LINEAR);                        /* sends it without a schedule */
  ck_assert_int_eq(nm_coll_reduce_choose_job(2, NM_COLL_REDUCE_PAIR_LINEAR_UPTO / 8, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_REDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_reduce_choose_job(2, NM_COLL_REDUCE_PAIR_LINEAR_UPTO / 8 + 1, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_REDUCE_BINOMIAL);
  setenv("NMAD_REDUCE_ALGO", "reduce_scatter_gather", 1);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, mib, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_REDUCE_RS_GATHER);
  unsetenv("NMAD_REDUCE_ALGO");
}
END_TEST

/* Gather/Scatter's choice: binomial below 16 KiB blocks, flat above; an oversubscribed job flat at every size; 2
 * members flat (one message either way, sent without a schedule by a blocking call). */
START_TEST(test_gather_choice_oversubscribed)
{
  enum nm_coll_gather_algo_e a;
  unsetenv("NMAD_GATHER_ALGO");
  ck_assert_int_eq(nm_coll_gather_choose_job("NMAD_GATHER_ALGO", 4, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_GATHER_BINOMIAL);
  ck_assert_int_eq(nm_coll_gather_choose_job("NMAD_GATHER_ALGO", 2, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_GATHER_FLAT);
  ck_assert_int_eq(nm_coll_gather_choose_job("NMAD_GATHER_ALGO", 3, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_GATHER_BINOMIAL);
  ck_assert_int_eq(nm_coll_gather_choose_job("NMAD_GATHER_ALGO", 4, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_GATHER_FLAT);
  ck_assert_int_eq(nm_coll_gather_choose_job("NMAD_GATHER_ALGO", 4, 1 << 20, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_GATHER_FLAT);
  setenv("NMAD_GATHER_ALGO", "binomial", 1);
  ck_assert_int_eq(nm_coll_gather_choose_job("NMAD_GATHER_ALGO", 4, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_GATHER_BINOMIAL);
  unsetenv("NMAD_GATHER_ALGO");
}
END_TEST

/* All-to-all's choice: MPICH's rule (Bruck for small equal blocks from 4 members, pairwise otherwise); an
 * oversubscribed job posts everything at once (linear), but for small equal blocks over a network whose messages
 * cost more than a round (Bruck), and, over shared memory, for eager bursts above NM_COLL_ALLTOALL_OVERSUB_BURST_MAX
 * and rendezvous blocks in large groups (pairwise); a forced algorithm stays forced. */
START_TEST(test_alltoall_choice_oversubscribed)
{
  enum nm_coll_alltoall_algo_e a;
  unsetenv("NMAD_ALLTOALL_ALGO");
  ck_assert_int_eq(nm_coll_alltoall_choose_job(4, 8, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_BRUCK);
  ck_assert_int_eq(nm_coll_alltoall_choose_job(4, 1 << 20, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  ck_assert_int_eq(nm_coll_alltoall_choose_job(4, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_job(8, 0, 1, &a), 0); /* varying blocks */
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  /* shared memory (unknown latency, or sm's 0.3 us): linear while the p - 1 eager blocks sum to at most the
   * burst bar, pairwise above; from the rendezvous size on, linear again for small groups */
  ck_assert_int_eq(nm_coll_alltoall_choose_job(4, NM_COLL_ALLTOALL_OVERSUB_BURST_MAX / 3, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_job(4, NM_COLL_ALLTOALL_OVERSUB_BURST_MAX / 3 + 1, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(8, NM_COLL_ALLTOALL_OVERSUB_BURST_MAX / 7, 1, 300, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(8, NM_COLL_ALLTOALL_OVERSUB_BURST_MAX / 7 + 1, 1, 300, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P, NM_COLL_ALLTOALL_OVERSUB_RDV_FROM,
                                               1, 300, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P + 1,
                                               NM_COLL_ALLTOALL_OVERSUB_RDV_FROM, 1, 300, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  ck_assert_int_eq(nm_coll_alltoall_choose_job(8, 1 << 20, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  /* over a network, linear at every size above Bruck's */
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, 1 << 20, 1, 11000, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  /* a network whose messages cost more than a round (tcp's 11 us): Bruck for small equal blocks, from 4 members */
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, 8, 1, 11000, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_BRUCK);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, NM_COLL_ALLTOALL_OVERSUB_BRUCK_UPTO, 1, 11000, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_BRUCK);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, NM_COLL_ALLTOALL_OVERSUB_BRUCK_UPTO + 1, 1, 11000, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(3, 8, 1, 11000, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, 0, 1, 11000, &a), 0); /* varying blocks: no Bruck */
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, 8, 1, 300, &a), 0); /* sm's 0.3 us: linear */
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_LINEAR);
  ck_assert_int_eq(nm_coll_alltoall_choose_net(4, 1024, 0, 11000, &a), 0); /* one core per rank: as before */
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  ck_assert_str_eq(nm_coll_alltoall_algo_name(NM_COLL_ALLTOALL_LINEAR), "linear");
  setenv("NMAD_ALLTOALL_ALGO", "pairwise", 1);
  ck_assert_int_eq(nm_coll_alltoall_choose_job(4, 8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLTOALL_PAIRWISE);
  unsetenv("NMAD_ALLTOALL_ALGO");
}
END_TEST

/* Allgather's choice: MPICH's rule (recursive doubling for a power of two below 512 KiB in all, Bruck below 80 KiB,
 * ring above); an oversubscribed job over a network keeps recursive doubling at every size for a power of two. */
START_TEST(test_allgather_choice)
{
  enum nm_coll_allgather_algo_e a;
  unsetenv("NMAD_ALLGATHER_ALGO");
  ck_assert_int_eq(nm_coll_allgather_choose(4, 256 << 10, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RD);
  ck_assert_int_eq(nm_coll_allgather_choose(4, 1 << 20, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RING);
  ck_assert_int_eq(nm_coll_allgather_choose(6, 32 << 10, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_BRUCK);
  ck_assert_int_eq(nm_coll_allgather_choose(6, 1 << 20, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RING);
  ck_assert_int_eq(nm_coll_allgather_choose_net(4, 4 << 20, 1, 11000, &a), 0); /* tcp, oversubscribed */
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RD);
  ck_assert_int_eq(nm_coll_allgather_choose_net(8, 32 << 20, 1, NM_COLL_NET_LAT_NS, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RD);
  ck_assert_int_eq(nm_coll_allgather_choose_net(6, 4 << 20, 1, 11000, &a), 0); /* not a power of two */
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RING);
  ck_assert_int_eq(nm_coll_allgather_choose_net(4, 4 << 20, 1, 300, &a), 0); /* shared memory */
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RING);
  ck_assert_int_eq(nm_coll_allgather_choose_net(4, 4 << 20, 0, 11000, &a), 0); /* a core per rank */
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RING);
  setenv("NMAD_ALLGATHER_ALGO", "ring", 1);
  ck_assert_int_eq(nm_coll_allgather_choose_net(4, 4 << 20, 1, 11000, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLGATHER_RING);
  unsetenv("NMAD_ALLGATHER_ALGO");
}
END_TEST

/* Barrier's choice: dissemination; linear on an oversubscribed job of more than 2 members; forced stays forced. */
START_TEST(test_allreduce_choice_oversubscribed)
{
  /* small vectors go linear only when ranks outnumber cores, and p > 2; NMAD_ALLREDUCE_ALGO still wins */
  /* the choice reads the element size and commutativity only: no combine function needed */
  const struct nm_coll_op_s sum = {.esize = 8, .commute = 1};
  enum nm_coll_allreduce_algo_e a;
  unsetenv("NMAD_ALLREDUCE_ALGO");
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 8, 1, &sum, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLREDUCE_RD);
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 8, 1, &sum, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLREDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 8, NM_COLL_ALLREDUCE_OVERSUB_LINEAR_UPTO / 8, &sum, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLREDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 8, NM_COLL_ALLREDUCE_OVERSUB_LINEAR_UPTO / 8 + 1, &sum, 1, &a),
                   0);
  ck_assert_int_ne(a, NM_COLL_ALLREDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 2, 1, &sum, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLREDUCE_RD);
  /* large vectors, non-commutative, p not a power of two: the model chooses among the others (linear, priced as
   * the ring it resembles, once won here where the ring is not allowed) */
  const struct nm_coll_op_s noncomm = {.esize = 8, .commute = 0};
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 5, 1 << 20, &noncomm, 0, &a), 0);
  ck_assert(a == NM_COLL_ALLREDUCE_RD || a == NM_COLL_ALLREDUCE_RABENSEIFNER);
  /* Reduce likewise */
  enum nm_coll_reduce_algo_e ra;
  unsetenv("NMAD_REDUCE_ALGO");
  ck_assert_int_eq(nm_coll_reduce_choose_job(8, 1, 8, 1, &ra), 0);
  ck_assert_int_eq(ra, NM_COLL_REDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_reduce_choose_job(8, 1, 8, 0, &ra), 0);
  ck_assert_int_eq(ra, NM_COLL_REDUCE_BINOMIAL);
  ck_assert_int_eq(nm_coll_reduce_choose_job(4, 1, 8, 1, &ra), 0); /* two levels: linear too (since 2026-11-29) */
  ck_assert_int_eq(ra, NM_COLL_REDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_reduce_choose_job(5, 1, 8, 1, &ra), 0);
  ck_assert_int_eq(ra, NM_COLL_REDUCE_LINEAR);
  ck_assert_int_eq(nm_coll_reduce_choose_job(8, NM_COLL_REDUCE_OVERSUB_LINEAR_UPTO / 8 + 1, 8, 1, &ra), 0);
  ck_assert_int_ne(ra, NM_COLL_REDUCE_LINEAR);
  setenv("NMAD_ALLREDUCE_ALGO", "recursive_doubling", 1);
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 8, 1, &sum, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLREDUCE_RD);
  setenv("NMAD_ALLREDUCE_ALGO", "linear", 1);
  ck_assert_int_eq(nm_coll_allreduce_choose_job(NULL, 8, 1, &sum, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_ALLREDUCE_LINEAR);
  unsetenv("NMAD_ALLREDUCE_ALGO");
}
END_TEST

/* The allreduce model prices each step's rendezvous: on a tcp-like network (16 us, 3.1 GB/s, eager up to 64 KiB,
 * no pull) a 64 KiB vector among 4 members goes by Rabenseifner (four eager halves) rather than by recursive
 * doubling's two 64 KiB exchanges, each of which waits for an RTR: measured over tcp at N = 4, 197-232 us against
 * 294-492 us (doc/performance.md). Without a rendezvous cost, or where the receiver pulls at match (sm), recursive
 * doubling stays: 2 (a + m b) < 4 a + 1.5 m b below m = 4 a / b, 198 KB here. */
START_TEST(test_allreduce_choice_prices_rendezvous)
{
  const struct nm_coll_op_s sum = {.esize = 8, .commute = 1};
  const double a = 16e-6, b = 1.0 / 3.1e9;
  const struct nm_coll_algo_net_s tcp = {a, b, 65536 - 256, 65536 - 256};
  const struct nm_coll_algo_net_s no_rdv = {a, b, DBL_MAX, DBL_MAX};
  const struct nm_coll_algo_net_s pulls = {a, b, 65536 - 256, 4 << 20};
  enum nm_coll_allreduce_algo_e algo;
  unsetenv("NMAD_ALLREDUCE_ALGO");
  ck_assert_int_eq(nm_coll_allreduce_choose_net(4, 65536 / 8, &sum, 0, &tcp, &algo), 0);
  ck_assert_int_eq(algo, NM_COLL_ALLREDUCE_RABENSEIFNER);
  ck_assert_int_eq(nm_coll_allreduce_choose_net(4, 65536 / 8, &sum, 0, &no_rdv, &algo), 0);
  ck_assert_int_eq(algo, NM_COLL_ALLREDUCE_RD);
  ck_assert_int_eq(nm_coll_allreduce_choose_net(4, 65536 / 8, &sum, 0, &pulls, &algo), 0);
  ck_assert_int_eq(algo, NM_COLL_ALLREDUCE_RD);
  /* 16 KiB: every step eager on all three networks, recursive doubling */
  ck_assert_int_eq(nm_coll_allreduce_choose_net(4, 16384 / 8, &sum, 0, &tcp, &algo), 0);
  ck_assert_int_eq(algo, NM_COLL_ALLREDUCE_RD);
  /* 1 MiB: Rabenseifner everywhere (the bandwidth term decides) */
  ck_assert_int_eq(nm_coll_allreduce_choose_net(4, (1 << 20) / 8, &sum, 0, &tcp, &algo), 0);
  ck_assert_int_eq(algo, NM_COLL_ALLREDUCE_RABENSEIFNER);
  ck_assert_int_eq(nm_coll_allreduce_choose_net(4, (1 << 20) / 8, &sum, 0, &no_rdv, &algo), 0);
  ck_assert_int_eq(algo, NM_COLL_ALLREDUCE_RABENSEIFNER);
}
END_TEST

START_TEST(test_barrier_choice_oversubscribed)
{
  enum nm_coll_barrier_algo_e a;
  unsetenv("NMAD_BARRIER_ALGO");
  ck_assert_int_eq(nm_coll_barrier_choose_job(4, 0, &a), 0);
  ck_assert_int_eq(a, NM_COLL_BARRIER_DISSEMINATION);
  ck_assert_int_eq(nm_coll_barrier_choose_job(4, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_BARRIER_LINEAR);
  ck_assert_int_eq(nm_coll_barrier_choose_job(2, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_BARRIER_DISSEMINATION);
  setenv("NMAD_BARRIER_ALGO", "dissemination", 1);
  ck_assert_int_eq(nm_coll_barrier_choose_job(8, 1, &a), 0);
  ck_assert_int_eq(a, NM_COLL_BARRIER_DISSEMINATION);
  setenv("NMAD_BARRIER_ALGO", "no_such_barrier", 1);
  ck_assert_int_eq(nm_coll_barrier_choose_job(8, 1, &a), -NM_EINVAL);
  unsetenv("NMAD_BARRIER_ALGO");
}
END_TEST

/* Fake gates for building only (a schedule that is never started posts nothing). */
static nm_gate_t fake_gate(void *ref, int member) { return (nm_gate_t)((char *)ref + member + 1); }

/* Rounds of a barrier built for member 0 of 8 (no session: not oversubscribed), or the build's error. */
static int barrier_rounds(const struct nm_coll_overrides_s *o)
{
  static char base[64];
  struct nm_coll_group_s g = {8, fake_gate, base, NULL, o};
  nm_coll_sched_t *s = nm_coll_sched_new(NULL, 1);
  ck_assert_ptr_nonnull(s);
  int next = -1, err = nm_coll_barrier_build(s, 0, &g, 0, &next);
  nm_coll_sched_destroy(s);
  return err ? err : next;
}

/* Overrides read once (what MPI_Init does) are what the builders of a group carrying them use, whatever the
 * environment says later; a group without them reads the environment at the call. */
START_TEST(test_overrides_read_once)
{
  struct nm_coll_overrides_s o;
  unsetenv("NMAD_BARRIER_ALGO");
  nm_coll_overrides_read(&o);
  ck_assert_str_eq(o.value[NM_COLL_FAMILY_BARRIER], "");
  setenv("NMAD_BARRIER_ALGO", "linear", 1);
  ck_assert_int_eq(barrier_rounds(&o), 3);   /* dissemination, as read: log2(8) rounds */
  ck_assert_int_eq(barrier_rounds(NULL), 2); /* linear, the environment now */
  nm_coll_overrides_read(&o);
  unsetenv("NMAD_BARRIER_ALGO");
  ck_assert_str_eq(o.value[NM_COLL_FAMILY_BARRIER], "linear");
  ck_assert_int_eq(barrier_rounds(&o), 2);
  ck_assert_int_eq(barrier_rounds(NULL), 3);
  setenv("NMAD_BARRIER_ALGO", "no_such_barrier", 1);
  nm_coll_overrides_read(&o);
  unsetenv("NMAD_BARRIER_ALGO");
  ck_assert_int_eq(barrier_rounds(&o), -NM_EINVAL); /* checked at use, as when read at the call */
  char long_value[NM_COLL_OVERRIDE_MAX + 8];
  memset(long_value, 'l', sizeof(long_value) - 1);
  long_value[sizeof(long_value) - 1] = '\0';
  setenv("NMAD_BARRIER_ALGO", long_value, 1);
  nm_coll_overrides_read(&o);
  unsetenv("NMAD_BARRIER_ALGO");
  ck_assert_int_eq(barrier_rounds(&o), -NM_EINVAL);
  ck_assert_str_eq(nm_coll_override_var(NM_COLL_FAMILY_SCATTER), "NMAD_SCATTER_ALGO");
  ck_assert_ptr_null(nm_coll_override_var(NM_COLL_NFAMILIES));
}
END_TEST

/* Each family reads its own variable from the overrides: a bad scatter override fails scatters only. */
START_TEST(test_overrides_per_family)
{
  static char base[64];
  struct nm_coll_overrides_s o;
  setenv("NMAD_SCATTER_ALGO", "no_such_algo", 1);
  setenv("NMAD_GATHER_ALGO", "flat", 1);
  nm_coll_overrides_read(&o);
  unsetenv("NMAD_SCATTER_ALGO");
  unsetenv("NMAD_GATHER_ALGO");
  struct nm_coll_group_s g = {4, fake_gate, base, NULL, &o};
  char buf[4 * 8];
  nm_coll_sched_t *s = nm_coll_sched_new(NULL, 1);
  int next = -1;
  ck_assert_int_eq(nm_coll_gather_build(s, 0, &g, 0, 0, buf, buf, 8, NM_COLL_GATHER_AUTO, &next), 0);
  ck_assert_int_eq(next, 1); /* flat: one round at the root (binomial would take log2(4) = 2) */
  nm_coll_sched_destroy(s);
  s = nm_coll_sched_new(NULL, 1);
  ck_assert_int_eq(nm_coll_scatter_build(s, 0, &g, 0, 0, buf, buf, 8, NM_COLL_GATHER_AUTO, &next), -NM_EINVAL);
  nm_coll_sched_destroy(s);
}
END_TEST

/* A freed schedule's memory waits in its cache for the next one; a second one freed meanwhile goes to the heap. */
START_TEST(test_sched_cache)
{
  struct nm_coll_sched_cache_s cache = {NULL};
  nm_coll_sched_t *a = nm_coll_sched_new_cached(NULL, 1, &cache);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_null(cache.spare);
  nm_coll_sched_destroy(a);
  ck_assert_ptr_eq(cache.spare, a);
  nm_coll_sched_t *b = nm_coll_sched_new_cached(NULL, 2, &cache);
  ck_assert_ptr_eq(b, a); /* reused */
  ck_assert_ptr_null(cache.spare);
  nm_coll_sched_t *c = nm_coll_sched_new_cached(NULL, 3, &cache);
  ck_assert_ptr_nonnull(c);
  ck_assert_ptr_ne(c, b);
  ck_assert_int_eq(nm_coll_sched_rounds(b), 0); /* reused memory starts empty */
  nm_coll_sched_destroy(b);
  nm_coll_sched_destroy(c); /* the cache is full: to the heap (valgrind and ASan see no leak) */
  ck_assert_ptr_eq(cache.spare, b);
  nm_coll_sched_cache_drain(&cache);
  ck_assert_ptr_null(cache.spare);
}
END_TEST

/* Scratch blocks beyond a schedule's own bytes go back to its cache when it is freed (up to
 * NM_COLL_SCHED_CACHE_BLOCKS of at most NM_COLL_SCHED_CACHE_BLOCK_MAX bytes) and serve the next schedules whose
 * requests they fit, the smallest first; a schedule without a cache gives them to the heap. */
START_TEST(test_sched_cache_blocks)
{
  struct nm_coll_sched_cache_s cache = {NULL};
  nm_coll_sched_t *a = nm_coll_sched_new_cached(NULL, 1, &cache);
  char *big = nm_coll_sched_alloc(a, 65536), *small = nm_coll_sched_alloc(a, 8192);
  char *huge = nm_coll_sched_alloc(a, NM_COLL_SCHED_CACHE_BLOCK_MAX + 1);
  ck_assert(big && small && huge);
  memset(big, 1, 65536); /* usable as asked */
  memset(small, 2, 8192);
  nm_coll_sched_destroy(a);
  int kept = 0;
  for (int i = 0; i < NM_COLL_SCHED_CACHE_BLOCKS; i++)
    if (cache.blocks[i]) {
      kept++;
      ck_assert(cache.block_len[i] == 65536 || cache.block_len[i] == 8192);
    }
  ck_assert_int_eq(kept, 2); /* the block above the bar went to the heap */
  nm_coll_sched_t *b = nm_coll_sched_new_cached(NULL, 2, &cache);
  ck_assert_ptr_eq(nm_coll_sched_alloc(b, 4096), small); /* the smallest that fits */
  ck_assert_ptr_eq(nm_coll_sched_alloc(b, 60000), big);
  char *fresh = nm_coll_sched_alloc(b, 1000); /* none left: a new block */
  ck_assert_ptr_nonnull(fresh);
  ck_assert(fresh != big && fresh != small);
  for (int i = 0; i < NM_COLL_SCHED_CACHE_BLOCKS; i++)
    ck_assert_ptr_null(cache.blocks[i]);
  nm_coll_sched_destroy(b);
  nm_coll_sched_t *c = nm_coll_sched_new(NULL, 3); /* no cache */
  ck_assert_ptr_nonnull(nm_coll_sched_alloc(c, 65536));
  nm_coll_sched_destroy(c);
  nm_coll_sched_cache_drain(&cache); /* (valgrind and ASan see every block freed) */
  for (int i = 0; i < NM_COLL_SCHED_CACHE_BLOCKS; i++)
    ck_assert_ptr_null(cache.blocks[i]);
  ck_assert_ptr_null(cache.spare);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll_model");
  TCase *tc = tcase_create("hasanov2015");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_flat_formulas);
  tcase_add_test(tc, test_hier_equations);
  tcase_add_test(tc, test_srga_bgp);
  tcase_add_test(tc, test_no_gain);
  tcase_add_test(tc, test_pipeline_segments);
  tcase_add_test(tc, test_choose_brute_force);
  tcase_add_test(tc, test_choose_shapes);
  tcase_add_test(tc, test_parse);
  tcase_add_test(tc, test_complete);
  tcase_add_test(tc, test_bad_args);
  tcase_add_test(tc, test_logp_hockney_case);
  tcase_add_test(tc, test_logp_formulas);
  tcase_add_test(tc, test_logp_of_props);
  tcase_add_test(tc, test_logp_burst);
  tcase_add_test(tc, test_logp_choice);
  tcase_add_test(tc, test_logp_choose_brute_force);
  tcase_add_test(tc, test_reduce_choice_oversubscribed);
  tcase_add_test(tc, test_gather_choice_oversubscribed);
  tcase_add_test(tc, test_alltoall_choice_oversubscribed);
  tcase_add_test(tc, test_allgather_choice);
  tcase_add_test(tc, test_barrier_choice_oversubscribed);
  tcase_add_test(tc, test_overrides_read_once);
  tcase_add_test(tc, test_overrides_per_family);
  tcase_add_test(tc, test_sched_cache);
  tcase_add_test(tc, test_sched_cache_blocks);
  tcase_add_test(tc, test_allreduce_choice_oversubscribed);
  tcase_add_test(tc, test_allreduce_choice_prices_rendezvous);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
