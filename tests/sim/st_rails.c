/**
 * @file st_rails.c
 * @brief Simulator test of multi-rail rendezvous (issue 15, part 3): rank 0 sends large messages to rank 1 on
 *        doc/platforms/two-nic-16.xml, with as many rails as NMAD_DRIVER names (sim or sim+sim); rank 1 checks
 *        every byte (the message is cut across rails and into NMAD_RDV_CHUNK chunks, sizes chosen off every
 *        boundary) and answers with an empty message. Rank 0 times the exchange on the core's clock (simulated
 *        time, deterministic) and prints the bandwidth; with --beta B (one rail's bandwidth in B/s) and
 *        --min-ratio R it asserts bandwidth >= R * B. tests/sim/rails-2.sh runs one and two rails and compares.
 *
 *   NMAD_DRIVER=sim+sim nmad-sim -n 2 --platform doc/platforms/two-nic-16.xml --cfg=network/model:CM02 \
 *     st_rails.so --size 67108864 --beta 1e9 --min-ratio 1.8
 */
#include "st_common.h"
#include <string.h>

#define ST_TAG_DATA ((nm_tag_t)0x7000)
#define ST_TAG_ACK ((nm_tag_t)0x7001)

int main(int argc, char **argv)
{
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  size_t size = 64u << 20;
  double beta = 0, min_ratio = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--size") == 0)
      size = strtoull(argv[i + 1], NULL, 0);
    else if (strcmp(argv[i], "--beta") == 0)
      beta = strtod(argv[i + 1], NULL);
    else if (strcmp(argv[i], "--min-ratio") == 0)
      min_ratio = strtod(argv[i + 1], NULL);
  }
  /* the timed size, then odd sizes around the rails' split point and the chunk size */
  const size_t sizes[] = {size, size + 4097, (1u << 20) + 1, 3 * (1u << 20) - 1, 40000};
  const int n = (int)(sizeof(sizes) / sizeof(sizes[0]));
  uint8_t *buf = malloc(size + 4097);
  ST_CHECK(&c, buf != NULL, "no memory");
  for (int k = 0; buf && c.rank < 2 && k < n; k++) {
    nm_sr_request_t r;
    if (c.rank == 0) {
      st_fill(buf, sizes[k], 0, 1, k);
      uint64_t t0 = nm_core_time_ns(c.core);
      int rc = nm_sr_isend(c.session, st_gate(&c, 1), ST_TAG_DATA, buf, sizes[k], &r);
      rc = rc ? rc : nm_sr_swait(c.session, &r);
      ST_CHECK(&c, rc == 0, "send %zu: %s", sizes[k], nm_strerror(rc));
      rc = nm_sr_irecv(c.session, st_gate(&c, 1), ST_TAG_ACK, NULL, 0, &r);
      rc = rc ? rc : nm_sr_rwait(c.session, &r);
      ST_CHECK(&c, rc == 0, "ack: %s", nm_strerror(rc));
      double s = (double)(nm_core_time_ns(c.core) - t0) * 1e-9;
      if (k == 0) {
        double bw = (double)sizes[k] / s;
        const char *drv = getenv("NMAD_DRIVER");
        printf("driver %s size %zu time_s %.9f bw_Bps %.6e\n", drv && *drv ? drv : "sim", sizes[k], s, bw);
        ST_CHECK(&c, beta <= 0 || bw >= min_ratio * beta, "bandwidth %.4e B/s < %.2f x %.4e", bw, min_ratio, beta);
      }
    } else if (c.rank == 1) {
      memset(buf, 0, sizes[k]);
      int rc = nm_sr_irecv(c.session, st_gate(&c, 0), ST_TAG_DATA, buf, sizes[k], &r);
      rc = rc ? rc : nm_sr_rwait(c.session, &r);
      ST_CHECK(&c, rc == 0, "recv %zu: %s", sizes[k], nm_strerror(rc));
      long bad = st_verify(buf, sizes[k], 0, 1, k);
      ST_CHECK(&c, bad < 0, "message of %zu bytes: wrong byte at %ld", sizes[k], bad);
      rc = nm_sr_isend(c.session, st_gate(&c, 0), ST_TAG_ACK, NULL, 0, &r);
      rc = rc ? rc : nm_sr_swait(c.session, &r);
      ST_CHECK(&c, rc == 0, "ack: %s", nm_strerror(rc));
    }
  }
  free(buf);
  return st_fini(&c);
}
