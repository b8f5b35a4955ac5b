/* Fake driver for unit tests (see fake_driver.h). */
#include "fake_driver.h"
#include <stdlib.h>
#include <string.h>

static int fake_open(struct nm_drv_s *drv, const char *word, int all_local)
{
  struct fake_drv_s *f = calloc(1, sizeof(*f));
  f->pkts = calloc(FAKE_MAX_PKTS, sizeof(*f->pkts));
  f->inject = 1;
  drv->priv = f;
  drv->props.max_packet = 65536;
  drv->props.max_large = UINT64_MAX;
  drv->props.flags = NM_DRV_F_PACED; /* a NIC: its peers share one queue (tests may clear it) */
  strcpy(drv->props.provider, "fake");
  return 0;
}

static void fake_close(struct nm_drv_s *drv)
{
  struct fake_drv_s *f = drv->priv;
  for (int i = 0; i < FAKE_MAX_PKTS; i++)
    free(f->pkts[i].buf);
  free(f->pkts);
  free(f);
}

static int fake_get_address(struct nm_drv_s *drv, void *addr, size_t *len) { *len = 0; return 0; }
static int fake_connect(struct nm_drv_s *drv, uint64_t i, const void *a, size_t l) { return 0; }

static int fake_sendv(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len,
                      void *ctx)
{
  struct fake_drv_s *f = drv->priv;
  size_t sum = 0;
  for (int i = 0; i < iovcnt; i++)
    sum += iov[i].iov_len;
  if (sum != len || len > drv->props.max_packet)
    return -NM_EINVAL;
  if (f->n_pkts == FAKE_MAX_PKTS || f->refuse)
    return -NM_EAGAIN;
  struct fake_pkt_s *p = &f->pkts[f->n_pkts];
  if (!p->buf && !(p->buf = malloc(drv->props.max_packet)))
    return -NM_ENOMEM;
  f->n_pkts++;
  p->peer = peer;
  p->len = 0;
  p->pieces = iovcnt;
  for (int i = 0; i < iovcnt; i++) {
    memcpy(p->buf + p->len, iov[i].iov_base, iov[i].iov_len);
    p->len += iov[i].iov_len;
  }
  if (f->inject)
    return 1;
  f->inflight[f->n_inflight++] = ctx;
  return 0;
}

static int fake_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx)
{
  const struct iovec one = {(void *)buf, len};
  return fake_sendv(drv, peer, &one, 1, len, ctx);
}

static int fake_large(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx, int s)
{
  struct fake_drv_s *f = drv->priv;
  if (f->n_large == FAKE_MAX_LARGE)
    return -NM_ENOMEM;
  f->large[f->n_large++] = (struct fake_large_s){s, peer, rtag, buf, len, ctx};
  return 0;
}

static int fake_large_send(struct nm_drv_s *d, uint64_t p, const void *b, size_t l, uint64_t t, void *c)
{
  return fake_large(d, p, (void *)b, l, t, c, 1);
}

static int fake_large_recv(struct nm_drv_s *d, uint64_t p, void *b, size_t l, uint64_t t, void *c)
{
  return fake_large(d, p, b, l, t, c, 0);
}

static int fake_large_cancel(struct nm_drv_s *drv, void *ctx)
{
  ((struct fake_drv_s *)drv->priv)->cancelled++;
  return 0;
}

static int fake_progress(struct nm_drv_s *drv)
{
  struct fake_drv_s *f = drv->priv;
  if (!f->arrive_after || --f->arrive_after)
    return 0;
  drv->up.packet(drv->up.ref, drv, f->arriving, f->arriving_len, f->arriving_src);
  return 1;
}
static int fake_wait_fd(struct nm_drv_s *drv) { return NM_DRV_NO_EVENTS; }
static int fake_trywait(struct nm_drv_s *drv) { return 0; }

const struct nm_drv_ops_s fake_drv_ops = {
  .name = "fake", .open = fake_open, .close = fake_close, .get_address = fake_get_address,
  .connect = fake_connect, .send = fake_send, .large_send = fake_large_send, .large_recv = fake_large_recv,
  .large_cancel = fake_large_cancel, .progress = fake_progress, .wait_fd = fake_wait_fd, .trywait = fake_trywait,
};

const struct nm_drv_ops_s fake_drv_gather_ops = {
  .name = "fake", .open = fake_open, .close = fake_close, .get_address = fake_get_address,
  .connect = fake_connect, .send = fake_send, .sendv = fake_sendv, .large_send = fake_large_send,
  .large_recv = fake_large_recv, .large_cancel = fake_large_cancel, .progress = fake_progress,
  .wait_fd = fake_wait_fd, .trywait = fake_trywait,
};

nm_core_t fake_core_new(int size, const char *strategy, size_t rdv_threshold, struct fake_drv_s **fake)
{
  return fake_core_new_rank(0, size, strategy, rdv_threshold, fake);
}

nm_core_t fake_core_new_rank(int rank, int size, const char *strategy, size_t rdv_threshold,
                             struct fake_drv_s **fake)
{
  nm_core_t core;
  struct nm_drv_s *drv, *self;
  if (nm_core_create(rank, size, &core))
    return NULL;
  nm_core_add_driver(core, &fake_drv_ops, "fake", 1, &drv);
  nm_core_add_driver(core, &nm_drv_self_ops, "self", 1, &self);
  self->ops->connect(self, (uint64_t)rank, NULL, 0);
  core->cfg.strategy = nm_strategy_lookup(strategy);
  core->cfg.rdv_threshold = rdv_threshold;
  core->cfg.spin_ns = 0;
  core->cfg.yield_ns = 0;
  *fake = drv->priv;
  return core;
}

void fake_core_free(nm_core_t core)
{
  nm_core_destroy(core);
}

void fake_complete_sends(nm_core_t core, struct fake_drv_s *f)
{
  int n = f->n_inflight;
  f->n_inflight = 0;
  for (int i = 0; i < n; i++)
    nm_core_send_done(core, f->inflight[i], 0);
}

size_t fake_data_packet(uint8_t *buf, uint32_t src, uint32_t session, nm_tag_t tag, uint32_t seq, const void *data,
                        uint32_t len)
{
  size_t off = NM_WIRE_PKT_HDR_LEN;
  off += nm_wire_put_data_hdr(buf + off, session, tag, seq, len, 0, 0, 0);
  memcpy(buf + off, data, len);
  off += len;
  nm_wire_put_pkt_hdr(buf, 1, src, (uint32_t)off);
  return off;
}
