/**
 * @file fuzz_incoming.c
 * @brief libFuzzer target: the whole receive path of a core on arbitrary packets from its peers: the decoder,
 *        ordering, tag matching, rendezvous (RTR, ACK, CANCEL), the rpc channel and the dynamic broadcast's header
 *        and list parsers (collectives/mcast.c), as nm_core_packet() gets them from a driver.
 *
 * Input: records {u8 source rank (mod 8, never 0: the core is rank 0), u16 length (little-endian), bytes}; each
 * record is one packet, followed by a progress pass. A core of 8 ranks with session "fuzz", an rpc service and the
 * mcast service is made per input (nothing carries over). Its job key is FAKE_FUZZ_JOB_KEY, which the seeds carry
 * (tests/fuzz/corpus/incoming, gen_corpus.c): inputs start past the key check, in the parsers behind it.
 */
#include "nmad/core/nm_core_private.h"
#include "tests/fake_driver.h"
#include <nmad/nm_mcast.h>
#include <nmad/nm_rpc.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_JOB 8
#define FUZZ_RPC_TAG ((nm_tag_t)0x46555a5a)
/* The bound on what a peer's word may make the core allocate (NMAD_PEER_ALLOC_MAX, half the RAM by default:
 * 12 GiB here). The fuzzer counts any malloc above its 2 GiB limit (run.sh's -rss_limit_mb) as a failure, so
 * the harness sets a bound below it: an input that names a 4 GiB broadcast, within the default bound, failed
 * CI on 2026-11-28 with the core behaving as designed. */
#define FUZZ_PEER_ALLOC_MAX (64u << 20)

static int fuzz_handler(nm_rpc_token_t token, const void *header, nm_len_t hlen, void *ref)
{
  static uint8_t body[4096]; /* the harness's own scratch: fuzz targets run one input at a time */
  nm_len_t blen = nm_rpc_get_body_size(token);
  return nm_rpc_irecv_body(token, body, blen < sizeof(body) ? blen : sizeof(body));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct fake_drv_s *fake;
  nm_core_t core = fake_core_new(FUZZ_JOB, "aggreg", 1024, &fake);
  nm_session_t s;
  nm_mcast_service_t mc;
  nm_rpc_service_t rpc;
  if (core) {
    nm_core_set_job_key(core, FAKE_FUZZ_JOB_KEY);
    core->cfg.peer_alloc_max = FUZZ_PEER_ALLOC_MAX;
  }
  if (!core || nm_session_open(core, "fuzz", &s) != 0 || nm_mcast_init(s, &mc) != 0 ||
      nm_rpc_register(s, FUZZ_RPC_TAG, NM_TAG_MASK_FULL, 1024, fuzz_handler, NULL, NULL, &rpc) != 0)
    abort();
  /* Posted receives for a few tags from every peer: matched data lands in them. */
  static uint8_t rbuf[FUZZ_JOB][2][2048];
  nm_sr_request_t rreq[FUZZ_JOB][2];
  for (int r = 1; r < FUZZ_JOB; r++)
    for (int t = 0; t < 2; t++)
      nm_sr_irecv(s, nm_core_gate(core, r), (nm_tag_t)(t + 1), rbuf[r][t], sizeof(rbuf[r][t]), &rreq[r][t]);
  size_t off = 0;
  while (off + 3 <= size) {
    int src = 1 + data[off] % (FUZZ_JOB - 1);
    size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
    off += 3;
    if (len > size - off)
      len = size - off;
    nm_core_packet(core, &core->drvs[0], data + off, len, (uint64_t)src);
    off += len;
    fake_complete_sends(core, fake);
    nm_core_progress(core);
  }
  for (int r = 1; r < FUZZ_JOB; r++)
    for (int t = 0; t < 2; t++)
      if (!rreq[r][t].completed)
        nm_sr_rcancel(s, &rreq[r][t]);
  NM_CORE_FOR_GATES(core, g)
    nm_gate_fail(g, -NM_ECLOSED); /* broadcasts being forwarded end, with their sends */
  if (nm_mcast_finalize(mc) != 0)
    __builtin_trap(); /* a broadcast still active after every gate failed: a leak */
  fake_core_free(core);
  return 0;
}
