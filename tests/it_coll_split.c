/* Integration test of the split-tree collectives (nm_coll_split.h; Denis et al. 2019, section 6) with real
 * processes: broadcast, reduce, gather and scatter from two roots, for every S from 0 to H + 1 (clamped to H),
 * the automatic S, and a different S on every member; an eager and a rendezvous size each. Every result is
 * checked byte for byte against what the members' data gives (the same for every S: the split only moves edges
 * between the caller's context and the progress), with guard bytes past the end. Then the four collectives in
 * flight at once on four tags, NMAD_SPLIT_S read by the automatic choice, and a bad NMAD_SPLIT_S refused before
 * anything is sent. Run it with NMAD_PROGRESS=thread to have the upper levels on the progress thread.
 * Prints "PASS <phase>" on rank 0; exits non-zero on the first failure. */
#include <nmad/nm_coll_split.h>
#include <nmad/nm_core.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define GUARD 32
#define GUARD_BYTE 0xA5
/* CHECK_RC evaluates its argument again on failure: calls go through RUN */
#define RUN(call, what)                                                                                            \
  do {                                                                                                             \
    int rc_ = (call);                                                                                              \
    CHECK_RC(rc_, what);                                                                                           \
  } while (0)
#define S_MIXED (-100) /* S = rank mod (H + 1): members split differently */

static int rank; /* for CHECK (it_common.h) */

struct ctx {
  nm_launcher_t launcher;
  nm_session_t sess;
  int size, h;
  struct nm_coll_group_s group;
  nm_tag_t tag; /* a fresh tag per collective */
};

static uint64_t seed_of(int op, int member, size_t len, int S) { return ((uint64_t)op << 56) ^ ((uint64_t)member << 40) ^ ((uint64_t)len << 8) ^ (uint64_t)(S + 128); }

static int sum_bytes(void *acc, const void *in, nm_len_t len, void *ref)
{
  uint8_t *a = acc;
  const uint8_t *b = in;
  for (nm_len_t i = 0; i < len; i++)
    a[i] = (uint8_t)(a[i] + b[i]);
  ++*(int *)ref; /* counts the combines done for this member */
  return 0;
}

static uint8_t *guarded(size_t len)
{
  uint8_t *p = malloc(len + GUARD);
  CHECK(p != NULL, "out of memory (%zu bytes)", len + GUARD);
  memset(p, 0x5A, len);
  memset(p + len, GUARD_BYTE, GUARD);
  return p;
}

static void check_guard(const uint8_t *p, size_t len, const char *what, int S)
{
  for (int i = 0; i < GUARD; i++)
    CHECK(p[len + i] == GUARD_BYTE, "%s S=%d %zu B: guard byte %d overwritten", what, S, len, i);
}

static struct nm_coll_split_opts_s opts_of(struct ctx *c, int S)
{
  struct nm_coll_split_opts_s o = {S == S_MIXED ? rank % (c->h + 1) : S, NULL};
  return o;
}

static void one_bcast(struct ctx *c, int root, size_t len, int S)
{
  uint64_t seed = seed_of(1, root, len, S);
  uint8_t *buf = guarded(len);
  if (rank == root)
    fill(buf, len, seed);
  struct nm_coll_split_opts_s o = opts_of(c, S);
  nm_coll_split_t *req;
  int rc = nm_coll_split_ibcast(c->sess, &c->group, rank, root, buf, len, c->tag++, &o, &req);
  CHECK_RC(rc, "nm_coll_split_ibcast");
  int got = nm_coll_split_get_S(req);
  CHECK(got >= 0 && got <= c->h, "bcast: S %d outside [0, %d]", got, c->h);
  if (S >= 0)
    CHECK(got == (S > c->h ? c->h : S), "bcast: S %d asked, %d used", S, got);
  RUN(nm_coll_split_wait(req), "bcast wait");
  long bad = verify(buf, len, seed);
  CHECK(bad < 0, "bcast root %d S=%d %zu B: wrong byte at %ld", root, S, len, bad);
  check_guard(buf, len, "bcast", S);
  free(buf);
}

static void one_reduce(struct ctx *c, int root, size_t len, int S)
{
  uint8_t *mine = guarded(len), *out = guarded(len), *want = malloc(len + 1), *peer = malloc(len + 1);
  CHECK(want && peer, "out of memory");
  fill(mine, len, seed_of(2, rank, len, S));
  memset(want, 0, len);
  for (int m = 0; m < c->size; m++) {
    fill(peer, len, seed_of(2, m, len, S));
    for (size_t i = 0; i < len; i++)
      want[i] = (uint8_t)(want[i] + peer[i]);
  }
  int combines = 0;
  struct nm_coll_split_opts_s o = opts_of(c, S);
  nm_coll_split_t *req;
  int rc = nm_coll_split_ireduce(c->sess, &c->group, rank, root, mine, out, len, sum_bytes, &combines, c->tag++, &o,
                                 &req);
  CHECK_RC(rc, "nm_coll_split_ireduce");
  RUN(nm_coll_split_wait(req), "reduce wait");
  CHECK(combines <= c->h, "reduce: %d combines for at most %d children", combines, c->h);
  if (rank == root) {
    CHECK(memcmp(out, want, len) == 0, "reduce root %d S=%d %zu B: wrong result", root, S, len);
    check_guard(out, len, "reduce", S);
  }
  check_guard(mine, len, "reduce send buffer", S);
  free(mine);
  free(out);
  free(want);
  free(peer);
}

static void one_gather(struct ctx *c, int root, size_t block, int S)
{
  size_t all = block * (size_t)c->size;
  uint8_t *mine = guarded(block), *out = guarded(all);
  fill(mine, block, seed_of(3, rank, block, S));
  struct nm_coll_split_opts_s o = opts_of(c, S);
  nm_coll_split_t *req;
  RUN(nm_coll_split_igather(c->sess, &c->group, rank, root, mine, out, block, c->tag++, &o, &req),
           "nm_coll_split_igather");
  RUN(nm_coll_split_wait(req), "gather wait");
  if (rank == root) {
    for (int m = 0; m < c->size; m++) {
      long bad = verify(out + (size_t)m * block, block, seed_of(3, m, block, S));
      CHECK(bad < 0, "gather root %d S=%d block %zu: member %d's block wrong at %ld", root, S, block, m, bad);
    }
    check_guard(out, all, "gather", S);
  }
  free(mine);
  free(out);
}

static void one_scatter(struct ctx *c, int root, size_t block, int S)
{
  size_t all = block * (size_t)c->size;
  uint8_t *src = guarded(all), *out = guarded(block);
  if (rank == root)
    for (int m = 0; m < c->size; m++)
      fill(src + (size_t)m * block, block, seed_of(4, m, block, S));
  struct nm_coll_split_opts_s o = opts_of(c, S);
  nm_coll_split_t *req;
  RUN(nm_coll_split_iscatter(c->sess, &c->group, rank, root, src, out, block, c->tag++, &o, &req),
           "nm_coll_split_iscatter");
  RUN(nm_coll_split_wait(req), "scatter wait");
  long bad = verify(out, block, seed_of(4, rank, block, S));
  CHECK(bad < 0, "scatter root %d S=%d block %zu: wrong byte at %ld", root, S, block, bad);
  check_guard(out, block, "scatter", S);
  free(src);
  free(out);
}

/* The four collectives in flight at once, each on its own tag, waited in reverse order. */
static void phase_concurrent(struct ctx *c)
{
  const size_t len = 50000, block = 3000;
  int root = c->size - 1, combines = 0, S = c->h > 0 ? 1 : 0;
  struct nm_coll_split_opts_s o = {S, NULL};
  uint8_t *b = guarded(len), *mine = guarded(len), *red = guarded(len), *g1 = guarded(block);
  uint8_t *gall = guarded(block * (size_t)c->size), *sall = guarded(block * (size_t)c->size), *s1 = guarded(block);
  if (rank == root) {
    fill(b, len, seed_of(5, root, len, 0));
    for (int m = 0; m < c->size; m++)
      fill(sall + (size_t)m * block, block, seed_of(6, m, block, 0));
  }
  memset(mine, 1, len);
  fill(g1, block, seed_of(7, rank, block, 0));
  nm_coll_split_t *r[4];
  RUN(nm_coll_split_ibcast(c->sess, &c->group, rank, root, b, len, c->tag++, &o, &r[0]), "ibcast");
  RUN(nm_coll_split_ireduce(c->sess, &c->group, rank, root, mine, red, len, sum_bytes, &combines, c->tag++, &o,
                                 &r[1]), "ireduce");
  RUN(nm_coll_split_iscatter(c->sess, &c->group, rank, root, sall, s1, block, c->tag++, &o, &r[2]), "iscatter");
  RUN(nm_coll_split_igather(c->sess, &c->group, rank, root, g1, gall, block, c->tag++, &o, &r[3]), "igather");
  for (int i = 3; i >= 0; i--)
    RUN(nm_coll_split_wait(r[i]), "concurrent wait");
  CHECK(verify(b, len, seed_of(5, root, len, 0)) < 0, "concurrent bcast: wrong data");
  CHECK(verify(s1, block, seed_of(6, rank, block, 0)) < 0, "concurrent scatter: wrong data");
  if (rank == root) {
    for (size_t i = 0; i < len; i++)
      CHECK(red[i] == (uint8_t)c->size, "concurrent reduce: byte %zu is %d, not %d", i, red[i], c->size);
    for (int m = 0; m < c->size; m++)
      CHECK(verify(gall + (size_t)m * block, block, seed_of(7, m, block, 0)) < 0, "concurrent gather: member %d", m);
  }
  free(b), free(mine), free(red), free(g1), free(gall), free(sall), free(s1);
}

/* The automatic S follows NMAD_SPLIT_S; a bad value is refused before anything is sent. */
static void phase_env(struct ctx *c)
{
  uint8_t b[8] = {0};
  nm_coll_split_t *req = (void *)1;
  setenv("NMAD_SPLIT_S", "1", 1);
  RUN(nm_coll_split_ibcast(c->sess, &c->group, rank, 0, b, sizeof(b), c->tag++, NULL, &req), "env ibcast");
  CHECK(nm_coll_split_get_S(req) == (c->h < 1 ? c->h : 1), "NMAD_SPLIT_S=1 gave S %d", nm_coll_split_get_S(req));
  RUN(nm_coll_split_wait(req), "env wait");
  setenv("NMAD_SPLIT_S", "two", 1);
  CHECK(nm_coll_split_ibcast(c->sess, &c->group, rank, 0, b, sizeof(b), c->tag, NULL, &req) == -NM_EINVAL,
        "NMAD_SPLIT_S=two accepted");
  CHECK(req == NULL, "a refused collective hands back a request");
  struct nm_coll_split_opts_s bad = {-2, NULL};
  CHECK(nm_coll_split_ibcast(c->sess, &c->group, rank, 0, b, sizeof(b), c->tag, &bad, &req) == -NM_EINVAL,
        "S = -2 accepted");
  unsetenv("NMAD_SPLIT_S");
  CHECK(nm_coll_split_ibcast(NULL, &c->group, rank, 0, b, 1, c->tag, NULL, &req) == -NM_EINVAL, "NULL session");
  CHECK(nm_coll_split_ibcast(c->sess, &c->group, rank, c->size, b, 1, c->tag, NULL, &req) == -NM_EINVAL,
        "root = n");
  CHECK(nm_coll_split_ireduce(c->sess, &c->group, rank, 0, b, b, 1, NULL, NULL, c->tag, NULL, &req) == -NM_EINVAL,
        "NULL combine");
}

int main(int argc, char **argv)
{
  struct ctx c;
  int rc = nm_launcher_init(&c.launcher, &argc, &argv);
  if (rc) {
    fprintf(stderr, "nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  nm_launcher_get_rank(c.launcher, &rank);
  nm_launcher_get_size(c.launcher, &c.size);
  RUN(nm_session_open(nm_launcher_get_core(c.launcher), "split", &c.sess), "nm_session_open");
  c.group = (struct nm_coll_group_s){c.size, nm_launcher_gate_of, c.launcher, NULL, NULL};
  c.h = nm_coll_split_depth(c.size);
  c.tag = 0x5100;
  unsetenv("NMAD_SPLIT_S"); /* the phases below choose S themselves */
  const int roots[2] = {0, c.size / 2 + (c.size > 2)};
  const size_t lens[2] = {1000, 200000}, blocks[2] = {100, 30000};
  for (int ri = 0; ri < 2; ri++) {
    int root = roots[ri] % c.size;
    for (int S = -1; S <= c.h + 2; S++) {
      int s = S == c.h + 2 ? S_MIXED : S; /* -1: automatic; h + 1: clamped to h */
      for (int k = 0; k < 2; k++) {
        one_bcast(&c, root, lens[k], s);
        one_reduce(&c, root, lens[k], s);
        one_gather(&c, root, blocks[k], s);
        one_scatter(&c, root, blocks[k], s);
      }
    }
    if (rank == 0)
      printf("PASS root %d: bcast, reduce, gather, scatter for S = auto, 0..%d, %d (clamped), mixed\n", root, c.h,
             c.h + 1);
  }
  phase_concurrent(&c);
  if (rank == 0)
    printf("PASS concurrent\n");
  phase_env(&c);
  if (rank == 0)
    printf("PASS env and arguments\n");
  nm_launcher_barrier(c.launcher);
  RUN(nm_session_close(c.sess), "nm_session_close");
  RUN(nm_launcher_exit(c.launcher), "nm_launcher_exit");
  return 0;
}
