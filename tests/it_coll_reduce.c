/* Integration test of the native reductions (collectives/allreduce.c, reduce.c; nm_coll_reduce.h; issue 18,
 * deliverable 1) and the native barrier, with real processes, any number of ranks, no MPI.
 * Operators: a commutative sum of uint64 elements, and a non-commutative one, the composition of affine maps
 * x -> a x + b mod 2^64 on 16-byte elements (f op g = g after f: the result shows whether the order
 * x0 op x1 op ... op x(p-1) was kept). Every allreduce algorithm (recursive doubling, Rabenseifner, ring, auto) x
 * both operators x counts 0, 1, 5, 1000, 65537 x in place or not, with nm_coll_iallreduce then a wait; every
 * reduce algorithm x both operators x those counts from roots 0, p - 1 and p / 2 (in place at the root every
 * other time); every reduce-scatter algorithm (recursive halving, pairwise, reduce then scatter, auto) x both
 * operators x those counts spread unequally (some pieces empty) x in place or not (collectives/reduce_scatter.c);
 * results compared with a serial reference that each rank computes itself; a barrier between
 * phases (nm_coll_barrier); and every barrier algorithm holds its members until the last one entered. Prints "PASS <phase>" on rank 0; exits non-zero on the first failure. */
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_coll_barrier.h>
#include <nmad/nm_core.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "it_common.h"

#define TAG ((nm_tag_t)0xA11)
#define BTAG ((nm_tag_t)0xA12)
#define HTAG ((nm_tag_t)0xA13) /* the barrier under test in phase_barrier_holds() */
#define GTAG ((nm_tag_t)0xA14) /* its "go" messages */

static int rank; /* for CHECK (it_common.h) */

struct affine {
  uint64_t a, b;
};

static int sum_fn(void *ref, const void *in, void *inout, nm_len_t count)
{
  const uint64_t *x = in;
  uint64_t *y = inout;
  (void)ref;
  for (nm_len_t i = 0; i < count; i++)
    y[i] += x[i];
  return 0;
}

/* inout = in op inout: apply in first, then inout: (a2 (a1 x + b1) + b2) */
static int affine_fn(void *ref, const void *in, void *inout, nm_len_t count)
{
  const struct affine *f = in;
  struct affine *g = inout;
  (void)ref;
  for (nm_len_t i = 0; i < count; i++) {
    struct affine r = {g[i].a * f[i].a, g[i].a * f[i].b + g[i].b};
    g[i] = r;
  }
  return 0;
}

static uint64_t val(int member, nm_len_t i, int salt)
{
  return mix(((uint64_t)member << 40) ^ (i << 8) ^ (uint64_t)salt);
}

/* Element i of member m's vector (esize bytes) */
static void element(int commute, int m, nm_len_t i, int salt, void *out)
{
  if (commute) {
    *(uint64_t *)out = val(m, i, salt);
  } else {
    struct affine f = {val(m, i, salt) | 1, val(m, i, salt + 1)};
    memcpy(out, &f, sizeof(f));
  }
}

static void fill_vec(int commute, int m, nm_len_t count, int salt, char *buf)
{
  size_t es = commute ? 8 : 16;
  for (nm_len_t i = 0; i < count; i++)
    element(commute, m, i, salt, buf + i * es);
}

/* the serial reference x0 op x1 op ... op x(p-1) */
static void reference(int commute, int p, nm_len_t count, int salt, char *out)
{
  size_t es = commute ? 8 : 16;
  char *x = malloc(count * es + 1);
  CHECK(x != NULL, "out of memory");
  fill_vec(commute, 0, count, salt, out);
  for (int m = 1; m < p; m++) {
    fill_vec(commute, m, count, salt, x);
    /* out = out op x: in = out (lower), inout = x, then back */
    if (commute)
      sum_fn(NULL, x, out, count);
    else {
      affine_fn(NULL, out, x, count);
      memcpy(out, x, count * es);
    }
  }
  free(x);
}

struct ctx {
  nm_launcher_t launcher;
  nm_session_t sess;
  int rank, size;
  nm_gate_t *gates;
};

static nm_gate_t gate_of(void *ref, int member) { return ((struct ctx *)ref)->gates[member]; }

static void pass(struct ctx *c, const char *what)
{
  struct nm_coll_group_s g = {c->size, gate_of, c, NULL, NULL};
  int rc = nm_coll_barrier(c->sess, &g, c->rank, BTAG);
  CHECK_RC(rc, "nm_coll_barrier");
  if (c->rank == 0) {
    printf("PASS %s (%d ranks)\n", what, c->size);
    fflush(stdout);
  }
}

/* A barrier must hold every member until the last one entered: the last member enters only once every other
 * member has seen its own barrier still incomplete after many progress passes (and told it so), so a barrier that
 * let a member out early is caught, without timing. Run for every algorithm (NMAD_BARRIER_ALGO, set alike in
 * every process). */
static void phase_barrier_holds(struct ctx *c, const char *algo)
{
  struct nm_coll_group_s g = {c->size, gate_of, c, NULL, NULL};
  nm_core_t core = nm_session_get_core(c->sess);
  int last = c->size - 1, rc;
  CHECK(setenv("NMAD_BARRIER_ALGO", algo, 1) == 0, "setenv");
  if (c->rank != last) {
    nm_coll_sched_t *b = NULL;
    rc = nm_coll_ibarrier(c->sess, &g, c->rank, HTAG, &b);
    CHECK_RC(rc, "nm_coll_ibarrier");
    for (int i = 0; i < 2000; i++)
      nm_core_progress(core);
    CHECK(!*nm_coll_sched_done_flag(b), "barrier %s: rank %d left before rank %d entered", algo, c->rank, last);
    nm_sr_request_t go;
    rc = nm_sr_isend(c->sess, c->gates[last], GTAG, NULL, 0, &go);
    CHECK_RC(rc, "nm_sr_isend(go)");
    CHECK_RC(nm_sr_swait(c->sess, &go), "nm_sr_swait(go)");
    CHECK_RC(nm_coll_sched_wait(b), "nm_coll_sched_wait(barrier)");
  } else {
    for (int m = 0; m < last; m++) {
      nm_sr_request_t go;
      rc = nm_sr_irecv(c->sess, c->gates[m], GTAG, NULL, 0, &go);
      CHECK_RC(rc, "nm_sr_irecv(go)");
      CHECK_RC(nm_sr_rwait(c->sess, &go), "nm_sr_rwait(go)");
    }
    CHECK_RC(nm_coll_barrier(c->sess, &g, c->rank, HTAG), "nm_coll_barrier");
  }
  unsetenv("NMAD_BARRIER_ALGO");
}

static const nm_len_t counts[] = {0, 1, 5, 1000, 65537};

static void phase_allreduce(struct ctx *c, enum nm_coll_allreduce_algo_e algo)
{
  struct nm_coll_group_s g = {c->size, gate_of, c, NULL, NULL};
  for (int commute = 0; commute < 2; commute++)
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
      for (int in_place = 0; in_place < 2; in_place++) {
        nm_len_t n = counts[ci];
        int salt = (int)(ci * 4 + (size_t)in_place * 2 + (size_t)commute + 16 * (int)algo);
        size_t es = commute ? 8 : 16;
        struct nm_coll_op_s op = {commute ? sum_fn : affine_fn, NULL, es, commute};
        char *sb = malloc(n * es + 1), *rb = malloc(n * es + 1), *ref = malloc(n * es + 1);
        CHECK(sb && rb && ref, "out of memory");
        fill_vec(commute, c->rank, n, salt, in_place ? rb : sb);
        nm_coll_sched_t *req;
        int rc = nm_coll_iallreduce(c->sess, &g, c->rank, in_place ? NULL : sb, rb, n, &op, TAG, algo, &req);
        CHECK_RC(rc, "nm_coll_iallreduce");
        rc = nm_coll_sched_wait(req);
        CHECK_RC(rc, "allreduce wait");
        reference(commute, c->size, n, salt, ref);
        CHECK(memcmp(rb, ref, n * es) == 0, "allreduce %s commute=%d count=%lu in_place=%d: wrong result",
              nm_coll_allreduce_algo_name(algo), commute, (unsigned long)n, in_place);
        free(sb);
        free(rb);
        free(ref);
      }
}

static void phase_reduce(struct ctx *c, enum nm_coll_reduce_algo_e algo)
{
  struct nm_coll_group_s g = {c->size, gate_of, c, NULL, NULL};
  int roots[3] = {0, c->size - 1, c->size / 2};
  for (int ri = 0; ri < 3; ri++)
    for (int commute = 0; commute < 2; commute++)
      for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int root = roots[ri], in_place = (int)(ci + (size_t)ri) % 2 && c->rank == root;
        nm_len_t n = counts[ci];
        int salt = (int)(ci * 8 + (size_t)ri * 2 + (size_t)commute + 64 * (int)algo);
        size_t es = commute ? 8 : 16;
        struct nm_coll_op_s op = {commute ? sum_fn : affine_fn, NULL, es, commute};
        char *sb = malloc(n * es + 1), *rb = malloc(n * es + 1), *ref = malloc(n * es + 1);
        CHECK(sb && rb && ref, "out of memory");
        fill_vec(commute, c->rank, n, salt, in_place ? rb : sb);
        int rc = nm_coll_reduce(c->sess, &g, c->rank, root, in_place ? NULL : sb, c->rank == root ? rb : NULL, n,
                                &op, TAG, algo);
        CHECK_RC(rc, "nm_coll_reduce");
        if (c->rank == root) {
          reference(commute, c->size, n, salt, ref);
          CHECK(memcmp(rb, ref, n * es) == 0, "reduce %d commute=%d count=%lu root=%d in_place=%d: wrong result",
                (int)algo, commute, (unsigned long)n, root, in_place);
        }
        free(sb);
        free(rb);
        free(ref);
      }
}

/* reduce-scatter: member i gets ((i * 7 + 3) % 5) x n / 4 elements (some pieces empty), in place or not */
static void phase_reduce_scatter(struct ctx *c, enum nm_coll_reduce_scatter_algo_e algo)
{
  struct nm_coll_group_s g = {c->size, gate_of, c, NULL, NULL};
  for (int commute = 0; commute < 2; commute++)
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
      for (int in_place = 0; in_place < 2; in_place++) {
        nm_len_t *pc = malloc(sizeof(nm_len_t) * (size_t)c->size), total = 0, first = 0;
        CHECK(pc != NULL, "out of memory");
        for (int i = 0; i < c->size; i++) {
          pc[i] = counts[ci] * (nm_len_t)((i * 7 + 3) % 5) / 4;
          first += i < c->rank ? pc[i] : 0;
          total += pc[i];
        }
        int salt = (int)(ci * 4 + (size_t)in_place * 2 + (size_t)commute + 128 * (int)algo);
        size_t es = commute ? 8 : 16;
        struct nm_coll_op_s op = {commute ? sum_fn : affine_fn, NULL, es, commute};
        char *sb = malloc(total * es + 1), *rb = malloc(total * es + 1), *ref = malloc(total * es + 1);
        CHECK(sb && rb && ref, "out of memory");
        fill_vec(commute, c->rank, total, salt, in_place ? rb : sb);
        nm_coll_sched_t *s = nm_coll_sched_new(c->sess, TAG);
        CHECK(s != NULL, "out of memory");
        int rc = nm_coll_reduce_scatter_build(s, 0, &g, c->rank, in_place ? NULL : sb, rb, pc, &op, algo, NULL);
        CHECK_RC(rc, "nm_coll_reduce_scatter_build");
        rc = nm_coll_sched_wait(s);
        CHECK_RC(rc, "reduce_scatter wait");
        reference(commute, c->size, total, salt, ref);
        CHECK(memcmp(rb, ref + first * es, pc[c->rank] * es) == 0,
              "reduce_scatter %s commute=%d count=%lu in_place=%d: wrong piece",
              nm_coll_reduce_scatter_algo_name(algo), commute, (unsigned long)total, in_place);
        free(pc);
        free(sb);
        free(rb);
        free(ref);
      }
}

int main(int argc, char **argv)
{
  struct ctx c;
  memset(&c, 0, sizeof(c));
  int rc = nm_launcher_init(&c.launcher, &argc, &argv);
  if (rc != 0) {
    fprintf(stderr, "FAIL nm_launcher_init: %s\n", nm_strerror(rc));
    return 1;
  }
  nm_launcher_get_rank(c.launcher, &c.rank);
  rank = c.rank;
  nm_launcher_get_size(c.launcher, &c.size);
  rc = nm_session_open(nm_launcher_get_core(c.launcher), "it_coll_reduce", &c.sess);
  CHECK_RC(rc, "nm_session_open");
  c.gates = calloc((size_t)c.size, sizeof(*c.gates));
  CHECK(c.gates != NULL, "out of memory");
  for (int r = 0; r < c.size; r++) {
    rc = nm_launcher_get_gate(c.launcher, r, &c.gates[r]);
    CHECK_RC(rc, "nm_launcher_get_gate");
  }
  pass(&c, "barrier");
  if (c.size > 1) {
    static const char *const barriers[] = {"dissemination", "linear"};
    for (int b = 0; b < 2; b++) {
      char what[96];
      phase_barrier_holds(&c, barriers[b]);
      snprintf(what, sizeof(what), "barrier %s holds every member until the last one entered", barriers[b]);
      pass(&c, what);
    }
  }
  for (int a = 0; a < NM_COLL_ALLREDUCE_NALGOS; a++) {
    char what[96];
    phase_allreduce(&c, (enum nm_coll_allreduce_algo_e)a);
    snprintf(what, sizeof(what), "allreduce %s, sum and non-commutative, 0..65537 elements",
             nm_coll_allreduce_algo_name((enum nm_coll_allreduce_algo_e)a));
    pass(&c, what);
  }
  for (int a = 0; a < NM_COLL_REDUCE_NALGOS; a++) {
    char what[96];
    phase_reduce(&c, (enum nm_coll_reduce_algo_e)a);
    snprintf(what, sizeof(what), "reduce algorithm %d, sum and non-commutative, 3 roots", a);
    pass(&c, what);
  }
  for (int a = 0; a < NM_COLL_REDUCE_SCATTER_NALGOS; a++) {
    char what[96];
    phase_reduce_scatter(&c, (enum nm_coll_reduce_scatter_algo_e)a);
    snprintf(what, sizeof(what), "reduce_scatter %s, sum and non-commutative, unequal pieces",
             nm_coll_reduce_scatter_algo_name((enum nm_coll_reduce_scatter_algo_e)a));
    pass(&c, what);
  }
  free(c.gates);
  nm_session_close(c.sess);
  nm_launcher_exit(c.launcher);
  return 0;
}
