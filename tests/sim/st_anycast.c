/**
 * @file st_anycast.c
 * @brief Simulator test: rootless broadcasts (nm_anycast.h; Li et al. 2018) at 64 to 1,024 simulated ranks.
 *        Four origins (0, 1, N/2, N-1) each start, without any barrier between them and the receivers, one
 *        anycast of 100 B and one of 100,000 B (rendezvous) on a handler-mode ring and one of 1,000 B on a
 *        receive-mode ring (plain nm_sr_irecv() from NM_ANY_GATE). Every rank checks that it got each anycast of
 *        the others exactly once with the right bytes (the origin reported and, for receives, in each origin's
 *        order); rank 0 checks that the ranks sent exactly N - 1 messages per anycast in all.
 */
#include "st_common.h"
#include <nmad/nm_anycast.h>
#include <string.h>

#define ST_AC_NORIG 4
#define ST_AC_TAG_SMALL ((nm_tag_t)0x100)
#define ST_AC_TAG_LARGE ((nm_tag_t)0x101)
#define ST_AC_TAG_RECV ((nm_tag_t)0x102)
#define ST_AC_TAG_SUM ((nm_tag_t)0x103)
#define ST_AC_SMALL 100
#define ST_AC_LARGE 100000
#define ST_AC_RECV 1000

struct st_ac_state {
  struct st_ctx *c;
  int origins[ST_AC_NORIG];
  int seen[ST_AC_NORIG][2]; /* per origin slot: small, large */
  int total;
};

static int st_ac_slot(const struct st_ac_state *st, int origin)
{
  for (int k = 0; k < ST_AC_NORIG; k++)
    if (st->origins[k] == origin)
      return k;
  return -1;
}

static void st_ac_handler(nm_anycast_t ac, int origin, nm_tag_t tag, const void *data, nm_len_t len, void *ref)
{
  struct st_ac_state *st = ref;
  int k = st_ac_slot(st, origin), large = tag == ST_AC_TAG_LARGE;
  ST_CHECK(st->c, k >= 0 && origin != st->c->rank, "anycast from %d, not an origin", origin);
  ST_CHECK(st->c, len == (large ? ST_AC_LARGE : ST_AC_SMALL), "%zu bytes", (size_t)len);
  if (k < 0)
    return;
  long bad = st_verify(data, len, origin, -1, (int)tag);
  ST_CHECK(st->c, bad < 0, "anycast %llx of %d: byte %ld wrong", (unsigned long long)tag, origin, bad);
  st->seen[k][large]++;
  st->total++;
}

int main(int argc, char **argv)
{
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  struct st_ac_state st = {&c, {0, 1, c.size / 2, c.size - 1}, {{0}}, 0};
  /* distinct origins (small N repeats some): the later copies never start */
  int n_orig = 0, starts = 0;
  for (int k = 0; k < ST_AC_NORIG; k++) {
    int dup = 0;
    for (int j = 0; j < k; j++)
      dup |= st.origins[j] == st.origins[k];
    if (dup)
      st.origins[k] = -1;
    else
      n_orig++;
    starts |= st.origins[k] == c.rank;
  }
  struct nm_coll_group_s all = {c.size, nm_launcher_gate_of, c.launcher, NULL, NULL};
  struct nm_anycast_params_s p = {.field_mask = NM_ANYCAST_PARAM_HANDLER, .handler = st_ac_handler,
                                  .handler_ref = &st};
  nm_anycast_t ach, acr;
  int rc = nm_anycast_init(c.session, &all, c.rank, 1, &p, &ach);
  ST_CHECK(&c, rc == 0, "nm_anycast_init: %s", nm_strerror(rc));
  rc = nm_anycast_init(c.session, &all, c.rank, 2, NULL, &acr);
  ST_CHECK(&c, rc == 0, "nm_anycast_init: %s", nm_strerror(rc));
  if (c.failures)
    return st_fini(&c);
  uint8_t *small = malloc(ST_AC_SMALL), *large = malloc(ST_AC_LARGE), *rdata = malloc(ST_AC_RECV);
  nm_anycast_req_t reqs[3];
  if (starts) {
    st_fill(small, ST_AC_SMALL, c.rank, -1, (int)ST_AC_TAG_SMALL);
    st_fill(large, ST_AC_LARGE, c.rank, -1, (int)ST_AC_TAG_LARGE);
    st_fill(rdata, ST_AC_RECV, c.rank, -1, (int)ST_AC_TAG_RECV);
    rc = nm_anycast_isend(ach, ST_AC_TAG_SMALL, small, ST_AC_SMALL, &reqs[0]);
    rc = rc ? rc : nm_anycast_isend(ach, ST_AC_TAG_LARGE, large, ST_AC_LARGE, &reqs[1]);
    rc = rc ? rc : nm_anycast_isend(acr, ST_AC_TAG_RECV, rdata, ST_AC_RECV, &reqs[2]);
    ST_CHECK(&c, rc == 0, "nm_anycast_isend: %s", nm_strerror(rc));
  }
  /* receive-mode anycasts: one receive at a time from any origin */
  int expect = n_orig - starts;
  int got_recv[ST_AC_NORIG] = {0};
  uint8_t *buf = malloc(ST_AC_RECV + 8);
  uint64_t deadline = nm_core_time_ns(c.core) + 60ULL * 1000000000ULL; /* simulated */
  for (int i = 0; i < expect && !c.failures; i++) {
    nm_sr_request_t r;
    nm_session_t rx = nm_anycast_session(acr);
    rc = nm_sr_irecv(rx, NM_ANY_GATE, ST_AC_TAG_RECV, buf, ST_AC_RECV + 8, &r);
    rc = rc ? rc : nm_sr_wait_deadline(rx, &r, deadline);
    ST_CHECK(&c, rc == 0, "receive %d of %d: %s", i, expect, nm_strerror(rc));
    if (rc)
      break;
    nm_gate_t g;
    nm_len_t len;
    nm_sr_recv_source(rx, &r, &g);
    nm_sr_get_size(rx, &r, &len);
    int o = nm_anycast_member_of(acr, g), k = st_ac_slot(&st, o);
    ST_CHECK(&c, k >= 0 && o != c.rank && len == ST_AC_RECV, "anycast from %d, %zu bytes", o, (size_t)len);
    if (k >= 0) {
      got_recv[k]++;
      ST_CHECK(&c, st_verify(buf, len, o, -1, (int)ST_AC_TAG_RECV) < 0, "anycast of %d: bad bytes", o);
    }
  }
  while (st.total < 2 * expect && nm_core_time_ns(c.core) < deadline && !c.failures)
    nm_core_wait(c.core, deadline);
  for (int k = 0; k < ST_AC_NORIG; k++) {
    int want = st.origins[k] >= 0 && st.origins[k] != c.rank;
    ST_CHECK(&c, st.seen[k][0] == want && st.seen[k][1] == want && got_recv[k] == want,
             "origin %d: seen %d, %d and %d times", st.origins[k], st.seen[k][0], st.seen[k][1], got_recv[k]);
  }
  if (starts)
    for (int i = 0; i < 3; i++) {
      rc = nm_anycast_wait(i < 2 ? ach : acr, &reqs[i]);
      ST_CHECK(&c, rc == 0, "origin's sends: %s", nm_strerror(rc));
    }
  /* forwarding runs inside progress, which the launcher barrier below does not make */
  rc = nm_anycast_flush(ach, deadline);
  rc = rc ? rc : nm_anycast_flush(acr, deadline);
  ST_CHECK(&c, rc == 0, "nm_anycast_flush: %s", nm_strerror(rc));
  /* every message counted: N - 1 per anycast, over all ranks */
  struct nm_anycast_stats_s a, b;
  nm_anycast_get_stats(ach, &a);
  nm_anycast_get_stats(acr, &b);
  uint64_t sent = a.sent + b.sent;
  ST_CHECK(&c, a.lost == 0 && b.lost == 0, "lost %llu", (unsigned long long)(a.lost + b.lost));
  nm_launcher_barrier(c.launcher);
  if (c.rank == 0) {
    for (int r = 1; r < c.size; r++) {
      uint64_t v = 0;
      nm_sr_request_t q;
      rc = nm_sr_irecv(c.session, st_gate(&c, r), ST_AC_TAG_SUM, &v, sizeof(v), &q);
      rc = rc ? rc : nm_sr_rwait(c.session, &q);
      ST_CHECK(&c, rc == 0, "count of %d: %s", r, nm_strerror(rc));
      sent += v;
    }
    uint64_t want = (uint64_t)3 * n_orig * (uint64_t)(c.size - 1);
    ST_CHECK(&c, sent == want, "%llu messages for %d anycasts; n - 1 each is %llu", (unsigned long long)sent,
             3 * n_orig, (unsigned long long)want);
  } else {
    nm_sr_request_t q;
    rc = nm_sr_isend(c.session, st_gate(&c, 0), ST_AC_TAG_SUM, &sent, sizeof(sent), &q);
    rc = rc ? rc : nm_sr_swait(c.session, &q);
    ST_CHECK(&c, rc == 0, "count: %s", nm_strerror(rc));
  }
  nm_launcher_barrier(c.launcher);
  while ((rc = nm_anycast_finalize(ach)) == -NM_EBUSY)
    nm_core_progress(c.core);
  ST_CHECK(&c, rc == 0, "nm_anycast_finalize: %s", nm_strerror(rc));
  while ((rc = nm_anycast_finalize(acr)) == -NM_EBUSY)
    nm_core_progress(c.core);
  ST_CHECK(&c, rc == 0, "nm_anycast_finalize: %s", nm_strerror(rc));
  free(small);
  free(large);
  free(rdata);
  free(buf);
  if (c.rank == 0)
    printf("st_anycast: %d ranks, %d origins: %s\n", c.size, n_orig, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
