/* Unit tests of dynamic broadcasts in one process (Check):
 *  - properties of the tree shapes (collectives/nm_mcast_tree.h, Denis 2020 section 3.2 and fig. 1) for every kind
 *    and every list length up to 200, checked against an independent round-by-round simulation: each level's child
 *    subtrees partition the list, degree bounds per kind, the binomial tree reaches m destinations in
 *    ceil(log2(m + 1)) steps (largest subtree first when complete), and nm_mcast_tree_arrival_order() sorts positions by
 *    the step at which they receive the data (ties: lower position first);
 *  - the public API in a singleton process (size 1): nm_mcast_isend() argument checks (-NM_EINVAL for n < 0, the
 *    root itself, out-of-range ranks, duplicates), an empty broadcast completes at once, the broadcast rpc tag is
 *    reserved, nm_mcast_finalize() then frees it. (The test in tests/test_mcast_tree.c checks fixed shapes.) */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <nmad/nm_rpc.h>
#include <nmad/nm_mcast.h>
#include "collectives/nm_mcast_tree.h"

#define MMAX 200

/* REQUIRE() reports every passing check to the parent process in fork mode: far too slow for the
 * millions of checks of the shape test, so only failures go to Check. */
#define REQUIRE(cond, ...)                                                                                         \
  do {                                                                                                             \
    if (!(cond))                                                                                                   \
      ck_abort_msg(__VA_ARGS__);                                                                                   \
  } while (0)

static const char *kind_name[4] = {"binomial", "flat", "chain", "binary"};

/* Independent model: every node that has the data sends to its children one per step, in the order given by
 * nm_mcast_tree_children(); simulate step by step and record when each list position (1..m) gets the data.
 * Also checks, at every node, that the child subtrees partition its slice. @return the last step. */
static int simulate(int tree, int m, int *step_of)
{
  /* per node: its slice [b+1, e] and the index of its next child to serve */
  int *b = malloc(sizeof(int) * (MMAX + 1)), *e = malloc(sizeof(int) * (MMAX + 1));
  int *nchild = malloc(sizeof(int) * (MMAX + 1)), *next = malloc(sizeof(int) * (MMAX + 1));
  int(*child)[MMAX] = malloc(sizeof(int[MMAX]) * (MMAX + 1)), (*end)[MMAX] = malloc(sizeof(int[MMAX]) * (MMAX + 1));
  int *have = calloc(MMAX + 1, sizeof(int));
  for (int p = 0; p <= m; p++)
    step_of[p] = -1;
  int nodes[MMAX + 1], nn = 0;
  b[0] = 0;
  e[0] = m;
  step_of[0] = 0;
  have[0] = 1;
  nodes[nn++] = 0;
  /* prepare a node: compute and check its children */
#define PREPARE(p)                                                                                                 \
  do {                                                                                                             \
    int len_ = e[p] - b[p];                                                                                        \
    nchild[p] = nm_mcast_tree_children((enum nm_mcast_tree_e)tree, len_, child[p], end[p]);                        \
    next[p] = 0;                                                                                                   \
    REQUIRE(nchild[p] >= 0 && nchild[p] <= len_, "%s m=%d: %d children for a list of %d", kind_name[tree],   \
                  m, nchild[p], len_);                                                                             \
    char *cov_ = calloc((size_t)len_ + 1, 1);                                                                      \
    for (int k_ = 0; k_ < nchild[p]; k_++) {                                                                       \
      REQUIRE(child[p][k_] >= 1 && child[p][k_] <= end[p][k_] && end[p][k_] <= len_,                        \
                    "%s list %d: child %d has slice [%d, %d]", kind_name[tree], len_, k_, child[p][k_],             \
                    end[p][k_]);                                                                                   \
      for (int q_ = child[p][k_]; q_ <= end[p][k_]; q_++) {                                                        \
        REQUIRE(!cov_[q_], "%s list %d: position %d in two child subtrees", kind_name[tree], len_, q_);      \
        cov_[q_] = 1;                                                                                              \
      }                                                                                                            \
    }                                                                                                              \
    for (int q_ = 1; q_ <= len_; q_++)                                                                             \
      REQUIRE(cov_[q_], "%s list %d: position %d in no child subtree", kind_name[tree], len_, q_);           \
    free(cov_);                                                                                                    \
  } while (0)
  PREPARE(0);
  int step = 0, reached = 0;
  while (reached < m) {
    step++;
    REQUIRE(step <= m, "%s m=%d: not every destination reached after %d steps", kind_name[tree], m, m);
    int cur = nn;
    for (int i = 0; i < cur; i++) { /* nodes that had the data before this step each send once */
      int p = nodes[i];
      if (next[p] >= nchild[p])
        continue;
      int k = next[p]++;
      int c = b[p] + child[p][k];
      REQUIRE(!have[c], "%s m=%d: position %d receives twice", kind_name[tree], m, c);
      have[c] = 1;
      step_of[c] = step;
      b[c] = c;
      e[c] = b[p] + end[p][k];
      PREPARE(c);
      nodes[nn++] = c;
      reached++;
    }
  }
#undef PREPARE
  free(b);
  free(e);
  free(nchild);
  free(next);
  free(child);
  free(end);
  free(have);
  return step;
}

static int ceil_log2(int x) /* smallest k with 2^k >= x */
{
  int k = 0;
  while ((1 << k) < x)
    k++;
  return k;
}

START_TEST(test_shapes_against_simulation)
{
  int step_of[MMAX + 1], order[MMAX], child[MMAX], end[MMAX];
  for (int tree = 0; tree < 4; tree++)
    for (int m = 0; m <= MMAX; m++) {
      int last = simulate(tree, m, step_of);
      int nc = nm_mcast_tree_children((enum nm_mcast_tree_e)tree, m, child, end);
      switch (tree) {
      case NM_MCAST_TREE_FLAT:
        REQUIRE(nc == m, "flat m=%d: %d children", m, nc);
        REQUIRE(last == m, "flat m=%d: %d steps", m, last);
        break;
      case NM_MCAST_TREE_CHAIN:
        REQUIRE(nc == (m ? 1 : 0), "chain m=%d: %d children", m, nc);
        for (int p = 1; p <= m; p++)
          REQUIRE(step_of[p] == p, "chain m=%d: position %d at step %d", m, p, step_of[p]);
        break;
      case NM_MCAST_TREE_BINARY:
        REQUIRE(nc <= 2, "binary m=%d: %d children", m, nc);
        REQUIRE(last <= 2 * ceil_log2(m + 1), "binary m=%d: %d steps", m, last);
        break;
      case NM_MCAST_TREE_BINOMIAL:
        REQUIRE(last == ceil_log2(m + 1), "binomial m=%d: %d steps, want ceil(log2(m+1)) = %d", m, last,
                      ceil_log2(m + 1));
        for (int k = 1; k < nc && ((m + 1) & m) == 0; k++) /* complete tree: largest subtree first */
          REQUIRE(end[k - 1] - child[k - 1] >= end[k] - child[k], "binomial m=%d: subtree %d larger than %d",
                        m, k, k - 1);
        break;
      }
      REQUIRE(nm_mcast_tree_arrival_order((enum nm_mcast_tree_e)tree, m, order) == 0, "arrival order failed");
      char seen[MMAX + 1] = {0};
      for (int i = 0; i < m; i++) {
        REQUIRE(order[i] >= 1 && order[i] <= m && !seen[order[i]], "%s m=%d: order[%d] = %d", kind_name[tree],
                      m, i, order[i]);
        seen[order[i]] = 1;
        if (i > 0) {
          int a = order[i - 1], c = order[i];
          REQUIRE(step_of[a] < step_of[c] || (step_of[a] == step_of[c] && a < c),
                        "%s m=%d: arrival order puts %d (step %d) before %d (step %d)", kind_name[tree], m, a,
                        step_of[a], c, step_of[c]);
        }
      }
    }
}
END_TEST

static int dummy_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref) { return 0; }

START_TEST(test_api_singleton)
{
  nm_launcher_t l;
  int rank = -1, size = -1;
  ck_assert_int_eq(nm_launcher_init(&l, NULL, NULL), 0);
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  ck_assert_msg(size == 1 && rank == 0, "expected a singleton (run outside nmad-run): rank %d size %d", rank, size);
  nm_session_t s;
  ck_assert_int_eq(nm_session_open(nm_launcher_get_core(l), "test_mcast_unit", &s), 0);
  nm_mcast_service_t mc;
  ck_assert_int_eq(nm_mcast_init(s, &mc), 0);
  /* the broadcast rpc tag is reserved on the session's rpc channel */
  nm_rpc_service_t rs;
  ck_assert_int_eq(nm_rpc_register(s, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, 64, dummy_handler, NULL, NULL, &rs),
                   -NM_EINVAL);
  char data[32] = "x";
  int prios[3] = {0, 1, 2};
  for (int tree = 0; tree < 4; tree++)
    for (int p = 0; p < 2; p++) {
      const int *pr = p ? prios : NULL;
      enum nm_mcast_tree_e t = (enum nm_mcast_tree_e)tree;
      nm_mcast_req_t req;
      int self[1] = {0}, out[1] = {1}, neg[1] = {-1}, dup[2] = {1, 1};
      ck_assert_int_eq(nm_mcast_isend(mc, self, pr, 1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, out, pr, 1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, neg, pr, 1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, dup, pr, 2, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      ck_assert_int_eq(nm_mcast_isend(mc, self, pr, -1, 7, data, sizeof(data), t, &req), -NM_EINVAL);
      /* an empty broadcast is valid and complete at once */
      memset(&req, 0, sizeof(req));
      ck_assert_int_eq(nm_mcast_isend(mc, self, pr, 0, 7, data, sizeof(data), t, &req), 0);
      ck_assert_int_eq(nm_mcast_test(mc, &req), 0);
      ck_assert_int_eq(nm_mcast_wait(mc, &req), 0);
    }
  /* nothing was sent: a receive from ourselves on that tag stays pending */
  nm_gate_t me;
  ck_assert_int_eq(nm_launcher_get_gate(l, 0, &me), 0);
  nm_sr_request_t r;
  char buf[32];
  ck_assert_int_eq(nm_sr_irecv(s, me, 7, buf, sizeof(buf), &r), 0);
  for (int i = 0; i < 100; i++)
    nm_core_progress(nm_launcher_get_core(l));
  ck_assert_int_eq(nm_sr_rtest(s, &r), -NM_EAGAIN);
  ck_assert_int_eq(nm_sr_rcancel(s, &r), 0);
  ck_assert_int_eq(nm_sr_rwait(s, &r), -NM_ECANCELED);
  ck_assert_int_eq(nm_mcast_finalize(mc), 0);
  /* the tag is free again */
  ck_assert_int_eq(nm_rpc_register(s, NM_MCAST_RPC_TAG, NM_TAG_MASK_FULL, 64, dummy_handler, NULL, NULL, &rs), 0);
  ck_assert_int_eq(nm_rpc_unregister(rs), 0);
  ck_assert_int_eq(nm_session_close(s), 0);
  ck_assert_int_eq(nm_launcher_exit(l), 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mcast_unit");
  TCase *tc = tcase_create("mcast");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_shapes_against_simulation);
  tcase_add_test(tc, test_api_singleton);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
