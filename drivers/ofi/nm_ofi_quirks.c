/* Provider quirks table (see nm_ofi_quirks.h). Keep every provider-specific decision here. */
#include "nm_ofi_quirks.h"
#include <rdma/fabric.h>
#include <string.h>

/* Modes every entry accepts: we never use RMA keys or remote addresses, so only FI_MR_LOCAL (register local
 * buffers) changes what the driver does; the others are harmless to accept. */
#define NM_OFI_MR_BASIC (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

static const struct nm_ofi_quirk_s nm_ofi_quirks[] = {
  /* wait_fd: try FI_WAIT_FD (nm_ofi_open_cq() falls back without it; shm of libfabric 1.17 refuses it).
   * tcp's parameter: rxm sends messages above its eager limit (16 KiB by default) by its own rendezvous or
   * segmentation, which over tcp costs a round trip: our eager packets of 16-64 KiB then took 3 times as long as
   * those of 8 KiB, and our rendezvous data (always expected: sent after the receiver's RTR) paid it again. Over
   * tcp the limit does not size rxm's buffers (its receive path reads the data straight into the posted buffer;
   * the peak memory of a 1 MiB ping-pong did not change), unlike over verbs, where it must equal the buffer size,
   * so only this entry sets it (doc/performance.md, run I).
   * fi_source: every provider here offers the FI_SOURCE capability (fi_info -c FI_SOURCE), but with libfabric 1.17
   * only tcp;ofi_rxm and sockets tell a sender outside the AV apart (FI_ADDR_NOTAVAIL); shm and udp;ofi_rxd named
   * such a sender with the AV index of another peer (0), so their answer cannot authenticate anything and they
   * keep the header's rank (the job key still stops strangers). verbs, psm2, opx: not checked (no hardware). */
  /* sockets: no fi_inject. Its data moves only when the application progresses (manual progress): an injected
   * packet is reported sent at once but leaves at a later progress call, so a rank that stops progressing after
   * its send completed (nm_launcher_barrier, a long computation) kept the message from a receiver waiting for it
   * (doc/reliability.md, "Soak"). fi_send completes once the provider has written the data. */
  /* receipts: shm completes a non-inject send when the receiver answers in the sender's response queue, read in
   * order: one send to a peer that died stalls every later completion (nm_ofi_receipt.c). */
  /* eager_inject_only: shm sends above its inject size (4 KiB) by CMA after a handshake with the receiver, a
   * rendezvous of its own; our eager packet adds two copies to it (doc/performance.md, "Rendezvous above the cut
   * over libfabric's shm"). tcp;ofi_rxm sends up to its eager limit (1 MiB, above) through the socket: eager. The
   * others: not measured (no hardware), left eager. */
  /* word      provider         mr_mode          inject wait_fd loopback fi_source unique_name env  eager_inject_only receipts */
  {"shm",     "shm",           NM_OFI_MR_BASIC, 1,     1,      0,       0,        1,          NULL, NULL, 1, 1},
  {"tcp",     "tcp;ofi_rxm",   NM_OFI_MR_BASIC, 1,     1,      1,       1,        0,          "FI_OFI_RXM_EAGER_LIMIT", "1048576", 0, 0},
  {"sockets", "sockets",       NM_OFI_MR_BASIC, 0,     1,      1,       1,        0,          NULL, NULL, 0, 0},
  {"udp",     "udp;ofi_rxd",   NM_OFI_MR_BASIC, 1,     0,      1,       0,        0,          NULL, NULL, 0, 0},
  {"verbs",   "verbs;ofi_rxm", NM_OFI_MR_BASIC, 1,     1,      0,       0,        0,          NULL, NULL, 0, 0},
  {"psm2",    "psm2",          NM_OFI_MR_BASIC, 1,     0,      0,       0,        0,          NULL, NULL, 0, 0},
  {"opx",     "opx",           NM_OFI_MR_BASIC, 1,     0,      0,       0,        0,          NULL, NULL, 0, 0},
};

const struct nm_ofi_quirk_s *nm_ofi_quirk_lookup(const char *word)
{
  for (size_t i = 0; i < sizeof(nm_ofi_quirks) / sizeof(nm_ofi_quirks[0]); i++)
    if (strcmp(nm_ofi_quirks[i].word, word) == 0)
      return &nm_ofi_quirks[i];
  return NULL;
}

/* Nominal latency and bandwidth per provider (issue 15, part 3). shm and tcp: raw fi_pingpong on this project's
 * machine (doc/performance.md, issue 2: shm 1.1 us at 8 B and 17-20 GB/s at 4 MiB; tcp over loopback 11 us and
 * 3.1 GB/s); they are loopback figures, right for ranks of one host, which is where these providers run here.
 * sockets and udp: slower than tcp on the same path (no zero-copy receive; udp;ofi_rxd segments everything).
 * verbs, psm2, opx: the nominal 100 Gb/s link (12.5 GB/s, about 12 GB/s of payload) and the latencies their
 * vendors publish (EDR InfiniBand 1.5 us through rxm, Omni-Path PSM2 1 us, CN5000 OPX 1 us); not measured (no
 * such hardware here). Why a table and not a measurement at open: doc/architecture.md, "Rail figures".
 * The sender's overhead o (the broadcast model's LogP split, doc/collectives.md "The model in LogP form") is
 * NOMINAL, not measured: shm, tcp, sockets and udp run between ranks of one host, where no wire separates them
 * and the one-way latency is CPU time of the sender and of the receiver: half of it is taken as the sender's.
 * verbs, psm2 and opx: 0.3 us, an ASSUMPTION of the order of a post to an OS-bypass NIC (a doorbell write and
 * a descriptor), the rest of the latency being the NIC, the wire and the switches. */
static const struct nm_ofi_nominal_s nm_ofi_nominals[] = {
  {"shm", 1100, 18000, 550},
  {"tcp", 11000, 3100, 5500},
  {"sockets", 15000, 2000, 7500},
  {"udp", 20000, 500, 10000},
  {"verbs", 1500, 12000, 300},
  {"psm2", 1000, 12000, 300},
  {"opx", 1000, 12000, 300},
};

const struct nm_ofi_nominal_s *nm_ofi_nominal_lookup(const char *word)
{
  for (size_t i = 0; i < sizeof(nm_ofi_nominals) / sizeof(nm_ofi_nominals[0]); i++)
    if (strcmp(nm_ofi_nominals[i].word, word) == 0)
      return &nm_ofi_nominals[i];
  return NULL;
}
