/**
 * @file fuzz_wire.c
 * @brief libFuzzer target: the packet decoder (nmad/core/nm_wire.c) on arbitrary bytes. Every packet a peer sends
 *        goes through nm_wire_validate_keep() first (DESIGN.md rule 5); the walk after it re-reads the chunks the
 *        way nm_core_packet() does. Built and run by tests/fuzz/build.sh and run.sh (doc/reliability.md).
 */
#include "nmad/core/nm_wire.h"
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct nm_wire_pkt_s pkt;
  struct nm_wire_chunk_s kept[4], c;
  if (nm_wire_validate_keep(data, size, &pkt, kept, 4) != 0)
    return 0;
  size_t off = NM_WIRE_PKT_HDR_LEN;
  unsigned long sum = 0;
  for (unsigned i = 0; i < pkt.n_chunks; i++) {
    if (nm_wire_next_chunk(data, size, &off, &c) != 0)
      __builtin_trap(); /* validated as a whole, a chunk must parse */
    for (uint32_t k = 0; c.payload && k < c.len; k++)
      sum += c.payload[k]; /* every byte the decoder points at is inside the packet (ASan checks) */
  }
  return (int)(sum & 0);
}
