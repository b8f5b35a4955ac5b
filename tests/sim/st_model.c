/**
 * @file st_model.c
 * @brief Simulator test: simulated durations against the analytical model of the platform (Hockney: a message of
 *        m bytes costs alpha + m / beta; Hasanov 2015, section 2). Rank 0 times each operation on the core's clock
 *        (simulated time) and compares it with the model given on the command line:
 *
 *   nmad-sim -n N --platform tests/sim/flat-64.xml --cfg=network/model:CM02 st_model.so --alpha-ns A --beta B
 *
 *  - eager ping-pong (8 B), one way: alpha + (m + h)/beta, h = 36 header bytes (packet 12 + message 24, doc/protocol.md);
 *  - rendezvous ping-pong (1 MiB), one way: RDV, RTR, then the data: 3 alpha + m/beta;
 *  - binomial broadcast of 8 B, from the root's start to the last receiver's zero-byte ack: a node sends to its
 *    children at once, so the latencies of one level overlap and the time is the tree's depth d = floor(log2 N)
 *    (the binomial tree of collectives/nm_coll_tree.c, children at +2^j) times alpha + (m + h)/beta, plus the last ack: between alpha + h/beta
 *    (it arrives alone) and alpha + (N-1) h/beta (all N-1 acks share the root's link at once); the test asserts
 *    these two bounds (widened by the tolerance). The single-port model of Hasanov 2015, section 2.1.6 counts ceil(log2 N)
 *    rounds instead: the root's children are served one after the other there;
 *  - naive broadcast of 256 KiB: the root posts the N-1 rendezvous at once and its link carries them together:
 *    (N-1) m/beta + 4 alpha (RDV, RTR, data, ack; section 2.1.1);
 *  - binomial broadcast of 256 KiB: a node sends to its children one after the other, largest subtree first, so
 *    every leaf has the data after k = ceil(log2 N) rounds of one rendezvous each (RDV, RTR, data):
 *    k (3 alpha + m/beta), plus the ack: the single-port model of Hasanov 2015, section 2.1.6.
 * A duration off its model by more than the tolerance (--tolerance, default 0.03) fails. Simulated time is
 * deterministic: the assertion is not about a noisy clock.
 */
#include "st_common.h"
#include <nmad/nm_coll.h>
#include <math.h>
#include <string.h>

#define ST_TAG_PP ((nm_tag_t)0x5000)
#define ST_TAG_BC ((nm_tag_t)0x5100)
#define ST_TAG_ACK ((nm_tag_t)0x5200)

struct st_model {
  double alpha_ns, beta_Bps, tolerance;
};

static double st_now_us(struct st_ctx *c) { return (double)nm_core_time_ns(c->core) / 1000.0; }

static void st_expect(struct st_ctx *c, const struct st_model *m, const char *what, double got_us, double model_us)
{
  double err = fabs(got_us - model_us) / model_us;
  printf("%-34s simulated %12.3f us  model %12.3f us  error %5.2f%%\n", what, got_us, model_us, 100.0 * err);
  ST_CHECK(c, err <= m->tolerance, "%s: %.3f us, model %.3f us (tolerance %.0f%%)", what, got_us, model_us,
           100.0 * m->tolerance);
}

static void st_expect_between(struct st_ctx *c, const struct st_model *m, const char *what, double got_us, double lo_us,
                              double hi_us)
{
  printf("%-34s simulated %12.3f us  model %12.3f .. %.3f us\n", what, got_us, lo_us, hi_us);
  ST_CHECK(c, got_us >= lo_us * (1 - m->tolerance) && got_us <= hi_us * (1 + m->tolerance),
           "%s: %.3f us, model %.3f .. %.3f us (tolerance %.0f%%)", what, got_us, lo_us, hi_us, 100.0 * m->tolerance);
}

/* Ranks 0 and 1: one ping-pong of len bytes. @return rank 0's one-way time in us. */
static double st_pingpong(struct st_ctx *c, size_t len)
{
  uint8_t *buf = calloc(1, len + 1);
  nm_sr_request_t r;
  double t0 = st_now_us(c), t1 = t0;
  int peer = 1 - c->rank;
  if (c->rank == 0) {
    nm_sr_isend(c->session, st_gate(c, peer), ST_TAG_PP, buf, len, &r);
    nm_sr_swait(c->session, &r);
    nm_sr_irecv(c->session, st_gate(c, peer), ST_TAG_PP, buf, len, &r);
    int rc = nm_sr_rwait(c->session, &r);
    ST_CHECK(c, rc == 0, "ping-pong: %s", nm_strerror(rc));
    t1 = st_now_us(c);
  } else if (c->rank == 1) {
    nm_sr_irecv(c->session, st_gate(c, peer), ST_TAG_PP, buf, len, &r);
    int rc = nm_sr_rwait(c->session, &r);
    ST_CHECK(c, rc == 0, "ping-pong: %s", nm_strerror(rc));
    nm_sr_isend(c->session, st_gate(c, peer), ST_TAG_PP, buf, len, &r);
    nm_sr_swait(c->session, &r);
  }
  free(buf);
  return (t1 - t0) / 2.0;
}

/* Every rank: one broadcast from 0, then a zero-byte ack to 0. @return rank 0's start-to-last-ack time in us. */
static double st_bcast(struct st_ctx *c, int naive, size_t len, int seq)
{
  struct nm_coll_group_s world = {c->size, nm_launcher_gate_of, c->launcher, NULL, NULL};
  uint8_t *buf = calloc(1, len + 1);
  nm_sr_request_t *acks = c->rank == 0 ? calloc((size_t)c->size, sizeof(*acks)) : NULL;
  for (int r = 1; c->rank == 0 && r < c->size; r++)
    nm_sr_irecv(c->session, st_gate(c, r), ST_TAG_ACK + (nm_tag_t)seq, NULL, 0, &acks[r]);
  nm_launcher_barrier(c->launcher);
  double t0 = st_now_us(c);
  int rc = (naive ? nm_coll_bcast_naive_group : nm_coll_bcast_binomial_group)(c->session, &world, c->rank, 0, buf,
                                                                            len, ST_TAG_BC + (nm_tag_t)seq);
  ST_CHECK(c, rc == 0, "broadcast: %s", nm_strerror(rc));
  if (c->rank == 0) {
    for (int r = 1; r < c->size; r++)
      nm_sr_rwait(c->session, &acks[r]);
  } else {
    nm_sr_request_t a;
    nm_sr_isend(c->session, st_gate(c, 0), ST_TAG_ACK + (nm_tag_t)seq, NULL, 0, &a);
    nm_sr_swait(c->session, &a);
  }
  double t1 = st_now_us(c);
  free(buf);
  free(acks);
  return t1 - t0;
}

static int st_parse(int argc, char **argv, struct st_model *m)
{
  m->alpha_ns = m->beta_Bps = 0;
  m->tolerance = 0.03;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--alpha-ns") == 0)
      m->alpha_ns = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--beta") == 0)
      m->beta_Bps = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--tolerance") == 0)
      m->tolerance = atof(argv[i + 1]);
    else
      return -1;
  }
  return m->alpha_ns > 0 && m->beta_Bps > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
  struct st_model m;
  if (st_parse(argc, argv, &m) != 0) {
    fprintf(stderr, "usage: st_model --alpha-ns NS --beta BYTES_PER_S [--tolerance FRACTION]\n");
    return 2;
  }
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  double a_us = m.alpha_ns / 1000.0, us_per_B = 1e6 / m.beta_Bps;
  int k = 0, depth = 0; /* ceil(log2 N), floor(log2 N) */
  while ((1 << k) < c.size)
    k++;
  while ((2 << depth) <= c.size)
    depth++;
  const double h = 36; /* header bytes of an eager message */
  nm_launcher_barrier(c.launcher);
  if (c.size >= 2) {
    double pp8 = st_pingpong(&c, 8), pp1m = st_pingpong(&c, 1 << 20);
    if (c.rank == 0) {
      st_expect(&c, &m, "ping-pong 8 B, one way", pp8, a_us + (8 + h) * us_per_B);
      st_expect(&c, &m, "ping-pong 1 MiB, one way", pp1m, 3 * a_us + (1 << 20) * us_per_B);
    }
  }
  const size_t big = 256 * 1024;
  double b8 = st_bcast(&c, 0, 8, 0), nbig = st_bcast(&c, 1, big, 1), bbig = st_bcast(&c, 0, big, 2);
  if (c.rank == 0 && c.size >= 2) {
    char what[64];
    snprintf(what, sizeof(what), "binomial 8 B, N = %d", c.size);
    double tree = depth * (a_us + (8 + h) * us_per_B);
    st_expect_between(&c, &m, what, b8, tree + a_us + h * us_per_B, tree + a_us + (c.size - 1) * h * us_per_B);
    snprintf(what, sizeof(what), "naive 256 KiB, N = %d", c.size);
    st_expect(&c, &m, what, nbig, (c.size - 1) * big * us_per_B + 4 * a_us);
    snprintf(what, sizeof(what), "binomial 256 KiB, N = %d", c.size);
    st_expect(&c, &m, what, bbig, k * (3 * a_us + big * us_per_B) + a_us);
  }
  return st_fini(&c);
}
