/* Unit tests of the dynamic-broadcast tree shapes (Denis 2020, section 3.2, fig. 1). */
#include <check.h>
#include <stdlib.h>
#include "collectives/nm_mcast_tree.h"

START_TEST(test_binomial_fig1)
{
  /* 6 recipients: node 0 sends to 4 with {5,6}, to 2 with {3}, to 1 with {} */
  int child[6], end[6];
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_BINOMIAL, 6, child, end), 3);
  ck_assert_int_eq(child[0], 4);
  ck_assert_int_eq(end[0], 6);
  ck_assert_int_eq(child[1], 2);
  ck_assert_int_eq(end[1], 3);
  ck_assert_int_eq(child[2], 1);
  ck_assert_int_eq(end[2], 1);
  /* and node 4, whose list is {5,6} (positions 1, 2), sends to 6 then 5 */
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_BINOMIAL, 2, child, end), 2);
  ck_assert_int_eq(child[0], 2);
  ck_assert_int_eq(child[1], 1);
}
END_TEST

START_TEST(test_other_shapes)
{
  int child[8], end[8];
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_FLAT, 5, child, end), 5);
  for (int i = 0; i < 5; i++)
    ck_assert(child[i] == i + 1 && end[i] == i + 1);
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_CHAIN, 5, child, end), 1);
  ck_assert(child[0] == 1 && end[0] == 5);
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_BINARY, 5, child, end), 2);
  ck_assert(child[0] == 1 && end[0] == 3 && child[1] == 4 && end[1] == 5);
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_BINARY, 1, child, end), 1);
  ck_assert_int_eq(nm_mcast_tree_children(NM_MCAST_TREE_BINOMIAL, 0, child, end), 0);
}
END_TEST

/* Every shape reaches every position exactly once (walk the whole tree). */
START_TEST(test_cover_every_position)
{
  for (int tree = NM_MCAST_TREE_BINOMIAL; tree <= NM_MCAST_TREE_BINARY; tree++)
    for (int m = 0; m < 40; m++) {
      int *seen = calloc((size_t)m + 1, sizeof(int)), *child = malloc(sizeof(int) * 41), *end = malloc(sizeof(int) * 41);
      int stack_b[64], stack_e[64], sp = 0;
      stack_b[sp] = 0;
      stack_e[sp++] = m;
      while (sp) {
        sp--;
        int b = stack_b[sp], e = stack_e[sp];
        int nc = nm_mcast_tree_children(tree, e - b, child, end);
        int next = b + 1;
        for (int k = 0; k < nc; k++) {
          ck_assert_int_ge(b + child[k], b + 1);
          ck_assert_int_le(b + end[k], e);
          seen[b + child[k]]++;
          ck_assert_int_lt(sp, 64);
          stack_b[sp] = b + child[k];
          stack_e[sp++] = b + end[k];
          next = b + end[k] + 1 > next ? b + end[k] + 1 : next;
        }
        (void)next;
      }
      for (int i = 1; i <= m; i++)
        ck_assert_msg(seen[i] == 1, "tree %d m %d position %d reached %d times", tree, m, i, seen[i]);
      free(seen);
      free(child);
      free(end);
    }
}
END_TEST

START_TEST(test_arrival_order)
{
  /* binomial, 6: step 1: 4; step 2: 2 and 6; step 3: 1, 3, 5 */
  int order[6];
  ck_assert_int_eq(nm_mcast_tree_arrival_order(NM_MCAST_TREE_BINOMIAL, 6, order), 0);
  const int want[6] = {4, 2, 6, 1, 3, 5};
  for (int i = 0; i < 6; i++)
    ck_assert_int_eq(order[i], want[i]);
  /* chain: in list order */
  ck_assert_int_eq(nm_mcast_tree_arrival_order(NM_MCAST_TREE_CHAIN, 4, order), 0);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(order[i], i + 1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mcast_tree");
  TCase *tc = tcase_create("tree");
  tcase_add_test(tc, test_binomial_fig1);
  tcase_add_test(tc, test_other_shapes);
  tcase_add_test(tc, test_cover_every_position);
  tcase_add_test(tc, test_arrival_order);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
