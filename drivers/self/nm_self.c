/* Driver "self": messages to one's own rank, without the network. Packets are handed over by pointer (the
 * sender's packet buffer stays valid until send_done); large transfers are one memcpy once both sides are
 * posted. Completions are deferred to progress so the core is never re-entered from a post call. */
#include "drivers/nm_driver.h"
#include <nmad/nm_errno.h>
#include <stdlib.h>
#include <string.h>

#define NM_SELF_RING 1024

struct nm_self_pkt_s {
  const void *buf;
  size_t len;
  void *ctx;
};

struct nm_self_large_s {
  struct nm_self_large_s *next;
  void *buf;
  size_t len;
  uint64_t rtag;
  void *ctx;
  int err;
};

struct nm_self_s {
  struct nm_self_pkt_s ring[NM_SELF_RING];
  unsigned head, count;
  uint64_t me;                    /* our peer index, for the src hint */
  struct nm_self_large_s *sends;  /* large sends waiting for their receive */
  struct nm_self_large_s *recvs;  /* large receives waiting for their send */
  struct nm_self_large_s *done;   /* completions to report at the next progress */
  unsigned queued;                /* count + (done != NULL): the core skips our progress while 0 (drv->queued) */
};

/* Keep queued in step with count and done, after each change of either. */
static void nm_self_requeue(struct nm_self_s *s) { s->queued = s->count + (s->done != NULL); }

static int nm_self_open(struct nm_drv_s *drv, const char *provider, int all_local)
{
  struct nm_self_s *s = calloc(1, sizeof(*s));
  if (!s)
    return -NM_ENOMEM;
  drv->priv = s;
  drv->queued = &s->queued;
  drv->props.max_packet = 128 * 1024; /* not below sm's: the smallest driver caps every packet of the core */
  drv->props.inject_size = 0;
  drv->props.max_large = UINT64_MAX;
  drv->props.latency_ns = 50;
  drv->props.bandwidth_MBps = 10000;
  strcpy(drv->props.provider, "self");
  return NM_ESUCCESS;
}

static void nm_self_free_list(struct nm_self_large_s *l)
{
  while (l) {
    struct nm_self_large_s *n = l->next;
    free(l);
    l = n;
  }
}

static void nm_self_close(struct nm_drv_s *drv)
{
  struct nm_self_s *s = drv->priv;
  nm_self_free_list(s->sends);
  nm_self_free_list(s->recvs);
  nm_self_free_list(s->done);
  free(s);
}

static int nm_self_get_address(struct nm_drv_s *drv, void *addr, size_t *len)
{
  *len = 0;
  return NM_ESUCCESS;
}

static int nm_self_connect(struct nm_drv_s *drv, uint64_t index, const void *addr, size_t len)
{
  ((struct nm_self_s *)drv->priv)->me = index;
  return NM_ESUCCESS;
}

static int nm_self_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx)
{
  struct nm_self_s *s = drv->priv;
  if (s->count == NM_SELF_RING)
    return -NM_EAGAIN;
  s->ring[(s->head + s->count) % NM_SELF_RING] = (struct nm_self_pkt_s){buf, len, ctx};
  s->count++;
  nm_self_requeue(s);
  return 0;
}

static void nm_self_push_done(struct nm_self_s *s, struct nm_self_large_s *l)
{
  struct nm_self_large_s **pp = &s->done;
  while (*pp)
    pp = &(*pp)->next;
  l->next = NULL;
  *pp = l;
  nm_self_requeue(s);
}

/* Find and unlink the entry with rtag in list *pp. */
static struct nm_self_large_s *nm_self_take(struct nm_self_large_s **pp, uint64_t rtag)
{
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->rtag == rtag) {
      struct nm_self_large_s *l = *pp;
      *pp = l->next;
      return l;
    }
  return NULL;
}

static int nm_self_large_post(struct nm_drv_s *drv, void *buf, size_t len, uint64_t rtag, void *ctx, int is_send)
{
  struct nm_self_s *s = drv->priv;
  struct nm_self_large_s *me = calloc(1, sizeof(*me));
  if (!me)
    return -NM_ENOMEM;
  *me = (struct nm_self_large_s){NULL, buf, len, rtag, ctx, 0};
  struct nm_self_large_s *other = nm_self_take(is_send ? &s->recvs : &s->sends, rtag);
  if (!other) {
    me->next = is_send ? s->sends : s->recvs;
    if (is_send)
      s->sends = me;
    else
      s->recvs = me;
    return NM_ESUCCESS;
  }
  struct nm_self_large_s *snd = is_send ? me : other, *rcv = is_send ? other : me;
  size_t n = snd->len < rcv->len ? snd->len : rcv->len;
  memcpy(rcv->buf, snd->buf, n);
  snd->len = rcv->len = n;
  nm_self_push_done(s, snd);
  nm_self_push_done(s, rcv);
  return NM_ESUCCESS;
}

static int nm_self_large_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, uint64_t rtag,
                              void *ctx)
{
  return nm_self_large_post(drv, (void *)buf, len, rtag, ctx, 1);
}

static int nm_self_large_recv(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx)
{
  return nm_self_large_post(drv, buf, len, rtag, ctx, 0);
}

static int nm_self_large_cancel(struct nm_drv_s *drv, void *ctx)
{
  struct nm_self_s *s = drv->priv;
  for (struct nm_self_large_s **pp = &s->recvs; *pp; pp = &(*pp)->next)
    if ((*pp)->ctx == ctx) {
      struct nm_self_large_s *l = *pp;
      *pp = l->next;
      l->err = -NM_ECANCELED;
      nm_self_push_done(s, l);
      return NM_ESUCCESS;
    }
  return -NM_ENOTFOUND;
}

static int nm_self_progress(struct nm_drv_s *drv)
{
  struct nm_self_s *s = drv->priv;
  int n = 0;
  /* Only what is queued now: packets queued by the upcalls wait for the next pass. */
  for (unsigned todo = s->count; todo > 0; todo--, n++) {
    struct nm_self_pkt_s p = s->ring[s->head];
    s->head = (s->head + 1) % NM_SELF_RING;
    s->count--;
    nm_self_requeue(s);
    drv->up.packet(drv->up.ref, drv, p.buf, p.len, s->me);
    drv->up.send_done(drv->up.ref, p.ctx, 0);
  }
  struct nm_self_large_s *done = s->done;
  s->done = NULL;
  nm_self_requeue(s);
  while (done) {
    struct nm_self_large_s *next = done->next;
    drv->up.large_done(drv->up.ref, done->ctx, done->err, done->len);
    free(done);
    done = next;
    n++;
  }
  return n;
}

static int nm_self_wait_fd(struct nm_drv_s *drv)
{
  return NM_DRV_NO_EVENTS;
}

static int nm_self_trywait(struct nm_drv_s *drv)
{
  struct nm_self_s *s = drv->priv;
  return (s->count || s->done) ? -NM_EAGAIN : 0;
}

const struct nm_drv_ops_s nm_drv_self_ops = {
  .name = "self",
  .open = nm_self_open,
  .close = nm_self_close,
  .get_address = nm_self_get_address,
  .connect = nm_self_connect,
  .send = nm_self_send,
  .large_send = nm_self_large_send,
  .large_recv = nm_self_large_recv,
  .large_cancel = nm_self_large_cancel,
  .progress = nm_self_progress,
  .wait_fd = nm_self_wait_fd,
  .trywait = nm_self_trywait,
};
