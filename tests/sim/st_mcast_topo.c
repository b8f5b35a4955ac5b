/**
 * @file st_mcast_topo.c
 * @brief Simulator test of the topology-ID multicast (Song 2009; nm_mcast_topo.h) at 64 to 1,024 simulated ranks,
 * topology from NMAD_MCAST_TOPO (set by the scripts), every byte checked on every rank:
 *  - tree kind of the dynamic broadcast: four roots at once (0, N/3, N/2 + 1, N - 1), each to its own pseudo-random
 *    subset (about half the job), 64 KiB + root bytes in 8 KiB segments; receivers post plain nm_sr_irecv();
 *  - standalone nm_mcast_topo_isend(): root 0 to everybody (interval [0, N)) and root N - 1 to a random list,
 *    at the same time, 3,000 bytes; every destination's handler runs exactly once per root, relays (virtual
 *    masters) never deliver.
 * Simulated time is not asserted: the benchmark (bench/nm_bench_mcast_topo_sim.sh) reports it.
 */
#include "st_common.h"
#include <nmad/nm_mcast.h>
#include <nmad/nm_mcast_topo.h>
#include <string.h>

#define ST_TAG ((nm_tag_t)0x7000)
#define ST_TAG_SA ((nm_tag_t)0x7100)
#define ST_TAG_DONE ((nm_tag_t)0x7200)
#define ST_NROOTS 4
#define ST_SA_LEN 3000

static int st_root(int k, int n)
{
  const int r[ST_NROOTS] = {0, n / 3, n / 2 + 1, n - 1};
  return r[k] % n;
}
static int st_is_dest(int k, int root, int d) { return d != root && mix(((uint64_t)k << 32) ^ (uint64_t)d) % 2; }
static size_t st_len(int root) { return 65536 + (size_t)root; }

struct st_sa_s {
  struct st_ctx *c;
  int from_first, from_last, bad;
};

static int st_sa_dest_last(int n, int d) { return d != n - 1 && mix(0x5a5a0000ULL ^ (uint64_t)d) % 3 == 0; }

static void st_on_mcast(int root, nm_tag_t tag, const void *data, nm_len_t len, void *ref)
{
  struct st_sa_s *s = ref;
  if (tag != ST_TAG_SA || len != ST_SA_LEN || st_verify(data, len, root, -2, 0) >= 0)
    s->bad++;
  else if (root == 0)
    s->from_first++;
  else if (root == s->c->size - 1)
    s->from_last++;
  else
    s->bad++;
}

int main(int argc, char **argv)
{
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  const int n = c.size;
  nm_mcast_service_t mc;
  int rc = nm_mcast_init(c.session, &mc);
  ST_CHECK(&c, rc == 0, "nm_mcast_init: %s", nm_strerror(rc));
  /* ---- tree kind, four concurrent roots ---- */
  uint8_t *rbuf[ST_NROOTS] = {NULL};
  nm_sr_request_t rreq[ST_NROOTS];
  for (int k = 0; k < ST_NROOTS; k++) {
    int root = st_root(k, n);
    if (!st_is_dest(k, root, c.rank) || (k > 0 && root == st_root(k - 1, n)))
      continue;
    rbuf[k] = malloc(st_len(root));
    rc = nm_sr_irecv(c.session, st_gate(&c, root), ST_TAG + (nm_tag_t)k, rbuf[k], st_len(root), &rreq[k]);
    ST_CHECK(&c, rc == 0, "nm_sr_irecv: %s", nm_strerror(rc));
  }
  nm_launcher_barrier(c.launcher);
  for (int k = 0; k < ST_NROOTS; k++) {
    int root = st_root(k, n);
    if (root != c.rank || (k > 0 && root == st_root(k - 1, n)))
      continue;
    int *dests = malloc(sizeof(int) * (size_t)n), m = 0;
    for (int d = 0; d < n; d++)
      if (st_is_dest(k, root, d))
        dests[m++] = d;
    uint8_t *data = malloc(st_len(root));
    st_fill(data, st_len(root), root, -1, k);
    nm_mcast_req_t req;
    rc = nm_mcast_isend_seg(mc, dests, NULL, m, ST_TAG + (nm_tag_t)k, data, st_len(root), NM_MCAST_TREE_TOPO_ID,
                            8192, &req);
    ST_CHECK(&c, rc == 0, "nm_mcast_isend_seg: %s", nm_strerror(rc));
    if (rc == 0) {
      rc = nm_mcast_wait(mc, &req);
      ST_CHECK(&c, rc == 0, "nm_mcast_wait: %s", nm_strerror(rc));
    }
    free(data);
    free(dests);
  }
  for (int k = 0; k < ST_NROOTS; k++) {
    if (rbuf[k] == NULL)
      continue;
    int root = st_root(k, n);
    rc = nm_sr_rwait(c.session, &rreq[k]);
    ST_CHECK(&c, rc == 0, "root %d: receive %s", root, nm_strerror(rc));
    long bad = st_verify(rbuf[k], st_len(root), root, -1, k);
    ST_CHECK(&c, bad < 0, "root %d: first bad byte %ld", root, bad);
    free(rbuf[k]);
  }
  nm_tag_t left;
  ST_CHECK(&c, nm_sr_iprobe(c.session, NM_ANY_GATE, ST_TAG, ~(nm_tag_t)0xff, NULL, &left, NULL) == -NM_EAGAIN,
           "a multicast arrived twice (tag %llx)", (unsigned long long)left);
  nm_launcher_barrier(c.launcher);
  /* ---- standalone: everybody from root 0, a list from root n - 1, at once ---- */
  nm_mcast_topo_t topo = NULL;
  rc = nm_mcast_topo_from_env(n, c.rank, &topo);
  ST_CHECK(&c, rc == 0, "nm_mcast_topo_from_env: %s", nm_strerror(rc));
  struct st_sa_s sa = {.c = &c};
  nm_mcast_topo_service_t svc = NULL;
  if (rc == 0) {
    rc = nm_mcast_topo_init(c.session, topo, 1 << 16, st_on_mcast, &sa, &svc);
    ST_CHECK(&c, rc == 0, "nm_mcast_topo_init: %s", nm_strerror(rc));
  }
  nm_launcher_barrier(c.launcher);
  if (svc && (c.rank == 0 || c.rank == n - 1)) {
    uint8_t *data = malloc(ST_SA_LEN);
    int *list = malloc(sizeof(int) * (size_t)n), m = 0;
    for (int d = 0; d < n; d++)
      if (st_sa_dest_last(n, d))
        list[m++] = d;
    st_fill(data, ST_SA_LEN, c.rank, -2, 0);
    struct nm_mcast_topo_set_s set = c.rank == 0 ? (struct nm_mcast_topo_set_s){.lo = 0, .hi = n}
                                                 : (struct nm_mcast_topo_set_s){.list = list, .n = m};
    nm_mcast_topo_req_t req;
    rc = nm_mcast_topo_isend(svc, &set, ST_TAG_SA, data, ST_SA_LEN, &req);
    ST_CHECK(&c, rc == 0, "nm_mcast_topo_isend: %s", nm_strerror(rc));
    if (rc == 0) {
      rc = nm_mcast_topo_wait(svc, &req);
      ST_CHECK(&c, rc == 0, "nm_mcast_topo_wait: %s", nm_strerror(rc));
    }
    free(data);
    free(list);
  }
  /* wait for our deliveries, then tell rank 0; rank 0 tells everybody when all are done (we may still relay) */
  int want_first = c.rank != 0, want_last = st_sa_dest_last(n, c.rank);
  uint64_t dl = nm_core_time_ns(c.core) + 10ULL * 1000000000ULL; /* simulated seconds */
  while (svc && (sa.from_first < want_first || sa.from_last < want_last) && nm_core_time_ns(c.core) < dl)
    nm_core_wait(c.core, nm_core_time_ns(c.core) + 100000);
  ST_CHECK(&c, sa.from_first == want_first && sa.from_last == want_last && sa.bad == 0,
           "standalone: from 0 %d (want %d), from %d %d (want %d), bad %d", sa.from_first, want_first, n - 1,
           sa.from_last, want_last, sa.bad);
  nm_sr_request_t r;
  if (c.rank == 0) {
    for (int p = 1; p < n; p++) {
      nm_sr_irecv(c.session, st_gate(&c, p), ST_TAG_DONE, NULL, 0, &r);
      nm_sr_rwait(c.session, &r);
    }
    for (int p = 1; p < n; p++) {
      nm_sr_isend(c.session, st_gate(&c, p), ST_TAG_DONE, NULL, 0, &r);
      nm_sr_swait(c.session, &r);
    }
  } else {
    nm_sr_isend(c.session, st_gate(&c, 0), ST_TAG_DONE, NULL, 0, &r);
    nm_sr_swait(c.session, &r);
    nm_sr_irecv(c.session, st_gate(&c, 0), ST_TAG_DONE, NULL, 0, &r);
    nm_sr_rwait(c.session, &r);
  }
  while (svc && nm_mcast_topo_pending(svc) && nm_core_time_ns(c.core) < dl)
    nm_core_wait(c.core, nm_core_time_ns(c.core) + 100000);
  nm_launcher_barrier(c.launcher);
  if (svc) {
    rc = nm_mcast_topo_finalize(svc);
    ST_CHECK(&c, rc == 0, "nm_mcast_topo_finalize: %s", nm_strerror(rc));
  }
  nm_mcast_topo_destroy(topo);
  rc = nm_mcast_finalize(mc);
  ST_CHECK(&c, rc == 0, "nm_mcast_finalize: %s", nm_strerror(rc));
  if (c.rank == 0 && c.failures == 0)
    printf("PASS st_mcast_topo: %d ranks, NMAD_MCAST_TOPO=%s\n", n, getenv("NMAD_MCAST_TOPO"));
  return st_fini(&c);
}
