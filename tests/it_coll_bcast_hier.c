/* Integration test of the hierarchical broadcast (Hasanov 2015, section 3; collectives/bcast_hier.c; issue 17,
 * deliverable 3) with real processes, any number of ranks. Algorithm pairs (outer, inner): every algorithm as
 * outer with binomial inner, every algorithm as inner with flat outer, and every algorithm at both levels (21
 * pairs); each with G in {2, 3, round(sqrt(p)), p - 1} (clamped to p, below 2 or duplicates dropped) and sizes 0 B, 1 B,
 * segment - 1, segment + 1 (segment = 16 KiB at both levels) and 1 MiB, the root moving over 0, p - 1, p / 2
 * and 1 so that it is sometimes the first member of its group and sometimes not; then, without --quick, one
 * 16 MiB broadcast per algorithm at both levels from the last rank. Broadcasts follow each other back to back
 * on one tag (with changing G), so a message matched by the wrong broadcast is detected. Each payload derives
 * from (pair, G, root, size); every receiver checks every byte and the guard bytes past the end. Also: the
 * group layout of nm_coll_bcast_hier_init() for every (p, G) up to 40 (pure arithmetic), argument checks, and
 * the struct reused across roots. Prints "PASS <phase>" on rank 0; exits non-zero on the first failure.
 * --pairs A-B: only pairs A..B-1 of the list (so that a script stays short). */
#include <nmad/nm_coll_bcast.h>
#include <nmad/nm_core.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TAG ((nm_tag_t)0xB17)
#define SEGMENT ((nm_len_t)16384)
#define GUARD 64
#define GUARD_BYTE 0xA5
#define MAX_PAIRS (3 * NM_COLL_BCAST_NALGOS)

static int rank; /* for CHECK (it_common.h) */

struct ctx {
  nm_launcher_t launcher;
  nm_session_t sess;
  int rank, size;
  nm_gate_t *gates;
};

struct pair {
  enum nm_coll_bcast_algo_e outer, inner;
};

/* The pairs the issue asks for, each once: (a, binomial), (flat, a), (a, a). */
static int make_pairs(struct pair *pairs)
{
  int n = 0;
  for (int kind = 0; kind < 3; kind++)
    for (int a = 0; a < NM_COLL_BCAST_NALGOS; a++) {
      struct pair p = {(enum nm_coll_bcast_algo_e)a, NM_COLL_BCAST_BINOMIAL};
      if (kind == 1)
        p = (struct pair){NM_COLL_BCAST_FLAT, (enum nm_coll_bcast_algo_e)a};
      else if (kind == 2)
        p = (struct pair){(enum nm_coll_bcast_algo_e)a, (enum nm_coll_bcast_algo_e)a};
      int dup = 0;
      for (int i = 0; i < n; i++)
        dup |= pairs[i].outer == p.outer && pairs[i].inner == p.inner;
      if (!dup)
        pairs[n++] = p;
    }
  return n;
}

static uint64_t seed_of(int pair, int groups, int root, size_t len)
{
  return ((uint64_t)(pair + 1) << 56) ^ ((uint64_t)groups << 44) ^ ((uint64_t)root << 32) ^ ((uint64_t)len << 4) ^
         0x3;
}

static void one(struct ctx *c, int pi, const struct pair *pr, int groups, int root, size_t len)
{
  struct nm_coll_bcast_opts_s o = {pr->outer, SEGMENT, groups, pr->inner, SEGMENT};
  uint64_t seed = seed_of(pi, groups, root, len);
  uint8_t *buf = malloc(len + GUARD);
  CHECK(buf != NULL, "out of memory (%zu bytes)", len + GUARD);
  if (c->rank == root)
    fill(buf, len, seed);
  else
    memset(buf, 0x5A, len);
  memset(buf + len, GUARD_BYTE, GUARD);
  int rc = nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, root, buf, len, TAG, &o);
  const char *on = nm_coll_bcast_algo_name(pr->outer), *in = nm_coll_bcast_algo_name(pr->inner);
  CHECK(rc == 0, "%s/%s G=%d from root %d, %zu bytes: %s (%d)", on, in, groups, root, len, nm_strerror(rc), rc);
  long bad = verify(buf, len, seed);
  CHECK(bad < 0, "%s/%s G=%d from root %d, %zu bytes: wrong byte at offset %ld", on, in, groups, root, len, bad);
  for (int i = 0; i < GUARD; i++)
    CHECK(buf[len + i] == GUARD_BYTE, "%s/%s G=%d from root %d, %zu bytes: guard byte %d overwritten", on, in, groups,
          root, len, i);
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

static nm_gate_t no_gate(void *ref, int member) { return NULL; }

/* The layout of section 3 as nm_coll_bcast_hier_s documents it: consecutive groups of ceil(p / G), every member
 * in exactly one group, no empty group, G' <= G. Pure arithmetic: no message. */
static void phase_layout(void)
{
  for (int p = 1; p <= 40; p++)
    for (int g = 0; g <= p + 2; g++) {
      struct nm_coll_group_s grp = {p, no_gate, NULL, NULL, NULL};
      int covered = 0, s = 0, ng = 0;
      for (int self = 0; self < p; self++) {
        struct nm_coll_bcast_hier_s h;
        CHECK(nm_coll_bcast_hier_init(&h, &grp, self, g) == 0, "init p=%d G=%d", p, g);
        int geff = g < 1 ? 1 : g > p ? p : g;
        CHECK(h.gsize == (p + geff - 1) / geff, "p=%d G=%d: group size %d", p, g, h.gsize);
        CHECK(h.groups <= geff && (h.groups - 1) * h.gsize < p && h.groups * h.gsize >= p, "p=%d G=%d: %d groups", p,
              g, h.groups);
        CHECK(h.inner_first <= self && self < h.inner_first + h.inner_n && h.inner_n >= 1, "p=%d G=%d self=%d", p, g,
              self);
        CHECK(h.inner_first == h.my_group * h.gsize, "p=%d G=%d self=%d: first %d", p, g, self, h.inner_first);
        if (self == h.inner_first) {
          covered += h.inner_n;
          ng++;
        }
        s = h.groups;
      }
      CHECK(covered == p && ng == s, "p=%d G=%d: groups cover %d members in %d groups", p, g, covered, ng);
    }
  struct nm_coll_group_s grp = {4, no_gate, NULL, NULL, NULL};
  struct nm_coll_bcast_hier_s h;
  CHECK(nm_coll_bcast_hier_init(NULL, &grp, 0, 2) == -NM_EINVAL, "NULL hier");
  CHECK(nm_coll_bcast_hier_init(&h, NULL, 0, 2) == -NM_EINVAL, "NULL group");
  CHECK(nm_coll_bcast_hier_init(&h, &grp, 4, 2) == -NM_EINVAL, "self = n");
  CHECK(nm_coll_bcast_hier_init(&h, &grp, -1, 2) == -NM_EINVAL, "self = -1");
}

static void phase_args(struct ctx *c)
{
  uint8_t b[4] = {0};
  struct nm_coll_bcast_opts_s bad_in = {NM_COLL_BCAST_FLAT, 0, 2, NM_COLL_BCAST_NALGOS, 0},
                              bad_out = {NM_COLL_BCAST_NALGOS, 0, 2, NM_COLL_BCAST_FLAT, 0},
                              ok = {NM_COLL_BCAST_CHAIN, 0, 2, NM_COLL_BCAST_CHAIN, 0};
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, 0, b, 4, TAG, &bad_in) == -NM_EINVAL, "bad inner");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, 0, b, 4, TAG, &bad_out) == -NM_EINVAL, "bad outer");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, c->size, b, 4, TAG, &ok) == -NM_EINVAL, "root = n");
  CHECK(nm_coll_bcast_array(c->sess, c->gates, c->size, c->rank, 0, NULL, 4, TAG, &ok) == -NM_EINVAL, "NULL buffer");
  struct nm_coll_group_s one_member = {1, no_gate, NULL, NULL, NULL};
  CHECK(nm_coll_bcast(c->sess, &one_member, 0, 0, b, 4, TAG, &ok) == 0, "group of one");
  struct nm_coll_bcast_hier_s h;
  CHECK(nm_coll_bcast_hier_init(&h, &one_member, 0, 3) == 0, "init, group of one");
  CHECK(nm_coll_bcast_hier(NULL, &h, 0, b, 4, TAG, &ok) == -NM_EINVAL, "NULL session");
  CHECK(nm_coll_bcast_hier(c->sess, NULL, 0, b, 4, TAG, &ok) == -NM_EINVAL, "NULL hier");
  CHECK(nm_coll_bcast_hier(c->sess, &h, 0, b, 4, TAG, NULL) == -NM_EINVAL, "NULL opts");
}

/* One struct nm_coll_bcast_hier_s made once and reused for every root (what a communicator would keep). */
static void phase_reuse(struct ctx *c)
{
  struct nm_coll_group_s world = {c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  struct nm_coll_bcast_hier_s h;
  int g = c->size >= 4 ? 2 : c->size;
  int rc = nm_coll_bcast_hier_init(&h, &world, c->rank, g);
  CHECK(rc == 0, "nm_coll_bcast_hier_init: %s", nm_strerror(rc));
  struct nm_coll_bcast_opts_s o = {NM_COLL_BCAST_SCATTER_RING, 0, 0, NM_COLL_BCAST_PIPELINED_CHAIN, 4096};
  for (int root = 0; root < c->size; root++) {
    uint8_t buf[40000];
    uint64_t seed = 0xF00D ^ (uint64_t)root;
    if (c->rank == root)
      fill(buf, sizeof(buf), seed);
    else
      memset(buf, 0, sizeof(buf));
    rc = nm_coll_bcast_hier(c->sess, &h, root, buf, sizeof(buf), TAG, &o);
    CHECK(rc == 0, "reused hier, root %d: %s", root, nm_strerror(rc));
    CHECK(verify(buf, sizeof(buf), seed) < 0, "reused hier, root %d: wrong data", root);
  }
}

int main(int argc, char **argv)
{
  struct ctx c;
  int quick = 0, from = 0, to = MAX_PAIRS;
  const size_t sizes[] = {0, 1, SEGMENT - 1, SEGMENT + 1, 1 << 20};
  char what[160];

  memset(&c, 0, sizeof(c));
  int rc = nm_launcher_init(&c.launcher, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "FAIL nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc)
      sscanf(argv[++i], "%d-%d", &from, &to);
  }
  nm_launcher_get_rank(c.launcher, &c.rank);
  rank = c.rank;
  nm_launcher_get_size(c.launcher, &c.size);
  rc = nm_session_open(nm_launcher_get_core(c.launcher), "it_coll_bcast_hier", &c.sess);
  CHECK_RC(rc, "nm_session_open");
  c.gates = calloc((size_t)c.size, sizeof(*c.gates));
  CHECK(c.gates != NULL, "out of memory");
  for (int r = 0; r < c.size; r++) {
    rc = nm_launcher_get_gate(c.launcher, r, &c.gates[r]);
    CHECK_RC(rc, "nm_launcher_get_gate");
  }
  phase_layout();
  phase_args(&c);
  pass(&c, "layout and argument checks");
  phase_reuse(&c);
  pass(&c, "one hier struct reused for every root");

  struct pair pairs[MAX_PAIRS];
  int npairs = make_pairs(pairs), ng = 0, gs[4];
  int cand[4] = {2, 3, (int)lround(sqrt((double)c.size)), c.size - 1};
  for (int i = 0; i < 4; i++) {
    int g = cand[i] > c.size ? c.size : cand[i], dup = g < 2;
    for (int j = 0; j < ng; j++)
      dup |= gs[j] == g;
    if (!dup)
      gs[ng++] = g;
  }
  int roots[4] = {0, c.size - 1, c.size / 2, 1 % c.size};
  if (to > npairs)
    to = npairs;
  for (int pi = from; pi < to; pi++) {
    for (int gi = 0; gi < ng; gi++)
      for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        one(&c, pi, &pairs[pi], gs[gi], roots[(s + (size_t)gi) % 4], sizes[s]);
    int w = snprintf(what, sizeof(what), "outer %s, inner %s: G in {", nm_coll_bcast_algo_name(pairs[pi].outer),
                     nm_coll_bcast_algo_name(pairs[pi].inner));
    for (int gi = 0; gi < ng; gi++)
      w += snprintf(what + w, sizeof(what) - (size_t)w, "%s%d", gi ? ", " : "", gs[gi]);
    snprintf(what + w, sizeof(what) - (size_t)w, "}, 0 B .. 1 MiB");
    pass(&c, what);
  }
  if (!quick && ng > 0) {
    for (int pi = from; pi < to; pi++)
      if (pairs[pi].outer == pairs[pi].inner)
        one(&c, pi, &pairs[pi], gs[ng > 1 ? 1 : 0], c.size - 1, (size_t)16 << 20);
    snprintf(what, sizeof(what), "pairs %d-%d with the same algorithm at both levels, G = %d, 16 MiB", from, to,
             gs[ng > 1 ? 1 : 0]);
    pass(&c, what);
  }
  rc = nm_session_close(c.sess);
  CHECK_RC(rc, "nm_session_close");
  free(c.gates);
  rc = nm_launcher_exit(c.launcher);
  CHECK_RC(rc, "nm_launcher_exit");
  if (c.rank == 0)
    printf("PASS it_coll_bcast_hier\n");
  return 0;
}
