/**
 * @file st_sendq.c
 * @brief Simulator test of the simulation driver's send queues (drivers/sim/nm_sim.cpp, doc/nmad-sim.md "Send
 *        queues"; issue 17, the simulator's eager artefact; issue 19, pipelined trees), 3 ranks on
 *        tests/sim/flat-64.xml under CM02 (alpha = 2 us, beta = 1e9 B/s, each host on its own link). Rank 0 sends,
 *        rank 1 (and 2) receive; every receive is posted before a barrier, the sends start right after it (the
 *        barrier costs no simulated time, so all ranks read the same start date). Each eager message is its own
 *        packet (the sender waits for each send, complete at post, before the next). With m + h bytes per packet
 *        (h = 36 header bytes, tests/sim/st_model.c):
 *  - two 16 KiB messages to one peer: the first arrives at alpha + (m + h)/beta, as if alone (the second waits in
 *    the queue for the first's injection instead of sharing the link with it), the second at
 *    alpha + 2 (m + h)/beta;
 *  - two 8 B messages to one peer: the second arrives (m + h)/beta after the first, not alpha after it (the queue
 *    waits for the injection, not the arrival: latencies overlap);
 *  - 16 KiB to rank 1 then 16 KiB to rank 2: with the NIC's queue (`--send-queue nic`, the default: packets above
 *    one MTU take the rank's one wire in turn) rank 1's packet leaves first and arrives at alpha + (m + h)/beta,
 *    rank 2's after it at alpha + 2 (m + h)/beta; with one queue per peer (`--send-queue peer`, argument "peer")
 *    both flow at once and share rank 0's link as SimGrid says, both arriving at alpha + 2 (m + h)/beta;
 *  - 16 KiB to rank 2 then 8 B to rank 1: a packet of at most one MTU does not wait for the wire; it shares the
 *    link with the large one while it flows, arriving at alpha + 2 (8 + h)/beta (both queues).
 * Usage: st_sendq [nic|peer] (the queue nmad-sim was started with; default nic). Each date must be within 1% of
 * its model (simulated time: deterministic). Without a queue (`--send-queue none`) the first check fails: both
 * 16 KiB packets arrive at alpha + 2 (m + h)/beta; with the other queue than the argument says, the third fails.
 */
#include "st_common.h"
#include <math.h>
#include <string.h>

#define ST_TAG ((nm_tag_t)0x5a00)
#define ST_ALPHA_US 2.0
#define ST_US_PER_B 1e-3 /* 1e9 B/s */
#define ST_HDR 36.0
#define ST_TOL 0.01

static double st_now_us(struct st_ctx *c) { return (double)nm_core_time_ns(c->core) / 1000.0; }

static void st_expect(struct st_ctx *c, const char *what, double got_us, double model_us)
{
  double err = fabs(got_us - model_us) / model_us;
  printf("%-40s simulated %9.3f us  model %9.3f us  error %5.2f%%\n", what, got_us, model_us, 100.0 * err);
  ST_CHECK(c, err <= ST_TOL, "%s: %.3f us, model %.3f us", what, got_us, model_us);
}

/* Rank 0 sends two messages of @p lens[0] and @p lens[1] bytes, to rank @p to[0] then @p to[1]; each receiver
 * reports the arrival date of each of its messages since the common start. @p seq separates the rounds' tags. */
static void st_round_lens(struct st_ctx *c, const int to[2], const size_t lens[2], int seq, double got_us[2])
{
  uint8_t *buf[2] = {calloc(1, lens[0] + 1), calloc(1, lens[1] + 1)};
  nm_sr_request_t r[2];
  int mine[2] = {to[0] == c->rank, to[1] == c->rank};
  for (int i = 0; i < 2; i++)
    if (mine[i])
      nm_sr_irecv(c->session, st_gate(c, 0), ST_TAG + (nm_tag_t)(2 * seq + i), buf[i], lens[i], &r[i]);
  nm_launcher_barrier(c->launcher);
  double t0 = st_now_us(c);
  got_us[0] = got_us[1] = -1;
  for (int i = 0; i < 2; i++) {
    if (c->rank == 0) {
      st_fill(buf[i], lens[i], 0, to[i], seq);
      nm_sr_isend(c->session, st_gate(c, to[i]), ST_TAG + (nm_tag_t)(2 * seq + i), buf[i], lens[i], &r[i]);
      nm_sr_swait(c->session, &r[i]);
    }
  }
  for (int i = 0; i < 2; i++) {
    if (!mine[i])
      continue;
    int rc = nm_sr_rwait(c->session, &r[i]);
    ST_CHECK(c, rc == 0, "receive %d: %s", i, nm_strerror(rc));
    got_us[i] = st_now_us(c) - t0;
    ST_CHECK(c, st_verify(buf[i], lens[i], 0, to[i], seq) < 0, "round %d message %d: wrong data", seq, i);
  }
  free(buf[0]);
  free(buf[1]);
  nm_launcher_barrier(c->launcher);
}

/* The same with one length for both messages. */
static void st_round(struct st_ctx *c, const int to[2], size_t len, int seq, double got_us[2])
{
  const size_t lens[2] = {len, len};
  st_round_lens(c, to, lens, seq, got_us);
}

int main(int argc, char **argv)
{
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  if (c.size != 3) {
    fprintf(stderr, "st_sendq: run with 3 ranks\n");
    st_fini(&c);
    return 2;
  }
  const int per_peer = argc > 1 && strcmp(argv[1], "peer") == 0; /* else nic */
  const size_t big = 16 * 1024, small = 8;
  const double pb = (big + ST_HDR) * ST_US_PER_B, ps = (small + ST_HDR) * ST_US_PER_B;
  double t[2];
  const int one[2] = {1, 1}, two[2] = {1, 2};

  st_round(&c, one, big, 0, t);
  if (c.rank == 1) {
    st_expect(&c, "16 KiB then 16 KiB to one peer: first", t[0], ST_ALPHA_US + pb);
    st_expect(&c, "16 KiB then 16 KiB to one peer: second", t[1], ST_ALPHA_US + 2 * pb);
  }
  st_round(&c, one, small, 1, t);
  if (c.rank == 1) {
    st_expect(&c, "8 B then 8 B to one peer: first", t[0], ST_ALPHA_US + ps);
    st_expect(&c, "8 B then 8 B to one peer: second", t[1], ST_ALPHA_US + 2 * ps);
  }
  st_round(&c, two, big, 2, t);
  if (c.rank == 1)
    st_expect(&c, "16 KiB to rank 1, then to rank 2: rank 1", t[0], ST_ALPHA_US + (per_peer ? 2 : 1) * pb);
  if (c.rank == 2)
    st_expect(&c, "16 KiB to rank 1, then to rank 2: rank 2", t[1], ST_ALPHA_US + 2 * pb);
  const int back[2] = {2, 1};
  const size_t lens[2] = {big, small};
  st_round_lens(&c, back, lens, 3, t);
  if (c.rank == 1)
    st_expect(&c, "16 KiB to rank 2, then 8 B to rank 1", t[1], ST_ALPHA_US + 2 * ps);
  return st_fini(&c);
}
