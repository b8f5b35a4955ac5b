/* Unit tests of the split-tree model (Denis et al. 2019, section 6.2, eqs. 3-9; collectives/split_model.c) and of
 * the placement claim it rests on (section 5.2). Deterministic arithmetic, no timing: the model on the paper's
 * 64-core parameters must switch S at the numbers of ranks the paper reports (52, 58, 62, sections 6.2 and 7). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <nmad/nm_coll_split.h>
#include <nmad/nm_errno.h>
#include "collectives/nm_coll_tree.h"
#include "collectives/split_tree.h"

/* The N (from 2 to n_proc - 1) at which the model's S changes, in order; returns how many. */
static int switch_points(int n_proc, int variable, int eq5, int *at, int *to, int max)
{
  int k = 0, prev = -1;
  for (int n = 2; n < n_proc; n++) {
    struct nm_coll_split_model_s m = nm_coll_split_model_paper(n_proc, n, variable);
    m.eq5_as_printed = eq5;
    int s = nm_coll_split_model_best(&m);
    ck_assert_int_ge(s, 0);
    if (prev >= 0 && s != prev && k < max) {
      at[k] = n;
      to[k++] = s;
    }
    prev = s;
  }
  return k;
}

/* Sections 6.2 and 7: "on KNL, we switch from S = 0 to S = 1 for 52 MPI tasks, from S = 1 to S = 2 for 58 MPI
 * tasks, and from S = 2 to S = 3 for 62 MPI tasks" (64 cores, Ibcast/Ireduce, constant-size buffers). */
START_TEST(test_paper_switch_points)
{
  static const int paper[3] = {52, 58, 62};
  int at[8], to[8];
  int k = switch_points(64, 0, 0, at, to, 8);
  ck_assert_int_eq(k, 3);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(to[i], i + 1); /* S goes up one level at a time */
    ck_assert_int_eq(at[i], paper[i]); /* exact with the tree's own level counts */
  }
  /* eq. 5 as printed: one edge too many at some N; the switches stay within 2 ranks of the paper's */
  k = switch_points(64, 0, 1, at, to, 8);
  ck_assert_int_ge(k, 3);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(to[i], i + 1);
    ck_assert_int_le(abs(at[i] - paper[i]), 2);
  }
}
END_TEST

/* Section 6.2, "Discussion and tuning": the optimum is S = 1 for N = 57, S = 2 for N = 60, S = 3 for N = 62, and
 * the absolute minimum of the overlapped time is at S = 0 near N = 51. */
START_TEST(test_paper_discussion)
{
  static const int n_of[3] = {57, 60, 62}, s_of[3] = {1, 2, 3};
  for (int i = 0; i < 3; i++) {
    struct nm_coll_split_model_s m = nm_coll_split_model_paper(64, n_of[i], 0);
    ck_assert_int_eq(nm_coll_split_model_best(&m), s_of[i]);
  }
  double tmin = INFINITY;
  int nmin = 0, smin = -1;
  for (int n = 2; n < 64; n++) {
    struct nm_coll_split_model_s m = nm_coll_split_model_paper(64, n, 0);
    for (int s = 0; s <= nm_coll_split_depth(n); s++) {
      double t = nm_coll_split_model_overlapped(&m, s);
      if (t < tmin - 1e-9) {
        tmin = t;
        nmin = n;
        smin = s;
      }
    }
  }
  ck_assert_int_eq(smin, 0);
  ck_assert_int_le(abs(nmin - 51), 2);
}
END_TEST

/* Eqs. 3, 5, 6: the level counts are the binomial tree's (nm_coll_tree.h), each level halves the previous one,
 * S = H is the blocking time H(N), and S = 0 on enough cores costs H too (nothing is folded). */
START_TEST(test_levels_and_eq6)
{
  for (int n = 1; n <= 300; n++) {
    struct nm_coll_tree_s t;
    struct nm_coll_tree_node_s node;
    int per_level[32] = {0}, h = nm_coll_split_depth(n);
    ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, n, 0), 0);
    for (int v = 1; v < n; v++) {
      nm_coll_tree_node(&t, v, &node);
      int l = nm_split_edge_level(node.parent, v);
      ck_assert_int_ge(l, 1);
      ck_assert_int_le(l, h);
      per_level[l]++;
    }
    struct nm_coll_split_model_s m = nm_coll_split_model_paper(4 * n + 4, n, 0);
    struct nm_coll_split_model_s m5 = m;
    m5.eq5_as_printed = 1;
    for (int i = 1; i <= h; i++) {
      ck_assert_int_eq(nm_coll_split_model_level(&m, i), per_level[i]);
      int f5 = nm_coll_split_model_level(&m5, i);
      ck_assert_int_eq(f5, (int)ceil(n / pow(2, i) + 0.5));
      ck_assert_int_le(abs(f5 - per_level[i]), 1); /* eq. 5 is off by at most one edge */
    }
    ck_assert_int_eq(nm_coll_split_model_level(&m, h + 1), 0);
    ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, h), h, 1e-12);
    ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, h + 5), h, 1e-12); /* min(S, H) */
    ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, 0), h, 1e-12); /* P > F(N, 1): one step each */
  }
  /* The paper's fig. 9 example: 16 ranks folded on 2 communication cores take 8 rounds instead of 4, and
   * S = 1 (fig. 10's split, S = 2 here gives 2 + 2 + 1) is in between. */
  struct nm_coll_split_model_s m = nm_coll_split_model_paper(18, 16, 0);
  ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, 0), 8, 1e-12);
  ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, 1), 1 + 2 + 1 + 1, 1e-12);
  ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, 2), 2 + 1 + 1, 1e-12);
}
END_TEST

/* Eqs. 8-9: data doubling per level; W_H(N) = 2^H - 1 at S = H; eq. 4's computation. */
START_TEST(test_variable_and_compute)
{
  struct nm_coll_split_model_s m = nm_coll_split_model_paper(64, 60, 1);
  ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, 6), 63, 1e-12);
  /* S = 0, P = 4: levels 1..6 have 30, 15, 7, 4, 2, 1 edges: 8 + 4 * 2 + 2 * 4 + 1 * 8 + 1 * 16 + 1 * 32 */
  ck_assert_double_eq_tol(nm_coll_split_model_nonblocking(&m, 0), 8 + 8 + 8 + 8 + 16 + 32, 1e-12);
  ck_assert_double_eq_tol(nm_coll_split_model_compute(&m), 64.0 / 60 * 63, 1e-9);
  struct nm_coll_split_model_s c = nm_coll_split_model_paper(64, 32, 0);
  ck_assert_double_eq_tol(nm_coll_split_model_compute(&c), 12, 1e-12); /* (64 / 32) H(64) */
  c.compute = 3;
  ck_assert_double_eq_tol(nm_coll_split_model_compute(&c), 3, 1e-12);
  /* eq. 7 by hand at N = 52, S = 1: 1 + max(C = 64/52 * 6, levels 2..6 on 12 cores = 2+1+1+1+1) */
  struct nm_coll_split_model_s k = nm_coll_split_model_paper(64, 52, 0);
  ck_assert_double_eq_tol(nm_coll_split_model_overlapped(&k, 1), 1 + 64.0 / 52 * 6, 1e-9);
  ck_assert_double_eq_tol(nm_coll_split_model_overlapped(&k, 0), 9, 1e-9); /* 3+2+1+1+1+1 > C */
}
END_TEST

/* No communication core (this 2-core host with 2 ranks or more): the threads share the ranks' cores, nothing is
 * overlapped in the model, every S costs the same, and the choice is S = 0, every level on the progress thread
 * (measured: doc/split-tree.md, "No communication core"), not the paper's S = H. */
START_TEST(test_no_comm_core)
{
  for (int n = 2; n <= 16; n++) {
    struct nm_coll_split_model_s m = nm_coll_split_model_paper(2, n, 0);
    int h = nm_coll_split_depth(n);
    ck_assert_int_eq(nm_coll_split_model_best(&m), 0);
    ck_assert_double_eq_tol(nm_coll_split_model_overlapped(&m, 0), nm_coll_split_model_overlapped(&m, h), 1e-12);
  }
  struct nm_coll_split_model_s bad = nm_coll_split_model_paper(0, 4, 0);
  ck_assert_int_eq(nm_coll_split_model_best(&bad), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_split_model_best(NULL), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_split_depth(1), 0);
  ck_assert_int_eq(nm_coll_split_depth(2), 1);
  ck_assert_int_eq(nm_coll_split_depth(23), 5);
  ck_assert_int_eq(nm_coll_split_depth(64), 6);
}
END_TEST

/* Section 5.2's odd-even placement (NMAD_BIND=odd-even: local rank r on idle core r mod k). Chain neighbours
 * r, r + 1 never share a core once k >= 2; binomial-tree neighbours r, r + 2^j do whenever k divides 2^j: with
 * k = 2 every edge above the leaves' level shares one (the claim doc/architecture.md made, corrected). */
START_TEST(test_odd_even_tree_neighbours)
{
  for (int n = 2; n <= 128; n++) {
    int above_leaves = n - 1 - (n / 2); /* edges of levels >= 2: all but level 1's floor(n / 2) */
    ck_assert_int_eq(nm_split_place_shared_edges(n, 2, 2), above_leaves);
    ck_assert_int_eq(nm_split_place_shared_edges(n, 2, 1), above_leaves); /* level 1: r even, r + 1 odd */
    ck_assert_int_eq(nm_split_place_shared_edges(n, 1, 1), n - 1); /* one idle core: every edge */
    ck_assert_int_eq(nm_split_place_shared_edges(n, 3, 1), 0);     /* 3 never divides 2^j */
    ck_assert_int_eq(nm_split_place_shared_edges(n, 0, 1), 0);     /* no idle core: nothing placed */
  }
  ck_assert_int_eq(nm_split_place_shared_edges(64, 4, 1), 64 - 1 - 32 - 16); /* levels >= 3 */
  ck_assert_int_eq(nm_split_edge_level(0, 1), 1);
  ck_assert_int_eq(nm_split_edge_level(8, 12), 3);
  ck_assert_int_eq(nm_split_edge_level(0, 32), 6);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("split_model");
  TCase *tc = tcase_create("model");
  tcase_add_test(tc, test_paper_switch_points);
  tcase_add_test(tc, test_paper_discussion);
  tcase_add_test(tc, test_levels_and_eq6);
  tcase_add_test(tc, test_variable_and_compute);
  tcase_add_test(tc, test_no_comm_core);
  tcase_add_test(tc, test_odd_even_tree_neighbours);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
