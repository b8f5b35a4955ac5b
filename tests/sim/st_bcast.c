/**
 * @file st_bcast.c
 * @brief Simulator test: broadcasts end to end under nmad-sim, every byte checked on every rank:
 *  - static binomial and naive broadcasts (nm_coll.h) from root 0 and from root N/2, eager and rendezvous sizes;
 *  - dynamic broadcasts (nm_mcast.h) from rank 0 to every other rank with priorities, and to the odd ranks only,
 *    received by plain point-to-point receives from the root (Denis 2020, sections 3.2 and 4.3).
 */
#include "st_common.h"
#include <nmad/nm_coll.h>
#include <nmad/nm_mcast.h>
#include <string.h>

#define ST_TAG_STATIC ((nm_tag_t)0x5300)
#define ST_TAG_DYN ((nm_tag_t)0x5400)
#define ST_NSIZES 2

typedef int (*st_bcast_fn)(nm_session_t, const struct nm_coll_group_s *, int, int, void *, nm_len_t, nm_tag_t);

static void st_static(struct st_ctx *c, const char *name, st_bcast_fn fn, int root, size_t len, int seq)
{
  struct nm_coll_group_s world = {c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  uint8_t *buf = malloc(len + 1);
  if (c->rank == root)
    st_fill(buf, len, root, -1, seq);
  else
    memset(buf, 0, len);
  int rc = fn(c->session, &world, c->rank, root, buf, len, ST_TAG_STATIC + (nm_tag_t)seq);
  ST_CHECK(c, rc == 0, "%s from %d, %zu bytes: %s", name, root, len, nm_strerror(rc));
  long bad = st_verify(buf, len, root, -1, seq);
  ST_CHECK(c, bad < 0, "%s from %d, %zu bytes: first bad byte %ld", name, root, len, bad);
  free(buf);
}

/* Dynamic broadcast from rank 0 to @p dests (the others take no part); @p seq numbers the message. */
static void st_dynamic(struct st_ctx *c, nm_mcast_service_t mc, const int *dests, const int *prios, int n,
                       size_t len, int seq)
{
  uint8_t *buf = malloc(len + 1);
  nm_tag_t tag = ST_TAG_DYN + (nm_tag_t)seq;
  int rc;
  if (c->rank == 0) {
    st_fill(buf, len, 0, -1, seq);
    nm_mcast_req_t req;
    rc = nm_mcast_isend(mc, dests, prios, n, tag, buf, len, NM_MCAST_TREE_BINOMIAL, &req);
    ST_CHECK(c, rc == 0, "nm_mcast_isend: %s", nm_strerror(rc));
    if (rc == 0) {
      rc = nm_mcast_wait(mc, &req);
      ST_CHECK(c, rc == 0, "nm_mcast_wait: %s", nm_strerror(rc));
    }
  } else {
    int member = 0;
    for (int i = 0; i < n; i++)
      member |= dests[i] == c->rank;
    if (member) {
      nm_sr_request_t r;
      memset(buf, 0, len);
      rc = nm_sr_irecv(c->session, st_gate(c, 0), tag, buf, len, &r);
      if (rc == 0)
        rc = nm_sr_rwait(c->session, &r);
      ST_CHECK(c, rc == 0, "dynamic broadcast receive: %s", nm_strerror(rc));
      long bad = st_verify(buf, len, 0, -1, seq);
      ST_CHECK(c, bad < 0, "dynamic broadcast %d, %zu bytes: first bad byte %ld", seq, len, bad);
    }
  }
  free(buf);
}

int main(int argc, char **argv)
{
  static const size_t sizes[ST_NSIZES] = {64, 200000};
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  int seq = 0;
  for (int s = 0; s < ST_NSIZES; s++)
    for (int r = 0; r < 2; r++) {
      st_static(&c, "binomial", nm_coll_bcast_binomial_group, r * (c.size / 2), sizes[s], seq++);
      st_static(&c, "naive", nm_coll_bcast_naive_group, r * (c.size / 2), sizes[s], seq++);
    }
  nm_mcast_service_t mc;
  int rc = nm_mcast_init(c.session, &mc);
  ST_CHECK(&c, rc == 0, "nm_mcast_init: %s", nm_strerror(rc));
  nm_launcher_barrier(c.launcher); /* every rank's service is up before a broadcast reaches it */
  int *dests = malloc(sizeof(int) * (size_t)c.size), *prios = malloc(sizeof(int) * (size_t)c.size), n = 0;
  for (int r = 1; r < c.size; r++, n++) {
    dests[n] = r;
    prios[n] = r % 3; /* some ranks more urgent than others: they take the positions served first */
  }
  for (int s = 0; s < ST_NSIZES; s++)
    st_dynamic(&c, mc, dests, prios, n, sizes[s], seq++);
  n = 0;
  for (int r = 1; r < c.size; r += 2)
    dests[n++] = r;
  for (int s = 0; s < ST_NSIZES; s++)
    st_dynamic(&c, mc, dests, NULL, n, sizes[s], seq++);
  free(dests);
  free(prios);
  nm_launcher_barrier(c.launcher); /* no broadcast is still being forwarded when the services stop */
  rc = nm_mcast_finalize(mc);
  ST_CHECK(&c, rc == 0, "nm_mcast_finalize: %s", nm_strerror(rc));
  if (c.rank == 0)
    printf("st_bcast: %d ranks: %s\n", c.size, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
