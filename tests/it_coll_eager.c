/* Integration test of the blocking small collectives without a schedule (collectives/ *_eager(); issue 18,
 * deliverable 3) with real processes, any number of ranks. Everywhere even ranks take the eager path and odd ranks
 * build the schedule, and their messages must pair, back to back on one tag:
 * - gather and scatter (nm_coll_gather_eager(), nm_coll_scatter_eager()), flat, from several roots, blocks of 1 B
 *   to 4 KiB, in place at the root or not; each block derives from (root, member, size, collective) and the
 *   receivers check every byte and the guard bytes. What the eager calls leave to the caller (binomial, 4097 B,
 *   n = 1) they leave without posting anything (NM_COLL_NOT_TAKEN); a missing buffer is -NM_EINVAL;
 * - 100 barriers (nm_coll_barrier_eager()) back to back for each algorithm (NMAD_BARRIER_ALGO, set alike on every
 *   rank), each followed by an eager gather whose blocks carry the barrier's number (a rank that left a barrier
 *   early, or a signal matched by the wrong barrier, would hang or mismatch);
 * - all-to-alls (nm_coll_alltoall_eager(): linear, pairwise) and allgathers (nm_coll_allgather_eager(): recursive
 *   doubling, ring, linear; in place or not), 1 B to 4 KiB;
 * - the linear nm_coll_reduce_eager() / nm_coll_allreduce_eager() with a non-commutative operator (2x2 matrix
 *   products, so that a wrong combining order shows), to several roots, in place or not.
 * Prints "PASS <phase>" on rank 0; exits non-zero on the first failure. */
#include <nmad/nm_coll_allgather.h>
#include <nmad/nm_coll_alltoall.h>
#include <nmad/nm_coll_barrier.h>
#include <nmad/nm_coll_gather.h>
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_core.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TAG ((nm_tag_t)0xEA)
#define GUARD 64
#define GUARD_BYTE 0xA5
#define MAXB 4096

static int rank; /* for CHECK (it_common.h) */

struct ctx {
  nm_session_t sess;
  int rank, size;
  nm_gate_t *gates;
  struct nm_coll_group_s group;
};

static nm_gate_t gate_of(void *ref, int member) { return ((nm_gate_t *)ref)[member]; }

static uint64_t seed_of(int scatter, int root, int member, size_t len)
{
  return ((uint64_t)(scatter + 1) << 56) ^ ((uint64_t)root << 40) ^ ((uint64_t)member << 24) ^ ((uint64_t)len << 4);
}

/* One gather or scatter of @p len bytes per member from @p root, eager on even ranks, scheduled on odd ones. */
static void one(struct ctx *c, int scatter, int root, size_t len, int in_place)
{
  int p = c->size, am_root = c->rank == root;
  uint8_t *all = malloc((size_t)p * len + GUARD), *mine = malloc(len + GUARD);
  CHECK(all && mine, "out of memory");
  memset(all, 0x5A, (size_t)p * len);
  memset(mine, 0x5A, len);
  memset(all + (size_t)p * len, GUARD_BYTE, GUARD);
  memset(mine + len, GUARD_BYTE, GUARD);
  if (scatter && am_root)
    for (int m = 0; m < p; m++)
      fill(all + (size_t)m * len, len, seed_of(1, root, m, len));
  if (!scatter)
    fill(am_root && in_place ? all + (size_t)root * len : mine, len, seed_of(0, root, c->rank, len));
  const void *sendbuf = scatter ? (am_root ? all : NULL) : (am_root && in_place ? NULL : mine);
  void *recvbuf = scatter ? (am_root && in_place ? NULL : mine) : (am_root ? all : NULL);
  int rc;
  if (c->rank % 2 == 0) {
    rc = scatter ? nm_coll_scatter_eager(c->sess, &c->group, c->rank, root, sendbuf, recvbuf, len, TAG,
                                         NM_COLL_GATHER_FLAT, NULL, NULL)
                 : nm_coll_gather_eager(c->sess, &c->group, c->rank, root, sendbuf, recvbuf, len, TAG,
                                        NM_COLL_GATHER_FLAT, NULL, NULL);
    CHECK(rc == 0, "eager %s from root %d, %zu bytes: returned %d", scatter ? "scatter" : "gather", root, len, rc);
  } else {
    nm_coll_sched_t *s;
    rc = scatter ? nm_coll_iscatter(c->sess, &c->group, c->rank, root, sendbuf, recvbuf, len, TAG,
                                    NM_COLL_GATHER_FLAT, &s)
                 : nm_coll_igather(c->sess, &c->group, c->rank, root, sendbuf, recvbuf, len, TAG, NM_COLL_GATHER_FLAT,
                                   &s);
    CHECK(rc == 0, "scheduled %s: %s", scatter ? "scatter" : "gather", nm_strerror(rc));
    rc = nm_coll_sched_wait(s);
    CHECK(rc == 0, "scheduled %s from root %d, %zu bytes: %s", scatter ? "scatter" : "gather", root, len,
          nm_strerror(rc));
  }
  if (scatter && !(am_root && in_place)) {
    long bad = verify(mine, len, seed_of(1, root, c->rank, len));
    CHECK(bad < 0, "scatter from root %d, %zu bytes: wrong byte at %ld", root, len, bad);
  }
  if (!scatter && am_root)
    for (int m = 0; m < p; m++) {
      long bad = verify(all + (size_t)m * len, len, seed_of(0, root, m, len));
      CHECK(bad < 0, "gather to root %d, %zu bytes: member %d's block wrong at %ld", root, len, m, bad);
    }
  for (int i = 0; i < GUARD; i++)
    CHECK(all[(size_t)p * len + i] == GUARD_BYTE && mine[len + i] == GUARD_BYTE, "guard byte %d overwritten", i);
  free(all);
  free(mine);
}

static void pass(nm_launcher_t launcher, int r, int size, const char *what)
{
  int rc = nm_launcher_barrier(launcher); /* rank 0's line means every rank got here */
  CHECK(rc == 0, "barrier: %s", nm_strerror(rc));
  if (r == 0) {
    printf("PASS %s (%d ranks)\n", what, size);
    fflush(stdout);
  }
}

/* What the eager calls leave to the caller or reject, every rank alike, nothing posted. */
static void phase_refused(struct ctx *c)
{
  static uint8_t b[(MAXB + 1) * 64];
  struct nm_coll_group_s one = {1, gate_of, &c->gates[c->rank], NULL, NULL};
  const int no = NM_COLL_NOT_TAKEN;
  CHECK(nm_coll_gather_eager(c->sess, &c->group, c->rank, 0, b, b, 8, TAG, NM_COLL_GATHER_BINOMIAL, NULL, NULL) == no,
        "binomial taken");
  if (c->size <= 64)
    CHECK(nm_coll_scatter_eager(c->sess, &c->group, c->rank, 0, b, b, MAXB + 1, TAG, NM_COLL_GATHER_FLAT, NULL,
                                NULL) == no,
          "4097 B taken");
  CHECK(nm_coll_scatter_eager(c->sess, &one, 0, 0, b, b, 8, TAG, NM_COLL_GATHER_FLAT, NULL, NULL) == no,
        "group of one taken");
  CHECK(nm_coll_gather_eager(c->sess, &c->group, c->rank, c->size, b, b, 8, TAG, NM_COLL_GATHER_FLAT, NULL, NULL) ==
            no,
        "root = n taken");
  if (c->size > 1) /* the root without its receive buffer, the others without their block */
    CHECK(nm_coll_gather_eager(c->sess, &c->group, c->rank, 0, NULL, NULL, 8, TAG, NM_COLL_GATHER_FLAT, NULL,
                               NULL) == -NM_EINVAL,
          "missing buffer accepted");
}

/* Barriers mixed with schedules, for algorithm @p algo ("linear" or "dissemination"). */
static void phase_barrier(struct ctx *c, const char *algo)
{
  setenv("NMAD_BARRIER_ALGO", algo, 1);
  uint32_t *all = malloc(sizeof(uint32_t) * (size_t)c->size);
  CHECK(all != NULL, "out of memory");
  for (uint32_t i = 0; i < 100; i++) {
    int rc;
    if (c->rank % 2 == 0) {
      rc = nm_coll_barrier_eager(c->sess, &c->group, c->rank, TAG, NULL, NULL);
      CHECK(rc == 0, "eager %s barrier %u: returned %d", algo, i, rc);
    } else {
      rc = nm_coll_barrier(c->sess, &c->group, c->rank, TAG);
      CHECK(rc == 0, "scheduled %s barrier %u: %s", algo, i, nm_strerror(rc));
    }
    uint32_t mine = i * 1000u + (uint32_t)c->rank;
    rc = nm_coll_gather_eager(c->sess, &c->group, c->rank, 0, &mine, all, sizeof(mine), TAG, NM_COLL_GATHER_FLAT,
                              NULL, NULL);
    CHECK(rc == 0, "gather after %s barrier %u: %d", algo, i, rc);
    for (int m = 0; c->rank == 0 && m < c->size; m++)
      CHECK(all[m] == i * 1000u + (uint32_t)m, "after %s barrier %u: member %d sent %u", algo, i, m, all[m]);
  }
  free(all);
  unsetenv("NMAD_BARRIER_ALGO");
}

/* All-to-alls of equal blocks mixed with schedules, for @p algo (linear or pairwise): member m's block for member
 * d derives from (m, d, size). */
static void phase_alltoall(struct ctx *c, enum nm_coll_alltoall_algo_e algo)
{
  const size_t sizes[] = {1, 8, 1000, MAXB};
  int p = c->size;
  for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
    size_t len = sizes[z];
    uint8_t *in = malloc((size_t)p * len), *out = malloc((size_t)p * len + GUARD);
    CHECK(in && out, "out of memory");
    for (int d = 0; d < p; d++)
      fill(in + (size_t)d * len, len, seed_of(2 + (int)algo, c->rank, d, len));
    memset(out, 0x5A, (size_t)p * len);
    memset(out + (size_t)p * len, GUARD_BYTE, GUARD);
    int rc;
    if (c->rank % 2 == 0) {
      rc = nm_coll_alltoall_eager(c->sess, &c->group, c->rank, in, out, len, TAG, algo, NULL, NULL);
      CHECK(rc == 0, "eager all-to-all (%s), %zu bytes: returned %d", nm_coll_alltoall_algo_name(algo), len, rc);
    } else {
      rc = nm_coll_alltoall(c->sess, &c->group, c->rank, in, out, len, TAG, algo);
      CHECK(rc == 0, "scheduled all-to-all (%s), %zu bytes: %s", nm_coll_alltoall_algo_name(algo), len,
            nm_strerror(rc));
    }
    for (int m = 0; m < p; m++) {
      long bad = verify(out + (size_t)m * len, len, seed_of(2 + (int)algo, m, c->rank, len));
      CHECK(bad < 0, "all-to-all (%s), %zu bytes: block from %d wrong at %ld", nm_coll_alltoall_algo_name(algo), len,
            m, bad);
    }
    for (int i = 0; i < GUARD; i++)
      CHECK(out[(size_t)p * len + i] == GUARD_BYTE, "all-to-all: guard byte %d overwritten", i);
    free(in);
    free(out);
  }
  uint8_t b[8];
  const int no = NM_COLL_NOT_TAKEN;
  CHECK(nm_coll_alltoall_eager(c->sess, &c->group, c->rank, b, b, 1, TAG, algo, NULL, NULL) == no, "in place taken");
  CHECK(nm_coll_alltoall_eager(c->sess, &c->group, c->rank, b, b, 1, TAG, NM_COLL_ALLTOALL_BRUCK, NULL, NULL) == no,
        "Bruck taken");
}

/* Allgathers of equal blocks mixed with schedules, for @p algo: member m's block derives from (m, size). Recursive
 * doubling over a member count that is not a power of two becomes Bruck, which the eager call leaves (1). */
static void phase_allgather(struct ctx *c, enum nm_coll_allgather_algo_e algo)
{
  const size_t sizes[] = {1, 8, 1000, MAXB};
  int p = c->size, pof2 = (p & (p - 1)) == 0;
  int expect = algo == NM_COLL_ALLGATHER_RD && !pof2 ? NM_COLL_NOT_TAKEN : 0;
  for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
    for (int in_place = 0; in_place < 2; in_place++) {
      size_t len = sizes[z];
      uint8_t *mine = malloc(len), *out = malloc((size_t)p * len + GUARD);
      CHECK(mine && out, "out of memory");
      memset(out, 0x5A, (size_t)p * len);
      memset(out + (size_t)p * len, GUARD_BYTE, GUARD);
      fill(in_place ? out + (size_t)c->rank * len : mine, len, seed_of(5 + (int)algo, 0, c->rank, len));
      const void *sendbuf = in_place ? NULL : mine;
      int rc = NM_COLL_NOT_TAKEN;
      if (c->rank % 2 == 0) {
        rc = nm_coll_allgather_eager(c->sess, &c->group, c->rank, sendbuf, out, len, TAG, algo, NULL, NULL);
        CHECK(rc == expect, "eager allgather (%s), %zu bytes: returned %d", nm_coll_allgather_algo_name(algo), len,
              rc);
      }
      if (rc == NM_COLL_NOT_TAKEN) {
        rc = nm_coll_allgather(c->sess, &c->group, c->rank, sendbuf, out, len, TAG, algo);
        CHECK(rc == 0, "scheduled allgather (%s), %zu bytes: %s", nm_coll_allgather_algo_name(algo), len,
              nm_strerror(rc));
      }
      for (int m = 0; m < p; m++) {
        long bad = verify(out + (size_t)m * len, len, seed_of(5 + (int)algo, 0, m, len));
        CHECK(bad < 0, "allgather (%s), %zu bytes%s: block of %d wrong at %ld", nm_coll_allgather_algo_name(algo),
              len, in_place ? " in place" : "", m, bad);
      }
      for (int i = 0; i < GUARD; i++)
        CHECK(out[(size_t)p * len + i] == GUARD_BYTE, "allgather: guard byte %d overwritten", i);
      free(mine);
      free(out);
    }
}

/* A non-commutative, associative operator: each element is a 2x2 matrix of uint32 (mod 2^32), inout = in x inout. */
static int mat_combine(void *ref, const void *in, void *inout, nm_len_t count)
{
  (void)ref;
  const uint32_t *a = in;
  uint32_t *b = inout;
  for (nm_len_t e = 0; e < count; e++, a += 4, b += 4) {
    uint32_t r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                     a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof(r));
  }
  return 0;
}

static void mat_of(int member, nm_len_t e, uint32_t m[4])
{
  uint64_t x = mix(((uint64_t)member << 32) ^ e);
  for (int i = 0; i < 4; i++)
    m[i] = (uint32_t)(x >> (8 * i)) | 1u;
}

/* @p want (n elements) = M0 x M1 x ... x M(p-1), element by element: MPI's order for members 0 to p - 1. */
static void mat_product(int p, nm_len_t n, uint32_t *want)
{
  for (nm_len_t e = 0; e < n; e++) {
    uint32_t acc[4], m[4];
    mat_of(p - 1, e, acc);
    for (int q = p - 2; q >= 0; q--) {
      mat_of(q, e, m);
      mat_combine(NULL, m, acc, 1);
    }
    memcpy(want + 4 * e, acc, sizeof(acc));
  }
}

/* Reductions (linear) mixed with schedules: the result must be M0 x M1 x ... x M(p-1), element by element. */
static void phase_reduce(struct ctx *c)
{
  const nm_len_t counts[] = {1, 16, 256}; /* 16 B .. 4 KiB */
  const struct nm_coll_op_s op = {mat_combine, NULL, 16, 0};
  int p = c->size, roots[3] = {0, p / 2, p - 1};
  for (size_t z = 0; z < sizeof(counts) / sizeof(counts[0]); z++) {
    nm_len_t n = counts[z];
    uint32_t *mine = malloc(n * 16), *out = malloc(n * 16), *want = malloc(n * 16);
    CHECK(mine && out && want, "out of memory");
    mat_product(p, n, want);
    for (int rr = 0; rr < 4; rr++) { /* 3 roots of a reduce, then an allreduce */
      int all = rr == 3, root = all ? 0 : roots[rr];
      for (int round = 0; round < 2; round++) { /* the second in place (a reduce: at the root only) */
        int in_place = round && (all || c->rank == root);
        for (nm_len_t e = 0; e < n; e++)
          mat_of(c->rank, e, (in_place ? out : mine) + 4 * e);
        const void *sendbuf = in_place ? NULL : mine;
        int rc;
        if (c->rank % 2 == 0) {
          rc = all ? nm_coll_allreduce_eager(c->sess, &c->group, c->rank, sendbuf, out, n, &op, TAG,
                                             NM_COLL_ALLREDUCE_LINEAR, NULL, NULL)
                   : nm_coll_reduce_eager(c->sess, &c->group, c->rank, root, sendbuf, out, n, &op, TAG,
                                          NM_COLL_REDUCE_LINEAR, NULL, NULL);
          CHECK(rc == 0, "eager %s, %lu elements: returned %d", all ? "allreduce" : "reduce", (unsigned long)n, rc);
        } else {
          rc = all ? nm_coll_allreduce(c->sess, &c->group, c->rank, sendbuf, out, n, &op, TAG,
                                       NM_COLL_ALLREDUCE_LINEAR)
                   : nm_coll_reduce(c->sess, &c->group, c->rank, root, sendbuf, out, n, &op, TAG,
                                    NM_COLL_REDUCE_LINEAR);
          CHECK(rc == 0, "scheduled %s: %s", all ? "allreduce" : "reduce", nm_strerror(rc));
        }
        if (all || c->rank == root)
          CHECK(memcmp(out, want, n * 16) == 0, "%s to %d, %lu elements%s: wrong product", all ? "allreduce" : "reduce",
                root, (unsigned long)n, in_place ? " in place" : "");
      }
    }
    free(mine);
    free(out);
    free(want);
  }
}

/* The 2-member allreduce by recursive doubling without a schedule (nm_coll_allreduce_eager()), ranks 0 and 1 alone:
 * one on the eager path, the other on a schedule, then the other way round; both must hold M0 x M1 (MPI's order,
 * a non-commutative operator), in place or not. */
static void phase_allreduce_pair(struct ctx *c)
{
  if (c->rank > 1)
    return;
  const nm_len_t counts[] = {1, 16, 256}; /* 16 B .. 4 KiB */
  const struct nm_coll_op_s op = {mat_combine, NULL, 16, 0};
  struct nm_coll_group_s pair = {2, gate_of, c->gates, NULL, NULL};
  for (size_t z = 0; z < sizeof(counts) / sizeof(counts[0]); z++) {
    nm_len_t n = counts[z];
    uint32_t *mine = malloc(n * 16), *out = malloc(n * 16), *want = malloc(n * 16);
    CHECK(mine && out && want, "out of memory");
    mat_product(2, n, want);
    for (int round = 0; round < 4; round++) {
      int in_place = round % 2, eager = (round / 2) == c->rank;
      for (nm_len_t e = 0; e < n; e++)
        mat_of(c->rank, e, (in_place ? out : mine) + 4 * e);
      const void *sendbuf = in_place ? NULL : mine;
      int rc = eager ? nm_coll_allreduce_eager(c->sess, &pair, c->rank, sendbuf, out, n, &op, TAG,
                                               NM_COLL_ALLREDUCE_RD, NULL, NULL)
                     : nm_coll_allreduce(c->sess, &pair, c->rank, sendbuf, out, n, &op, TAG, NM_COLL_ALLREDUCE_RD);
      CHECK(rc == 0, "%s 2-member allreduce, %lu elements: returned %d", eager ? "eager" : "scheduled",
            (unsigned long)n, rc);
      CHECK(memcmp(out, want, n * 16) == 0, "2-member allreduce, %lu elements%s: wrong product", (unsigned long)n,
            in_place ? " in place" : "");
    }
    free(mine);
    free(out);
    free(want);
  }
}

int main(int argc, char **argv)
{
  nm_launcher_t launcher;
  struct ctx c;
  const size_t sizes[] = {1, 8, 1000, MAXB};
  memset(&c, 0, sizeof(c));
  int rc = nm_launcher_init(&launcher, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "FAIL nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  nm_launcher_get_rank(launcher, &c.rank);
  rank = c.rank;
  nm_launcher_get_size(launcher, &c.size);
  rc = nm_session_open(nm_launcher_get_core(launcher), "it_coll_eager", &c.sess);
  CHECK_RC(rc, "nm_session_open");
  c.gates = calloc((size_t)c.size, sizeof(*c.gates));
  CHECK(c.gates != NULL, "out of memory");
  for (int r = 0; r < c.size; r++) {
    rc = nm_launcher_get_gate(launcher, r, &c.gates[r]);
    CHECK_RC(rc, "nm_launcher_get_gate");
  }
  c.group = (struct nm_coll_group_s){c.size, gate_of, c.gates, NULL, NULL};
  phase_refused(&c);
  pass(launcher, c.rank, c.size, "what the eager gather and scatter leave or reject");
  if (c.size > 1) {
    int roots[3] = {0, c.size / 2, c.size - 1}, nroots = c.size >= 3 ? 3 : c.size;
    for (int scatter = 0; scatter < 2; scatter++) {
      for (int r = 0; r < nroots; r++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
          for (int in_place = 0; in_place < 2; in_place++)
            one(&c, scatter, roots[r], sizes[s], in_place);
      pass(launcher, c.rank, c.size,
           scatter ? "eager scatter mixed with schedules, 1 B .. 4 KiB"
                   : "eager gather mixed with schedules, 1 B .. 4 KiB");
    }
    phase_barrier(&c, "linear");
    pass(launcher, c.rank, c.size, "eager linear barriers mixed with schedules");
    phase_barrier(&c, "dissemination");
    pass(launcher, c.rank, c.size, "eager dissemination barriers mixed with schedules");
    phase_alltoall(&c, NM_COLL_ALLTOALL_LINEAR);
    pass(launcher, c.rank, c.size, "eager linear all-to-alls mixed with schedules, 1 B .. 4 KiB");
    phase_alltoall(&c, NM_COLL_ALLTOALL_PAIRWISE);
    pass(launcher, c.rank, c.size, "eager pairwise all-to-alls mixed with schedules, 1 B .. 4 KiB");
    const enum nm_coll_allgather_algo_e ag[] = {NM_COLL_ALLGATHER_RD, NM_COLL_ALLGATHER_RING,
                                                NM_COLL_ALLGATHER_LINEAR};
    for (int a = 0; a < 3; a++) {
      phase_allgather(&c, ag[a]);
      char what[96];
      snprintf(what, sizeof(what), "eager %s allgathers mixed with schedules, 1 B .. 4 KiB, in place or not",
               nm_coll_allgather_algo_name(ag[a]));
      pass(launcher, c.rank, c.size, what);
    }
    phase_reduce(&c);
    pass(launcher, c.rank, c.size, "eager linear reduce and allreduce mixed with schedules, non-commutative");
    phase_allreduce_pair(&c);
    pass(launcher, c.rank, c.size, "eager 2-member recursive doubling allreduce mixed with schedules, non-commutative");
  }
  rc = nm_session_close(c.sess);
  CHECK_RC(rc, "nm_session_close");
  free(c.gates);
  rc = nm_launcher_exit(launcher);
  CHECK_RC(rc, "nm_launcher_exit");
  if (c.rank == 0)
    printf("PASS it_coll_eager\n");
  return 0;
}
