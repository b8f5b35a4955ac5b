/* A driver for unit tests: captures every packet and large transfer instead of using a network, so tests can
 * inspect what the core and the strategies produce, and inject crafted packets. */
#ifndef NM_TEST_FAKE_DRIVER_H
#define NM_TEST_FAKE_DRIVER_H

#include "nmad/core/nm_core_private.h"

#define FAKE_MAX_PKTS 256
#define FAKE_MAX_LARGE 16

struct fake_pkt_s {
  uint64_t peer;
  size_t len;
  uint8_t *buf; /* max_packet bytes, allocated when the slot is first used (kept when n_pkts is reset) */
  int pieces;   /* 1 through send, the iovcnt through sendv */
};

struct fake_large_s {
  int is_send;
  uint64_t peer, rtag;
  void *buf;
  size_t len;
  void *ctx;
};

struct fake_drv_s {
  int n_pkts;
  struct fake_pkt_s *pkts; /* FAKE_MAX_PKTS entries */
  int n_large;
  struct fake_large_s large[FAKE_MAX_LARGE];
  int inject; /* 1: sends complete at post (like fi_inject); 0: stay in flight until fake_complete_sends() */
  int refuse; /* 1: packet sends are refused with -NM_EAGAIN (no room) */
  int n_inflight;
  void *inflight[FAKE_MAX_PKTS];
  int cancelled;
  /* A packet that "arrives" at the arrive_after-th progress call from now (0: none): delivered through the packet
   * upcall from progress, as a real driver's would be. */
  int arrive_after;
  const uint8_t *arriving;
  size_t arriving_len;
  uint64_t arriving_src;
};

/** The job key of the fuzz harness's cores (fuzz_incoming.c, gen_corpus.c): the seeds carry it, so the fuzzers
 *  start past the key check of nm_core_packet() and spend their time in the parsers behind it. */
#define FAKE_FUZZ_JOB_KEY 0x66757a7a2d6b6579ULL /* "fuzz-key" */

extern const struct nm_drv_ops_s fake_drv_ops;
/** The same driver with sendv() (packets given in pieces, as to sm): a test sets a core's drvs[0].ops to it. */
extern const struct nm_drv_ops_s fake_drv_gather_ops;

/** A core of @p size ranks where we are rank 0: gates 1..size-1 go through the fake driver, gate 0 through
 *  the self driver. Strategy by name, rendezvous threshold in bytes. */
nm_core_t fake_core_new(int size, const char *strategy, size_t rdv_threshold, struct fake_drv_s **fake);
/** fake_core_new() where we are rank @p rank (the self driver serves it, the fake driver every other rank). */
nm_core_t fake_core_new_rank(int rank, int size, const char *strategy, size_t rdv_threshold,
                             struct fake_drv_s **fake);
void fake_core_free(nm_core_t core);
/** Complete every packet send left in flight. */
void fake_complete_sends(nm_core_t core, struct fake_drv_s *f);
/** Build a packet from rank @p src holding one DATA chunk. */
size_t fake_data_packet(uint8_t *buf, uint32_t src, uint32_t session, nm_tag_t tag, uint32_t seq, const void *data,
                        uint32_t len);

#endif
