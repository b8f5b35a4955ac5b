/* Unit tests of the skip ring of the rootless broadcast (Li et al. 2018, "Anycast: Rootless Broadcasting with
 * MPI", sections 2.1-2.2): the paper's figures 2 and 3, and for every origin of every ring size up to 300 (and
 * 511-513, 1,000, 1,024) that the two forwarding rules reach every other member exactly once with n - 1 messages in at most
 * 2H - 2 hops, and that a member's inbound channels are exactly the members whose outbound channels reach it
 * (what a receiver checks a sender against). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "collectives/nm_anycast_ring.h"

static void expect(const int *got, int n, const int *want, int m)
{
  ck_assert_int_eq(n, m);
  for (int i = 0; i < m; i++)
    ck_assert_int_eq(got[i], want[i]);
}

START_TEST(test_fig2_skip_ring)
{
  /* 8 nodes: 0 and 4 highest (3 levels), 2 and 6 two, odd ones one; the last node of each level (7, 6, 4)
   * points back to 0 */
  int out[NM_ANYCAST_MAX_LEVELS];
  ck_assert_int_eq(nm_anycast_ring_levels(8), 3);
  const int h[8] = {3, 1, 2, 1, 3, 1, 2, 1};
  for (int i = 0; i < 8; i++)
    ck_assert_int_eq(nm_anycast_ring_height(8, i), h[i]);
  expect(out, nm_anycast_ring_outs(8, 0, out), (int[]){1, 2, 4}, 3);
  expect(out, nm_anycast_ring_outs(8, 4, out), (int[]){5, 6, 0}, 3);
  expect(out, nm_anycast_ring_outs(8, 6, out), (int[]){7, 0}, 2);
  expect(out, nm_anycast_ring_outs(8, 7, out), (int[]){0}, 1);
  expect(out, nm_anycast_ring_outs(8, 2, out), (int[]){3, 4}, 2);
  expect(out, nm_anycast_ring_ins(8, 0, out), (int[]){7, 6, 4}, 3);
}
END_TEST

START_TEST(test_fig3_routes)
{
  /* rank 2 initiates: to 3 and 4 (4 is higher: allowed); 4 got it from a lower node, so it is new there: to 5, 6
   * and 0 (same level); 0 got it from an equal node: only lower nodes, and 2 is the origin (rule 2): to 1; 6 from
   * higher 4: to 7 only */
  int t[NM_ANYCAST_MAX_LEVELS];
  expect(t, nm_anycast_ring_targets(8, 2, 2, -1, t), (int[]){3, 4}, 2);
  expect(t, nm_anycast_ring_targets(8, 4, 2, 2, t), (int[]){5, 6, 0}, 3);
  expect(t, nm_anycast_ring_targets(8, 0, 2, 4, t), (int[]){1}, 1);
  expect(t, nm_anycast_ring_targets(8, 6, 2, 4, t), (int[]){7}, 1);
  ck_assert_int_eq(nm_anycast_ring_targets(8, 3, 2, 2, t), 0);
  ck_assert_int_eq(nm_anycast_ring_targets(8, 1, 2, 0, t), 0);
}
END_TEST

/* Run one anycast of @p origin through the rules, breadth first. @return the largest hop count; recv[] counts
 * receptions per member, *msgs the messages. */
static int flood(int n, int origin, int *recv, long *msgs)
{
  int *cur = malloc(sizeof(int) * 2 * (size_t)n), *nxt = malloc(sizeof(int) * 2 * (size_t)n);
  if (!cur || !nxt)
    ck_abort_msg("no memory");
  memset(recv, 0, sizeof(int) * (size_t)n);
  int nc = 1, depth = 0;
  cur[0] = origin;
  cur[1] = -1;
  *msgs = 0;
  while (nc) {
    int nn = 0;
    for (int k = 0; k < nc; k++) {
      int t[NM_ANYCAST_MAX_LEVELS];
      int m = nm_anycast_ring_targets(n, cur[2 * k], origin, cur[2 * k + 1], t);
      for (int x = 0; x < m; x++) {
        if (nn >= n)
          ck_abort_msg("n %d origin %d: more than n messages in one step", n, origin);
        recv[t[x]]++;
        (*msgs)++;
        nxt[2 * nn] = t[x];
        nxt[2 * nn + 1] = cur[2 * k];
        nn++;
      }
    }
    if (nn)
      depth++;
    int *sw = cur;
    cur = nxt;
    nxt = sw;
    nc = nn;
  }
  free(cur);
  free(nxt);
  return depth;
}

static void check_ring(int n)
{
  int *recv = malloc(sizeof(int) * (size_t)n);
  if (!recv)
    ck_abort_msg("no memory");
  int levels = nm_anycast_ring_levels(n), bound = 2 * levels - 2 > 1 ? 2 * levels - 2 : 1;
  for (int o = 0; o < n; o++) {
    long msgs;
    int depth = flood(n, o, recv, &msgs);
    for (int i = 0; i < n; i++)
      if (recv[i] != (i != o))
        ck_abort_msg("n %d origin %d: member %d received %d times", n, o, i, recv[i]);
    if (msgs != n - 1)
      ck_abort_msg("n %d origin %d: %ld messages", n, o, msgs);
    if (n > 1 && depth > bound)
      ck_abort_msg("n %d origin %d: %d hops, bound %d", n, o, depth, bound);
  }
  free(recv);
}

START_TEST(test_exactly_once_small)
{
  for (int n = 1; n <= 300; n++)
    check_ring(n);
}
END_TEST

START_TEST(test_exactly_once_large)
{
  static const int sizes[] = {511, 512, 513, 1000, 1024};
  for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
    check_ring(sizes[k]);
}
END_TEST

START_TEST(test_ins_match_outs)
{
  for (int n = 1; n <= 1100; n++) {
    int *cnt = calloc((size_t)n, sizeof(int));
    if (!cnt)
      ck_abort_msg("no memory");
    for (int u = 0; u < n; u++) {
      int out[NM_ANYCAST_MAX_LEVELS];
      int m = nm_anycast_ring_outs(n, u, out);
      if (m > nm_anycast_ring_levels(n))
        ck_abort_msg("n %d: %d has %d outbound channels", n, u, m);
      for (int x = 0; x < m; x++) {
        if (out[x] == u)
          ck_abort_msg("n %d: %d sends to itself", n, u);
        int in[NM_ANYCAST_MAX_LEVELS], found = 0;
        int k = nm_anycast_ring_ins(n, out[x], in);
        for (int y = 0; y < k; y++)
          found += in[y] == u;
        if (found != 1)
          ck_abort_msg("n %d: %d -> %d not among %d's inbound channels", n, u, out[x], out[x]);
        cnt[out[x]]++;
      }
    }
    for (int i = 0; i < n; i++) {
      int in[NM_ANYCAST_MAX_LEVELS];
      if (nm_anycast_ring_ins(n, i, in) != cnt[i]) /* no inbound channel that nobody has */
        ck_abort_msg("n %d: %d has inbound channels nobody has", n, i);
    }
    free(cnt);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("anycast");
  TCase *tc = tcase_create("skip_ring");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_fig2_skip_ring);
  tcase_add_test(tc, test_fig3_routes);
  tcase_add_test(tc, test_exactly_once_small);
  tcase_add_test(tc, test_exactly_once_large);
  tcase_add_test(tc, test_ins_match_outs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
