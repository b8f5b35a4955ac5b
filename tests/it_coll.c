/* Integration test of the static broadcasts (nm_coll.h) with real processes (nmad-run or mpirun), any number of
 * ranks: binomial and naive broadcasts from every root in turn, of 0 B, 1 B, 4 KiB (eager) and 1 MiB
 * (rendezvous), then one 16 MiB broadcast of each kind. The broadcasts of one phase follow each other back to
 * back on one tag, so a message of one broadcast matched by the receive of another would be detected. Each
 * payload derives from (kind, root, size, round); receivers check every byte and that the guard bytes past the
 * end are untouched. Then argument checks (-NM_EINVAL), a truncated broadcast (-NM_ETRUNCATED, data still
 * forwarded), and broadcasts over a sub-group given in reverse order. Prints "PASS <phase>" lines on rank 0;
 * exits non-zero on the first failure. --quick: no 16 MiB broadcast. */
#include <nmad/nm_coll.h>
#include <nmad/nm_core.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TAG_BCAST ((nm_tag_t)0xB0)
#define TAG_TRUNC ((nm_tag_t)0xB1)
#define TAG_SUB ((nm_tag_t)0xB2)
#define GUARD 64
#define GUARD_BYTE 0xA5

static int rank; /* for CHECK (it_common.h) */

struct ctx {
  nm_launcher_t launcher;
  nm_session_t sess;
  int rank, size;
  nm_gate_t *group;
};

typedef int (*bcast_fn)(nm_session_t, const nm_gate_t *, int, int, int, void *, nm_len_t, nm_tag_t);

static const struct {
  const char *name;
  bcast_fn fn;
} kinds[] = {{"binomial", nm_coll_bcast_binomial}, {"naive", nm_coll_bcast_naive}};
#define NKINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

static uint64_t seed_of(int kind, int root, size_t len, int round)
{
  return ((uint64_t)kind << 56) ^ ((uint64_t)root << 40) ^ ((uint64_t)len << 8) ^ (uint64_t)round;
}

/* A buffer of len bytes followed by GUARD guard bytes; receivers start from garbage, the root from the pattern. */
static uint8_t *prepare(struct ctx *c, size_t len, int root, uint64_t seed)
{
  uint8_t *buf = malloc(len + GUARD);
  CHECK(buf != NULL, "out of memory (%zu bytes)", len + GUARD);
  if (c->rank == root)
    fill(buf, len, seed);
  else
    memset(buf, 0x5A, len);
  memset(buf + len, GUARD_BYTE, GUARD);
  return buf;
}

static void check_buf(struct ctx *c, const uint8_t *buf, size_t len, uint64_t seed, const char *what, int root)
{
  long bad = verify(buf, len, seed);
  CHECK(bad < 0, "%s from root %d, %zu bytes: wrong byte at offset %ld", what, root, len, bad);
  for (int i = 0; i < GUARD; i++)
    CHECK(buf[len + i] == GUARD_BYTE, "%s from root %d, %zu bytes: guard byte %d overwritten", what, root, len,
          i);
}

/* Every root in turn, back to back on one tag, for each kind and size. */
static void phase_all_roots(struct ctx *c, size_t len, int round)
{
  for (int k = 0; k < NKINDS; k++) {
    for (int root = 0; root < c->size; root++) {
      uint64_t seed = seed_of(k, root, len, round);
      uint8_t *buf = prepare(c, len, root, seed);
      int rc = kinds[k].fn(c->sess, c->group, c->size, c->rank, root, buf, len, TAG_BCAST);
      CHECK(rc == 0, "%s from root %d, %zu bytes: %s (%d)", kinds[k].name, root, len, nm_strerror(rc), rc);
      check_buf(c, buf, len, seed, kinds[k].name, root);
      free(buf);
    }
  }
}

/* Bad arguments are errors, never crashes; nothing is sent, so no member waits for anything. */
static void phase_args(struct ctx *c)
{
  uint8_t b[4] = {0};
  for (int k = 0; k < NKINDS; k++) {
    bcast_fn f = kinds[k].fn;
    CHECK(f(NULL, c->group, c->size, c->rank, 0, b, 4, TAG_BCAST) == -NM_EINVAL, "%s: NULL session",
          kinds[k].name);
    CHECK(f(c->sess, NULL, c->size, c->rank, 0, b, 4, TAG_BCAST) == -NM_EINVAL, "%s: NULL group", kinds[k].name);
    CHECK(f(c->sess, c->group, 0, 0, 0, b, 4, TAG_BCAST) == -NM_EINVAL, "%s: n = 0", kinds[k].name);
    CHECK(f(c->sess, c->group, c->size, c->size, 0, b, 4, TAG_BCAST) == -NM_EINVAL, "%s: self = n",
          kinds[k].name);
    CHECK(f(c->sess, c->group, c->size, c->rank, -1, b, 4, TAG_BCAST) == -NM_EINVAL, "%s: root = -1",
          kinds[k].name);
    CHECK(f(c->sess, c->group, c->size, c->rank, c->size, b, 4, TAG_BCAST) == -NM_EINVAL, "%s: root = n",
          kinds[k].name);
    CHECK(f(c->sess, c->group, c->size, c->rank, 0, NULL, 4, TAG_BCAST) == -NM_EINVAL, "%s: NULL buffer",
          kinds[k].name);
    /* A group of one (this process alone) is a no-op. */
    CHECK(f(c->sess, &c->group[c->rank], 1, 0, 0, b, 4, TAG_BCAST) == 0, "%s: group of one", kinds[k].name);
  }
}

/* The root sends 4 KiB, every other member expects 1 KiB: the root's direct children report -NM_ETRUNCATED
 * (the binomial tree still forwards the first 1 KiB, so its subtrees complete with the right data). */
static void phase_truncated(struct ctx *c)
{
  const size_t big = 4096, small = 1024;
  for (int k = 0; k < NKINDS; k++) {
    uint64_t seed = seed_of(k, 0, big, 77);
    size_t len = c->rank == 0 ? big : small;
    uint8_t *buf = malloc(big + GUARD);
    CHECK(buf != NULL, "out of memory");
    if (c->rank == 0)
      fill(buf, big, seed);
    memset(buf + len, GUARD_BYTE, GUARD);
    int rc = kinds[k].fn(c->sess, c->group, c->size, c->rank, 0, buf, len, TAG_TRUNC);
    CHECK(rc == 0 || rc == -NM_ETRUNCATED, "%s truncated: %s (%d)", kinds[k].name, nm_strerror(rc), rc);
    if (c->rank != 0) {
      long bad = verify(buf, small, seed);
      CHECK(bad < 0, "%s truncated: wrong byte at offset %ld", kinds[k].name, bad);
      for (int i = 0; i < GUARD; i++)
        CHECK(buf[small + i] == GUARD_BYTE, "%s truncated: guard byte %d overwritten", kinds[k].name, i);
      /* Naive: everybody hears from the root directly; binomial: at least the root's children do. */
      if (k == 1)
        CHECK(rc == -NM_ETRUNCATED, "naive truncated: got %d, expected -NM_ETRUNCATED", rc);
    } else {
      CHECK(rc == 0, "%s truncated: the root got %d", kinds[k].name, rc);
    }
    free(buf);
  }
}

/* A sub-group (every other rank, in reverse order): group indices differ from ranks; others do not take part. */
static void phase_subgroup(struct ctx *c)
{
  int n = 0, self = -1;
  nm_gate_t *sub = calloc((size_t)c->size, sizeof(*sub));
  CHECK(sub != NULL, "out of memory");
  for (int r = c->size - 1; r >= 0; r--) {
    if (r % 2 != 0)
      continue;
    if (r == c->rank)
      self = n;
    sub[n++] = c->group[r];
  }
  if (self >= 0) {
    for (int k = 0; k < NKINDS; k++) {
      for (int root = 0; root < n; root++) {
        size_t len = 65536 + (size_t)root;
        uint64_t seed = seed_of(k, root, len, 5);
        uint8_t *buf = prepare(c, len, self == root ? c->rank : -1, seed);
        int rc = kinds[k].fn(c->sess, sub, n, self, root, buf, len, TAG_SUB);
        CHECK(rc == 0, "%s sub-group root %d: %s (%d)", kinds[k].name, root, nm_strerror(rc), rc);
        check_buf(c, buf, len, seed, "sub-group", root);
        free(buf);
      }
    }
  }
  free(sub);
}

static void pass(struct ctx *c, const char *what)
{
  /* Every rank reaches this point only if its own checks passed; the barrier makes rank 0's line mean "all". */
  int rc = nm_launcher_barrier(c->launcher);
  CHECK(rc == 0, "barrier: %s", nm_strerror(rc));
  if (c->rank == 0) {
    printf("PASS %s (%d ranks)\n", what, c->size);
    fflush(stdout);
  }
}

int main(int argc, char **argv)
{
  struct ctx c;
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  const size_t sizes[] = {0, 1, 4096, 1 << 20};
  char what[64];
  int rc;

  memset(&c, 0, sizeof(c));
  rc = nm_launcher_init(&c.launcher, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "FAIL nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  nm_launcher_get_rank(c.launcher, &c.rank);
  rank = c.rank;
  nm_launcher_get_size(c.launcher, &c.size);
  rc = nm_session_open(nm_launcher_get_core(c.launcher), "it_coll", &c.sess);
  CHECK(rc == 0, "nm_session_open: %s", nm_strerror(rc));
  c.group = calloc((size_t)c.size, sizeof(*c.group));
  CHECK(c.group != NULL, "out of memory");
  for (int r = 0; r < c.size; r++) {
    rc = nm_launcher_get_gate(c.launcher, r, &c.group[r]);
    CHECK(rc == 0, "nm_launcher_get_gate(%d): %s", r, nm_strerror(rc));
  }

  phase_args(&c);
  pass(&c, "argument checks");
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    phase_all_roots(&c, sizes[i], (int)i);
    snprintf(what, sizeof(what), "binomial+naive from every root, %zu bytes", sizes[i]);
    pass(&c, what);
  }
  if (!quick) {
    /* One 16 MiB broadcast of each kind, from the last rank (so the tree is not the identity). */
    const size_t big = (size_t)16 << 20;
    for (int k = 0; k < NKINDS; k++) {
      int root = c.size - 1;
      uint64_t seed = seed_of(k, root, big, 9);
      uint8_t *buf = prepare(&c, big, root, seed);
      rc = kinds[k].fn(c.sess, c.group, c.size, c.rank, root, buf, big, TAG_BCAST);
      CHECK(rc == 0, "%s 16 MiB: %s (%d)", kinds[k].name, nm_strerror(rc), rc);
      check_buf(&c, buf, big, seed, kinds[k].name, root);
      free(buf);
    }
    pass(&c, "binomial+naive 16 MiB");
  }
  if (c.size > 1) {
    phase_truncated(&c);
    pass(&c, "truncated broadcast");
  }
  phase_subgroup(&c);
  pass(&c, "sub-group in reverse order");

  rc = nm_session_close(c.sess);
  CHECK(rc == 0, "nm_session_close: %s", nm_strerror(rc));
  free(c.group);
  rc = nm_launcher_exit(c.launcher);
  CHECK(rc == 0, "nm_launcher_exit: %s", nm_strerror(rc));
  if (c.rank == 0)
    printf("PASS it_coll\n");
  return 0;
}
