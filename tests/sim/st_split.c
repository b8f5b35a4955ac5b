/**
 * @file st_split.c
 * @brief Simulator test: the split-tree collectives (nm_coll_split.h; Denis et al. 2019, section 6) at scale
 * under nmad-sim: broadcast, reduce, gather and scatter from root 0 and from a root in the middle, for every S
 * from 0 to H (there is no progress thread under simulation: the upper levels advance in the waits), every
 * result checked on every rank. --quick: the root in the middle only. Rank 0 prints each collective's simulated time (not asserted: this test is
 * about correctness at scale and identical results for every S).
 */
#include "st_common.h"
#include <nmad/nm_coll_split.h>
#include <string.h>

#define ST_TAG ((nm_tag_t)0x5c00)

static int st_sum(void *acc, const void *in, nm_len_t len, void *ref)
{
  uint8_t *a = acc;
  const uint8_t *b = in;
  (void)ref;
  for (nm_len_t i = 0; i < len; i++)
    a[i] = (uint8_t)(a[i] + b[i]);
  return 0;
}

/* One collective of kind @p op (0 bcast, 1 reduce, 2 gather, 3 scatter); returns its simulated time in us. */
static double st_one(struct st_ctx *c, int op, int root, size_t len, int S, int seq)
{
  struct nm_coll_group_s world = {c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  struct nm_coll_split_opts_s o = {S, NULL};
  size_t all = len * (size_t)c->size;
  uint8_t *a = calloc(1, all + 1), *b = calloc(1, all + 1), *peer = malloc(len + 1);
  nm_coll_split_t *req = NULL;
  nm_tag_t tag = ST_TAG + (nm_tag_t)seq;
  int rc;
  nm_launcher_barrier(c->launcher);
  uint64_t t0 = nm_core_time_ns(c->core);
  switch (op) {
  case 0:
    if (c->rank == root)
      st_fill(a, len, root, -1, seq);
    rc = nm_coll_split_ibcast(c->session, &world, c->rank, root, a, len, tag, &o, &req);
    break;
  case 1:
    st_fill(a, len, c->rank, -1, seq);
    rc = nm_coll_split_ireduce(c->session, &world, c->rank, root, a, b, len, st_sum, NULL, tag, &o, &req);
    break;
  case 2:
    st_fill(a, len, c->rank, -1, seq);
    rc = nm_coll_split_igather(c->session, &world, c->rank, root, a, b, len, tag, &o, &req);
    break;
  default:
    if (c->rank == root)
      for (int m = 0; m < c->size; m++)
        st_fill(a + (size_t)m * len, len, m, -1, seq);
    rc = nm_coll_split_iscatter(c->session, &world, c->rank, root, a, b, len, tag, &o, &req);
    break;
  }
  ST_CHECK(c, rc == 0, "op %d root %d S %d: start: %s", op, root, S, nm_strerror(rc));
  if (rc == 0)
    rc = nm_coll_split_wait(req);
  ST_CHECK(c, rc == 0, "op %d root %d S %d: wait: %s", op, root, S, nm_strerror(rc));
  nm_launcher_barrier(c->launcher);
  uint64_t t1 = nm_core_time_ns(c->core);
  long bad = -1;
  if (op == 0) {
    bad = st_verify(a, len, root, -1, seq);
  } else if (op == 1 && c->rank == root) {
    memset(a, 0, len);
    for (int m = 0; m < c->size; m++) {
      st_fill(peer, len, m, -1, seq);
      for (size_t i = 0; i < len; i++)
        a[i] = (uint8_t)(a[i] + peer[i]);
    }
    for (size_t i = 0; i < len && bad < 0; i++)
      if (a[i] != b[i])
        bad = (long)i;
  } else if (op == 2 && c->rank == root) {
    for (int m = 0; m < c->size && bad < 0; m++)
      if (st_verify(b + (size_t)m * len, len, m, -1, seq) >= 0)
        bad = (long)m * (long)len;
  } else if (op == 3) {
    bad = st_verify(b, len, c->rank, -1, seq);
  }
  ST_CHECK(c, bad < 0, "op %d root %d S %d %zu B: first bad byte %ld", op, root, S, len, bad);
  free(a);
  free(b);
  free(peer);
  return (double)(t1 - t0) / 1e3;
}

int main(int argc, char **argv)
{
  static const char *const names[4] = {"bcast", "reduce", "gather", "scatter"};
  static const size_t lens[4] = {100000, 100000, 2000, 2000};
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  int h = nm_coll_split_depth(c.size), seq = 0, quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  for (int op = 0; op < 4; op++)
    for (int r = quick; r < 2; r++) {
      int root = r * (c.size / 2 + 1) % c.size;
      for (int S = 0; S <= h; S++) {
        double us = st_one(&c, op, root, lens[op], S, seq++);
        if (c.rank == 0)
          printf("%-8s root %2d %6zu B S=%d: %9.1f us (simulated, to the end of the next barrier)\n", names[op], root,
                 lens[op], S, us);
      }
    }
  nm_launcher_barrier(c.launcher);
  if (c.rank == 0)
    printf("st_split: %d ranks: %s\n", c.size, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
