/* Unit tests of the topology-ID multicast (Song 2009, sections 4-7; nm_mcast_topo.h): IDs, routing tables
 * (conditions (1) and (2), empty entries exactly where no rank qualifies), the forwarding rule over random
 * topologies and destination sets (every destination exactly once, non-destinations never delivered, at most
 * r steps: Theorem 1, stage strictly growing so no cycle: Theorem 2), and the NM_MCAST_TREE_TOPO_ID tree of the
 * dynamic broadcast (a partition of the list, depth at most r). Pseudo-random cases from fixed seeds. */
#include <check.h>
#include <nmad/nm_mcast_topo.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_next(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static int rng_below(uint64_t *s, int n) { return (int)(rng_next(s) % (uint64_t)n); }

/* A random topology description for a job of n ranks. */
static struct nm_mcast_topo_params_s random_params(uint64_t *s, int n)
{
  struct nm_mcast_topo_params_s p = {.field_mask = NM_MCAST_TOPO_PARAM_BASE_BITS | NM_MCAST_TOPO_PARAM_LEVELS |
                                                   NM_MCAST_TOPO_PARAM_CHOICE | NM_MCAST_TOPO_PARAM_SEED};
  p.base_bits = 1 + rng_below(s, 4);
  p.nlevels = rng_below(s, 4);
  for (int l = 0; l < p.nlevels; l++)
    p.fanout[l] = 1 + rng_below(s, n < 6 ? n : 6);
  p.choice = rng_below(s, 2) ? NM_MCAST_TOPO_NEAREST : NM_MCAST_TOPO_RANDOM;
  p.seed = rng_next(s);
  return p;
}

START_TEST(test_ids)
{
  /* {2} on 8 ranks, b = 1: outer level 4 hosts (2 digits), then 1 digit: IDs are the ranks in binary. */
  struct nm_mcast_topo_params_s p = {.field_mask = NM_MCAST_TOPO_PARAM_LEVELS, .nlevels = 1, .fanout = {2}};
  nm_mcast_topo_t t;
  ck_assert_int_eq(nm_mcast_topo_create(8, 3, &p, &t), 0);
  ck_assert_int_eq(nm_mcast_topo_ndigits(t), 3);
  for (int r = 0; r < 8; r++)
    ck_assert_uint_eq(nm_mcast_topo_id(t, r), (uint64_t)r);
  ck_assert_int_eq(nm_mcast_topo_lcp(t, 2, 3), 2); /* same host */
  ck_assert_int_eq(nm_mcast_topo_lcp(t, 1, 2), 1); /* 001, 010 */
  ck_assert_int_eq(nm_mcast_topo_lcp(t, 3, 4), 0); /* 011, 100 */
  nm_mcast_topo_destroy(t);
  /* 3 ranks per host, 7 ranks, b = 1: host coordinate 0..2 (2 digits), local 0..2 (2 digits): rank 4 = 01 01 */
  p.fanout[0] = 3;
  ck_assert_int_eq(nm_mcast_topo_create(7, 0, &p, &t), 0);
  ck_assert_int_eq(nm_mcast_topo_ndigits(t), 4);
  ck_assert_uint_eq(nm_mcast_topo_id(t, 4), 0x5);
  ck_assert_int_eq(nm_mcast_topo_lcp(t, 3, 5), 2);
  int lo, hi;
  nm_mcast_topo_prefix_range(t, 4, 2, -1, &lo, &hi); /* the host of rank 4 */
  ck_assert_int_eq(lo, 3);
  ck_assert_int_eq(hi, 6);
  nm_mcast_topo_prefix_range(t, 0, 1, 0, &lo, &hi); /* prefix 0 then digit 0: host 00 */
  ck_assert_int_eq(lo, 0);
  ck_assert_int_eq(hi, 3);
  nm_mcast_topo_prefix_range(t, 0, 1, -1, &lo, &hi); /* prefix 0: hosts 00 and 01 */
  ck_assert_int_eq(lo, 0);
  ck_assert_int_eq(hi, 6);
  nm_mcast_topo_destroy(t);
  /* bad descriptions */
  p.fanout[0] = 0;
  ck_assert_int_eq(nm_mcast_topo_create(7, 0, &p, &t), -NM_EINVAL);
  p = (struct nm_mcast_topo_params_s){.field_mask = NM_MCAST_TOPO_PARAM_BASE_BITS, .base_bits = 5};
  ck_assert_int_eq(nm_mcast_topo_create(7, 0, &p, &t), -NM_EINVAL);
  p = (struct nm_mcast_topo_params_s){.field_mask = 0x100};
  ck_assert_int_eq(nm_mcast_topo_create(7, 0, &p, &t), -NM_EINVAL);
  ck_assert_int_eq(nm_mcast_topo_create(7, 7, NULL, &t), -NM_EINVAL);
}
END_TEST

START_TEST(test_env)
{
  nm_mcast_topo_t t;
  setenv("NMAD_MCAST_TOPO", "4x2:b=2:nearest:seed=7", 1);
  ck_assert_int_eq(nm_mcast_topo_from_env(64, 5, &t), 0);
  ck_assert_int_eq(nm_mcast_topo_base_bits(t), 2);
  ck_assert_int_eq(nm_mcast_topo_lcp(t, 4, 5), nm_mcast_topo_ndigits(t) - 1); /* one host */
  nm_mcast_topo_destroy(t);
  const char *bad[] = {"0", "2y3", "2:b=9", "2:fast", "2x", "x2", "2:b="};
  for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    setenv("NMAD_MCAST_TOPO", bad[k], 1);
    ck_assert_msg(nm_mcast_topo_from_env(64, 5, &t) == -NM_EINVAL, "NMAD_MCAST_TOPO=%s accepted", bad[k]);
  }
  setenv("NMAD_MCAST_TOPO", "hwloc:b=2", 1); /* this host's cores per package: one level below the packages */
  ck_assert_int_eq(nm_mcast_topo_from_env(64, 5, &t), 0);
  ck_assert_int_eq(nm_mcast_topo_base_bits(t), 2);
  nm_mcast_topo_destroy(t);
  setenv("NMAD_MCAST_TOPO", "hwlocx2", 1);
  ck_assert_int_eq(nm_mcast_topo_from_env(64, 5, &t), -NM_EINVAL);
  unsetenv("NMAD_MCAST_TOPO");
  ck_assert_int_eq(nm_mcast_topo_from_env(64, 5, &t), 0);
  ck_assert_int_eq(nm_mcast_topo_ndigits(t), 6);
  nm_mcast_topo_destroy(t);
}
END_TEST

/* Paper section 5, conditions (1) and (2), for every entry of every rank's table; an entry is empty exactly when
 * no rank satisfies both conditions (no fill rule); the table has r x 2^b entries. */
START_TEST(test_table_conditions)
{
  uint64_t s = 0x5eed1234u;
  for (int c = 0; c < 40; c++) {
    int n = 1 + rng_below(&s, c < 30 ? 70 : 300);
    struct nm_mcast_topo_params_s p = random_params(&s, n);
    for (int x = 0; x < n; x++) {
      nm_mcast_topo_t t;
      ck_assert_int_eq(nm_mcast_topo_create(n, x, &p, &t), 0);
      const int r = nm_mcast_topo_ndigits(t), cols = 1 << nm_mcast_topo_base_bits(t);
      for (int i = 0; i < r; i++)
        for (int j = 0; j < cols; j++) {
          int y = nm_mcast_topo_entry(t, i, j), exists = 0;
          for (int z = 0; z < n && !exists; z++)
            exists = nm_mcast_topo_lcp(t, x, z) >= i && nm_mcast_topo_digit(t, x, i) != j &&
                     nm_mcast_topo_digit(t, z, i) == j;
          if (y < 0) {
            ck_assert_msg(!exists, "n %d rank %d T[%d][%d] empty but a rank qualifies", n, x, i, j);
            continue;
          }
          ck_assert_int_lt(y, n);
          ck_assert_msg(nm_mcast_topo_lcp(t, x, y) >= i, "condition (1) fails"); /* same first i digits */
          ck_assert_msg(nm_mcast_topo_digit(t, x, i) != j && nm_mcast_topo_digit(t, y, i) == j, "condition (2)");
        }
      nm_mcast_topo_destroy(t);
    }
  }
}
END_TEST

/* Forward one multicast from @p root to @p set through every rank's own table, breadth first, and check it. */
static void run_multicast(int n, const struct nm_mcast_topo_params_s *p, int root, const struct nm_mcast_topo_set_s *set)
{
  int *got = calloc((size_t)n, sizeof(int));     /* messages received per rank (destination or relay) */
  int *steps = calloc((size_t)n, sizeof(int));   /* hops from the root */
  int *stage = calloc((size_t)n, sizeof(int));   /* stage at which the rank got it */
  struct { int rank, stage, lo, hi, from; } *queue = malloc(sizeof(*queue) * (size_t)(n + 1));
  int qh = 0, qt = 0, r = 0;
  queue[qt++] = (typeof(*queue)){root, 0, 0, n, -1};
  got[root] = 1; /* the root must never be sent its own multicast */
  struct nm_mcast_topo_hop_s hops[64 * 15];
  while (qh < qt) {
    typeof(*queue) m = queue[qh++];
    nm_mcast_topo_t t;
    ck_assert_int_eq(nm_mcast_topo_create(n, m.rank, p, &t), 0);
    r = nm_mcast_topo_ndigits(t);
    if (m.from >= 0) /* the receiver's stage is 1 + lcp(sender, receiver) (paper fig. 3, right) */
      ck_assert_int_eq(m.stage, nm_mcast_topo_lcp(t, m.from, m.rank) + 1);
    /* the part of the set this hop takes over: [lo, hi) restricted (list form: list members there) */
    struct nm_mcast_topo_set_s sub = *set;
    int *lst = NULL;
    if (set->list) {
      lst = malloc(sizeof(int) * (size_t)(set->n + 1));
      sub.n = 0;
      for (int k = 0; k < set->n; k++)
        if (set->list[k] >= m.lo && set->list[k] < m.hi)
          lst[sub.n++] = set->list[k];
      sub.list = lst;
    } else {
      sub.lo = m.lo > set->lo ? m.lo : set->lo;
      sub.hi = m.hi < set->hi ? m.hi : set->hi;
    }
    int nh = nm_mcast_topo_route(t, m.stage, &sub, hops);
    ck_assert_int_ge(nh, 0);
    for (int h = 0; h < nh; h++) {
      ck_assert_int_gt(hops[h].stage, m.stage); /* Theorem 2: the stage grows at every hop, hence no cycle */
      ck_assert_int_le(hops[h].stage, r);
      ck_assert_int_eq(hops[h].relay, !nm_mcast_topo_set_has(set, hops[h].rank));
      int y = hops[h].rank;
      ck_assert_msg(got[y] == 0, "rank %d reached twice (cycle or duplicate)", y);
      got[y] = 1;
      steps[y] = steps[m.rank] + 1;
      stage[y] = hops[h].stage;
      ck_assert_int_le(steps[y], r); /* Theorem 1 */
      ck_assert_int_lt(qt, n + 1);
      queue[qt++] = (typeof(*queue)){y, hops[h].stage, hops[h].lo, hops[h].hi, m.rank};
    }
    free(lst);
    nm_mcast_topo_destroy(t);
  }
  for (int z = 0; z < n; z++)
    if (z != root && nm_mcast_topo_set_has(set, z))
      ck_assert_msg(got[z] == 1, "n %d root %d: destination %d not reached", n, root, z);
  free(got);
  free(steps);
  free(stage);
  free(queue);
}

START_TEST(test_forwarding_random)
{
  uint64_t s = 0xabcdef99u;
  for (int c = 0; c < 60; c++) {
    int n = 1 + rng_below(&s, c < 50 ? 130 : 1024);
    struct nm_mcast_topo_params_s p = random_params(&s, n);
    int root = rng_below(&s, n);
    struct nm_mcast_topo_set_s set = {.lo = 0, .hi = n};
    int *list = malloc(sizeof(int) * (size_t)n);
    switch (c % 3) {
    case 0: /* everybody */
      break;
    case 1: /* an interval */
      set.lo = rng_below(&s, n);
      set.hi = set.lo + 1 + rng_below(&s, n - set.lo);
      break;
    default: /* a random group, in random order */
      set.list = list;
      for (int z = 0; z < n; z++)
        if (rng_below(&s, 3) == 0)
          list[set.n++] = z;
      for (int k = set.n - 1; k > 0; k--) {
        int o = rng_below(&s, k + 1), x = list[k];
        list[k] = list[o];
        list[o] = x;
      }
    }
    run_multicast(n, &p, root, &set);
    free(list);
  }
}
END_TEST

/* Song's fig. 2: 8 nodes, binary IDs, 001 multicasts to {010, 100, 101}: three steps at most. */
START_TEST(test_fig2)
{
  struct nm_mcast_topo_params_s p = {.field_mask = 0};
  const int dests[3] = {2, 4, 5};
  struct nm_mcast_topo_set_s set = {.list = dests, .n = 3};
  run_multicast(8, &p, 1, &set);
  nm_mcast_topo_t t;
  ck_assert_int_eq(nm_mcast_topo_create(8, 1, &p, &t), 0);
  struct nm_mcast_topo_hop_s hops[8];
  int nh = nm_mcast_topo_route(t, 0, &set, hops);
  ck_assert_int_eq(nh, 2); /* one message to the 1xx half (4 and 5), one to 01x (2) */
  ck_assert_int_eq(hops[0].stage, 1);
  ck_assert_int_eq(hops[0].count, 2);
  ck_assert_int_eq(hops[1].stage, 2);
  ck_assert_int_eq(hops[1].count, 1);
  ck_assert_int_eq(nm_mcast_topo_route(t, 4, &set, hops), -NM_EINVAL);
  nm_mcast_topo_destroy(t);
}
END_TEST

/* The dynamic broadcast's tree: recursively, every position of the list is a child exactly once, subtrees are the
 * groups, depth <= r. */
static int tree_walk(nm_mcast_topo_t t, int self, const int *ranks, int m, int depth, int *seen)
{
  int child[1100], end[1100], deepest = depth;
  int nc = nm_mcast_topo_children(t, self, ranks, m, child, end);
  ck_assert_int_ge(nc, 0);
  int covered = 0;
  for (int k = 0; k < nc; k++) {
    ck_assert_int_ge(child[k], 1);
    ck_assert_int_le(end[k], m);
    covered += end[k] - child[k] + 1;
    int c = ranks[child[k] - 1];
    seen[c]++;
    /* every member of the child's subtree shares with the child one digit more than with us */
    for (int q = child[k]; q < end[k]; q++)
      ck_assert_int_gt(nm_mcast_topo_lcp(t, c, ranks[q]), nm_mcast_topo_lcp(t, self, c));
    int d = tree_walk(t, c, ranks + child[k], end[k] - child[k], depth + 1, seen);
    deepest = d > deepest ? d : deepest;
  }
  ck_assert_int_eq(covered, m);
  return deepest;
}

START_TEST(test_dynamic_tree)
{
  uint64_t s = 0x77777u;
  for (int c = 0; c < 50; c++) {
    int n = 2 + rng_below(&s, c < 45 ? 200 : 1000);
    struct nm_mcast_topo_params_s p = random_params(&s, n);
    int root = rng_below(&s, n), m = 0;
    int *ranks = malloc(sizeof(int) * (size_t)n), *seen = calloc((size_t)n, sizeof(int));
    for (int z = 0; z < n; z++)
      if (z != root && (c % 2 == 0 || rng_below(&s, 2)))
        ranks[m++] = z;
    nm_mcast_topo_t t;
    ck_assert_int_eq(nm_mcast_topo_create(n, root, &p, &t), 0);
    nm_mcast_topo_sort(t, ranks, m);
    int depth = tree_walk(t, root, ranks, m, 0, seen);
    ck_assert_int_le(depth, nm_mcast_topo_ndigits(t));
    for (int k = 0; k < m; k++)
      ck_assert_int_eq(seen[ranks[k]], 1);
    nm_mcast_topo_destroy(t);
    free(ranks);
    free(seen);
  }
}
END_TEST

/* Any list, even unsorted or with out-of-range ranks (from the network), yields a partition, never a crash. */
START_TEST(test_children_any_list)
{
  nm_mcast_topo_t t;
  ck_assert_int_eq(nm_mcast_topo_create(16, 0, NULL, &t), 0);
  const int ranks[7] = {9, 3, -4, 15, 100, 2, 8};
  int child[7], end[7], covered = 0;
  int nc = nm_mcast_topo_children(t, 0, ranks, 7, child, end);
  ck_assert_int_gt(nc, 0);
  for (int k = 0; k < nc; k++)
    covered += end[k] - child[k] + 1;
  ck_assert_int_eq(covered, 7);
  nm_mcast_topo_destroy(t);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mcast_topo");
  TCase *tc = tcase_create("topo");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_ids);
  tcase_add_test(tc, test_env);
  tcase_add_test(tc, test_table_conditions);
  tcase_add_test(tc, test_forwarding_random);
  tcase_add_test(tc, test_fig2);
  tcase_add_test(tc, test_dynamic_tree);
  tcase_add_test(tc, test_children_any_list);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
