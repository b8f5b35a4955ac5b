/* Driver "ntcp": nmad's own TCP transport (NMAD_DRIVER=ntcp), over plain sockets.
 *
 * Why a driver of our own next to libfabric's tcp;ofi_rxm: an urgent 8 B message sent while 64 MiB of bulk is
 * moving to the same peer waited 18-27x its idle latency over libfabric (doc/performance.md, issue 15). The bulk
 * is written into the provider's queue and the kernel a whole rendezvous chunk at a time, and the provider's
 * progress moves all of it before the next packet can go; smaller chunks shorten the wait but lose a third of the
 * bandwidth. Here nmad writes the stream itself: a large transfer goes in DATA frames of NM_TCP_SLICE bytes, one
 * frame per connection and progress pass, and a packet goes before the next frame. So what a packet finds ahead of
 * it is the bulk written in the passes before it that the receiver has not read yet, and a pass that reads a whole
 * packet returns at once, so that the core answers it (a ping, an RTR) before more bulk is read.
 * - Connections: the first of two ranks to send connects (on first use, DESIGN.md rule 8); the other accepts it and
 *   writes back on it, so that a reply carries the acknowledgement of what it answers. Two ranks that both send
 *   before reading the other's HELLO each write on the connection they made; both are read.
 * - Packets are copied into a queue at send() and complete at once (inject); large sends complete when their last
 *   byte is written, large receives when their last byte is read, straight into the posted buffer.
 * - Waiting: an epoll fd over every socket (the core polls it when idle); while anything is left to write,
 *   trywait asks the core to keep progressing instead.
 * Wire format and state: nm_tcp_private.h; doc/architecture.md, "The ntcp driver". */
#define _GNU_SOURCE
#include "drivers/tcp/nm_tcp_private.h"
#include "nmad/core/nm_le.h"
#include <nmad/nm_errno.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static void nm_tcp_close(struct nm_drv_s *drv);

/* The address to listen on: loopback when every rank is on this host; else the interface NMAD_TCP_IFACE names,
 * or the first IPv4 interface that is up and not loopback. @return 0, or -NM_ENOTSUP (message printed). */
static int nm_tcp_local_ip(int all_local, uint32_t *ip)
{
  const char *want = getenv("NMAD_TCP_IFACE");
  if (all_local && !(want && *want)) {
    *ip = htonl(INADDR_LOOPBACK);
    return NM_ESUCCESS;
  }
  struct ifaddrs *ifs = NULL;
  if (getifaddrs(&ifs) != 0) {
    fprintf(stderr, "nmad: ntcp: getifaddrs: %s\n", strerror(errno));
    return -NM_ENOTSUP;
  }
  int found = 0;
  for (struct ifaddrs *a = ifs; a && !found; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP))
      continue;
    if (want && *want ? strcmp(a->ifa_name, want) != 0 : (a->ifa_flags & IFF_LOOPBACK) != 0)
      continue;
    *ip = ((const struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
    found = 1;
  }
  freeifaddrs(ifs);
  if (!found) {
    fprintf(stderr, "nmad: ntcp: no IPv4 interface %s%s\n", want && *want ? "named " : "up besides loopback",
            want && *want ? want : "");
    return -NM_ENOTSUP;
  }
  return NM_ESUCCESS;
}

static int nm_tcp_open(struct nm_drv_s *drv, const char *word, int all_local)
{
  (void)word;
  struct nm_tcp_s *t = calloc(1, sizeof(*t));
  if (!t)
    return -NM_ENOMEM;
  drv->priv = t;
  t->self_index = -1;
  t->listen_fd = -1;
  t->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  uint32_t ip = 0;
  int err = nm_tcp_local_ip(all_local, &ip);
  if (err) {
    nm_tcp_close(drv);
    return err;
  }
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip, .sin_port = 0};
  socklen_t sl = sizeof(sa);
  t->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (t->epoll_fd < 0 || t->listen_fd < 0 || bind(t->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      listen(t->listen_fd, SOMAXCONN) != 0 || getsockname(t->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
    fprintf(stderr, "nmad: ntcp: cannot listen: %s\n", strerror(errno));
    nm_tcp_close(drv);
    return -NM_ENOTSUP;
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
  epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, t->listen_fd, &ev);
  t->self = (struct nm_tcp_addr_s){.magic = NM_TCP_MAGIC, .nonce = nm_drv_nonce(), .ip = ip, .port = sa.sin_port};
  drv->props.max_packet = NM_TCP_MAX_PACKET;
  drv->props.inject_size = NM_TCP_MAX_PACKET; /* every packet is copied into the peer's queue: done at post */
  drv->props.urgent_max = NM_TCP_MAX_PACKET; /* send_urgent: any packet may pass the queue */
  drv->props.max_large = (uint64_t)1 << 40;
  drv->props.flags |= NM_DRV_F_AUTH_SOURCE; /* a connection's sender is the rank its HELLO proved */
  /* Nominal figures over loopback on the project's machine (doc/performance.md, "ntcp: one connection for both
   * directions" and "ntcp: long frames while no urgent traffic"): 8 B ping-pong 4.7-5.0 us one way since replies
   * share the request's connection (8-10 before), 3.6-4.7 GB/s at 1-16 MiB since long frames (2.2-3.2 before);
   * the sender's share of a message is its sendmsg(). */
  nm_drv_set_nominal(&drv->props, 5000, 2000, 3800, "ntcp");
  return NM_ESUCCESS;
}

static void nm_tcp_free_large(struct nm_tcp_large_s *l)
{
  while (l) {
    struct nm_tcp_large_s *next = l->next;
    free(l);
    l = next;
  }
}

/* A connection over socket @p fd. @return it, or NULL (out of memory; @p fd is left open). */
static struct nm_tcp_conn_s *nm_tcp_conn_new(int fd)
{
  struct nm_tcp_conn_s *c = calloc(1, sizeof(*c));
  if (c)
    c->fd = fd;
  return c;
}

/* Close and free *@p c (closing its socket also takes it out of the epoll set). */
static void nm_tcp_conn_free(struct nm_tcp_conn_s **c)
{
  if (!*c)
    return;
  close((*c)->fd);
  free((*c)->in_pkt);
  free(*c);
  *c = NULL;
}

/* The socket we write to peer @p p on, or -1. */
static int nm_tcp_wfd(const struct nm_tcp_peer_s *p)
{
  return p->wc >= 0 && p->conn[p->wc] ? p->conn[p->wc]->fd : -1;
}

/* The epoll data of peer @p i's connection @p c. */
static uint64_t nm_tcp_ev_data(uint64_t i, int c)
{
  return c == NM_TCP_OUT ? i | NM_TCP_OUT_EV : i;
}

static void nm_tcp_close(struct nm_drv_s *drv)
{
  struct nm_tcp_s *t = drv->priv;
  if (!t)
    return;
  for (size_t i = 0; i < t->n_peers; i++) {
    struct nm_tcp_peer_s *p = &t->peers[i];
    nm_tcp_conn_free(&p->conn[NM_TCP_OUT]);
    nm_tcp_conn_free(&p->conn[NM_TCP_IN]);
    while (p->pk_head) {
      struct nm_tcp_out_s *o = p->pk_head;
      p->pk_head = o->next;
      free(o);
    }
    nm_tcp_free_large(p->ls_head);
  }
  while (t->pending) {
    struct nm_tcp_pending_s *q = t->pending;
    t->pending = q->next;
    close(q->fd);
    free(q);
  }
  nm_tcp_free_large(t->lrecvs);
  nm_tcp_free_large(t->done);
  free(t->peers);
  if (t->listen_fd >= 0)
    close(t->listen_fd);
  if (t->epoll_fd >= 0)
    close(t->epoll_fd);
  free(t);
  drv->priv = NULL;
}

static int nm_tcp_get_address(struct nm_drv_s *drv, void *addr, size_t *len)
{
  struct nm_tcp_s *t = drv->priv;
  return nm_drv_copy_address(&t->self, sizeof(t->self), addr, len);
}

static int nm_tcp_connect(struct nm_drv_s *drv, uint64_t index, const void *addr, size_t len)
{
  struct nm_tcp_s *t = drv->priv;
  if (len != sizeof(struct nm_tcp_addr_s))
    return -NM_EINVAL;
  int err = nm_drv_peer_slot((void **)&t->peers, &t->cap_peers, t->n_peers, sizeof(*t->peers), index);
  if (err)
    return err;
  struct nm_tcp_peer_s *p = &t->peers[t->n_peers];
  memcpy(&p->addr, addr, sizeof(p->addr));
  p->conn[NM_TCP_OUT] = p->conn[NM_TCP_IN] = NULL;
  p->wc = -1;
  if (p->addr.magic != NM_TCP_MAGIC)
    return -NM_EINVAL;
  if (memcmp(&p->addr, &t->self, sizeof(t->self)) == 0)
    t->self_index = (int)index;
  t->n_peers++;
  return NM_ESUCCESS;
}

/* ---- failures ---- */

static void nm_tcp_fail_list(struct nm_tcp_s *t, struct nm_tcp_large_s **list, uint64_t peer)
{
  for (struct nm_tcp_large_s **pp = list; *pp;) {
    struct nm_tcp_large_s *l = *pp;
    if (l->peer != peer) {
      pp = &l->next;
      continue;
    }
    *pp = l->next;
    l->err = -NM_ECLOSED;
    l->next = t->done;
    t->done = l;
  }
}

/* Peer @p i is gone, or sent a frame we refuse: close both connections and fail everything with it. */
static void nm_tcp_peer_dead(struct nm_tcp_s *t, uint64_t i, const char *why)
{
  struct nm_tcp_peer_s *p = &t->peers[i];
  if (p->dead)
    return;
  if (why)
    fprintf(stderr, "nmad: ntcp: rank %llu: %s; its connections are closed\n", (unsigned long long)i, why);
  p->dead = 1;
  nm_tcp_conn_free(&p->conn[NM_TCP_OUT]);
  nm_tcp_conn_free(&p->conn[NM_TCP_IN]);
  p->wc = -1;
  p->out_watch = 0;
  while (p->pk_head) {
    struct nm_tcp_out_s *o = p->pk_head;
    p->pk_head = o->next;
    free(o);
  }
  p->pk_tail = p->pk_urgent = NULL;
  p->pk_bytes = 0;
  p->in_slice = 0;
  nm_tcp_fail_list(t, &p->ls_head, i);
  p->ls_tail = NULL;
  nm_tcp_fail_list(t, &t->lrecvs, i);
}

/* ---- sending ---- */

static void nm_tcp_put_hdr(uint8_t *h, uint32_t kind, uint32_t len, uint64_t tag)
{
  nm_put32(h, kind);
  nm_put32(h + 4, len);
  nm_put64(h + 8, tag);
}

/* A frame whose body of @p len bytes is gathered from @p iovcnt pieces. */
static struct nm_tcp_out_s *nm_tcp_frame_v(uint32_t kind, uint64_t tag, const struct iovec *iov, int iovcnt,
                                           size_t len)
{
  struct nm_tcp_out_s *o = malloc(sizeof(*o) + NM_TCP_HDR + len);
  if (!o)
    return NULL;
  o->next = NULL;
  o->len = NM_TCP_HDR + len;
  o->off = 0;
  nm_tcp_put_hdr(o->bytes, kind, (uint32_t)len, tag);
  size_t at = NM_TCP_HDR;
  for (int i = 0; i < iovcnt; i++) {
    if (iov[i].iov_len)
      memcpy(o->bytes + at, iov[i].iov_base, iov[i].iov_len);
    at += iov[i].iov_len;
  }
  return o;
}

static struct nm_tcp_out_s *nm_tcp_frame(uint32_t kind, uint64_t tag, const void *body, size_t len)
{
  const struct iovec one = {(void *)body, len};
  return nm_tcp_frame_v(kind, tag, &one, 1, len);
}

static void nm_tcp_queue(struct nm_tcp_peer_s *p, struct nm_tcp_out_s *o, int first)
{
  if (first) {
    o->next = p->pk_head;
    p->pk_head = o;
    if (!p->pk_tail)
      p->pk_tail = o;
  } else {
    if (p->pk_tail)
      p->pk_tail->next = o;
    else
      p->pk_head = o;
    p->pk_tail = o;
  }
  p->pk_bytes += o->len;
}

/* The connection we write to peer @p i on, chosen at the first write: the one the peer made if its HELLO came
 * already, else one we make now (blocking connect: the peer listens from its open on). When both ranks connected
 * (each sent before reading the other's HELLO), the pair settles on the connection of the lower rank: the higher
 * one moves its writes there once nothing of its own is under way on its connection (no packet queued, no large
 * send: a transfer's DATA frames carry no offset and stay on one connection; packets need no order, the core's
 * sequence numbers restore it). The connection it leaves stays open and read: closing it would read as its death.
 * @return 0, or -NM_ECLOSED. */
static int nm_tcp_out_conn(struct nm_tcp_s *t, uint64_t i)
{
  struct nm_tcp_peer_s *p = &t->peers[i];
  if (p->dead)
    return -NM_ECLOSED;
  if (p->wc == NM_TCP_OUT && p->conn[NM_TCP_IN] && t->self_index > (int)i && !p->pk_head && !p->ls_head &&
      !p->in_slice) {
    if (p->out_watch) {
      struct epoll_event oe = {.events = EPOLLIN, .data.u64 = nm_tcp_ev_data(i, NM_TCP_OUT)};
      epoll_ctl(t->epoll_fd, EPOLL_CTL_MOD, p->conn[NM_TCP_OUT]->fd, &oe);
      p->out_watch = 0;
    }
    p->wc = NM_TCP_IN;
  }
  if (p->wc >= 0)
    return NM_ESUCCESS;
  if (p->conn[NM_TCP_IN]) {
    p->wc = NM_TCP_IN;
    return NM_ESUCCESS;
  }
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = p->addr.ip, .sin_port = p->addr.port};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  if (fd >= 0)
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  uint8_t nonce[8];
  nm_put64(nonce, p->addr.nonce);
  struct nm_tcp_out_s *hello = nm_tcp_frame(NM_TCP_HELLO, (uint64_t)t->self_index, nonce, sizeof(nonce));
  struct nm_tcp_conn_s *c = NULL;
  if (fd < 0 || !hello || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 || !(c = nm_tcp_conn_new(fd))) {
    char why[96];
    snprintf(why, sizeof(why), "cannot connect: %s", strerror(errno));
    if (fd >= 0)
      close(fd);
    free(hello);
    nm_tcp_peer_dead(t, i, why);
    return -NM_ECLOSED;
  }
  p->conn[NM_TCP_OUT] = c;
  p->wc = NM_TCP_OUT;
  /* in the epoll set for what the peer writes back, its errors and hang-ups (a peer gone while we only write to
   * it), and for EPOLLOUT while something waits to be written (nm_tcp_trywait()) */
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = nm_tcp_ev_data(i, NM_TCP_OUT)};
  epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  nm_tcp_queue(p, hello, 1);
  return NM_ESUCCESS;
}

/* Whether this rank sent no urgent packet lately (send_urgent stamps t->urgent_ns). */
static int nm_tcp_calm(const struct nm_tcp_s *t)
{
  return !t->urgent_ns || nm_drv_coarse_ns() - t->urgent_ns >= NM_TCP_URGENT_WINDOW_NS;
}

/* The longest DATA frame of a transfer of @p len bytes, and the DATA bytes written to one connection per pass:
 * NM_TCP_SLICE_MAX when the rank is @p calm and the transfer has at least NM_TCP_LONG_MIN bytes, else NM_TCP_SLICE,
 * so that the next urgent packet finds little bulk ahead of it. */
static size_t nm_tcp_slice(int calm, uint64_t len)
{
  return calm && len >= NM_TCP_LONG_MIN ? NM_TCP_SLICE_MAX : NM_TCP_SLICE;
}

/* Write what is queued for peer @p i: the DATA frame under way to its end, then packets, then the next DATA frame,
 * up to nm_tcp_slice() bytes of DATA. @return the number of transfers finished. */
static int nm_tcp_flush(struct nm_tcp_s *t, uint64_t i)
{
  struct nm_tcp_peer_s *p = &t->peers[i];
  const int calm = p->ls_head && nm_tcp_calm(t); /* the clock is read once a pass, and only with bulk to write */
  size_t budget = p->ls_head ? nm_tcp_slice(calm, p->ls_head->len) : NM_TCP_WRITE_BYTES;
  int n = 0;
  while (!p->dead && p->wc >= 0 && budget > 0) {
    struct iovec iov[2];
    int k = 0;
    struct nm_tcp_out_s *o = NULL;
    struct nm_tcp_large_s *l = p->ls_head;
    if (p->in_slice) {
      uint64_t body = p->slice_off > NM_TCP_HDR ? p->slice_off - NM_TCP_HDR : 0;
      if (p->slice_off < NM_TCP_HDR)
        iov[k++] = (struct iovec){p->slice_hdr + p->slice_off, NM_TCP_HDR - p->slice_off};
      size_t left = (size_t)(p->slice_len - body);
      iov[k++] = (struct iovec){l->buf + l->done + body, left < budget ? left : budget};
    } else if (p->pk_head) {
      o = p->pk_head;
      iov[k++] = (struct iovec){o->bytes + o->off, o->len - o->off};
    } else if (l) {
      const uint64_t slice = nm_tcp_slice(calm, l->len); /* each transfer its own: the head's may have ended */
      p->slice_len = l->len - l->done < slice ? l->len - l->done : slice;
      nm_tcp_put_hdr(p->slice_hdr, NM_TCP_DATA, (uint32_t)p->slice_len, l->rtag);
      p->slice_off = 0;
      p->in_slice = 1;
      continue;
    } else {
      break;
    }
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)k};
    ssize_t w = sendmsg(nm_tcp_wfd(p), &mh, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        break;
      nm_tcp_peer_dead(t, i, strerror(errno));
      break;
    }
    budget -= (size_t)w < budget ? (size_t)w : budget;
    if (o) {
      o->off += (size_t)w;
      if (o->off == o->len) {
        p->pk_head = o->next;
        if (!p->pk_head)
          p->pk_tail = NULL;
        if (p->pk_urgent == o)
          p->pk_urgent = NULL;
        p->pk_bytes -= o->len;
        free(o);
      }
      continue;
    }
    p->slice_off += (uint64_t)w;
    if (p->slice_off == NM_TCP_HDR + p->slice_len) {
      p->in_slice = 0;
      l->done += p->slice_len;
      if (l->done == l->len) {
        p->ls_head = l->next;
        if (!p->ls_head)
          p->ls_tail = NULL;
        l->next = t->done;
        t->done = l;
        n++;
      }
    }
  }
  return n;
}

static int nm_tcp_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx)
{
  (void)ctx; /* done at post: no send_done upcall */
  struct nm_tcp_s *t = drv->priv;
  if (peer >= t->n_peers || len > NM_TCP_MAX_PACKET || len == 0)
    return -NM_EINVAL;
  int err = nm_tcp_out_conn(t, peer);
  if (err)
    return err;
  struct nm_tcp_peer_s *p = &t->peers[peer];
  if (p->pk_bytes + len > NM_TCP_QUEUE_MAX) {
    nm_tcp_flush(t, peer);
    if (p->dead)
      return -NM_ECLOSED;
    if (p->pk_bytes && p->pk_bytes + len > NM_TCP_QUEUE_MAX) /* an empty queue takes any packet: a bound below
                                                                * max_packet must not refuse one for ever */
      return -NM_EAGAIN;
  }
  ssize_t w = 0;
  if (!p->pk_head && !p->in_slice) { /* nothing ahead of it: straight from the caller's buffer (the latency path) */
    uint8_t h[NM_TCP_HDR];
    nm_tcp_put_hdr(h, NM_TCP_PKT, (uint32_t)len, 0);
    struct iovec iov[2] = {{h, NM_TCP_HDR}, {(void *)buf, len}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    w = sendmsg(nm_tcp_wfd(p), &mh, MSG_NOSIGNAL);
    if (w == (ssize_t)(NM_TCP_HDR + len))
      return 1;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      nm_tcp_peer_dead(t, peer, strerror(errno));
      return -NM_ECLOSED;
    }
  }
  struct nm_tcp_out_s *o = nm_tcp_frame(NM_TCP_PKT, 0, buf, len); /* what the socket did not take: queued */
  if (!o && w > 0) { /* part of a frame is on the wire: the stream cannot go on */
    nm_tcp_peer_dead(t, peer, "out of memory in the middle of a frame");
    return -NM_ECLOSED;
  }
  if (!o)
    return -NM_ENOMEM;
  o->off = w > 0 ? (size_t)w : 0;
  nm_tcp_queue(p, o, 0);
  nm_tcp_flush(t, peer);
  return p->dead ? -NM_ECLOSED : 1;
}

/* An urgent packet (send_urgent in nm_driver.h): queued before every bulk packet not yet begun (after the HELLO, the
 * frame being written and the urgent packets queued before it, in their order), so that it waits for those and the
 * socket's buffer, not for the bulk packets queued behind them (up to NM_TCP_QUEUE_MAX). Nothing queued:
 * -NM_EAGAIN, and the core's send writes it straight. */
static int nm_tcp_send_urgent(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len,
                              void *ctx)
{
  (void)ctx;
  struct nm_tcp_s *t = drv->priv;
  if (peer >= t->n_peers || len > NM_TCP_MAX_PACKET || len == 0 || iovcnt < 1)
    return -NM_EINVAL;
  t->urgent_ns = nm_drv_coarse_ns(); /* DATA frames go short for a while (nm_tcp_slice()), whatever happens here */
  size_t sum = 0;
  for (int i = 0; i < iovcnt; i++)
    sum += iov[i].iov_len;
  if (sum != len)
    return -NM_EINVAL;
  struct nm_tcp_peer_s *p = &t->peers[peer];
  struct nm_tcp_out_s *head = p->pk_head;
  if (p->dead || p->wc < 0 || !head)
    return -NM_EAGAIN;
  struct nm_tcp_out_s *o = nm_tcp_frame_v(NM_TCP_PKT, 0, iov, iovcnt, len);
  if (!o)
    return -NM_EAGAIN; /* the core tries the plain path, which reports the lack of memory */
  struct nm_tcp_out_s *after = p->pk_urgent;
  if (!after && (head->off > 0 || nm_get32(head->bytes) == NM_TCP_HELLO)) /* under way, or the first frame */
    after = head;
  if (after) {
    o->next = after->next;
    after->next = o;
    if (p->pk_tail == after)
      p->pk_tail = o;
    p->pk_bytes += o->len;
  } else {
    nm_tcp_queue(p, o, 1);
  }
  p->pk_urgent = o;
  nm_tcp_flush(t, peer);
  return p->dead ? -NM_ECLOSED : 1;
}

static struct nm_tcp_large_s *nm_tcp_large_new(uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx)
{
  struct nm_tcp_large_s *l = malloc(sizeof(*l));
  if (l)
    *l = (struct nm_tcp_large_s){.peer = peer, .rtag = rtag, .len = len, .buf = buf, .ctx = ctx};
  return l;
}

static int nm_tcp_large_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, uint64_t rtag,
                             void *ctx)
{
  struct nm_tcp_s *t = drv->priv;
  if (peer >= t->n_peers || len > drv->props.max_large)
    return -NM_EINVAL;
  int err = nm_tcp_out_conn(t, peer);
  if (err)
    return err;
  struct nm_tcp_large_s *l = nm_tcp_large_new(peer, (void *)buf, len, rtag, ctx); /* only read */
  if (!l)
    return -NM_ENOMEM;
  if (len == 0) { /* nothing to write: done at the next pass */
    l->next = t->done;
    t->done = l;
    return NM_ESUCCESS;
  }
  struct nm_tcp_peer_s *p = &t->peers[peer];
  if (p->ls_tail)
    p->ls_tail->next = l;
  else
    p->ls_head = l;
  p->ls_tail = l;
  return NM_ESUCCESS; /* written from the next progress pass on */
}

static int nm_tcp_large_recv(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx)
{
  struct nm_tcp_s *t = drv->priv;
  if (peer >= t->n_peers)
    return -NM_EINVAL;
  struct nm_tcp_large_s *l = nm_tcp_large_new(peer, buf, len, rtag, ctx);
  if (!l)
    return -NM_ENOMEM;
  if (len == 0 || t->peers[peer].dead) {
    l->err = len == 0 ? 0 : -NM_ECLOSED;
    l->next = t->done;
    t->done = l;
    return NM_ESUCCESS;
  }
  l->next = t->lrecvs;
  t->lrecvs = l;
  return NM_ESUCCESS;
}

/* A cancelled receive stays in the list with no buffer (ctx NULL) until its bytes, if its sender already writes
 * them, have been read and dropped: the stream must stay in step. */
static int nm_tcp_large_cancel(struct nm_drv_s *drv, void *ctx)
{
  struct nm_tcp_s *t = drv->priv;
  for (struct nm_tcp_large_s *l = t->lrecvs; l; l = l->next)
    if (l->ctx == ctx && ctx) {
      struct nm_tcp_large_s *c = nm_tcp_large_new(l->peer, NULL, 0, l->rtag, ctx);
      if (!c)
        return -NM_ENOMEM;
      c->err = -NM_ECANCELED;
      c->next = t->done;
      t->done = c;
      l->ctx = NULL;
      l->buf = NULL;
      return NM_ESUCCESS;
    }
  return -NM_ENOTFOUND;
}

/* ---- receiving ---- */

static struct nm_tcp_large_s *nm_tcp_lrecv_find(struct nm_tcp_s *t, uint64_t peer, uint64_t rtag)
{
  for (struct nm_tcp_large_s *l = t->lrecvs; l; l = l->next)
    if (l->peer == peer && l->rtag == rtag)
      return l;
  return NULL;
}

static void nm_tcp_lrecv_unlink(struct nm_tcp_s *t, struct nm_tcp_large_s *l)
{
  for (struct nm_tcp_large_s **pp = &t->lrecvs; *pp; pp = &(*pp)->next)
    if (*pp == l) {
      *pp = l->next;
      return;
    }
}

/* A frame header from peer @p i is complete on connection @p p: check it. @return 0, or a reason to refuse it. */
static const char *nm_tcp_header(struct nm_tcp_s *t, uint64_t i, struct nm_tcp_conn_s *p)
{
  p->in_kind = nm_get32(p->in_hdr);
  p->in_len = nm_get32(p->in_hdr + 4);
  uint64_t tag = nm_get64(p->in_hdr + 8);
  p->in_got = 0;
  if (p->in_kind == NM_TCP_PKT) {
    if (p->in_len == 0 || p->in_len > NM_TCP_MAX_PACKET)
      return "packet length out of range";
    if (!p->in_pkt && !(p->in_pkt = malloc(NM_TCP_MAX_PACKET)))
      return "out of memory";
    return NULL;
  }
  if (p->in_kind == NM_TCP_DATA) {
    struct nm_tcp_large_s *l = nm_tcp_lrecv_find(t, i, tag);
    if (!l)
      return "data for no posted receive";
    if (p->in_len == 0 || p->in_len > l->len - l->done)
      return "data beyond its receive";
    p->in_lr = l;
    return NULL;
  }
  return "unknown frame kind";
}

/* The next bytes of connection @p p's stream into @p dst (at most @p want): those read ahead first; else a short read
 * (a frame header, a short body) takes up to NM_TCP_STAGE bytes at once, so that a header and a small packet
 * cost one recv(), and a long one goes straight into @p dst. @return bytes, 0 at the end of the stream, or -1
 * (errno). */
static ssize_t nm_tcp_pull(struct nm_tcp_conn_s *p, uint8_t *dst, size_t want)
{
  if (p->st_off == p->st_len && want < NM_TCP_STAGE) {
    ssize_t r = recv(p->fd, p->stage, NM_TCP_STAGE, 0);
    if (r <= 0)
      return r;
    p->st_off = 0;
    p->st_len = (size_t)r;
  }
  if (p->st_off < p->st_len) {
    size_t n = p->st_len - p->st_off < want ? p->st_len - p->st_off : want;
    memcpy(dst, p->stage + p->st_off, n);
    p->st_off += n;
    return (ssize_t)n;
  }
  return recv(p->fd, dst, want, 0);
}

/* Read from peer @p i's connection @p c up to NM_TCP_READ_BYTES; packets go up as soon as they are whole.
 * @return the number of packets and transfers finished. */
static int nm_tcp_read(struct nm_drv_s *drv, uint64_t i, int c)
{
  struct nm_tcp_s *t = drv->priv;
  struct nm_tcp_peer_s *peer = &t->peers[i];
  size_t budget = NM_TCP_READ_BYTES;
  int n = 0;
  struct nm_tcp_conn_s *p;
  while (!peer->dead && (p = peer->conn[c]) && budget > 0) {
    uint8_t *dst;
    size_t want;
    uint8_t drop[4096];
    if (p->in_hdr_got < NM_TCP_HDR) {
      dst = p->in_hdr + p->in_hdr_got;
      want = NM_TCP_HDR - p->in_hdr_got;
    } else if (p->in_kind == NM_TCP_PKT) {
      dst = p->in_pkt + p->in_got;
      want = p->in_len - p->in_got;
    } else if (p->in_lr->buf) {
      dst = p->in_lr->buf + p->in_lr->done;
      want = p->in_len - p->in_got;
    } else { /* a cancelled receive: read and drop */
      dst = drop;
      want = p->in_len - p->in_got < sizeof(drop) ? p->in_len - p->in_got : sizeof(drop);
    }
    ssize_t r = nm_tcp_pull(p, dst, want < budget ? want : budget);
    if (r <= 0) {
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        break;
      nm_tcp_peer_dead(t, i, r == 0 ? NULL : strerror(errno)); /* closed: its process ended */
      break;
    }
    budget -= (size_t)r < budget ? (size_t)r : budget;
    if (p->in_hdr_got < NM_TCP_HDR) {
      p->in_hdr_got += (size_t)r;
      const char *bad = p->in_hdr_got == NM_TCP_HDR ? nm_tcp_header(t, i, p) : NULL;
      if (bad)
        nm_tcp_peer_dead(t, i, bad);
      continue;
    }
    p->in_got += (size_t)r;
    if (p->in_kind == NM_TCP_DATA)
      p->in_lr->done += (uint64_t)r;
    if (p->in_got < p->in_len)
      continue;
    p->in_hdr_got = 0; /* the next frame; the state is clean before any upcall, which may progress again */
    if (p->in_kind == NM_TCP_PKT) {
      uint8_t *pkt = p->in_pkt;
      p->in_pkt = NULL;
      drv->up.packet(drv->up.ref, drv, pkt, p->in_len, i);
      if (peer->conn[c] == p && !p->in_pkt) /* the upcall may have failed the peer, which freed p */
        p->in_pkt = pkt;
      else
        free(pkt);
      n++;
      break; /* back to the core, which answers the packet (a ping, an RTR) before more bulk is read */
    }
    struct nm_tcp_large_s *l = p->in_lr;
    p->in_lr = NULL;
    if (l->done == l->len) {
      nm_tcp_lrecv_unlink(t, l);
      if (l->ctx) {
        l->next = t->done;
        t->done = l;
        n++;
      } else {
        free(l); /* cancelled, now drained */
      }
    }
  }
  return n;
}

/* Accepted connections: read their HELLO, then they become a peer's incoming connection, which we also write on
 * if we have not written to that peer yet (nm_tcp_out_conn()). */
static void nm_tcp_accept(struct nm_tcp_s *t)
{
  int fd;
  while ((fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
    struct nm_tcp_pending_s *q = calloc(1, sizeof(*q));
    if (!q) {
      close(fd);
      continue;
    }
    q->fd = fd;
    q->next = t->pending;
    t->pending = q;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    epoll_ctl(t->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }
  for (struct nm_tcp_pending_s **pp = &t->pending; *pp;) {
    struct nm_tcp_pending_s *q = *pp;
    ssize_t r = recv(q->fd, q->hello + q->got, sizeof(q->hello) - q->got, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pp = &q->next;
      continue;
    }
    if (r > 0)
      q->got += (size_t)r;
    if (r > 0 && q->got < sizeof(q->hello)) {
      pp = &q->next;
      continue;
    }
    *pp = q->next;
    uint64_t from = nm_get64(q->hello + 8);
    int ok = r > 0 && nm_get32(q->hello) == NM_TCP_HELLO && nm_get32(q->hello + 4) == 8 && from < t->n_peers &&
             nm_get64(q->hello + NM_TCP_HDR) == t->self.nonce && !t->peers[from].conn[NM_TCP_IN] &&
             !t->peers[from].dead;
    struct nm_tcp_conn_s *c = ok ? nm_tcp_conn_new(q->fd) : NULL;
    if (c) {
      int one = 1;
      setsockopt(q->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* we may write back on it */
      t->peers[from].conn[NM_TCP_IN] = c;
      struct epoll_event ev = {.events = EPOLLIN, .data.u64 = nm_tcp_ev_data(from, NM_TCP_IN)};
      epoll_ctl(t->epoll_fd, EPOLL_CTL_MOD, q->fd, &ev);
    } else {
      if (r > 0 && !ok)
        fprintf(stderr, "nmad: ntcp: a connection with a bad HELLO was refused\n");
      close(q->fd);
    }
    free(q);
  }
}

static int nm_tcp_progress(struct nm_drv_s *drv)
{
  struct nm_tcp_s *t = drv->priv;
  int n = 0;
  /* which sockets have something: one call, whatever the number of peers */
  struct epoll_event ev[NM_TCP_EVENTS];
  int k = epoll_wait(t->epoll_fd, ev, NM_TCP_EVENTS, 0);
  int accept_seen = 0;
  for (int e = 0; e < k; e++) {
    uint64_t i = ev[e].data.u64;
    if (i == UINT64_MAX) {
      if (!accept_seen++)
        nm_tcp_accept(t);
    } else {
      int c = (i & NM_TCP_OUT_EV) ? NM_TCP_OUT : NM_TCP_IN;
      i &= ~NM_TCP_OUT_EV;
      if (i >= t->n_peers || !t->peers[i].conn[c])
        continue;
      if (ev[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) /* a hang-up reads as the end of the stream, an error
                                                             as recv()'s error: either marks the peer gone */
        n += nm_tcp_read(drv, i, c);
      /* writable only: the flushes below write */
    }
  }
  /* bytes read ahead are no longer in the kernel: epoll does not report them */
  for (uint64_t i = 0; i < t->n_peers; i++)
    for (int c = 0; c < 2; c++)
      if (t->peers[i].conn[c] && t->peers[i].conn[c]->st_off < t->peers[i].conn[c]->st_len)
        n += nm_tcp_read(drv, i, c);
  for (uint64_t i = 0; i < t->n_peers; i++) {
    struct nm_tcp_peer_s *p = &t->peers[i];
    if (p->wc >= 0 && (p->pk_head || p->ls_head))
      n += nm_tcp_flush(t, i);
    if (p->out_watch && p->wc >= 0 && !p->pk_head && !p->ls_head) {
      struct epoll_event oe = {.events = EPOLLIN, .data.u64 = nm_tcp_ev_data(i, p->wc)};
      epoll_ctl(t->epoll_fd, EPOLL_CTL_MOD, nm_tcp_wfd(p), &oe);
      p->out_watch = 0;
    }
  }
  while (t->done) {
    struct nm_tcp_large_s *l = t->done;
    t->done = l->next;
    void *ctx = l->ctx;
    if (!ctx) { /* a cancelled receive failed with its peer: reported at its cancel already */
      free(l);
      continue;
    }
    int err = l->err;
    size_t len = err ? 0 : l->len;
    free(l);
    drv->up.large_done(drv->up.ref, ctx, err, len);
    n++;
  }
  return n;
}

static int nm_tcp_wait_fd(struct nm_drv_s *drv)
{
  struct nm_tcp_s *t = drv->priv;
  return t->epoll_fd;
}

/* Blocking is safe once every connection with bytes to write watches for room (EPOLLOUT), when no bytes read
 * ahead wait to be parsed (epoll does not see them) and no transfer has finished unreported. */
static int nm_tcp_trywait(struct nm_drv_s *drv)
{
  struct nm_tcp_s *t = drv->priv;
  if (t->done)
    return -NM_EAGAIN;
  for (size_t i = 0; i < t->n_peers; i++) {
    struct nm_tcp_peer_s *p = &t->peers[i];
    for (int c = 0; c < 2; c++)
      if (p->conn[c] && p->conn[c]->st_off < p->conn[c]->st_len)
        return -NM_EAGAIN;
    if (p->wc >= 0 && (p->pk_head || p->ls_head) && !p->out_watch) {
      struct epoll_event oe = {.events = EPOLLIN | EPOLLOUT, .data.u64 = nm_tcp_ev_data(i, p->wc)};
      if (epoll_ctl(t->epoll_fd, EPOLL_CTL_MOD, nm_tcp_wfd(p), &oe) != 0)
        return -NM_EAGAIN;
      p->out_watch = 1;
    }
  }
  return NM_ESUCCESS;
}

const struct nm_drv_ops_s nm_drv_tcp_ops = {
  .name = "ntcp",
  .open = nm_tcp_open,
  .close = nm_tcp_close,
  .get_address = nm_tcp_get_address,
  .connect = nm_tcp_connect,
  .send = nm_tcp_send,
  .large_send = nm_tcp_large_send,
  .large_recv = nm_tcp_large_recv,
  .large_cancel = nm_tcp_large_cancel,
  .progress = nm_tcp_progress,
  .wait_fd = nm_tcp_wait_fd,
  .trywait = nm_tcp_trywait,
  .send_urgent = nm_tcp_send_urgent,
};
