/**
 * @file st_rpc.c
 * @brief Simulator test: active messages (nm_rpc.h) end to end under nmad-sim. Every rank sends to rank 0 and to
 *        its right neighbour one rpc per body size (empty, eager, rendezvous); the header names the sender, the
 *        size and the sequence number, the handler receives the body into a buffer of that size, the finalizer
 *        checks every byte. Rank 0 receives N-1 rpcs per size at once: its link is the simulated bottleneck.
 */
#include "st_common.h"
#include <nmad/nm_rpc.h>
#include <string.h>

#define ST_RPC_TAG ((nm_tag_t)0x5250)
#define ST_NSIZES 3

struct st_rpc_hdr {
  int32_t src, seq;
  uint64_t len;
};

struct st_rpc_state {
  struct st_ctx *c;
  int received, expected;
};

struct st_rpc_body {
  struct st_rpc_hdr h;
  uint8_t data[];
};

static int st_rpc_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  struct st_rpc_state *st = ref;
  struct st_rpc_hdr h;
  if (hlen != sizeof(h))
    return -NM_EPROTO;
  memcpy(&h, header, sizeof(h));
  ST_CHECK(st->c, h.len == nm_rpc_get_body_size(token), "body %zu, header says %zu",
           (size_t)nm_rpc_get_body_size(token), (size_t)h.len);
  int src = -1;
  nm_launcher_get_rank_of_gate(st->c->launcher, nm_rpc_get_source(token), &src);
  ST_CHECK(st->c, src == h.src, "rpc from rank %d claims to come from %d", src, h.src);
  struct st_rpc_body *b = malloc(sizeof(*b) + h.len + 1);
  if (!b)
    return -NM_ENOMEM;
  b->h = h;
  nm_rpc_token_set_ref(token, b);
  return nm_rpc_irecv_body(token, b->data, h.len);
}

static void st_rpc_finalizer(nm_rpc_token_t token, void *ref)
{
  struct st_rpc_state *st = ref;
  struct st_rpc_body *b = nm_rpc_token_get_ref(token);
  int rc = nm_rpc_token_status(token);
  ST_CHECK(st->c, rc == 0, "body transfer: %s", nm_strerror(rc));
  long bad = st_verify(b->data, b->h.len, b->h.src, st->c->rank, b->h.seq);
  ST_CHECK(st->c, bad < 0, "rpc from %d, %zu bytes: first bad byte %ld", b->h.src, (size_t)b->h.len, bad);
  free(b);
  st->received++;
}

int main(int argc, char **argv)
{
  static const size_t sizes[ST_NSIZES] = {0, 1000, 300000};
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  struct st_rpc_state st = {&c, 0, 0};
  nm_rpc_service_t svc;
  int rc = nm_rpc_register(c.session, ST_RPC_TAG, NM_TAG_MASK_FULL, sizeof(struct st_rpc_hdr), st_rpc_handler,
                           st_rpc_finalizer, &st, &svc);
  ST_CHECK(&c, rc == 0, "nm_rpc_register: %s", nm_strerror(rc));
  /* Rank r > 0 sends to rank 0 and to its right neighbour unless that is 0; rank 0 sends to rank 1. So rank 0
   * receives from the N-1 others, every other rank from its left neighbour: one rpc per size each. */
  int right = (c.rank + 1) % c.size;
  int targets[2] = {c.rank == 0 ? right : 0, right}, ntargets = c.rank == 0 || right == 0 ? 1 : 2;
  st.expected = ST_NSIZES * (c.rank == 0 ? c.size - 1 : 1);
  nm_launcher_barrier(c.launcher); /* every service registered before the first rpc */
  nm_rpc_req_t reqs[2 * ST_NSIZES];
  struct st_rpc_hdr hdrs[2 * ST_NSIZES];
  uint8_t *bodies[2 * ST_NSIZES];
  int nreq = 0;
  for (int t = 0; t < ntargets; t++)
    for (int s = 0; s < ST_NSIZES; s++, nreq++) {
      hdrs[nreq] = (struct st_rpc_hdr){c.rank, s, sizes[s]};
      bodies[nreq] = malloc(sizes[s] + 1);
      st_fill(bodies[nreq], sizes[s], c.rank, targets[t], s);
      memset(&reqs[nreq], 0, sizeof(reqs[nreq]));
      rc = nm_rpc_isend(c.session, st_gate(&c, targets[t]), ST_RPC_TAG, &hdrs[nreq], sizeof(hdrs[nreq]),
                        bodies[nreq], sizes[s], &reqs[nreq]);
      ST_CHECK(&c, rc == 0, "nm_rpc_isend: %s", nm_strerror(rc));
    }
  for (int i = 0; i < nreq; i++) {
    rc = nm_sr_swait(c.session, &reqs[i]);
    ST_CHECK(&c, rc == 0, "rpc send: %s", nm_strerror(rc));
    free(bodies[i]);
  }
  uint64_t deadline = nm_core_time_ns(c.core) + 10ULL * 1000000000ULL; /* simulated seconds */
  while (st.received < st.expected && nm_core_time_ns(c.core) < deadline)
    nm_core_wait(c.core, deadline);
  ST_CHECK(&c, st.received == st.expected, "received %d rpcs, expected %d", st.received, st.expected);
  nm_launcher_barrier(c.launcher); /* nobody unregisters while rpcs are still on their way to it */
  rc = nm_rpc_unregister(svc);
  ST_CHECK(&c, rc == 0, "nm_rpc_unregister: %s", nm_strerror(rc));
  if (c.rank == 0)
    printf("st_rpc: %d ranks: %s\n", c.size, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
