/* Driver "ofi": libfabric, FI_EP_RDM, FI_AV_TABLE (peer index = AV index = rank), FI_CONTEXT2, manual
 * progress. Packets: untagged fi_send/fi_inject into pre-posted receive buffers. Large transfers: tagged
 * fi_tsend/fi_trecv matched by the receiver-chosen rendezvous tag, straight from/into user memory.
 * Where the provider's FI_SOURCE is trustworthy, packets are read with fi_cq_readfrom and reach the core with the
 * sender's AV index (= rank), and a sender outside the AV is refused (NM_DRV_F_AUTH_SOURCE).
 * Provider differences live in nm_ofi_quirks.c. libfabric itself is loaded when the driver opens (nm_ofi_lib.h): the
 * few functions that are not inline wrappers are called through o->lib. */
#include "drivers/ofi/nm_ofi_private.h"
#include "drivers/ofi/nm_ofi_region.h"
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int nm_ofi_err(const struct nm_ofi_s *o, const char *what, int rc)
{
  fprintf(stderr, "nmad: ofi: %s failed: %s\n", what, o->lib.strerror(-rc));
  return -NM_EDRIVER;
}

static int nm_ofi_post_recv(struct nm_ofi_s *o, struct nm_ofi_op_s *op)
{
  void *desc = o->recv_mr ? fi_mr_desc(o->recv_mr) : NULL;
  ssize_t rc;
  do
    rc = fi_recv(o->ep, op->buf, NM_OFI_MAX_PACKET, desc, FI_ADDR_UNSPEC, &op->fctx);
  while (rc == -FI_EAGAIN && fi_cq_read(o->cq, NULL, 0) >= -FI_EAGAIN);
  return rc ? nm_ofi_err(o, "fi_recv", (int)rc) : NM_ESUCCESS;
}

static struct fi_info *nm_ofi_hints(const struct nm_ofi_s *o, const struct nm_ofi_quirk_s *q, int all_local)
{
  struct fi_info *hints = o->lib.dupinfo(NULL); /* fi_allocinfo() */
  if (!hints)
    return NULL;
  hints->caps = FI_MSG | FI_TAGGED | (q->fi_source || q->receipts ? FI_SOURCE : 0);
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->av_type = FI_AV_TABLE;
  hints->domain_attr->mr_mode = (int)q->mr_mode;
  hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  /* No ordering requested: per-(gate, session, tag) sequence numbers restore MPI order (nm_incoming.c). */
  hints->fabric_attr->prov_name = strdup(q->prov_name);
  const char *iface = getenv("NMAD_OFI_IFACE");
  if (iface && *iface)
    hints->domain_attr->name = strdup(iface);
  else if (q->loopback_domain && all_local) {
    /* One host: never leave loopback. The "lo" domain alone is not enough: the endpoint (and ofi_rxm's listening
     * socket) still bound the external address; the source address is what they bind (nm_ofi_getinfo()). */
    hints->domain_attr->name = strdup("lo");
    hints->addr_format = FI_SOCKADDR_IN;
  }
  return hints;
}

/* fi_getinfo() for the hints; on one host with an IP provider, 127.0.0.1 as the source address (node with
 * FI_SOURCE: the address the endpoint binds, port chosen by the system). */
static int nm_ofi_getinfo(const struct nm_ofi_s *o, const struct fi_info *hints, struct fi_info **info)
{
  if (hints->addr_format == FI_SOCKADDR_IN)
    return o->lib.getinfo(NM_OFI_API, "127.0.0.1", NULL, FI_SOURCE, hints, info);
  return o->lib.getinfo(NM_OFI_API, NULL, NULL, 0, hints, info);
}

static int nm_ofi_open_cq(struct nm_ofi_s *o)
{
  struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 1024, .wait_obj = FI_WAIT_NONE};
  o->wait_fd = NM_DRV_NO_FD;
  if (o->quirk->wait_fd) {
    attr.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(o->domain, &attr, &o->cq, NULL) == 0) {
      int fd;
      if (fi_control(&o->cq->fid, FI_GETWAIT, &fd) == 0) {
        o->wait_fd = fd;
        return NM_ESUCCESS;
      }
      fi_close(&o->cq->fid);
    }
    attr.wait_obj = FI_WAIT_NONE;
  }
  int rc = fi_cq_open(o->domain, &attr, &o->cq, NULL);
  return rc ? nm_ofi_err(o, "fi_cq_open", rc) : NM_ESUCCESS;
}

static void nm_ofi_close(struct nm_drv_s *drv);

static int nm_ofi_open(struct nm_drv_s *drv, const char *word, int all_local)
{
  const struct nm_ofi_quirk_s *q = nm_ofi_quirk_lookup(word);
  if (!q) {
    fprintf(stderr, "nmad: NMAD_DRIVER word '%s' is not a driver; accepted values: %s\n", word, NM_OFI_WORDS);
    return -NM_EINVAL;
  }
  struct nm_ofi_s *o = calloc(1, sizeof(*o));
  if (!o)
    return -NM_ENOMEM;
  drv->priv = o;
  o->quirk = q;
  o->wait_fd = NM_DRV_NO_FD;
  o->region_fd = -1;
  nm_pool_init(&o->op_pool, sizeof(struct nm_ofi_op_s));
  int rc = nm_ofi_lib_open(&o->lib);
  if (rc) {
    nm_ofi_close(drv);
    return rc;
  }
  if (q->env_name)
    setenv(q->env_name, q->env_value, 0); /* read by the provider when libfabric initializes; the user's wins */
  struct fi_info *hints = nm_ofi_hints(o, q, all_local);
  if (!hints) {
    nm_ofi_close(drv);
    return -NM_ENOMEM;
  }
  rc = nm_ofi_getinfo(o, hints, &o->info);
  o->lib.freeinfo(hints);
  if (rc) {
    fprintf(stderr, "nmad: NMAD_DRIVER=%s: libfabric provider '%s' is not usable on this machine (%s)%s\n", word,
            q->prov_name, o->lib.strerror(-rc), all_local ? "" : "; try NMAD_OFI_IFACE=<interface>");
    nm_ofi_close(drv);
    return -NM_ENOTSUP;
  }
  o->mr_local = (o->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
  o->auth_source = q->fi_source && (o->info->caps & FI_SOURCE);
  o->receipts = q->receipts && (o->info->caps & FI_SOURCE) && o->info->domain_attr->cq_data_size >= 8;
  o->read_source = o->auth_source || o->receipts;
  char name[NM_OFI_REGION_NAME_MAX] = "";
  if (q->unique_name) {
    /* what ranks killed by SIGKILL left on this host (nm_ofi_region.h); the names' clock is CLOCK_MONOTONIC */
    nm_ofi_region_sweep(NM_OFI_REGION_DIR, NULL, nm_core_time_ns(NULL), NM_OFI_REGION_MIN_AGE_NS);
    nm_ofi_region_name(name);
    free(o->info->src_addr);
    o->info->src_addr = strdup(name);
    o->info->src_addrlen = o->info->src_addr ? strlen(name) + 1 : 0;
  }
  int err = NM_ESUCCESS;
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  if ((rc = o->lib.fabric(o->info->fabric_attr, &o->fabric, NULL)))
    err = nm_ofi_err(o, "fi_fabric", rc);
  else if ((rc = fi_domain(o->fabric, o->info, &o->domain, NULL)))
    err = nm_ofi_err(o, "fi_domain", rc);
  else if ((err = nm_ofi_open_cq(o)))
    ;
  else if ((rc = fi_av_open(o->domain, &av_attr, &o->av, NULL)))
    err = nm_ofi_err(o, "fi_av_open", rc);
  else if ((rc = fi_endpoint(o->domain, o->info, &o->ep, NULL)))
    err = nm_ofi_err(o, "fi_endpoint", rc);
  else if ((rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV)))
    err = nm_ofi_err(o, "fi_ep_bind(cq)", rc);
  else if ((rc = fi_ep_bind(o->ep, &o->av->fid, 0)))
    err = nm_ofi_err(o, "fi_ep_bind(av)", rc);
  else if ((rc = fi_enable(o->ep)))
    err = nm_ofi_err(o, "fi_enable", rc);
  if (!err && name[0])
    o->region_fd = nm_ofi_region_hold(NM_OFI_REGION_DIR, name); /* the provider has made the file */
  if (!err) {
    o->recv_mem = aligned_alloc(64, (size_t)NM_OFI_NRECV * NM_OFI_MAX_PACKET);
    if (!o->recv_mem)
      err = -NM_ENOMEM;
    else /* touch every page now: otherwise the first NM_OFI_NRECV packets each pay page faults (~10 us here) */
      memset(o->recv_mem, 0, (size_t)NM_OFI_NRECV * NM_OFI_MAX_PACKET);
  }
  if (!err && o->mr_local &&
      (rc = fi_mr_reg(o->domain, o->recv_mem, (size_t)NM_OFI_NRECV * NM_OFI_MAX_PACKET, FI_RECV, 0, 0, 0,
                      &o->recv_mr, NULL)))
    err = nm_ofi_err(o, "fi_mr_reg", rc);
  for (int i = 0; !err && i < NM_OFI_NRECV; i++) {
    o->recvs[i].kind = NM_OFI_RECV;
    o->recvs[i].buf = o->recv_mem + (size_t)i * NM_OFI_MAX_PACKET;
    err = nm_ofi_post_recv(o, &o->recvs[i]);
  }
  if (err) {
    nm_ofi_close(drv);
    return err;
  }
  size_t max_msg = o->info->ep_attr->max_msg_size;
  drv->props.max_packet = max_msg < NM_OFI_MAX_PACKET ? max_msg : NM_OFI_MAX_PACKET;
  drv->props.inject_size = q->use_inject ? o->info->tx_attr->inject_size : 0;
  drv->props.max_large = max_msg;
  const struct nm_ofi_nominal_s *nom = nm_ofi_nominal_lookup(word);
  drv->props.latency_ns = nom ? nom->latency_ns : 5000;
  drv->props.bandwidth_MBps = nom ? nom->bandwidth_MBps : 1000;
  drv->props.overhead_ns = nom ? nom->overhead_ns : 2500;
  drv->props.gap_ns = 0; /* not known apart from o (nm_ofi_quirks.c) */
  drv->props.gap_free = 0; /* one packet per progress pass (NM_DRV_F_PACED): no burst leaves sooner */
  snprintf(drv->props.provider, sizeof(drv->props.provider), "%s", o->info->fabric_attr->prov_name);
  if (o->auth_source)
    drv->props.flags |= NM_DRV_F_AUTH_SOURCE;
  drv->props.flags |= NM_DRV_F_PACED; /* one endpoint, one NIC queue for every peer */
  if (drv->props.inject_size > 0 && !o->mr_local)
    drv->props.flags |= NM_DRV_F_SEND_AT_POST; /* nm_ofi_send() injects whatever fits: done at post, or -NM_EAGAIN */
  if (drv->props.inject_size > 0 && q->eager_inject_only)
    drv->props.flags |= NM_DRV_F_EAGER_INJECT_ONLY;
  return NM_ESUCCESS;
}

static void nm_ofi_close(struct nm_drv_s *drv)
{
  struct nm_ofi_s *o = drv->priv;
  if (!o)
    return;
  HASH_CLEAR(hh, o->awaiting); /* sends to a dead peer still awaiting their receipt: the ops go with the pool */
  if (o->ep)
    fi_close(&o->ep->fid);
  if (o->recv_mr)
    fi_close(&o->recv_mr->fid);
  if (o->av)
    fi_close(&o->av->fid);
  if (o->cq)
    fi_close(&o->cq->fid);
  if (o->domain)
    fi_close(&o->domain->fid);
  if (o->fabric)
    fi_close(&o->fabric->fid);
  if (o->info)
    o->lib.freeinfo(o->info);
  nm_ofi_lib_close(&o->lib);
  if (o->region_fd >= 0)
    close(o->region_fd); /* after the endpoint: the provider has removed the file */
  nm_pool_destroy(&o->op_pool);
  free(o->recv_mem);
  free(o->peers);
  free(o);
  drv->priv = NULL;
}

static int nm_ofi_get_address(struct nm_drv_s *drv, void *addr, size_t *len)
{
  struct nm_ofi_s *o = drv->priv;
  int rc = fi_getname(&o->ep->fid, addr, len);
  return rc ? nm_ofi_err(o, "fi_getname", rc) : NM_ESUCCESS;
}

static int nm_ofi_connect(struct nm_drv_s *drv, uint64_t index, const void *addr, size_t len)
{
  struct nm_ofi_s *o = drv->priv;
  if (index != o->n_peers)
    return -NM_EINVAL; /* AV_TABLE: indices are assigned in insertion order */
  if (o->n_peers == o->cap_peers) {
    size_t cap = o->cap_peers ? 2 * o->cap_peers : 16;
    fi_addr_t *p = realloc(o->peers, cap * sizeof(*p));
    if (!p)
      return -NM_ENOMEM;
    o->peers = p;
    o->cap_peers = cap;
  }
  int rc = fi_av_insert(o->av, addr, 1, &o->peers[o->n_peers], 0, NULL);
  if (rc != 1)
    return nm_ofi_err(o, "fi_av_insert", rc < 0 ? rc : -FI_EINVAL);
  o->n_peers++;
  return NM_ESUCCESS;
}

static struct nm_ofi_op_s *nm_ofi_op_get(struct nm_ofi_s *o, int kind, void *ctx)
{
  struct nm_ofi_op_s *op = nm_pool_get(&o->op_pool);
  if (op) {
    o->n_ops++;
    op->kind = kind;
    op->ctx = ctx;
    op->mr = NULL;
    op->buf = NULL;
    op->receipt = 0; /* pool memory is recycled: a stale id would make the provider's completion look receipted */
    op->receipted = 0;
  }
  return op;
}

static void nm_ofi_op_put(struct nm_ofi_s *o, struct nm_ofi_op_s *op)
{
  if (op->mr)
    fi_close(&op->mr->fid);
  free(op->buf);
  nm_pool_put(&o->op_pool, op);
  o->n_ops--;
}

/* With FI_MR_LOCAL, memory handed to the provider must be registered first. */
static int nm_ofi_reg(struct nm_ofi_s *o, struct nm_ofi_op_s *op, const void *buf, size_t len, uint64_t access,
                      void **desc)
{
  *desc = NULL;
  if (!o->mr_local)
    return NM_ESUCCESS;
  int rc = fi_mr_reg(o->domain, buf, len, access, 0, 0, 0, &op->mr, NULL);
  if (rc)
    return nm_ofi_err(o, "fi_mr_reg", rc);
  *desc = fi_mr_desc(op->mr);
  return NM_ESUCCESS;
}

static int nm_ofi_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx)
{
  struct nm_ofi_s *o = drv->priv;
  if (peer >= o->n_peers)
    return -NM_EINVAL;
  ssize_t rc;
  if (len <= drv->props.inject_size && !o->mr_local) {
    rc = fi_inject(o->ep, buf, len, o->peers[peer]);
    if (rc == 0)
      return 1;
    return rc == -FI_EAGAIN ? -NM_EAGAIN : nm_ofi_err(o, "fi_inject", (int)rc);
  }
  struct nm_ofi_op_s *op = nm_ofi_op_get(o, NM_OFI_SEND, ctx);
  if (!op)
    return -NM_ENOMEM;
  void *desc;
  int err = nm_ofi_reg(o, op, buf, len, FI_SEND, &desc);
  if (err) {
    nm_ofi_op_put(o, op);
    return err;
  }
  if (o->receipts)
    rc = fi_senddata(o->ep, buf, len, desc, nm_ofi_receipt_track(o, op, peer), o->peers[peer], &op->fctx);
  else
    rc = fi_send(o->ep, buf, len, desc, o->peers[peer], &op->fctx);
  if (rc) {
    nm_ofi_receipt_untrack(o, op);
    nm_ofi_op_put(o, op);
    return rc == -FI_EAGAIN ? -NM_EAGAIN : nm_ofi_err(o, "fi_send", (int)rc);
  }
  return 0;
}

static int nm_ofi_large_post(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag,
                             void *ctx, int is_send)
{
  struct nm_ofi_s *o = drv->priv;
  if (peer >= o->n_peers || len > drv->props.max_large)
    return -NM_EINVAL;
  struct nm_ofi_op_s *op = nm_ofi_op_get(o, is_send ? NM_OFI_LSEND : NM_OFI_LRECV, ctx);
  if (!op)
    return -NM_ENOMEM;
  op->len = len;
  op->peer = peer;
  void *desc;
  int err = nm_ofi_reg(o, op, buf, len, is_send ? FI_SEND : FI_RECV, &desc);
  uint64_t receipt = !err && is_send && o->receipts ? nm_ofi_receipt_track(o, op, peer) : 0;
  ssize_t rc = 0;
  if (!err) {
    if (receipt)
      rc = fi_tsenddata(o->ep, buf, len, desc, receipt, o->peers[peer], rtag, &op->fctx);
    else
      rc = is_send ? fi_tsend(o->ep, buf, len, desc, o->peers[peer], rtag, &op->fctx)
                   : fi_trecv(o->ep, buf, len, desc, o->peers[peer], rtag, 0, &op->fctx);
  }
  /* A full queue drains only through progress, which must not run from here (the core is inside a packet's
   * handler): the core posts again at its next progress pass. */
  if (!err && rc == -FI_EAGAIN)
    err = -NM_EAGAIN;
  else if (!err && rc)
    err = nm_ofi_err(o, is_send ? "fi_tsend" : "fi_trecv", (int)rc);
  if (err) {
    nm_ofi_receipt_untrack(o, op);
    nm_ofi_op_put(o, op);
    return err;
  }
  if (!is_send) {
    op->prev = NULL;
    op->next = o->lrecvs;
    if (o->lrecvs)
      o->lrecvs->prev = op;
    o->lrecvs = op;
  }
  return NM_ESUCCESS;
}

static int nm_ofi_large_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, uint64_t rtag,
                             void *ctx)
{
  return nm_ofi_large_post(drv, peer, (void *)buf, len, rtag, ctx, 1);
}

static int nm_ofi_large_recv(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx)
{
  return nm_ofi_large_post(drv, peer, buf, len, rtag, ctx, 0);
}

static void nm_ofi_lrecv_unlink(struct nm_ofi_s *o, struct nm_ofi_op_s *op)
{
  if (op->prev)
    op->prev->next = op->next;
  else
    o->lrecvs = op->next;
  if (op->next)
    op->next->prev = op->prev;
}

static int nm_ofi_large_cancel(struct nm_drv_s *drv, void *ctx)
{
  struct nm_ofi_s *o = drv->priv;
  for (struct nm_ofi_op_s *op = o->lrecvs; op; op = op->next)
    if (op->ctx == ctx) {
      /* The cancelled op completes through the CQ with FI_ECANCELED. */
      int rc = (int)fi_cancel(&o->ep->fid, &op->fctx);
      return rc ? nm_ofi_err(o, "fi_cancel", rc) : NM_ESUCCESS;
    }
  return -NM_ENOTFOUND;
}

/* A completion of @p op; @p src: the sender's AV index (UINT64_MAX: unknown); @p receipt: the remote CQ data of a
 * message whose sender asked for a receipt (0: none). */
static void nm_ofi_complete(struct nm_drv_s *drv, struct nm_ofi_op_s *op, int err, size_t len, uint64_t src,
                            uint64_t receipt)
{
  struct nm_ofi_s *o = drv->priv;
  if ((op->kind == NM_OFI_SEND || op->kind == NM_OFI_LSEND) && nm_ofi_receipt_completed(o, op)) {
    nm_ofi_op_put(o, op); /* its receipt completed it in the core already */
    return;
  }
  switch (op->kind) {
  case NM_OFI_RECV:
    if (!err && !nm_ofi_receipt_handle(drv, op->buf, len, src))
      drv->up.packet(drv->up.ref, drv, op->buf, len, o->auth_source ? src : UINT64_MAX);
    if (!err && receipt)
      nm_ofi_receipt_send(o, src, receipt);
    /* Re-posting costs a provider call: do it at the next pass, off the path of the reply the application
     * is probably about to send. NM_OFI_NRECV buffers leave ample room meanwhile. */
    o->repost[o->n_repost++] = op;
    break;
  case NM_OFI_SEND: {
    void *ctx = op->ctx;
    nm_ofi_op_put(o, op);
    drv->up.send_done(drv->up.ref, ctx, err);
    break;
  }
  default: {
    void *ctx = op->ctx;
    if (op->kind == NM_OFI_LRECV) {
      nm_ofi_lrecv_unlink(o, op);
      if (!err && receipt)
        nm_ofi_receipt_send(o, op->peer, receipt);
    }
    size_t n = err ? 0 : (op->kind == NM_OFI_LRECV ? len : op->len);
    nm_ofi_op_put(o, op);
    drv->up.large_done(drv->up.ref, ctx, err, n);
    break;
  }
  }
}

/* The sender's peer index for the core: the AV index with FI_AV_TABLE, or UINT64_MAX (unknown: FI_ADDR_NOTAVAIL,
 * a sender outside the AV, whose packet the core then drops and counts). */
static uint64_t nm_ofi_source(const struct nm_ofi_s *o, fi_addr_t src)
{
  return src < o->n_peers ? (uint64_t)src : UINT64_MAX;
}

/* fi_cq_readfrom only where the source is used: it costs providers an address lookup per completion. */
static ssize_t nm_ofi_cq_read(struct nm_ofi_s *o, struct fi_cq_tagged_entry *e, fi_addr_t *src)
{
  if (o->read_source)
    return fi_cq_readfrom(o->cq, e, NM_OFI_CQ_BATCH, src);
  return fi_cq_read(o->cq, e, NM_OFI_CQ_BATCH);
}

static int nm_ofi_progress(struct nm_drv_s *drv)
{
  struct nm_ofi_s *o = drv->priv;
  struct fi_cq_tagged_entry e[NM_OFI_CQ_BATCH];
  fi_addr_t src[NM_OFI_CQ_BATCH];
  int n = 0;
  while (o->n_repost)
    nm_ofi_post_recv(o, o->repost[--o->n_repost]);
  if (o->n_receipt_queue)
    nm_ofi_receipt_flush(o);
  for (;;) {
    ssize_t rc = nm_ofi_cq_read(o, e, src);
    if (rc > 0) {
      for (ssize_t i = 0; i < rc; i++)
        nm_ofi_complete(drv, e[i].op_context, 0, e[i].len, o->read_source ? nm_ofi_source(o, src[i]) : UINT64_MAX,
                        o->receipts && (e[i].flags & FI_REMOTE_CQ_DATA) ? e[i].data : 0);
      n += (int)rc;
      if (rc < NM_OFI_CQ_BATCH)
        break;
    } else if (rc == -FI_EAVAIL) {
      struct fi_cq_err_entry err = {0};
      if (fi_cq_readerr(o->cq, &err, 0) > 0 && err.op_context) {
        int code = err.err == FI_ECANCELED ? -NM_ECANCELED : -NM_EDRIVER;
        nm_ofi_complete(drv, err.op_context, code, err.len, UINT64_MAX, 0);
        n++;
      }
    } else {
      break;
    }
  }
  return n;
}

static int nm_ofi_wait_fd(struct nm_drv_s *drv)
{
  return ((struct nm_ofi_s *)drv->priv)->wait_fd;
}

static int nm_ofi_trywait(struct nm_drv_s *drv)
{
  struct nm_ofi_s *o = drv->priv;
  if (o->wait_fd < 0)
    return NM_ESUCCESS;
  struct fid *fids[1] = {&o->cq->fid};
  return fi_trywait(o->fabric, fids, 1) == 0 ? NM_ESUCCESS : -NM_EAGAIN;
}

/* Nothing of ours in flight: a progress call (a system call with tcp) could only find an arrival. */
static int nm_ofi_idle(struct nm_drv_s *drv)
{
  const struct nm_ofi_s *o = drv->priv;
  return o->n_ops == 0 && o->n_repost == 0 && o->n_receipt_queue == 0;
}

const struct nm_drv_ops_s nm_drv_ofi_ops = {
  .name = "ofi",
  .open = nm_ofi_open,
  .close = nm_ofi_close,
  .get_address = nm_ofi_get_address,
  .connect = nm_ofi_connect,
  .send = nm_ofi_send,
  .large_send = nm_ofi_large_send,
  .large_recv = nm_ofi_large_recv,
  .large_cancel = nm_ofi_large_cancel,
  .progress = nm_ofi_progress,
  .idle = nm_ofi_idle,
  .wait_fd = nm_ofi_wait_fd,
  .trywait = nm_ofi_trywait,
};
