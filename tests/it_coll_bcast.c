/* Integration test of Hasanov 2015's eight broadcasts (nm_coll_bcast(), collectives/bcast_classic.c; issue 17,
 * deliverable 2) with real processes, any number of ranks: every algorithm from several roots (0, n/2, n-1) with
 * 0 B, 1 B, segment - 1, segment + 1 (segment = 16 KiB) and 1 MiB, then one 16 MiB broadcast per algorithm
 * from the last rank. Broadcasts follow each other back to back on one tag, so a message matched by the wrong
 * broadcast is detected. Each payload derives from (algorithm, root, size); every receiver checks every byte and
 * the guard bytes past the end. Argument checks (-NM_EINVAL) and the group of one too. Prints "PASS <phase>" on
 * rank 0; exits non-zero on the first failure. --quick: no 16 MiB broadcasts. Also nm_coll_bcast_eager() mixed with
 * schedules (phase_eager()). */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_core.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TAG ((nm_tag_t)0xBC)
#define SEGMENT ((nm_len_t)16384)
#define GUARD 64
#define GUARD_BYTE 0xA5

static int rank; /* for CHECK (it_common.h) */

struct ctx {
  nm_launcher_t launcher;
  nm_session_t sess;
  int rank, size;
  nm_gate_t *gates;
};

static uint64_t seed_of(int algo, int root, size_t len)
{
  return ((uint64_t)(algo + 1) << 56) ^ ((uint64_t)root << 40) ^ ((uint64_t)len << 4) ^ 0x17;
}

static void one(struct ctx *c, int algo, int root, size_t len)
{
  struct nm_coll_bcast_opts_s o = {.algo = (enum nm_coll_bcast_algo_e)algo, .segment = SEGMENT};
  uint64_t seed = seed_of(algo, root, len);
  uint8_t *buf = malloc(len + GUARD);
  CHECK(buf != NULL, "out of memory (%zu bytes)", len + GUARD);
  if (c->rank == root)
    fill(buf, len, seed);
  else
    memset(buf, 0x5A, len);
  memset(buf + len, GUARD_BYTE, GUARD);
  int rc = nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, root, buf, len, TAG, &o);
  const char *name = nm_coll_bcast_algo_name(o.algo);
  CHECK(rc == 0, "%s from root %d, %zu bytes: %s (%d)", name, root, len, nm_strerror(rc), rc);
  long bad = verify(buf, len, seed);
  CHECK(bad < 0, "%s from root %d, %zu bytes: wrong byte at offset %ld", name, root, len, bad);
  for (int i = 0; i < GUARD; i++)
    CHECK(buf[len + i] == GUARD_BYTE, "%s from root %d, %zu bytes: guard byte %d overwritten", name, root, len, i);
  free(buf);
}

static void pass(struct ctx *c, const char *what)
{
  int rc = nm_launcher_barrier(c->launcher); /* rank 0's line means every rank got here */
  CHECK(rc == 0, "barrier: %s", nm_strerror(rc));
  if (c->rank == 0) {
    printf("PASS %s (%d ranks)\n", what, c->size);
    fflush(stdout);
  }
}

static void phase_args(struct ctx *c)
{
  uint8_t b[4] = {0};
  struct nm_coll_bcast_opts_s bad = {.algo = NM_COLL_BCAST_NALGOS}, ok = {.algo = NM_COLL_BCAST_SCATTER_RING};
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, 0, b, 4, TAG, &bad) == -NM_EINVAL, "bad algo");
  CHECK(nm_coll_bcast_array(NULL, c->gates, c->size, c->rank, 0, b, 4, TAG, &ok) == -NM_EINVAL, "NULL session");
  CHECK(nm_coll_bcast_array(c->sess, NULL, c->size, c->rank, 0, b, 4, TAG, &ok) == -NM_EINVAL, "NULL group");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, 0, 0, 0, b, 4, TAG, &ok) == -NM_EINVAL, "n = 0");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->size, 0, b, 4, TAG, &ok) == -NM_EINVAL, "self = n");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, c->size, b, 4, TAG, &ok) == -NM_EINVAL,
        "root = n");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, -1, b, 4, TAG, &ok) == -NM_EINVAL, "root = -1");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, 0, NULL, 4, TAG, &ok) == -NM_EINVAL,
        "NULL buffer");
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    struct nm_coll_bcast_opts_s o = {.algo = (enum nm_coll_bcast_algo_e)a};
    CHECK(nm_coll_bcast_array(c->sess, &c->gates[c->rank], 1, 0, 0, b, 4, TAG, &o) == 0, "%s: group of one",
          nm_coll_bcast_algo_name(o.algo));
  }
  CHECK(nm_coll_bcast_algo_name(NM_COLL_BCAST_NALGOS) == NULL, "name of NALGOS");
}

static nm_gate_t gate_of(void *ref, int member) { return ((nm_gate_t *)ref)[member]; }

/* nm_coll_bcast_eager() (collectives/bcast_eager.c), the blocking small broadcast without a schedule: even ranks
 * take it, odd ranks build the schedule (nm_coll_bcast_array()), and their messages must pair, for every
 * algorithm it takes (flat, chain, binary, binomial), several roots and 0 B to 4 KiB, back to back on one tag.
 * It leaves the other algorithms and larger messages to the caller (NM_COLL_NOT_TAKEN, nothing posted). */
static void phase_eager(struct ctx *c, int nroots, const int *roots)
{
  struct nm_coll_group_s g = {c->size, gate_of, c->gates, NULL, NULL};
  const size_t sizes[] = {0, 1, 8, 1000, 4096};
  uint8_t buf[4096 + GUARD];
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    struct nm_coll_bcast_opts_s o = {.algo = (enum nm_coll_bcast_algo_e)a, .segment = SEGMENT};
    int whole = a == NM_COLL_BCAST_FLAT || a == NM_COLL_BCAST_CHAIN || a == NM_COLL_BCAST_BINARY ||
                a == NM_COLL_BCAST_BINOMIAL;
    for (int r = 0; r < nroots; r++)
      for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t len = sizes[s];
        uint64_t seed = seed_of(a, roots[r], len) ^ 0xEA;
        if (c->rank == roots[r])
          fill(buf, len, seed);
        else
          memset(buf, 0x5A, len);
        memset(buf + len, GUARD_BYTE, GUARD);
        int rc = NM_COLL_NOT_TAKEN;
        if (c->rank % 2 == 0) {
          rc = nm_coll_bcast_eager(c->sess, &g, c->rank, roots[r], buf, len, TAG, &o, NULL, NULL);
          CHECK(rc == (whole && c->size > 1 ? 0 : NM_COLL_NOT_TAKEN), "eager %s from root %d, %zu bytes: returned %d",
                nm_coll_bcast_algo_name(o.algo), roots[r], len, rc);
        }
        if (rc == NM_COLL_NOT_TAKEN)
          rc = nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, roots[r], buf, len, TAG, &o);
        CHECK(rc == 0, "%s from root %d, %zu bytes (mixed): %s", nm_coll_bcast_algo_name(o.algo), roots[r], len,
              nm_strerror(rc));
        long bad = verify(buf, len, seed);
        CHECK(bad < 0, "eager %s from root %d, %zu bytes: wrong byte at offset %ld", nm_coll_bcast_algo_name(o.algo),
              roots[r], len, bad);
        for (int i = 0; i < GUARD; i++)
          CHECK(buf[len + i] == GUARD_BYTE, "eager %s: guard byte %d overwritten", nm_coll_bcast_algo_name(o.algo), i);
      }
  }
  struct nm_coll_bcast_opts_s flat = {.algo = NM_COLL_BCAST_FLAT};
  CHECK(nm_coll_bcast_eager(c->sess, &g, c->rank, 0, buf, 4097, TAG, &flat, NULL, NULL) == NM_COLL_NOT_TAKEN,
        "4097 B taken");
  CHECK(nm_coll_bcast_eager(c->sess, &g, c->rank, c->size, buf, 8, TAG, &flat, NULL, NULL) == NM_COLL_NOT_TAKEN,
        "root = n taken");
}

int main(int argc, char **argv)
{
  struct ctx c;
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const size_t sizes[] = {0, 1, SEGMENT - 1, SEGMENT + 1, 1 << 20};
  char what[96];

  memset(&c, 0, sizeof(c));
  int rc = nm_launcher_init(&c.launcher, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "FAIL nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  nm_launcher_get_rank(c.launcher, &c.rank);
  rank = c.rank;
  nm_launcher_get_size(c.launcher, &c.size);
  rc = nm_session_open(nm_launcher_get_core(c.launcher), "it_coll_bcast", &c.sess);
  CHECK_RC(rc, "nm_session_open");
  c.gates = calloc((size_t)c.size, sizeof(*c.gates));
  CHECK(c.gates != NULL, "out of memory");
  for (int r = 0; r < c.size; r++) {
    rc = nm_launcher_get_gate(c.launcher, r, &c.gates[r]);
    CHECK_RC(rc, "nm_launcher_get_gate");
  }
  phase_args(&c);
  pass(&c, "argument checks");
  int roots[3] = {0, c.size / 2, c.size - 1}, nroots = c.size >= 3 ? 3 : c.size;
  phase_eager(&c, nroots, roots);
  pass(&c, "eager broadcasts mixed with schedules, 0 B .. 4 KiB");
  for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
      for (int r = 0; r < nroots; r++)
        one(&c, a, roots[r], sizes[s]);
    snprintf(what, sizeof(what), "%s: 0 B .. 1 MiB from %d roots", nm_coll_bcast_algo_name((enum nm_coll_bcast_algo_e)a),
             nroots);
    pass(&c, what);
  }
  if (!quick) {
    for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++)
      one(&c, a, c.size - 1, (size_t)16 << 20);
    pass(&c, "every algorithm, 16 MiB");
  }
  rc = nm_session_close(c.sess);
  CHECK_RC(rc, "nm_session_close");
  free(c.gates);
  rc = nm_launcher_exit(c.launcher);
  CHECK_RC(rc, "nm_launcher_exit");
  if (c.rank == 0)
    printf("PASS it_coll_bcast\n");
  return 0;
}
