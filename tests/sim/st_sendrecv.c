/**
 * @file st_sendrecv.c
 * @brief Simulator test: point-to-point data end to end under nmad-sim. Every rank sends to the ranks at
 *        distances 1, 2, 4, ... (mod N) messages of every size class (empty, tiny, eager, rendezvous), several per
 *        tag so that ordering matters, and checks every byte it receives. Some receives are posted late (the
 *        message arrives unexpected) and some early.
 */
#include "st_common.h"
#include <string.h>

#define ST_NSIZES 5
#define ST_PER_SIZE 2

int main(int argc, char **argv)
{
  static const size_t sizes[ST_NSIZES] = {0, 8, 4000, 100000, 1 << 20}; /* constant table: not state */
  struct st_ctx c;
  if (st_init(&c, &argc, &argv))
    return 1;
  int ndist = 0;
  for (int d = 1; d < c.size; d *= 2)
    ndist++;
  int nmsg = ndist * ST_NSIZES * ST_PER_SIZE;
  nm_sr_request_t *sreq = calloc((size_t)nmsg, sizeof(*sreq)), *rreq = calloc((size_t)nmsg, sizeof(*rreq));
  uint8_t **sbuf = calloc((size_t)nmsg, sizeof(*sbuf)), **rbuf = calloc((size_t)nmsg, sizeof(*rbuf));
  if (!sreq || !rreq || !sbuf || !rbuf)
    return 1;
  /* Even ranks post their receives before the sends, odd ranks after: both the expected and the unexpected
   * paths are exercised, for eager and rendezvous messages. */
  for (int pass = 0; pass < 2; pass++) {
    int k = 0;
    for (int d = 1, di = 0; d < c.size; d *= 2, di++)
      for (int s = 0; s < ST_NSIZES; s++)
        for (int j = 0; j < ST_PER_SIZE; j++, k++) {
          int to = (c.rank + d) % c.size, from = (c.rank - d + c.size) % c.size, seq = s * ST_PER_SIZE + j;
          nm_tag_t tag = (nm_tag_t)(di * 16 + s);
          if (pass == (c.rank % 2)) {
            rbuf[k] = malloc(sizes[s] + 1);
            int rc = nm_sr_irecv(c.session, st_gate(&c, from), tag, rbuf[k], sizes[s], &rreq[k]);
            ST_CHECK(&c, rc == 0, "irecv: %s", nm_strerror(rc));
          }
          if (pass == 0) {
            sbuf[k] = malloc(sizes[s] + 1);
            st_fill(sbuf[k], sizes[s], c.rank, to, seq);
            int rc = nm_sr_isend(c.session, st_gate(&c, to), tag, sbuf[k], sizes[s], &sreq[k]);
            ST_CHECK(&c, rc == 0, "isend: %s", nm_strerror(rc));
          }
        }
  }
  int k = 0;
  for (int d = 1; d < c.size; d *= 2)
    for (int s = 0; s < ST_NSIZES; s++)
      for (int j = 0; j < ST_PER_SIZE; j++, k++) {
        int from = (c.rank - d + c.size) % c.size;
        int rc = nm_sr_rwait(c.session, &rreq[k]);
        ST_CHECK(&c, rc == 0, "rwait: %s", nm_strerror(rc));
        nm_len_t got = 0;
        nm_sr_get_size(c.session, &rreq[k], &got);
        ST_CHECK(&c, got == sizes[s], "size %zu, expected %zu", (size_t)got, sizes[s]);
        long bad = st_verify(rbuf[k], sizes[s], from, c.rank, s * ST_PER_SIZE + j);
        ST_CHECK(&c, bad < 0, "message from %d, %zu bytes, seq %d: first bad byte %ld", from, sizes[s],
                 s * ST_PER_SIZE + j, bad);
        rc = nm_sr_swait(c.session, &sreq[k]);
        ST_CHECK(&c, rc == 0, "swait: %s", nm_strerror(rc));
        free(rbuf[k]);
        free(sbuf[k]);
      }
  free(sreq);
  free(rreq);
  free(sbuf);
  free(rbuf);
  if (c.rank == 0)
    printf("st_sendrecv: %d ranks, %d messages each: %s\n", c.size, nmsg, c.failures ? "FAILED" : "ok");
  return st_fini(&c);
}
