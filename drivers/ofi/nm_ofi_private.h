/**
 * @file nm_ofi_private.h
 * @brief Private: the ofi driver's structures, shared by nm_ofi.c (endpoint, packets, large transfers) and
 * nm_ofi_receipt.c (receiver-confirmed send completion, for providers whose own completions can stall behind a
 * dead peer).
 */
#ifndef NM_OFI_PRIVATE_H
#define NM_OFI_PRIVATE_H

#include "drivers/nm_driver.h"
#include "drivers/ofi/nm_ofi_lib.h"
#include "drivers/ofi/nm_ofi_quirks.h"
#include "nmad/core/nm_pool.h"
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <uthash.h>

#define NM_OFI_MAX_PACKET (64 * 1024)
#define NM_OFI_NRECV 64
#define NM_OFI_CQ_BATCH 16
#define NM_OFI_API FI_VERSION(1, 11)
#define NM_OFI_RECEIPT_QUEUE 64 /* receipts waiting for room in the provider's queue; more are dropped */

enum nm_ofi_op_kind_e { NM_OFI_SEND, NM_OFI_RECV, NM_OFI_LSEND, NM_OFI_LRECV };

/* One posted operation; its fi_context2 is what libfabric hands back in completions. */
struct nm_ofi_op_s {
  struct fi_context2 fctx; /* first: the CQ's op_context points here */
  int kind;
  void *ctx;               /* core context (packet wrapper or large transfer) */
  void *buf;               /* receive buffer (NM_OFI_RECV) or bounce buffer (FI_MR_LOCAL sends) */
  size_t len;
  struct fid_mr *mr;       /* registration, when the provider needs FI_MR_LOCAL */
  struct nm_ofi_op_s *next, *prev; /* posted large receives, so they can be cancelled */
  uint64_t peer;           /* sends with a receipt: the destination's AV index */
  uint64_t receipt;        /* sends with a receipt: its id (0: none); key of nm_ofi_s.awaiting */
  int receipted;           /* the receipt came first: the core was told, the provider's completion only frees */
  UT_hash_handle hh;
};

/** A receipt to send: the receiver got message @p id from AV index @p peer. */
struct nm_ofi_receipt_s {
  uint64_t peer, id;
};

struct nm_ofi_s {
  struct nm_ofi_lib_s lib; /* libfabric's functions, loaded at open (nm_ofi_lib.h) */
  const struct nm_ofi_quirk_s *quirk;
  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_ep *ep;
  struct fid_av *av;
  struct fid_cq *cq;
  int wait_fd;
  int region_fd; /* holds the shared lock on the provider's region file while we live (nm_ofi_region.h), or -1 */
  int mr_local;
  int auth_source; /* completions carry the sender's AV index (fi_cq_readfrom), and the core may trust it */
  int read_source; /* completions are read with fi_cq_readfrom (auth_source, or receipts need the sender) */
  int receipts;    /* non-inject sends carry an id as remote CQ data; their receiver answers (nm_ofi_receipt.c) */
  fi_addr_t *peers;
  size_t n_peers, cap_peers;
  struct nm_ofi_op_s recvs[NM_OFI_NRECV];
  uint8_t *recv_mem;
  struct fid_mr *recv_mr;
  struct nm_pool_s op_pool;
  int n_ops; /* ops taken from op_pool and not put back: sends and large transfers in flight */
  struct nm_ofi_op_s *lrecvs; /* posted large receives */
  struct nm_ofi_op_s *repost[NM_OFI_NRECV]; /* consumed receive buffers, re-posted at the next progress */
  int n_repost;
  uint64_t next_receipt;          /* id of the next send with a receipt */
  struct nm_ofi_op_s *awaiting;   /* sends with a receipt not completed yet, uthash by id */
  struct nm_ofi_receipt_s receipt_queue[NM_OFI_RECEIPT_QUEUE];
  int n_receipt_queue;
};

/* ---- nm_ofi_receipt.c ---- */
/** Sender: give @p op (a non-inject send to AV index @p peer) a receipt id, to pass as remote CQ data. */
uint64_t nm_ofi_receipt_track(struct nm_ofi_s *o, struct nm_ofi_op_s *op, uint64_t peer);
/** Sender: the provider gave up an op before posting it (forget its id). */
void nm_ofi_receipt_untrack(struct nm_ofi_s *o, struct nm_ofi_op_s *op);
/** Sender: the provider completed @p op. @return 1 if its receipt came first (the core knows: only free it). */
int nm_ofi_receipt_completed(struct nm_ofi_s *o, struct nm_ofi_op_s *op);
/** Receiver: a message with remote CQ data @p id from AV index @p src arrived whole: send its receipt. */
void nm_ofi_receipt_send(struct nm_ofi_s *o, uint64_t src, uint64_t id);
/** Receiver of a packet: if it is a receipt (not a core packet), handle it. @return 1 if it was one. */
int nm_ofi_receipt_handle(struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src);
/** Send the receipts the provider had no room for earlier. */
void nm_ofi_receipt_flush(struct nm_ofi_s *o);

#endif /* NM_OFI_PRIVATE_H */
