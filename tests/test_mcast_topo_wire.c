/* Unit test of the standalone topology-ID multicast's wire checks (doc/protocol.md, "Topology-ID multicast header";
 * DESIGN.md rule 5), two cores of a 16-rank job in this process wired by the fake driver: rank 4 receives headers
 * crafted by rank 5 (topology: 8 hosts of 2 ranks, b = 1, so lcp(5, 4) = 3 and the only valid stage is 4) or by
 * rank 0 (lcp(0, 4) = 1, stage 2, prefix 01x = ranks 4..7). A valid header is delivered once to the handler;
 * every malformed one fails the sender's gate with -NM_EPROTO, delivers nothing and leaves nothing behind
 * (nm_mcast_topo_finalize() succeeds). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <nmad/nm_rpc.h>
#include <nmad/nm_mcast_topo.h>
#include "nmad/core/nm_le.h"
#include "fake_driver.h"

#define JOB 16

struct node {
  int rank;
  nm_core_t core;
  struct fake_drv_s *fake;
  nm_session_t sess;
};

static void node_init(struct node *n, int rank)
{
  n->rank = rank;
  n->core = fake_core_new_rank(rank, JOB, "aggreg", 32 * 1024, &n->fake);
  ck_assert_ptr_nonnull(n->core);
  ck_assert_int_eq(nm_session_open(n->core, "topo", &n->sess), 0);
}

/* Deliver every captured packet to its node and progress, until nothing moves (small messages only). */
static void pump(struct node *nodes, int k)
{
  int moved = 1;
  while (moved) {
    moved = 0;
    for (int i = 0; i < k; i++)
      nm_core_progress(nodes[i].core);
    for (int i = 0; i < k; i++) {
      struct fake_drv_s *f = nodes[i].fake;
      for (int p = 0; p < f->n_pkts; p++)
        for (int d = 0; d < k; d++)
          if ((uint64_t)nodes[d].rank == f->pkts[p].peer) {
            nm_core_packet(nodes[d].core, &nodes[d].core->drvs[0], f->pkts[p].buf, f->pkts[p].len,
                           (uint64_t)nodes[i].rank);
            moved = 1;
          }
      f->n_pkts = 0;
    }
  }
}

struct got_s {
  int n, root, bad;
};
static void on_mcast(int root, nm_tag_t tag, const void *data, nm_len_t len, void *ref)
{
  struct got_s *g = ref;
  g->n++;
  g->root = root;
  g->bad += tag != 77 || len != 10 || memcmp(data, "0123456789", 10) != 0;
}

enum {
  W_VALID_INTERVAL, W_VALID_LIST, W_SHORT, W_FORM, W_ZERO, W_ROOT, W_STAGE, W_LEN_MAX, W_LEN_BODY, W_EMPTY,
  W_OUTSIDE, W_LIST_N, W_LIST_HLEN, W_LIST_DUP, W_LIST_ROOT, W_LIST_OUTSIDE, W_N
};

static void put_hdr(uint8_t *h, uint32_t root, int form, int stage, uint64_t len, uint32_t a, uint32_t b)
{
  memset(h, 0, 32);
  nm_put32(h, root);
  h[4] = (uint8_t)form;
  h[5] = (uint8_t)stage;
  nm_put64(h + 8, 77);
  nm_put64(h + 16, len);
  nm_put32(h + 24, a);
  nm_put32(h + 28, b);
}

START_TEST(test_wire)
{
  struct node nd[2];
  node_init(&nd[0], 4);
  node_init(&nd[1], _i >= W_LIST_N || _i == W_VALID_LIST ? 0 : 5);
  const int sender = nd[1].rank, stage = sender == 5 ? 4 : 2;
  struct nm_mcast_topo_params_s p = {.field_mask = NM_MCAST_TOPO_PARAM_LEVELS, .nlevels = 1, .fanout = {2}};
  nm_mcast_topo_t topo;
  ck_assert_int_eq(nm_mcast_topo_create(JOB, 4, &p, &topo), 0);
  struct got_s got = {0};
  nm_mcast_topo_service_t svc;
  ck_assert_int_eq(nm_mcast_topo_init(nd[0].sess, topo, 64, on_mcast, &got, &svc), 0);
  uint8_t h[64];
  nm_len_t hlen = 32, blen = 10;
  const char *body = "0123456789";
  /* valid: from 5, the interval [4, 5) (our own host's part under stage 4 = ourselves); from 0, a list {4} */
  put_hdr(h, 9, 0, stage, 10, 4, 5);
  switch (_i) {
  case W_VALID_INTERVAL:
    break;
  case W_VALID_LIST:
    put_hdr(h, 9, 1, stage, 10, 1, 0);
    nm_put32(h + 32, 4);
    hlen = 36;
    break;
  case W_SHORT:
    hlen = 31;
    break;
  case W_FORM:
    h[4] = 2;
    break;
  case W_ZERO:
    h[7] = 1;
    break;
  case W_ROOT:
    nm_put32(h, JOB);
    break;
  case W_STAGE:
    h[5] = (uint8_t)(stage - 1);
    break;
  case W_LEN_MAX: /* longer than max_len: refused before anything is allocated */
    nm_put64(h + 16, 65);
    blen = 65;
    body = calloc(65, 1);
    break;
  case W_LEN_BODY:
    blen = 9;
    break;
  case W_EMPTY:
    nm_put32(h + 24, 5);
    break;
  case W_OUTSIDE: /* rank 6 is not under our stage-4 prefix */
    nm_put32(h + 28, 7);
    break;
  case W_LIST_N:
    put_hdr(h, 9, 1, stage, 10, 0, 0);
    break;
  case W_LIST_HLEN:
    put_hdr(h, 9, 1, stage, 10, 2, 0);
    nm_put32(h + 32, 4);
    hlen = 36;
    break;
  case W_LIST_DUP:
    put_hdr(h, 9, 1, stage, 10, 2, 0);
    nm_put32(h + 32, 5);
    nm_put32(h + 36, 5);
    hlen = 40;
    break;
  case W_LIST_ROOT:
    put_hdr(h, 6, 1, stage, 10, 1, 0);
    nm_put32(h + 32, 6);
    hlen = 36;
    break;
  case W_LIST_OUTSIDE: /* rank 8 is not under prefix 01x */
    put_hdr(h, 9, 1, stage, 10, 1, 0);
    nm_put32(h + 32, 8);
    hlen = 36;
    break;
  }
  nm_gate_t to4 = nm_core_gate(nd[1].core, 4), from_sender = nm_core_gate(nd[0].core, sender);
  nm_rpc_req_t req;
  memset(&req, 0, sizeof(req));
  ck_assert_int_eq(nm_rpc_isend(nd[1].sess, to4, NM_MCAST_TOPO_RPC_TAG, h, hlen, body, blen, &req), 0);
  pump(nd, 2);
  if (_i == W_VALID_INTERVAL || _i == W_VALID_LIST) {
    ck_assert_int_eq(from_sender->status, 0);
    ck_assert_int_eq(got.n, 1);
    ck_assert_int_eq(got.root, 9);
    ck_assert_int_eq(got.bad, 0);
  } else {
    ck_assert_int_eq(from_sender->status, -NM_EPROTO);
    ck_assert_int_eq(got.n, 0);
  }
  ck_assert_int_eq(nm_mcast_topo_pending(svc), 0);
  ck_assert_int_eq(nm_mcast_topo_finalize(svc), 0);
  nm_mcast_topo_destroy(topo);
  if (_i == W_LEN_MAX)
    free((void *)body);
  nm_core_destroy(nd[0].core);
  nm_core_destroy(nd[1].core);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mcast_topo_wire");
  TCase *tc = tcase_create("wire");
  tcase_add_loop_test(tc, test_wire, 0, W_N);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
