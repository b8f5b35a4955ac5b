/**
 * @file nm_ofi_quirks.h
 * @brief Private: the one table of libfabric provider differences (as Mercury does): which provider string an
 * NMAD_DRIVER word means, which memory-registration modes we accept, whether to use fi_inject, whether the
 * CQ wait object wakes up on remote arrivals, whether to pin the endpoint to loopback on one host, and whether
 * the provider's FI_SOURCE can be trusted to name the sender.
 */
#ifndef NM_OFI_QUIRKS_H
#define NM_OFI_QUIRKS_H

#include <stdint.h>

struct nm_ofi_quirk_s {
  const char *word;      /* NMAD_DRIVER word */
  const char *prov_name; /* libfabric provider string (core;utility) */
  uint64_t mr_mode;      /* fi_info mr_mode bits we offer to handle */
  int use_inject;        /* post small packets with fi_inject */
  int wait_fd;           /* the CQ's FI_WAIT_FD wakes us when a peer sends */
  int loopback_domain;   /* on one host, open the "lo" domain and bind to 127.0.0.1 (IP providers) */
  int fi_source;         /* FI_SOURCE names the sender, and FI_ADDR_NOTAVAIL a sender outside the AV: the driver
                            then authenticates sources (NM_DRV_F_AUTH_SOURCE) */
  int unique_name;       /* name the endpoint ourselves: the provider's default name (shm: "<pid>:0:0" in
                            /dev/shm) collides with the region a killed process left behind when its pid is
                            reused, and the endpoint then fails with EBUSY */
  const char *env_name;  /* a provider parameter to set before fi_getinfo() unless the user set it, or NULL */
  const char *env_value;
  int eager_inject_only; /* sends above the inject size are the provider's own rendezvous (shm: CMA after a
                            handshake): the driver sets NM_DRV_F_EAGER_INJECT_ONLY */
  int receipts;          /* a non-inject send's completion can wait for ever behind a send to a dead peer (shm's
                            in-order response queue): non-inject sends ask their receiver for a receipt
                            (nm_ofi_receipt.c) */
};

/** Entry for an NMAD_DRIVER word, or NULL. */
const struct nm_ofi_quirk_s *nm_ofi_quirk_lookup(const char *word);
/** Nominal figures of a provider, which split_balance prices rails with (strategies/nm_strat_split_balance.c). */
struct nm_ofi_nominal_s {
  const char *word;        /* NMAD_DRIVER word */
  uint32_t latency_ns;     /* one-way latency of a small message */
  uint32_t bandwidth_MBps; /* large-message bandwidth, 1 MB = 1e6 B */
  uint32_t overhead_ns;    /* the sender's CPU time per small message (LogP's o), part of latency_ns */
};
/** Nominal figures for an NMAD_DRIVER word (doc/architecture.md, "Rail figures": where each comes from).
 *  @return the entry, or NULL for a word without one (the driver then keeps 5 us, 1000 MB/s and an
 *  overhead of 2.5 us). */
const struct nm_ofi_nominal_s *nm_ofi_nominal_lookup(const char *word);

/** Accepted words, for error messages. */
#define NM_OFI_WORDS "sm, shm, tcp, sockets, udp, verbs, psm2, opx (and self; a+b for two rails)"

#endif /* NM_OFI_QUIRKS_H */
