/**
 * @file st_bcast_classic.c
 * @brief Simulator test: Hasanov 2015's eight broadcasts (nm_coll_bcast(), issue 17 deliverable 2) at scale under
 * nmad-sim, every byte checked on every rank: each algorithm at two sizes (1000 B, eager; 300001 B, rendezvous,
 * 19 segments of 16 KiB for the pipelined chain) from root 0 and from a root in the middle, over the function
 * form of the group (a rank makes only the gates it talks to). Rank 0 prints each broadcast's simulated duration
 * (not asserted: this test is about correctness at scale).
 */
#include "st_common.h"
#include <nmad/nm_coll_bcast.h>
#include <string.h>

#define ST_TAG ((nm_tag_t)0x5b00)

static void st_one(struct st_ctx *c, int algo, int root, size_t len, int seq, nm_len_t segment)
{
  struct nm_coll_group_s world = {c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  struct nm_coll_bcast_opts_s o = {.algo = (enum nm_coll_bcast_algo_e)algo, .segment = segment};
  uint8_t *buf = malloc(len + 1);
  if (c->rank == root)
    st_fill(buf, len, root, -1, seq);
  else
    memset(buf, 0, len);
  nm_launcher_barrier(c->launcher);
  uint64_t t0 = nm_core_time_ns(c->core);
  int rc = nm_coll_bcast(c->session, &world, c->rank, root, buf, len, ST_TAG + (nm_tag_t)seq, &o);
  nm_launcher_barrier(c->launcher); /* so that t1 - t0 covers the last member's receive */
  uint64_t t1 = nm_core_time_ns(c->core);
  const char *name = nm_coll_bcast_algo_name(o.algo);
  ST_CHECK(c, rc == 0, "%s from %d, %zu bytes: %s", name, root, len, nm_strerror(rc));
  long bad = st_verify(buf, len, root, -1, seq);
  ST_CHECK(c, bad < 0, "%s from %d, %zu bytes: first bad byte %ld", name, root, len, bad);
  if (c->rank == root)
    printf("%-16s root %2d %7zu B: %10.1f us to the end of the next barrier (simulated)\n", name, root, len, (double)(t1 - t0) / 1e3);
  free(buf);
}

int main(int argc, char **argv)
{
  static const size_t sizes[2] = {1000, 300001};
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  nm_len_t segment = 16384; /* --segment BYTES: another segment size for the pipelined chain */
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--segment") == 0)
      segment = strtoull(argv[i + 1], NULL, 0);
  int seq = 0;
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++)
    for (int s = 0; s < 2; s++)
      for (int r = 0; r < 2; r++)
        st_one(&c, a, r * (c.size / 2 + 1), sizes[s], seq++, segment);
  nm_launcher_barrier(c.launcher);
  if (c.rank == 0)
    printf("st_bcast_classic: %d ranks: %s\n", c.size, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
