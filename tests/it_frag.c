/* Integration test of eager messages cut to the inject size (core/nm_frag.c) with real processes: rank 0 sends
 * rank 1 every size within 64 bytes of 1, 2 and 3 times 4 KiB (shm injects 4096 B, so these are cut, or just
 * not), a few every 1 KiB up to the rendezvous threshold, with the receive posted before (straight into the
 * buffer) or after the message arrived (unexpected), plus synchronous sends and a truncated receive. Contents derive
 * from (size, index), so a piece in the wrong place is detected. Prints "PASS <phase>"; exits non-zero on the
 * first failure. Run by tests/frag-shm-2.sh under nmad-run's timeout. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <string.h>
#include "it_common.h"

#define MAX_LEN (32 * 1024)
#define MAX_MSGS 512

static int rank;

struct plan {
  int n;
  size_t len[MAX_MSGS];
};

static void add(struct plan *p, size_t len)
{
  if (p->n < MAX_MSGS)
    p->len[p->n++] = len;
}

static void make_plan(struct plan *p)
{
  p->n = 0;
  for (size_t k = 1; k <= 3; k++)
    for (size_t len = k * 4096 - 64; len <= k * 4096 + 64; len += (len % 4096 < 8 || len % 4096 > 4088) ? 1 : 7)
      add(p, len);
  for (size_t len = 13 * 1024; len <= MAX_LEN; len += 1024)
    add(p, len);
}

/* All messages of the plan from rank 0 to rank 1, the receives posted before the sends (@p posted: rank 1 then
 * says "ready" on tag 99) or only once each message is there (nm_sr_probe: unexpected). @p sync: synchronous
 * sends. No launcher barrier while sends are pending: a packet above the inject size completes only once the peer
 * has read it, and the launcher barrier progresses the core only under nmad-run and PMIx. */
static void phase(nm_launcher_t l, nm_session_t sess, nm_gate_t peer, const struct plan *p, int posted, int sync)
{
  static uint8_t bufs[MAX_MSGS][MAX_LEN];
  static nm_sr_request_t reqs[MAX_MSGS];
  uint64_t base = (uint64_t)(posted * 2 + sync) << 40;
  char ready = 'r';
  nm_sr_request_t rr;
  if (rank == 0) {
    if (posted) {
      CHECK_RC(nm_sr_irecv(sess, peer, 99, &ready, 1, &rr), "irecv ready");
      CHECK_RC(nm_sr_rwait(sess, &rr), "rwait ready");
    }
    for (int i = 0; i < p->n; i++) {
      fill(bufs[i], p->len[i], base + (uint64_t)i * 65536 + p->len[i]);
      int rc = sync ? nm_sr_issend(sess, peer, (nm_tag_t)(i % 3), bufs[i], p->len[i], &reqs[i])
                    : nm_sr_isend(sess, peer, (nm_tag_t)(i % 3), bufs[i], p->len[i], &reqs[i]);
      CHECK_RC(rc, "isend");
      CHECK_RC(nm_sr_swait(sess, &reqs[i]), "swait"); /* one at a time: only a message alone in its queue is cut */
    }
  } else {
    if (posted) {
      for (int i = 0; i < p->n; i++)
        CHECK_RC(nm_sr_irecv(sess, peer, (nm_tag_t)(i % 3), bufs[i], MAX_LEN, &reqs[i]), "irecv");
      CHECK_RC(nm_sr_isend(sess, peer, 99, &ready, 1, &rr), "isend ready");
      CHECK_RC(nm_sr_swait(sess, &rr), "swait ready");
    }
    for (int i = 0; i < p->n; i++) {
      if (!posted) { /* the next message of its tag is message i: wait until it is stored, then receive it */
        nm_len_t len;
        CHECK_RC(nm_sr_probe(sess, peer, (nm_tag_t)(i % 3), NM_TAG_MASK_FULL, NULL, NULL, &len), "probe");
        CHECK(len == p->len[i], "probe of message %d: %zu bytes instead of %zu", i, (size_t)len, p->len[i]);
        CHECK_RC(nm_sr_irecv(sess, peer, (nm_tag_t)(i % 3), bufs[i], MAX_LEN, &reqs[i]), "irecv");
      }
      CHECK_RC(nm_sr_rwait(sess, &reqs[i]), "rwait");
      nm_len_t got;
      CHECK_RC(nm_sr_get_size(sess, &reqs[i], &got), "get_size");
      CHECK(got == p->len[i], "message %d: %zu bytes instead of %zu", i, (size_t)got, p->len[i]);
      long bad = verify(bufs[i], p->len[i], base + (uint64_t)i * 65536 + p->len[i]);
      CHECK(bad < 0, "message %d of %zu bytes (%s%s): wrong byte at %ld", i, p->len[i],
            posted ? "posted" : "unexpected", sync ? ", sync" : "", bad);
    }
  }
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  if (rank == 0)
    printf("PASS %s%s: %d messages\n", posted ? "posted" : "unexpected", sync ? " sync" : "", p->n);
}

/* A receive of 5000 bytes for a message of 9000: the first 5000 bytes, -NM_ETRUNCATED, nothing past them. */
static void phase_truncation(nm_launcher_t l, nm_session_t sess, nm_gate_t peer)
{
  static uint8_t buf[9000];
  nm_sr_request_t req;
  if (rank == 0) {
    fill(buf, sizeof(buf), 77);
    CHECK_RC(nm_sr_isend(sess, peer, 50, buf, sizeof(buf), &req), "isend");
    CHECK_RC(nm_sr_swait(sess, &req), "swait");
  } else {
    memset(buf, 0xee, sizeof(buf));
    CHECK_RC(nm_sr_irecv(sess, peer, 50, buf, 5000, &req), "irecv");
    CHECK(nm_sr_rwait(sess, &req) == -NM_ETRUNCATED, "truncation not reported");
    CHECK(verify(buf, 5000, 77) < 0 && buf[5000] == 0xee, "truncation: wrong bytes or overflow");
  }
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  if (rank == 0)
    printf("PASS truncation\n");
}

int main(int argc, char **argv)
{
  nm_launcher_t l;
  nm_session_t sess;
  nm_gate_t peer;
  int size;
  CHECK_RC(nm_launcher_init(&l, &argc, &argv), "launcher_init");
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  CHECK(size == 2, "run with 2 ranks");
  CHECK_RC(nm_session_open(nm_launcher_get_core(l), "it_frag", &sess), "session_open");
  CHECK_RC(nm_launcher_get_gate(l, 1 - rank, &peer), "get_gate");
  static struct plan p;
  make_plan(&p);
  for (int posted = 1; posted >= 0; posted--)
    for (int sync = 0; sync <= 1; sync++)
      phase(l, sess, peer, &p, posted, sync);
  phase_truncation(l, sess, peer);
  nm_session_close(sess);
  nm_launcher_exit(l);
  return 0;
}
