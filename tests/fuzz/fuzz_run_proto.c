/**
 * @file fuzz_run_proto.c
 * @brief libFuzzer target: the frames a rank reads from nmad-run (nmad/launcher/nmad_run_proto.c): the header
 *        decoder and the incremental receiver, fed the input through a socket pair in pieces of every size, as a
 *        launcher (or anything that got hold of NMAD_RUN_FD) could write them.
 */
#include "nmad/launcher/nmad_run_proto.h"
#include <nmad/nm_errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct nmad_run_hdr_s h;
  if (size >= NMAD_RUN_HDR_SIZE)
    (void)nmad_run_hdr_decode(data, &h);
  /* One socket pair for the whole run (the harness's state, not the library's): a fresh one per input made the
   * target 10x slower. An input that leaves bytes behind gets them drained below. */
  static int sv[2] = {-1, -1};
  if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
    return 0;
  struct nmad_run_rx_s rx;
  nmad_run_rx_init(&rx);
  size_t off = 0;
  int rc = 0;
  while (off < size && rc >= 0) {
    size_t piece = 1 + (data[off] % 64);
    if (piece > size - off)
      piece = size - off;
    if (write(sv[0], data + off, piece) != (ssize_t)piece)
      break;
    off += piece;
    while ((rc = nmad_run_rx_progress(sv[1], &rx)) > 0)
      nmad_run_rx_reset(&rx); /* a whole frame: take it and go on */
  }
  nmad_run_rx_reset(&rx);
  uint8_t drain[4096];
  while (read(sv[1], drain, sizeof(drain)) > 0)
    ;
  if (rc == -NM_ECLOSED || rc == -NM_EUNKNOWN) { /* the pair is unusable: a new one next time */
    close(sv[0]);
    close(sv[1]);
    sv[0] = sv[1] = -1;
  }
  return 0;
}
