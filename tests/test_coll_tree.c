/* Unit tests of the tree module (collectives/nm_coll_tree.c, issue 17 deliverable 1): for every kind and
 * n = 1..300 plus a few large n, the tree is a spanning tree rooted at vrank 0, parent and children agree, each
 * subtree is the contiguous range [v, hi) the node reports, (k-nomial) children come farthest level first, and the depth
 * follows the kind's formula: binomial ceil(log2 n) single-port rounds (floor(log2 n) edges), binary floor(log2 n)
 * edges, chain n - 1, flat 1. */
#include <check.h>
#include <stdlib.h>
#include <nmad/nm_errno.h>
#include "collectives/nm_coll_tree.h"

static int ceil_log2(int n)
{
  int d = 0;
  while ((1LL << d) < n)
    d++;
  return d;
}

static int floor_log2(int n)
{
  int d = 0;
  while ((2LL << d) <= n)
    d++;
  return d;
}

static int kind_is_knomial(const struct nm_coll_tree_s *t)
{
  return t->kind == NM_COLL_TREE_BINOMIAL || t->kind == NM_COLL_TREE_KNOMIAL;
}

/* j of an offset d k^j */
static int level_of(const struct nm_coll_tree_s *t, int off)
{
  int j = 0;
  while (off >= t->radix) {
    off /= t->radix;
    j++;
  }
  return j;
}

/* Walk the tree of t from every vrank; check structure; return edge depth and single-port rounds (a node's i-th
 * child receives i + 1 rounds after the node). Memory: O(n) in the test only. */
static void check_tree(const struct nm_coll_tree_s *t, int *edge_depth, int *rounds)
{
  int n = t->n;
  int *depth = calloc((size_t)n, sizeof(int)), *round = calloc((size_t)n, sizeof(int));
  int *seen_as_child = calloc((size_t)n, sizeof(int));
  ck_assert(depth && round && seen_as_child);
  struct nm_coll_tree_node_s root;
  nm_coll_tree_node(t, 0, &root);
  ck_assert_int_eq(root.parent, -1);
  ck_assert_int_eq(root.hi, n);
  *edge_depth = 0;
  *rounds = 0;
  /* Preorder numbering: a parent has a smaller vrank than its children, so one pass in vrank order sees every
   * parent before its children. */
  for (int v = 0; v < n; v++) {
    struct nm_coll_tree_node_s node;
    nm_coll_tree_node(t, v, &node);
    ck_assert_int_eq(node.vrank, v);
    ck_assert_msg(node.hi > v && node.hi <= n, "kind %d n %d v %d: hi %d", t->kind, n, v, node.hi);
    if (v > 0) {
      ck_assert_msg(node.parent >= 0 && node.parent < v, "kind %d n %d v %d: parent %d", t->kind, n, v,
                    node.parent);
      ck_assert_int_eq(seen_as_child[v], 1);
    }
    int next = v + 1;
    ck_assert_int_eq(nm_coll_tree_child(t, &node, node.n_children, NULL), -1);
    for (int i = 0; i < node.n_children; i++) {
      int chi, c = nm_coll_tree_child(t, &node, i, &chi);
      ck_assert_msg(c > v && c < node.hi && chi > c && chi <= node.hi, "kind %d n %d v %d child %d [%d,%d)",
                    t->kind, n, v, i, c, chi);
      struct nm_coll_tree_node_s cn;
      nm_coll_tree_node(t, c, &cn);
      ck_assert_int_eq(cn.parent, v);
      ck_assert_int_eq(cn.hi, chi);
      if (i > 0) /* farthest child first: offsets decrease level by level */
        ck_assert_msg(kind_is_knomial(t) ? level_of(t, c - v) <= level_of(t, nm_coll_tree_child(t, &node, i - 1, NULL) - v)
                                         : 1, "kind %d n %d v %d: child %d out of order", t->kind, n, v, i);
      seen_as_child[c]++;
      depth[c] = depth[v] + 1;
      round[c] = round[v] + i + 1;
      if (depth[c] > *edge_depth)
        *edge_depth = depth[c];
      if (round[c] > *rounds)
        *rounds = round[c];
    }
    /* the children's ranges tile (v, hi) exactly */
    for (int i = 0; i < node.n_children; i++) {
      int lo_min = node.hi, hi_of = 0;
      for (int j = 0; j < node.n_children; j++) {
        int h, c = nm_coll_tree_child(t, &node, j, &h);
        if (c == next)
          hi_of = h, lo_min = c;
      }
      ck_assert_msg(lo_min == next, "kind %d n %d v %d: no child starts at %d", t->kind, n, v, next);
      next = hi_of;
    }
    ck_assert_int_eq(next, node.hi);
  }
  for (int v = 1; v < n; v++)
    ck_assert_int_eq(seen_as_child[v], 1);
  free(depth);
  free(round);
  free(seen_as_child);
}

static void check_kind(enum nm_coll_tree_kind_e kind, int radix, int n)
{
  struct nm_coll_tree_s t;
  int edges, rounds;
  ck_assert_int_eq(nm_coll_tree_init(&t, kind, n, radix), 0);
  check_tree(&t, &edges, &rounds);
  switch (kind) {
  case NM_COLL_TREE_FLAT:
    ck_assert_int_eq(edges, n > 1 ? 1 : 0);
    ck_assert_int_eq(rounds, n - 1);
    break;
  case NM_COLL_TREE_CHAIN:
    ck_assert_int_eq(edges, n - 1);
    ck_assert_int_eq(rounds, n - 1);
    break;
  case NM_COLL_TREE_BINARY:
    ck_assert_msg(edges == floor_log2(n), "binary n %d: depth %d", n, edges);
    break;
  case NM_COLL_TREE_BINOMIAL:
    ck_assert_msg(rounds == ceil_log2(n), "binomial n %d: %d rounds", n, rounds);
    ck_assert_msg(edges == floor_log2(n), "binomial n %d: depth %d", n, edges);
    break;
  default: {
    /* k-nomial: depth = number of base-k digits of n - 1 counted with their value, bounded by
     * (k - 1) ceil(log_k n) rounds; edges <= ceil(log_k n) */
    int levels = 0;
    for (long long p = 1; p < n; p *= radix)
      levels++;
    ck_assert_msg(edges <= levels, "%d-nomial n %d: depth %d > %d", radix, n, edges, levels);
    ck_assert_msg(rounds <= levels * (radix - 1), "%d-nomial n %d: %d rounds", radix, n, rounds);
    break;
  }
  }
}

START_TEST(test_every_kind_small)
{
  for (int n = 1; n <= 300; n++) {
    check_kind(NM_COLL_TREE_FLAT, 0, n);
    check_kind(NM_COLL_TREE_CHAIN, 0, n);
    check_kind(NM_COLL_TREE_BINARY, 0, n);
    check_kind(NM_COLL_TREE_BINOMIAL, 0, n);
    check_kind(NM_COLL_TREE_KNOMIAL, 3, n);
    check_kind(NM_COLL_TREE_KNOMIAL, 4, n);
  }
}
END_TEST

START_TEST(test_large)
{
  const int sizes[] = {1024, 2048, 4095, 6142, 6144, 65537};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    check_kind(NM_COLL_TREE_BINARY, 0, sizes[i]);
    check_kind(NM_COLL_TREE_BINOMIAL, 0, sizes[i]);
    check_kind(NM_COLL_TREE_KNOMIAL, 8, sizes[i]);
    if (sizes[i] <= 6144) {
      check_kind(NM_COLL_TREE_FLAT, 0, sizes[i]);
      check_kind(NM_COLL_TREE_CHAIN, 0, sizes[i]);
    }
  }
}
END_TEST

/* The shapes the collectives rely on, by hand: Denis 2020 fig. 1 (binomial, 7 members: 0 sends to 4, 2, 1 and 4
 * to 6, 5) and the binary split of 6 members (left subtree 1..3, right 4..5). */
START_TEST(test_shapes)
{
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s nd;
  int hi;
  ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, 7, 0), 0);
  nm_coll_tree_node(&t, 0, &nd);
  ck_assert_int_eq(nd.n_children, 3);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 0, &hi), 4);
  ck_assert_int_eq(hi, 7);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 1, &hi), 2);
  ck_assert_int_eq(hi, 4);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 2, &hi), 1);
  nm_coll_tree_node(&t, 4, &nd);
  ck_assert_int_eq(nd.parent, 0);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 0, NULL), 6);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 1, NULL), 5);
  ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_BINARY, 6, 0), 0);
  nm_coll_tree_node(&t, 0, &nd);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 0, &hi), 1);
  ck_assert_int_eq(hi, 4);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 1, &hi), 4);
  ck_assert_int_eq(hi, 6);
  ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_KNOMIAL, 9, 3), 0);
  nm_coll_tree_node(&t, 0, &nd);
  ck_assert_int_eq(nd.n_children, 4); /* 3, 6, then 1, 2 */
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 0, NULL), 3);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 1, NULL), 6);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 2, NULL), 1);
  ck_assert_int_eq(nm_coll_tree_child(&t, &nd, 3, NULL), 2);
}
END_TEST

START_TEST(test_bad_args)
{
  struct nm_coll_tree_s t;
  ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_BINOMIAL, 0, 0), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_KNOMIAL, 8, 1), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_tree_init(&t, NM_COLL_TREE_NKINDS, 8, 2), -NM_EINVAL);
  ck_assert_int_eq(nm_coll_tree_init(NULL, NM_COLL_TREE_FLAT, 8, 2), -NM_EINVAL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coll_tree");
  TCase *tc = tcase_create("tree");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_every_kind_small);
  tcase_add_test(tc, test_large);
  tcase_add_test(tc, test_shapes);
  tcase_add_test(tc, test_bad_args);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
