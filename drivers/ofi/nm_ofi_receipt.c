/* Receiver-confirmed send completion (quirk "receipts": shm).
 *
 * Why: libfabric's shm provider completes a send that is not injected (a packet above the inject size, a large
 * transfer) when the receiver writes a response into the sender's response queue, and it reads that queue in
 * order, stopping at the first entry still busy (smr_progress_resp()). A send to a peer that dies before
 * answering stays busy for ever, so every later such send of this endpoint, to any peer, never completes, although
 * its receiver got all of it (doc/reliability.md, "Peer failure"). So each of these sends carries an id as remote
 * CQ data; its receiver, once the message is whole in its buffer, injects a 16-byte receipt back (an inject needs
 * no response); the sender completes the send on the receipt or on the provider's completion, whichever comes
 * first. A receipt means the receiver holds every byte: the provider no longer reads the send buffer (shm reads it
 * by CMA or copies it through its segments before the receiver completes). The provider's late completion, if it
 * ever comes, only frees the op.
 *
 * Limit: the stalled response slots are not reclaimed; after a peer's death each later non-inject send keeps one
 * (1,024 per endpoint with shm's default), then posting waits. */
#include "drivers/ofi/nm_ofi_private.h"
#include "nmad/core/nm_le.h"
#include <rdma/fi_endpoint.h>
#include <string.h>

/* A receipt on the wire: 2 magic bytes that no core packet starts with (core packets start with 'N'), 6 zero
 * bytes, the id (little-endian). */
#define NM_OFI_RECEIPT_LEN 16
static const uint8_t nm_ofi_receipt_magic[2] = {0xf1, 'R'};

uint64_t nm_ofi_receipt_track(struct nm_ofi_s *o, struct nm_ofi_op_s *op, uint64_t peer)
{
  op->peer = peer;
  op->receipted = 0;
  op->receipt = ++o->next_receipt;
  HASH_ADD(hh, o->awaiting, receipt, sizeof(op->receipt), op);
  return op->receipt;
}

void nm_ofi_receipt_untrack(struct nm_ofi_s *o, struct nm_ofi_op_s *op)
{
  if (op->receipt && !op->receipted)
    HASH_DEL(o->awaiting, op);
  op->receipt = 0;
}

int nm_ofi_receipt_completed(struct nm_ofi_s *o, struct nm_ofi_op_s *op)
{
  if (!op->receipt)
    return 0;
  if (op->receipted)
    return 1;
  HASH_DEL(o->awaiting, op);
  op->receipt = 0;
  return 0;
}

static int nm_ofi_receipt_inject(struct nm_ofi_s *o, uint64_t peer, uint64_t id)
{
  uint8_t msg[NM_OFI_RECEIPT_LEN] = {0};
  memcpy(msg, nm_ofi_receipt_magic, sizeof(nm_ofi_receipt_magic));
  nm_put64(msg + 8, id);
  return fi_inject(o->ep, msg, sizeof(msg), o->peers[peer]) == 0;
}

void nm_ofi_receipt_send(struct nm_ofi_s *o, uint64_t src, uint64_t id)
{
  if (src >= o->n_peers)
    return; /* a sender outside the address table: nobody to answer */
  if (o->n_receipt_queue == 0 && nm_ofi_receipt_inject(o, src, id))
    return;
  /* No room now: retried at the next progress. If even the queue is full the sender waits for the provider's
   * own completion, as without receipts. */
  if (o->n_receipt_queue < NM_OFI_RECEIPT_QUEUE)
    o->receipt_queue[o->n_receipt_queue++] = (struct nm_ofi_receipt_s){src, id};
}

void nm_ofi_receipt_flush(struct nm_ofi_s *o)
{
  int done = 0;
  while (done < o->n_receipt_queue &&
         nm_ofi_receipt_inject(o, o->receipt_queue[done].peer, o->receipt_queue[done].id))
    done++;
  if (done) {
    memmove(o->receipt_queue, o->receipt_queue + done, (size_t)(o->n_receipt_queue - done) * sizeof(o->receipt_queue[0]));
    o->n_receipt_queue -= done;
  }
}

int nm_ofi_receipt_handle(struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src)
{
  struct nm_ofi_s *o = drv->priv;
  const uint8_t *b = buf;
  if (!o->receipts || len != NM_OFI_RECEIPT_LEN || memcmp(b, nm_ofi_receipt_magic, sizeof(nm_ofi_receipt_magic)))
    return 0;
  uint64_t id = nm_get64(b + 8);
  struct nm_ofi_op_s *op;
  HASH_FIND(hh, o->awaiting, &id, sizeof(id), op);
  /* Untrusted bytes: only a receipt from the send's own destination counts; anything else (a duplicate, a
   * receipt for a send the provider completed already, a forgery) is dropped. */
  if (!op || op->peer != src)
    return 1;
  HASH_DEL(o->awaiting, op);
  op->receipted = 1;
  void *ctx = op->ctx;
  op->ctx = NULL;
  if (op->kind == NM_OFI_SEND)
    drv->up.send_done(drv->up.ref, ctx, 0);
  else
    drv->up.large_done(drv->up.ref, ctx, 0, op->len);
  return 1;
}
