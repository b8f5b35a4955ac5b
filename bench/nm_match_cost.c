/* nm_match_cost.c - the cost of matching inside one process, without a network: the receive path of the core
 * (packet validation, sequence check, matching, completion) fed by crafted packets through the fake driver of the
 * unit tests, with N other receives outstanding. For counting instructions under callgrind, which the shared VM's
 * load does not disturb (issue 15, benchmark 7(d), doc/performance.md); not built by make.
 *
 * Build (from a build tree of any nmad version that has tests/fake_driver.c):
 *   gcc -O2 -I. -Inmad/include -Inmad/core -Itests bench/nm_match_cost.c tests/fake_driver.c \
 *       -o nm_match_cost -L.libs -lnmad -Wl,-rpath,$PWD/.libs
 * Run: ./nm_match_cost N distinct    (N outstanding receives; window tags distinct, or "same": one tag)
 *      valgrind --tool=callgrind ./nm_match_cost 1 same   (instructions: "Collected")
 * Prints the best of 5 repetitions in ns per message (64-message windows: post 64 receives, then 64 arrivals). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fake_driver.h"
#include <nmad/nm_sendrecv.h>

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  if (argc != 3 || (strcmp(argv[2], "distinct") && strcmp(argv[2], "same"))) {
    fprintf(stderr, "usage: %s N distinct|same\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]);
  int distinct = strcmp(argv[2], "distinct") == 0;
  enum { W = 64, ITERS = 2000, REPS = 5 };
  struct fake_drv_s *fake;
  nm_core_t core = fake_core_new(4, "aggreg", 1024, &fake);
  nm_session_t s;
  if (!core || nm_session_open(core, "cost", &s))
    return 1;
  nm_gate_t g = nm_core_gate(core, 1);
  nm_sr_request_t *idle = calloc((size_t)n + 1, sizeof(*idle));
  char ib[8];
  for (long i = 0; i < n; i++) /* posted first: a scan in post order meets them all */
    if (nm_sr_irecv(s, g, ((nm_tag_t)2 << 32) + (nm_tag_t)i, ib, 8, &idle[i]))
      return 1;
  nm_sr_request_t r[W];
  uint64_t b[W];
  static uint8_t pkt[256];
  uint32_t seq[W] = {0};
  double best = 1e9;
  for (int rep = 0; rep < REPS; rep++) {
    double t0 = now_s();
    for (int it = 0; it < ITERS; it++) {
      for (int k = 0; k < W; k++)
        nm_sr_irecv(s, g, ((nm_tag_t)1 << 32) + (nm_tag_t)(distinct ? k : 0), &b[k], 8, &r[k]);
      for (int k = 0; k < W; k++) {
        uint64_t v = (uint64_t)k;
        int t = distinct ? k : 0;
        size_t len = fake_data_packet(pkt, 1, s->id, ((nm_tag_t)1 << 32) + (nm_tag_t)t, seq[t]++, &v, 8);
        nm_core_packet(core, &core->drvs[0], pkt, len, 1);
      }
      for (int k = 0; k < W; k++)
        if (nm_sr_rtest(s, &r[k]) || b[k] != (uint64_t)k) {
          fprintf(stderr, "message %d: wrong receive\n", k);
          return 1;
        }
    }
    double t = (now_s() - t0) / (ITERS * W) * 1e9;
    best = t < best ? t : best;
  }
  printf("outstanding=%ld tags=%s ns_per_msg=%.1f\n", n, argv[2], best);
  free(idle);
  fake_core_free(core);
  return 0;
}
