/* Driver "sm": nmad's own shared-memory transport for the ranks of one host (NMAD_DRIVER=sm).
 *
 * Why a driver of our own: over libfabric's shm provider a small message costs ~1.4 us one way on this project's
 * machine, three times Open MPI's vader (0.44 us), and every small collective pays it at each step
 * (doc/performance.md, issue 18). This driver does what vader and NewMadeleine's shm driver do:
 * - packets: one single-producer single-consumer ring per (sender, receiver) pair, in the receiver's segment;
 *   a send copies the packet into the ring and completes at once; the receiver hands the packet to the core
 *   straight from the ring (no copy of its own);
 * - large transfers: one copy by CMA (process_vm_readv): the sender announces its buffer (LRTS), the receiver
 *   reads it into the posted buffer and answers LFIN; a buffer sent to several peers at once (a broadcast's root),
 *   and any large send on a host with more ranks than cores, is copied once into a staging slot of the sender's
 *   segment, which the peers read with memcpy ("staged sends");
 * - blocking: the owner of a ring sets a flag before it sleeps on a pipe; a sender that sees the flag writes one
 *   byte (a Dekker pair of sequentially consistent accesses, so no wake-up is lost and none is paid when the
 *   receiver is awake).
 * Segments are memfds and pipes, reached by peers through /proc/<pid>/fd: a killed rank leaves nothing behind.
 * Layout and records: nm_sm_private.h; doc/architecture.md, "The sm driver". */
#define _GNU_SOURCE
#include "drivers/sm/nm_sm_private.h"
#include <nmad/nm_errno.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <signal.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifdef MADV_POPULATE_WRITE
#define NM_SM_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define NM_SM_MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels refuse it (EINVAL), and the pages fault in as used */
#endif

/* Where the staging slots start in a segment: after the rings (page-aligned). */
static size_t nm_sm_stage_off(void) { return NM_SM_PAGE + (size_t)NM_SM_MAX_PEERS * NM_SM_RING_STRIDE; }

static size_t nm_sm_seg_len(void) { return nm_sm_stage_off() + (size_t)NM_SM_STAGE_SLOTS * NM_SM_STAGE_SLOT; }

static struct nm_sm_ring_ctl_s *nm_sm_ring_ctl(uint8_t *seg, uint64_t sender)
{
  return (struct nm_sm_ring_ctl_s *)(seg + NM_SM_PAGE + sender * NM_SM_RING_STRIDE);
}

static void nm_sm_close(struct nm_drv_s *drv);

static int nm_sm_open(struct nm_drv_s *drv, const char *word, int all_local)
{
  (void)word;
  if (!all_local) {
    fprintf(stderr, "nmad: NMAD_DRIVER=sm: the ranks are not all on one host; sm reaches only local ranks\n");
    return -NM_ENOTSUP;
  }
  struct nm_sm_s *s = calloc(1, sizeof(*s));
  if (!s)
    return -NM_ENOMEM;
  drv->priv = s;
  s->self_index = -1;
  s->wake_rd = -1;
  s->self.seg_fd = -1;
  s->self.wake_fd = -1;
  s->seg_len = nm_sm_seg_len();
  int pipefd[2];
  s->self.seg_fd = memfd_create("nmad-sm", MFD_CLOEXEC);
  if (s->self.seg_fd < 0 || ftruncate(s->self.seg_fd, (off_t)s->seg_len) != 0 ||
      pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) != 0) {
    fprintf(stderr, "nmad: sm: cannot make its shared segment: %s\n", strerror(errno));
    nm_sm_close(drv);
    return -NM_ENOTSUP;
  }
  s->wake_rd = pipefd[0];
  s->self.wake_fd = pipefd[1];
  void *seg = mmap(NULL, s->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, s->self.seg_fd, 0);
  if (seg == MAP_FAILED) {
    fprintf(stderr, "nmad: sm: cannot map its shared segment: %s\n", strerror(errno));
    nm_sm_close(drv);
    return -NM_ENOTSUP;
  }
  s->seg = seg;
  /* Yama's ptrace_scope 1 lets only a parent read our memory by CMA: allow our peers (as Open MPI's vader does).
   * Without Yama the call fails with EINVAL and nothing is needed. */
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  s->self.magic = NM_SM_MAGIC;
  s->self.nonce = nm_drv_nonce();
  s->self.pid = (int32_t)getpid();
  struct nm_sm_seg_hdr_s *hdr = (struct nm_sm_seg_hdr_s *)s->seg;
  hdr->magic = NM_SM_MAGIC;
  hdr->nonce = s->self.nonce;
  atomic_store(&hdr->sleeping, 0);
  long mb = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  s->membarrier = mb > 0 && (mb & MEMBARRIER_CMD_GLOBAL_EXPEDITED);
  drv->props.max_packet = NM_SM_MAX_PACKET;
  drv->props.inject_size = NM_SM_MAX_PACKET; /* every packet is copied into the ring: done at post */
  drv->props.urgent_max = NM_SM_XMAX;
  drv->props.flags |= NM_DRV_F_SEND_AT_POST; /* nm_sm_sendv() copies into the ring or refuses */
  drv->props.flags |= NM_DRV_F_RDV_GET; /* the receiver pulls (CMA) from the LRTS: see nm_driver.h */
  drv->props.max_large = (uint64_t)1 << 40;
  /* Nominal figures of this machine (doc/performance.md, "The sm driver"): ping-pong 8 B 0.2-0.3 us one way,
   * CMA's copy ~10 GB/s. Between ranks of one host the latency is CPU time on both sides: half of it is the
   * sender's (LogP's o), as the ofi table does for libfabric's shm (nm_ofi_quirks.c). */
  nm_drv_set_nominal(&drv->props, 300, 150, 10000, "sm");
  return NM_ESUCCESS;
}

static void nm_sm_free_list(struct nm_sm_large_s *l)
{
  while (l) {
    struct nm_sm_large_s *next = l->next;
    free(l);
    l = next;
  }
}

static void nm_sm_close(struct nm_drv_s *drv)
{
  struct nm_sm_s *s = drv->priv;
  if (!s)
    return;
  for (size_t i = 0; i < s->n_peers; i++) {
    struct nm_sm_peer_s *p = &s->peers[i];
    if (p->hdr)
      munmap(p->hdr, NM_SM_PAGE);
    if (p->out)
      munmap(p->out, NM_SM_RING_STRIDE);
    if (p->stage)
      munmap((void *)p->stage, (size_t)NM_SM_STAGE_SLOTS * NM_SM_STAGE_SLOT);
    if (p->wake_fd >= 0)
      close(p->wake_fd);
  }
  free(s->peers);
  if (s->seg)
    munmap(s->seg, s->seg_len);
  if (s->self.seg_fd >= 0)
    close(s->self.seg_fd);
  if (s->self.wake_fd >= 0)
    close(s->self.wake_fd);
  if (s->wake_rd >= 0)
    close(s->wake_rd);
  nm_sm_free_list(s->lsends);
  nm_sm_free_list(s->lrecvs);
  nm_sm_free_list(s->rts_early);
  nm_sm_free_list(s->pulls);
  nm_sm_free_list(s->done);
  while (s->ctrl_head) {
    struct nm_sm_ctrl_s *c = s->ctrl_head;
    s->ctrl_head = c->next;
    free(c);
  }
  free(s);
  drv->priv = NULL;
}

static int nm_sm_get_address(struct nm_drv_s *drv, void *addr, size_t *len)
{
  struct nm_sm_s *s = drv->priv;
  return nm_drv_copy_address(&s->self, sizeof(s->self), addr, len);
}

static int nm_sm_connect(struct nm_drv_s *drv, uint64_t index, const void *addr, size_t len)
{
  struct nm_sm_s *s = drv->priv;
  if (len != sizeof(struct nm_sm_addr_s))
    return -NM_EINVAL;
  if (index >= NM_SM_MAX_PEERS) {
    fprintf(stderr, "nmad: sm: more than %u ranks on one host\n", NM_SM_MAX_PEERS);
    return -NM_ENOTSUP;
  }
  int err = nm_drv_peer_slot((void **)&s->peers, &s->cap_peers, s->n_peers, sizeof(*s->peers), index);
  if (err)
    return err;
  struct nm_sm_peer_s *p = &s->peers[s->n_peers];
  memcpy(&p->addr, addr, sizeof(p->addr));
  p->wake_fd = -1;
  p->out_last = p->in_last = UINT64_MAX;
  if (p->addr.magic != NM_SM_MAGIC)
    return -NM_EINVAL;
  if (memcmp(&p->addr, &s->self, sizeof(s->self)) == 0)
    s->self_index = (int)index;
  else
    p->in_ctl = nm_sm_ring_ctl(s->seg, index);
  s->n_peers++;
  /* A shared copy waits for its sender's last chunk: a sender that has no core of its own (more ranks than
   * cores) may be descheduled in the middle of one, so then each receiver copies alone. Until the launcher says
   * (nm_sm_host_oversubscribed(), from the ranks' affinity masks), guess from the online processors. */
  if (!s->coop_told) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    s->coop_on = ncpu > 0 && s->n_peers <= (size_t)ncpu;
  }
  return NM_ESUCCESS;
}

/* Map our ring in peer @p p's segment (first send to it). */
static int nm_sm_peer_map(struct nm_sm_s *s, struct nm_sm_peer_s *p)
{
  if (s->self_index < 0)
    return -NM_EINVAL;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)p->addr.pid, (int)p->addr.seg_fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -NM_ECLOSED; /* the peer is gone */
  struct stat st;
  off_t off = (off_t)NM_SM_PAGE + (off_t)s->self_index * NM_SM_RING_STRIDE;
  void *hdr = MAP_FAILED, *ring = MAP_FAILED;
  if (fstat(fd, &st) == 0 && (size_t)st.st_size >= nm_sm_seg_len()) {
    hdr = mmap(NULL, NM_SM_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    /* MAP_POPULATE: the ring's pages are made and mapped now, not one fault every few records during the first
     * pass (1 KiB collectives took 6.5 us instead of 1.5 for their first ~100 iterations). */
    ring = mmap(NULL, NM_SM_RING_STRIDE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, off);
  }
  close(fd);
  struct nm_sm_seg_hdr_s *h = hdr;
  if (hdr == MAP_FAILED || ring == MAP_FAILED || h->magic != NM_SM_MAGIC || h->nonce != p->addr.nonce) {
    if (hdr != MAP_FAILED)
      munmap(hdr, NM_SM_PAGE);
    if (ring != MAP_FAILED)
      munmap(ring, NM_SM_RING_STRIDE);
    return -NM_ECLOSED; /* not the segment of the process that published this address */
  }
  snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)p->addr.pid, (int)p->addr.wake_fd);
  /* Read-write: we then hold a reader too, so a write after the owner died gets EAGAIN at worst, never
   * SIGPIPE. */
  p->wake_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  p->hdr = h;
  p->out = ring;
  p->out_data = (uint8_t *)ring + NM_SM_PAGE;
  /* A restarted ring is not supported: the owner's segment is new for each process, so it starts at 0. */
  p->out_head_seen = atomic_load_explicit(&p->out->head, memory_order_acquire);
  p->out_tail = p->out_head_seen;
  p->x_tail = atomic_load_explicit(&p->out->x_tail, memory_order_relaxed);
  p->x_head_seen = atomic_load_explicit(&p->out->x_head, memory_order_acquire);
  return NM_ESUCCESS;
}

static uint64_t nm_sm_align(uint64_t n) { return (n + NM_SM_REC_ALIGN - 1) & ~(uint64_t)(NM_SM_REC_ALIGN - 1); }

/* Record stamps (nm_sm_rec_s.stamp), keyed by the ring owner's random nonce so that bytes left in the ring by an
 * earlier lap (a user's payload, say) never pass for a stamp by chance: a record at position pos bears
 * nm_sm_stamp(key, pos); one that its sender put at a lap's start instead, having found the ring empty at position
 * from, bears nm_sm_stamp_rewind(key, from), which names the position it stands for, so a reader waiting there
 * cannot take the first record of the next lap (that one bears its own position) for it. */
static inline uint64_t nm_sm_stamp(uint64_t key, uint64_t pos) { return (pos + 1) ^ key; }
static inline uint64_t nm_sm_stamp_rewind(uint64_t key, uint64_t from) { return (from + 1) ^ key ^ (1ull << 63); }
/* The done mark the reader leaves on the record at @p pos when it gives back the space up to that record's end.
 * Positions stay below 2^62, so a mark never equals a stamp (bit 62 differs from the key's) nor a rewind stamp
 * (bit 63 also differs). */
static inline uint64_t nm_sm_stamp_done(uint64_t key, uint64_t pos) { return (pos + 1) ^ key ^ (1ull << 62); }

/* The record a reader at position @p head of ring @p data (a ring of our segment, @p key our nonce) expects, once its
 * sender has published it: at head, or at the start of the ring's next lap when the sender found the ring empty
 * and went on there (nm_sm_putv()); *at gets the record's position. NULL: nothing published yet. An idle pass reads
 * one line per peer (two when head is not at a lap's start), which stays in this core's cache until the sender
 * writes it. */
static inline const struct nm_sm_rec_s *nm_sm_rec_at(const uint8_t *data, uint64_t key, uint64_t head, uint64_t *at)
{
  uint64_t off = head % NM_SM_RING_BYTES;
  const struct nm_sm_rec_s *r = (const struct nm_sm_rec_s *)(data + off);
  if (atomic_load_explicit(&r->stamp, memory_order_acquire) == nm_sm_stamp(key, head)) {
    *at = head;
    return r;
  }
  if (off == 0)
    return NULL;
  r = (const struct nm_sm_rec_s *)data;
  if (atomic_load_explicit(&r->stamp, memory_order_acquire) == nm_sm_stamp_rewind(key, head)) {
    *at = head + NM_SM_RING_BYTES - off;
    return r;
  }
  return NULL;
}

/* The next record of peer @p p's ring in our segment (nm_sm_rec_at()), or NULL: none yet, or a ring we do not read
 * (ourselves, a dead peer: in_ctl NULL). */
static inline const struct nm_sm_rec_s *nm_sm_peer_next(const struct nm_sm_s *s, const struct nm_sm_peer_s *p,
                                                        uint64_t *at)
{
  return p->in_ctl ? nm_sm_rec_at((const uint8_t *)p->in_ctl + NM_SM_PAGE, s->self.nonce, p->in_head, at) : NULL;
}

/* Wake the owner of @p p if it sleeps (or is about to). Either it sees our record's stamp (or the express ring's
 * x_tail), or we see its flag: an asymmetric
 * fence (as liburcu's), whose heavy half is the sleeper's membarrier() in nm_sm_trywait(), which makes every
 * registered process running meanwhile pass a full barrier; the frequent half, here, need only keep the compiler
 * from moving the flag's load before the stamp's store. A process not registered (nm_sm_host_oversubscribed(): once
 * connected, on a host of at most NM_SM_ASYM_PEERS ranks) fences here itself. The fence cost
 * ~15 ns per send: an 8 B MPI_Bcast's root (3 sends) 0.36-0.38 us with it, 0.32-0.33 without (issue 18). Only the
 * sender that clears the flag writes. */
static void nm_sm_wake(const struct nm_sm_s *s, struct nm_sm_peer_s *p)
{
  if (s->asym_fence)
    atomic_signal_fence(memory_order_seq_cst);
  else
    atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&p->hdr->sleeping, memory_order_relaxed) &&
      atomic_exchange(&p->hdr->sleeping, 0) && p->wake_fd >= 0) {
    char one = 1;
    if (write(p->wake_fd, &one, 1) < 0) {
      /* EAGAIN: the pipe is full, the owner will wake anyway */
    }
  }
}

/* The reader's head of our ring to peer @p p, read now; out_head_seen keeps the largest seen (after a rewind our
 * own exceeds the reader's until it takes the rewind). */
static uint64_t nm_sm_head_read(struct nm_sm_peer_s *p)
{
  uint64_t head = atomic_load_explicit(&p->out->head, memory_order_acquire);
  if (head > p->out_head_seen)
    p->out_head_seen = head;
  return head;
}

/* Copy the @p iovcnt pieces of a packet one after the other to @p dst. */
static void nm_sm_gather(uint8_t *dst, const struct iovec *iov, int iovcnt)
{
  for (int i = 0; i < iovcnt; i++) {
    memcpy(dst, iov[i].iov_base, iov[i].iov_len);
    dst += iov[i].iov_len;
  }
}

/* Append one record (header + a body of @p len bytes in @p iovcnt pieces) to our ring in peer @p p's segment.
 * @return 0, -NM_EAGAIN (ring full), -NM_ECLOSED. */
static int nm_sm_putv(struct nm_sm_s *s, struct nm_sm_peer_s *p, uint32_t kind, const struct iovec *iov, int iovcnt,
                      size_t len)
{
  if (!p->out) {
    int err = nm_sm_peer_map(s, p);
    if (err)
      return err;
  }
  uint64_t need = nm_sm_align(NM_SM_REC_HDR + len);
  const uint64_t from = p->out_tail, key = p->addr.nonce;
  uint64_t pos = from, off = pos % NM_SM_RING_BYTES;
  int rewound = 0;
  if (need <= NM_SM_REWIND_MAX && off && p->out_last != UINT64_MAX) {
    /* A record into an empty ring goes at its start: those lines hold our last records and are still in both
     * ranks' caches, while the next ones along the ring are not. Ping-pong over sm, 10 alternated runs: 512 B
     * 0.33 us against 0.40, 1 KiB 0.31 against 0.40, 4 KiB 0.65 against 0.78 (doc/performance.md, "Eager
     * payloads copied once"). One-line records sent on along the ring instead made the 8 B ping-pong
     * 0.160-0.191 us against 0.136-0.180 (doc/performance.md, "The host's two speeds are the cross-core line").
     * Larger records gained nothing (8-32 KiB: 7-29% slower when rewound), so they go on along the ring.
     * The ring is empty when our last record bears its done mark: a small exchange's last record is at the ring's
     * start, the line this record is written to, so one line crosses instead of the head's and then this one.
     * (Fetching it with prefetchw, for writing, gained nothing measurable: doc/performance.md, "The sm ring's
     * done mark".) */
    const struct nm_sm_rec_s *last = (const struct nm_sm_rec_s *)(p->out_data + p->out_last % NM_SM_RING_BYTES);
    if (atomic_load_explicit(&last->stamp, memory_order_acquire) == nm_sm_stamp_done(key, p->out_last)) {
      rewound = 1;
      pos += NM_SM_RING_BYTES - off;
      off = 0;
      p->out_head_seen = pos; /* nothing is unread: the whole ring is ours from its start */
    }
  }
  uint64_t skip = off + need > NM_SM_RING_BYTES ? NM_SM_RING_BYTES - off : 0;
  if (pos + skip + need - p->out_head_seen > NM_SM_RING_BYTES) {
    nm_sm_head_read(p);
    if (pos + skip + need - p->out_head_seen > NM_SM_RING_BYTES)
      return -NM_EAGAIN;
  }
  if (skip) {
    struct nm_sm_rec_s *w = (struct nm_sm_rec_s *)(p->out_data + off);
    w->len = 0;
    w->kind = NM_SM_WRAP;
    atomic_store_explicit(&w->stamp, nm_sm_stamp(key, pos), memory_order_release);
    pos += skip;
    off = 0;
  }
  struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)(p->out_data + off);
  r->len = (uint32_t)len;
  r->kind = kind;
  nm_sm_gather((uint8_t *)r + NM_SM_REC_HDR, iov, iovcnt);
  /* Published by its stamp, stored last: the reader polls this line, so an 8 B packet reaches it in one line
   * (a tail, as in sm3, cost the reader a miss on the tail's line, then one on the record's). */
  atomic_store_explicit(&r->stamp, rewound ? nm_sm_stamp_rewind(key, from) : nm_sm_stamp(key, pos),
                        memory_order_release);
  p->out_tail = pos + need;
  p->out_last = pos;
  nm_sm_wake(s, p);
  return NM_ESUCCESS;
}

static int nm_sm_put(struct nm_sm_s *s, struct nm_sm_peer_s *p, uint32_t kind, const void *body, size_t len)
{
  const struct iovec one = {(void *)body, len};
  return nm_sm_putv(s, p, kind, &one, 1, len);
}

/* Whether a packet of @p len bytes in @p iovcnt pieces to @p peer is well formed, and at most @p max bytes. */
static int nm_sm_packet_ok(const struct nm_sm_s *s, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len,
                           size_t max)
{
  size_t sum = 0;
  for (int i = 0; i < iovcnt; i++)
    sum += iov[i].iov_len;
  return peer < s->n_peers && len <= max && iovcnt >= 1 && iovcnt <= NM_DRV_SENDV_MAX && sum == len;
}

/* A packet in pieces (nm_driver.h): copied into the ring from where they are, complete at post like send(). */
static int nm_sm_sendv(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len,
                       void *ctx)
{
  (void)ctx;
  struct nm_sm_s *s = drv->priv;
  if (!nm_sm_packet_ok(s, peer, iov, iovcnt, len, NM_SM_MAX_PACKET))
    return -NM_EINVAL;
  int err = nm_sm_putv(s, &s->peers[peer], NM_SM_PKT, iov, iovcnt, len);
  return err ? err : 1; /* copied into the ring: complete at post */
}

static int nm_sm_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx)
{
  const struct iovec one = {(void *)buf, len};
  return nm_sm_sendv(drv, peer, &one, 1, len, ctx);
}

/* Express packets: a packet that carries urgent work (the core's send_urgent) goes into a ring of NM_SM_XSLOTS
 * fixed slots in the control page of our ring to the peer, which the peer reads before its main rings, and whose
 * pending slots it also looks for between two records of a main ring: the packet does not wait for the bulk
 * records queued before it to be read (up to 256 KiB, or 64 KiB plus a packet while the prio strategy holds bulk).
 * A slot is reused once read: the sender keeps at most NM_SM_XSLOTS unread. */
static int nm_sm_send_urgent(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len,
                             void *ctx)
{
  (void)ctx;
  struct nm_sm_s *s = drv->priv;
  if (!nm_sm_packet_ok(s, peer, iov, iovcnt, len, NM_SM_XMAX))
    return -NM_EINVAL;
  struct nm_sm_peer_s *p = &s->peers[peer];
  if (!p->out) {
    int err = nm_sm_peer_map(s, p);
    if (err)
      return err;
  }
  if (p->x_tail - p->x_head_seen >= NM_SM_XSLOTS) {
    p->x_head_seen = atomic_load_explicit(&p->out->x_head, memory_order_acquire);
    if (p->x_tail - p->x_head_seen >= NM_SM_XSLOTS)
      return -NM_EAGAIN;
  }
  unsigned char *slot = p->out->x_slots[p->x_tail % NM_SM_XSLOTS];
  struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)slot;
  r->len = (uint32_t)len;
  r->kind = NM_SM_PKT;
  atomic_store_explicit(&r->stamp, 0, memory_order_relaxed);
  nm_sm_gather(slot + NM_SM_REC_HDR, iov, iovcnt);
  p->x_tail++;
  atomic_store_explicit(&p->out->x_tail, p->x_tail, memory_order_release);
  atomic_fetch_or_explicit(&p->hdr->express_from[s->self_index / 64], 1ull << (s->self_index % 64),
                           memory_order_release);
  atomic_store_explicit(&p->hdr->express, 1, memory_order_release);
  nm_sm_wake(s, p);
  s->urgent_ns = nm_drv_coarse_ns();
  return 1;
}

/* A control record that could not go now waits in FIFO order (and so does every later one, to keep order). */
static int nm_sm_ctrl(struct nm_sm_s *s, uint64_t peer, uint32_t kind, const void *body, size_t len)
{
  if (!s->ctrl_head) {
    int err = nm_sm_put(s, &s->peers[peer], kind, body, len);
    if (err != -NM_EAGAIN)
      return err;
  }
  struct nm_sm_ctrl_s *c = calloc(1, sizeof(*c));
  if (!c)
    return -NM_ENOMEM;
  c->peer = peer;
  c->kind = kind;
  memcpy(&c->u, body, len);
  if (s->ctrl_tail)
    s->ctrl_tail->next = c;
  else
    s->ctrl_head = c;
  s->ctrl_tail = c;
  return NM_ESUCCESS;
}

static void nm_sm_ctrl_flush(struct nm_sm_s *s)
{
  while (s->ctrl_head) {
    struct nm_sm_ctrl_s *c = s->ctrl_head;
    size_t len = c->kind == NM_SM_LRTS ? sizeof(c->u.rts) : c->kind == NM_SM_LFIN ? sizeof(c->u.fin)
                                                                                 : sizeof(c->u.help);
    int err = nm_sm_put(s, &s->peers[c->peer], c->kind, &c->u, len);
    if (err == -NM_EAGAIN)
      return;
    s->ctrl_head = c->next;
    if (!s->ctrl_head)
      s->ctrl_tail = NULL;
    free(c);
  }
}

static void nm_sm_push(struct nm_sm_large_s **list, struct nm_sm_large_s *l)
{
  l->next = *list;
  *list = l;
}

/* Unlink and return the first element of @p list for which (peer, key) match; key is the rtag (receives, early
 * LRTS) or the id (sends). */
static struct nm_sm_large_s *nm_sm_take(struct nm_sm_large_s **list, uint64_t peer, uint64_t key, int by_id)
{
  for (struct nm_sm_large_s **pp = list; *pp; pp = &(*pp)->next) {
    struct nm_sm_large_s *l = *pp;
    if (l->peer == peer && (by_id ? l->id : l->rtag) == key) {
      *pp = l->next;
      l->next = NULL;
      return l;
    }
  }
  return NULL;
}

/* ---- staged sends ----
 * A broadcast's root announces one buffer to several peers at once. Each reading it by CMA pins the root's pages
 * under the root's page-table lock: with 7 readers on 2 cores, ~45% of the CPU went to pinning and to that lock's
 * spinning (doc/performance.md, "The 1 MiB point, profiled"). So from the second concurrent send of a buffer on, the
 * sender copies it once into a staging slot of its own segment, and the peers whose LRTS name the slot read it with
 * memcpy from a read-only mapping (no pinning). With a core per rank the first send keeps its CMA read (shared
 * with its sender), so a lone send costs no extra copy; with more ranks than cores every send is staged
 * (nm_sm_stage_take()).
 * The key is (buffer, length) while a send of it is unfinished: the sender may not change a buffer it is sending
 * (MPI's rule and nmad's), so a slot still referenced holds the buffer's current bytes. A slot is free again when
 * every send naming it has its LFIN (the reader answers after its copy) or was cancelled before being read. */

/* The staging slot for a send of (@p buf, @p len) to @p peer: one that holds it already, or a free one filled now
 * if another unfinished send of the same buffer exists, or if ranks outnumber cores (coop_on off). There a lone
 * send is staged too: its reader then memcpys (4x a CMA read's speed here) instead of pinning the sender's pages
 * page by page, and with every rank sending at once (alltoall, allgather, reduce's halving) the CMA reads also
 * contend for each other's page-table locks; 4 ranks on 2 cores, 1 MiB, Gather 1.25-1.45x Open MPI -> 0.48-0.62,
 * Reduce 1.5 -> 0.9-1.07 (doc/performance.md, "Staged sends for every large send on an oversubscribed host").
 * With a core per rank the lone send keeps its CMA read shared with the sender: there the fresh slot's lines are
 * read from the other core's cache, which this host makes 2x slower at 128-256 KiB and sometimes 8x at 1 MiB.
 * @return slot + 1, or 0 (read by CMA). */
static uint64_t nm_sm_stage_take(struct nm_sm_s *s, uint64_t peer, const void *buf, size_t len)
{
  if (len < NM_SM_STAGE_MIN || len > NM_SM_STAGE_SLOT)
    return 0;
  int free_slot = -1;
  for (unsigned k = 0; k < NM_SM_STAGE_SLOTS; k++) {
    struct nm_sm_stage_s *st = &s->stage[k];
    if (st->refs && st->buf == buf && st->len == len) {
      st->refs++;
      return k + 1;
    }
    if (!st->refs && free_slot < 0)
      free_slot = (int)k;
  }
  if (free_slot < 0)
    return 0;
  struct nm_sm_large_s *other = s->lsends;
  while (other && (other->buf != buf || other->len != len || other->peer == peer))
    other = other->next;
  if (!other && s->coop_on)
    return 0;
  struct nm_sm_stage_s *st = &s->stage[free_slot];
  st->buf = buf;
  st->len = len;
  st->filled = 0; /* copied by the progress passes (nm_sm_stage_fill_step()) */
  st->refs = 1;
  s->stage_used++;
  return (uint64_t)free_slot + 1;
}

/* Announce large send @p l to its peer (LRTS). @return 0, or -NM_E* (ring: queued in order, never refused). */
static int nm_sm_send_lrts(struct nm_sm_s *s, struct nm_sm_large_s *l)
{
  struct nm_sm_lrts_s rts = {.rtag = l->rtag, .addr = (uint64_t)(uintptr_t)l->buf, .len = l->len, .id = l->id,
                             .stage = l->stage};
  return nm_sm_ctrl(s, l->peer, NM_SM_LRTS, &rts, sizeof(rts));
}

/* Whether a staging slot is still being filled. */
static int nm_sm_stage_filling(const struct nm_sm_s *s)
{
  for (unsigned k = 0; s->stage_used && k < NM_SM_STAGE_SLOTS; k++)
    if (s->stage[k].refs && s->stage[k].filled < s->stage[k].len)
      return 1;
  return 0;
}

/* A send naming slot @p stage (slot + 1, or 0) is finished or withdrawn. */
static void nm_sm_stage_drop(struct nm_sm_s *s, uint64_t stage)
{
  if (stage && --s->stage[stage - 1].refs == 0)
    s->stage_used--;
}

/* Peer @p p's staging slots, mapped read-only at its first staged send to us. @return NULL if it is gone (or a
 * reused pid holds another segment there: its header's nonce is not the one the peer published). */
static const uint8_t *nm_sm_stage_map(struct nm_sm_peer_s *p)
{
  if (p->stage)
    return p->stage;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)p->addr.pid, (int)p->addr.seg_fd);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  size_t len = (size_t)NM_SM_STAGE_SLOTS * NM_SM_STAGE_SLOT;
  struct stat st;
  uint64_t id[2] = {0, 0}; /* the header's magic and nonce */
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && (size_t)st.st_size >= nm_sm_seg_len() && pread(fd, id, sizeof(id), 0) == sizeof(id) &&
      id[0] == NM_SM_MAGIC && id[1] == p->addr.nonce)
    m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)nm_sm_stage_off());
  close(fd);
  if (m == MAP_FAILED)
    return NULL;
  p->stage = m;
  return p->stage;
}

static int nm_sm_large_send(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, uint64_t rtag,
                            void *ctx)
{
  struct nm_sm_s *s = drv->priv;
  if (peer >= s->n_peers || len > drv->props.max_large)
    return -NM_EINVAL;
  struct nm_sm_large_s *l = calloc(1, sizeof(*l));
  if (!l)
    return -NM_ENOMEM;
  l->peer = peer;
  l->rtag = rtag;
  l->len = len;
  l->ctx = ctx;
  l->buf = (void *)buf; /* read here only, to push chunks of a shared copy */
  l->id = ++s->next_id;
  l->stage = nm_sm_stage_take(s, peer, buf, len);
  l->rts_wait = l->stage && s->stage[l->stage - 1].filled < len;
  int err = l->rts_wait ? 0 : nm_sm_send_lrts(s, l);
  if (err) {
    nm_sm_stage_drop(s, l->stage);
    free(l);
    return err;
  }
  s->staged_sends += l->stage != 0;
  nm_sm_push(&s->lsends, l);
  return NM_ESUCCESS;
}

/* Receive @p r has its sender's LRTS: queue its copy. The copy runs in steps after the rings are read
 * (nm_sm_pull_step()), so that a packet (an urgent message, an RTR) never waits behind a whole large copy. */
static void nm_sm_pull_queue(struct nm_sm_s *s, struct nm_sm_large_s *r, const struct nm_sm_lrts_s *rts)
{
  r->src = rts->addr;
  /* More than the receive holds (a truncated or discarded get rendezvous): the first r->len bytes, and no shared
   * copy (its sender checks that the invitation names the whole send). */
  r->src_len = rts->len < r->len ? rts->len : r->len;
  r->no_coop = rts->len > r->len || rts->stage;
  r->stage = rts->stage;
  r->id = rts->id;
  r->got = 0;
  r->err = NM_ESUCCESS;
  r->next = NULL;
  if (s->pulls_tail)
    s->pulls_tail->next = r;
  else
    s->pulls = r;
  s->pulls_tail = r;
}

/* ---- cooperative copy ----
 * One CMA copy runs at 3-4 GB/s here where memcpy runs at 10 GB/s: the kernel pins and copies page by page. A
 * large copy is therefore shared: the receiver invites the sender (LHELP: generation, destination), and both take
 * NM_SM_PULL_STEP chunks from the claim word in the receiver's header page, the receiver reading them
 * (process_vm_readv), the sender writing them (process_vm_writev), one chunk per progress pass each. A sender that
 * does not progress (it computes) leaves every chunk to the receiver. The copy ends when every chunk is done; the
 * claim word carries the generation, so a sender's claim of an older copy fails and never touches a newer one. */

/* ---- step sizes ----
 * A copy step holds its progress pass: packets that arrive meanwhile wait for it. While urgent traffic goes through
 * this rank (an express packet sent or read in the last NM_SM_URGENT_WINDOW_NS), steps are NM_SM_PULL_STEP (64 KiB,
 * 3-5 us here), so that an urgent 8 B message behind bulk stays within a few times its idle latency (issue 15). Else
 * a copy alone goes by steps of NM_SM_STEP_MAX, and a shared copy by chunks of half the transfer (at most
 * NM_SM_STEP_MAX): a 64 KiB step is a system call per 64 KiB, and a copy of one chunk per side runs both at once.
 * Ping-pong over sm, 1-2 MiB: 22-23 GB/s by 64 KiB chunks, 28 GB/s by two chunks; a transfer of one chunk alone
 * runs at 15 GB/s (doc/performance.md, "Copy steps sized by urgent traffic"). The first urgent packet after a calm
 * stretch may wait for one long step (up to ~70 us at 1 MiB); the ones after it do not. */

/* Whether urgent traffic went through this rank lately. */
static int nm_sm_urgent_recent(const struct nm_sm_s *s)
{
  return s->urgent_ns && nm_drv_coarse_ns() - s->urgent_ns < NM_SM_URGENT_WINDOW_NS;
}

/* Chunk size of a shared copy of @p len bytes opened now. */
static uint64_t nm_sm_coop_chunk(const struct nm_sm_s *s, uint64_t len)
{
  if (nm_sm_urgent_recent(s))
    return NM_SM_PULL_STEP;
  uint64_t half = (len / 2 + NM_SM_PULL_STEP - 1) / NM_SM_PULL_STEP * NM_SM_PULL_STEP;
  return half < NM_SM_PULL_STEP ? NM_SM_PULL_STEP : half > NM_SM_STEP_MAX ? NM_SM_STEP_MAX : half;
}

/* Step of a copy made alone, decided at each step (urgent traffic that starts shortens the rest at once). */
static uint64_t nm_sm_solo_step(const struct nm_sm_s *s)
{
  return nm_sm_urgent_recent(s) ? NM_SM_PULL_STEP : NM_SM_STEP_MAX;
}

static uint64_t nm_sm_chunks(uint64_t len, uint64_t chunk) { return (len + chunk - 1) / chunk; }

/* Bytes of the step of at most @p step bytes that starts at @p off of a transfer of @p len bytes. */
static uint64_t nm_sm_step_len(uint64_t len, uint64_t off, uint64_t step)
{
  return len - off < step ? len - off : step;
}

/* Copy NM_SM_STAGE_STEP more bytes into the first slot still filling, one step per progress pass, after the
 * packets like the readers' copy: a slot filled in one call (up to 4 MiB, 0.2-0.4 ms here) held every packet of the
 * pass behind it, and an urgent 8 B message behind 64 MiB of bulk waited 96-127x its idle latency; 64 KiB steps
 * left 1 MiB pieces at 4.2x, 32 KiB at 3.3x, 16 KiB cost the 1 MiB collectives more passes (doc/performance.md,
 * "Staged sends filled by steps"). A slot just filled releases the LRTS of the sends that name it.
 * @return steps done (0, 1). */
static int nm_sm_stage_fill_step(struct nm_sm_s *s)
{
  for (unsigned k = 0; s->stage_used && k < NM_SM_STAGE_SLOTS; k++) {
    struct nm_sm_stage_s *st = &s->stage[k];
    if (!st->refs || st->filled >= st->len)
      continue;
    uint64_t n = st->len - st->filled < NM_SM_STAGE_STEP ? st->len - st->filled : NM_SM_STAGE_STEP;
    uint8_t *slot = s->seg + nm_sm_stage_off() + (size_t)k * NM_SM_STAGE_SLOT;
    memcpy(slot + st->filled, (const uint8_t *)st->buf + st->filled, n);
    st->filled += n;
    if (st->filled < st->len)
      return 1;
    for (struct nm_sm_large_s **pp = &s->lsends; *pp;) {
      struct nm_sm_large_s *l = *pp;
      if (!l->rts_wait || l->stage != k + 1) {
        pp = &l->next;
        continue;
      }
      l->rts_wait = 0;
      int err = nm_sm_send_lrts(s, l);
      if (!err) {
        pp = &l->next;
        continue;
      }
      *pp = l->next; /* the peer cannot be told: the send fails */
      nm_sm_stage_drop(s, l->stage);
      l->err = err;
      l->len = 0;
      nm_sm_push(&s->done, l);
    }
    return 1;
  }
  return 0;
}

/* Take the next chunk of copy @p gen. @return its index, or -1 if that copy is over, closed, or all claimed. */
static int64_t nm_sm_coop_claim(_Atomic uint64_t *claim, uint64_t gen, uint64_t nchunks)
{
  uint64_t w = atomic_load_explicit(claim, memory_order_acquire);
  for (;;) {
    if ((w >> 32) != gen || (w & 0xffffffffu) >= nchunks)
      return -1;
    if (atomic_compare_exchange_weak_explicit(claim, &w, w + 1, memory_order_acq_rel, memory_order_acquire))
      return (int64_t)(w & 0xffffffffu);
  }
}

/* Copy bytes [off, off + len) of a large transfer by CMA, between @p local and @p remote in process @p pid.
 * @return 0, or -NM_EDRIVER. */
static int nm_sm_cma(pid_t pid, int write, uint8_t *local, uint64_t remote, uint64_t off, uint64_t len)
{
  uint64_t done = 0;
  while (done < len) {
    struct iovec l = {.iov_base = local + off + done, .iov_len = len - done};
    struct iovec r = {.iov_base = (void *)(uintptr_t)(remote + off + done), .iov_len = len - done};
    ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      fprintf(stderr, "nmad: sm: process_vm_%sv with pid %d failed: %s\n", write ? "write" : "read", (int)pid,
              n < 0 ? strerror(errno) : "no progress");
      return -NM_EDRIVER;
    }
    done += (uint64_t)n;
  }
  return NM_ESUCCESS;
}

/* Receiver: open the shared copy of @p r (the head of the pulls) and invite its sender. */
static void nm_sm_coop_open(struct nm_sm_s *s, struct nm_sm_large_s *r)
{
  struct nm_sm_seg_hdr_s *h = (struct nm_sm_seg_hdr_s *)s->seg;
  if (++s->coop_gen == 0)
    s->coop_gen = 1; /* 0 means "not shared" */
  atomic_store_explicit(&h->coop_done, 0, memory_order_relaxed);
  atomic_store_explicit(&h->coop_claim, (uint64_t)s->coop_gen << 32, memory_order_release);
  r->coop_chunk = nm_sm_coop_chunk(s, r->src_len);
  struct nm_sm_lhelp_s help = {.id = r->id, .gen = s->coop_gen, .dst = (uint64_t)(uintptr_t)r->buf,
                               .len = r->src_len, .chunk = r->coop_chunk};
  if (nm_sm_ctrl(s, r->peer, NM_SM_LHELP, &help, sizeof(help)) == NM_ESUCCESS) {
    r->coop_gen = s->coop_gen;
  } else { /* no memory for the invitation: copy alone, and do not ask again at every pass */
    atomic_store_explicit(&h->coop_claim, 0, memory_order_release);
    r->coop_closed = 1;
  }
}

/* Whether process @p pid is gone (only ESRCH says so: any other answer may be a live process). */
static int nm_sm_pid_gone(pid_t pid) { return kill(pid, 0) < 0 && errno == ESRCH; }

enum nm_sm_coop_step_e { NM_SM_COOP_WAITING, NM_SM_COOP_COPIED, NM_SM_COOP_OVER };

/* Receiver: one pass of the shared copy of @p r. @return NM_SM_COOP_OVER when the copy is over (r->err says how),
 * NM_SM_COOP_COPIED when this pass copied a chunk (or changed the copy's state), NM_SM_COOP_WAITING when it only
 * waits for the sender's chunks: an idle pass, so that the core's wait yields and blocks as on any idle pass. */
static enum nm_sm_coop_step_e nm_sm_coop_pull(struct nm_sm_s *s, struct nm_sm_large_s *r)
{
  enum nm_sm_coop_step_e step = NM_SM_COOP_WAITING;
  struct nm_sm_seg_hdr_s *h = (struct nm_sm_seg_hdr_s *)s->seg;
  pid_t pid = (pid_t)s->peers[r->peer].addr.pid;
  uint64_t n = nm_sm_chunks(r->src_len, r->coop_chunk);
  if (!r->coop_closed) {
    int64_t k = nm_sm_coop_claim(&h->coop_claim, r->coop_gen, n);
    if (k >= 0) {
      uint64_t off = (uint64_t)k * r->coop_chunk;
      r->err = nm_sm_cma(pid, 0, r->buf, r->src, off, nm_sm_step_len(r->src_len, off, r->coop_chunk));
      atomic_fetch_add_explicit(&h->coop_done, 1, memory_order_acq_rel);
      s->coop_pulled++;
      step = NM_SM_COOP_COPIED;
    }
    if (r->err || (k < 0 && nm_sm_pid_gone(pid))) {
      /* close it: no new claim; the copy is over once the chunks claimed so far are done (the sender's may still
       * be written into the buffer until then) */
      uint64_t w = atomic_exchange_explicit(&h->coop_claim, 0, memory_order_acq_rel);
      r->coop_closed = (w >> 32) == r->coop_gen ? (w & 0xffffffffu) : n;
      if (!r->err)
        r->err = -NM_EDRIVER; /* the sender died holding a chunk */
      step = NM_SM_COOP_COPIED;
    }
  }
  uint64_t done = atomic_load_explicit(&h->coop_done, memory_order_acquire);
  if (r->coop_closed) {
    if (done < r->coop_closed && !nm_sm_pid_gone(pid))
      return step; /* its sender may still write into the buffer */
  } else if (done < n) {
    return step;
  }
  if (!r->err && atomic_load_explicit(&h->coop_bad, memory_order_acquire) == r->coop_gen) {
    r->coop_gen = 0; /* the sender failed a chunk: copy it all again, alone (the next passes) */
    r->coop_closed = 1;
    r->got = 0;
    return NM_SM_COOP_COPIED;
  }
  r->got = r->err ? 0 : r->src_len;
  r->coop_gen = 0;
  return NM_SM_COOP_OVER;
}

/* Sender: one chunk of each shared copy we are invited to. @return chunks copied. */
static int nm_sm_coop_push(struct nm_sm_s *s)
{
  int n = 0;
  for (struct nm_sm_large_s *l = s->lsends; l && s->coop_invited; l = l->next) {
    if (!l->coop_gen)
      continue;
    if (l->coop_chunk > NM_SM_PULL_STEP && nm_sm_urgent_recent(s))
      continue; /* a long step here would hold our urgent traffic: the receiver copies those chunks */
    struct nm_sm_peer_s *p = &s->peers[l->peer];
    int64_t k = nm_sm_coop_claim(&p->hdr->coop_claim, l->coop_gen, nm_sm_chunks(l->len, l->coop_chunk));
    if (k < 0) {
      l->coop_gen = 0; /* all claimed, or over */
      s->coop_invited--;
      continue;
    }
    uint64_t off = (uint64_t)k * l->coop_chunk;
    if (nm_sm_cma((pid_t)p->addr.pid, 1, l->buf, l->coop_dst, off, nm_sm_step_len(l->len, off, l->coop_chunk)) !=
        NM_ESUCCESS) {
      atomic_store_explicit(&p->hdr->coop_bad, l->coop_gen, memory_order_release);
      l->coop_gen = 0;
      s->coop_invited--;
    }
    atomic_fetch_add_explicit(&p->hdr->coop_done, 1, memory_order_acq_rel); /* done, or given up */
    s->coop_pushed++;
    n++;
  }
  return n;
}

/* Copy up to NM_SM_PULL_STEP bytes of the oldest queued receive by CMA (its share, when the copy is shared with
 * its sender); when it is whole (or failed), answer LFIN and report it. @return 1 if something was done. */
static int nm_sm_pull_step(struct nm_sm_s *s)
{
  struct nm_sm_large_s *r = s->pulls;
  if (!r)
    return 0;
  if (!r->err && r->got == 0 && !r->coop_gen && !r->coop_closed && !r->no_coop && s->coop_on &&
      r->src_len >= NM_SM_COOP_MIN &&
      r->peer != (uint64_t)s->self_index)
    nm_sm_coop_open(s, r);
  if (r->coop_gen) {
    enum nm_sm_coop_step_e step = nm_sm_coop_pull(s, r);
    if (step != NM_SM_COOP_OVER)
      return step == NM_SM_COOP_COPIED;
  } else if (!r->err) {
    /* a staged read is a memcpy on an oversubscribed host: by NM_SM_PULL_STEP, which measured faster there */
    uint64_t n = nm_sm_step_len(r->src_len, r->got, r->stage ? NM_SM_PULL_STEP : nm_sm_solo_step(s));
    if (r->stage) { /* from the sender's staging slot (checked at its LRTS: stage <= slots, len <= slot) */
      const uint8_t *slots = nm_sm_stage_map(&s->peers[r->peer]);
      if (slots)
        memcpy((uint8_t *)r->buf + r->got, slots + (r->stage - 1) * NM_SM_STAGE_SLOT + r->got, n);
      else
        r->err = -NM_ECLOSED;
      s->staged_reads += !r->err && r->got + n == r->src_len;
    } else {
      r->err = nm_sm_cma((pid_t)s->peers[r->peer].addr.pid, 0, r->buf, r->src, r->got, n);
    }
    if (!r->err)
      r->got += n;
    if (!r->err && r->got < r->src_len)
      return 1;
  }
  s->pulls = r->next;
  if (!s->pulls)
    s->pulls_tail = NULL;
  struct nm_sm_lfin_s fin = {.id = r->id, .status = r->err};
  int ferr = nm_sm_ctrl(s, r->peer, NM_SM_LFIN, &fin, sizeof(fin));
  r->len = r->err ? 0 : r->got;
  if (!r->err)
    r->err = ferr;
  nm_sm_push(&s->done, r);
  return 1;
}

static int nm_sm_large_recv(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx)
{
  struct nm_sm_s *s = drv->priv;
  if (peer >= s->n_peers)
    return -NM_EINVAL;
  struct nm_sm_large_s *r = calloc(1, sizeof(*r));
  if (!r)
    return -NM_ENOMEM;
  r->peer = peer;
  r->rtag = rtag;
  r->buf = buf;
  r->len = len;
  r->ctx = ctx;
  struct nm_sm_large_s *early = nm_sm_take(&s->rts_early, peer, rtag, 0);
  if (early) { /* the copy runs at the next progress passes, and its completion is reported there */
    struct nm_sm_lrts_s rts = {.rtag = early->rtag, .addr = (uint64_t)(uintptr_t)early->buf, .len = early->len,
                               .id = early->id, .stage = early->stage};
    free(early);
    nm_sm_pull_queue(s, r, &rts);
    return NM_ESUCCESS;
  }
  nm_sm_push(&s->lrecvs, r);
  return NM_ESUCCESS;
}

/* A receive not paired with its LRTS yet, or a send whose receiver withdrew it (get rendezvous, nm_cancel.c): its
 * LFIN will never come, and its peer never reads the buffer (an invitation to share a copy comes only from a
 * receiver that pulls). */
static int nm_sm_large_cancel(struct nm_drv_s *drv, void *ctx)
{
  struct nm_sm_s *s = drv->priv;
  struct nm_sm_large_s **lists[] = {&s->lrecvs, &s->lsends};
  for (int i = 0; i < 2; i++)
    for (struct nm_sm_large_s **pp = lists[i]; *pp; pp = &(*pp)->next)
      if ((*pp)->ctx == ctx) {
        struct nm_sm_large_s *r = *pp;
        *pp = r->next;
        if (i == 1 && r->coop_gen)
          s->coop_invited--;
        if (i == 1)
          nm_sm_stage_drop(s, r->stage);
        r->err = -NM_ECANCELED;
        r->len = 0;
        nm_sm_push(&s->done, r); /* reported by the next progress pass, as a provider's cancel would be */
        return NM_ESUCCESS;
      }
  return -NM_ENOTFOUND;
}

/* One control record from peer @p peer. @return 0, or -1 if it is malformed. */
static int nm_sm_control(struct nm_drv_s *drv, uint64_t peer, uint32_t kind, const uint8_t *body, uint32_t len)
{
  struct nm_sm_s *s = drv->priv;
  if (kind == NM_SM_LRTS) {
    struct nm_sm_lrts_s rts;
    if (len != sizeof(rts))
      return -1;
    memcpy(&rts, body, sizeof(rts));
    if (rts.stage > NM_SM_STAGE_SLOTS || (rts.stage && rts.len > NM_SM_STAGE_SLOT))
      return -1;
    struct nm_sm_large_s *r = nm_sm_take(&s->lrecvs, peer, rts.rtag, 0);
    if (r) {
      nm_sm_pull_queue(s, r, &rts);
      return 0;
    }
    struct nm_sm_large_s *e = calloc(1, sizeof(*e));
    if (!e)
      return 0; /* lost: the transfer never completes and the peer's fault handling ends it */
    e->peer = peer;
    e->rtag = rts.rtag;
    e->buf = (void *)(uintptr_t)rts.addr;
    e->len = rts.len;
    e->id = rts.id;
    e->stage = rts.stage;
    nm_sm_push(&s->rts_early, e);
    return 0;
  }
  if (kind == NM_SM_LHELP) {
    struct nm_sm_lhelp_s help;
    if (len != sizeof(help))
      return -1;
    memcpy(&help, body, sizeof(help));
    for (struct nm_sm_large_s *l = s->lsends; l; l = l->next)
      if (l->peer == peer && l->id == help.id) {
        if (help.len != l->len || help.gen == 0 || help.gen > UINT32_MAX || !s->peers[peer].hdr ||
            help.chunk < NM_SM_PULL_STEP || help.chunk > NM_SM_STEP_MAX || help.chunk % NM_SM_PULL_STEP)
          return -1;
        if (!l->coop_gen)
          s->coop_invited++;
        l->coop_gen = help.gen;
        l->coop_dst = help.dst;
        l->coop_chunk = help.chunk;
        return 0;
      }
    return -1; /* no such send of ours (an invitation always comes before its LFIN) */
  }
  if (kind == NM_SM_LFIN) {
    struct nm_sm_lfin_s fin;
    if (len != sizeof(fin))
      return -1;
    memcpy(&fin, body, sizeof(fin));
    struct nm_sm_large_s *l = nm_sm_take(&s->lsends, peer, fin.id, 1);
    if (!l)
      return -1; /* no such send of ours */
    if (l->coop_gen)
      s->coop_invited--;
    nm_sm_stage_drop(s, l->stage);
    void *ctx = l->ctx;
    size_t n = l->len;
    free(l);
    drv->up.large_done(drv->up.ref, ctx, fin.status ? -NM_EDRIVER : NM_ESUCCESS, fin.status ? 0 : n);
    return 0;
  }
  return -1;
}

/* Read up to NM_SM_BURST records of the ring from @p peer. @return records handled.
 * Re-entrant: an upcall may progress the core again (a handler that waits, a forwarding hook), which reads this
 * ring from inside this loop. A record is taken (in_head moves past it) before its upcall, so a nested read goes on
 * with the next one; the ring's head, which gives the space back to the sender, moves only when no read of this
 * ring is under way below us, so no record is overwritten while an upcall still reads it. */
/* Read peer @p peer's express ring in our segment (see nm_sm_send_urgent()). Untrusted like the main ring: a
 * tail more than NM_SM_XSLOTS ahead, or a slot that is no packet of at most NM_SM_XMAX bytes, stops reading the
 * peer. @return packets delivered. */
static int nm_sm_drain_express(struct nm_drv_s *drv, uint64_t peer)
{
  struct nm_sm_s *s = drv->priv;
  struct nm_sm_peer_s *p = &s->peers[peer];
  struct nm_sm_ring_ctl_s *ctl = nm_sm_ring_ctl(s->seg, peer);
  uint64_t tail = atomic_load_explicit(&ctl->x_tail, memory_order_acquire);
  if (p->x_in_head >= tail || p->dead)
    return 0;
  int n = 0;
  p->x_depth++;
  while (p->x_in_head < tail && !p->dead) {
    const unsigned char *slot = ctl->x_slots[p->x_in_head % NM_SM_XSLOTS];
    const struct nm_sm_rec_s *r = (const struct nm_sm_rec_s *)slot;
    uint32_t kind = r->kind, len = r->len;
    if (tail - p->x_in_head > NM_SM_XSLOTS || kind != NM_SM_PKT || len > NM_SM_XMAX) {
      fprintf(stderr, "nmad: sm: malformed express record from rank %llu: its rings are no longer read\n",
              (unsigned long long)peer);
      p->dead = 1;
      p->in_ctl = NULL;
      break;
    }
    p->x_in_head++;
    drv->up.packet(drv->up.ref, drv, slot + NM_SM_REC_HDR, len, peer);
    if (p->x_depth == 1) /* the slot is read: the sender may reuse it */
      atomic_store_explicit(&ctl->x_head, p->x_in_head, memory_order_release);
    n++;
    if (p->x_in_head > tail) /* a nested read went further than our snapshot */
      tail = p->x_in_head;
  }
  if (--p->x_depth == 0 && !p->dead)
    atomic_store_explicit(&ctl->x_head, p->x_in_head, memory_order_release);
  if (n)
    s->urgent_ns = nm_drv_coarse_ns();
  return n;
}

/* The express rings of the senders that flagged theirs since we last looked. A sender sets its bit before the
 * flag, and we clear the flag before the bits: a bit set after we read its word leaves the flag set for the next
 * look. */
static int nm_sm_drain_all_express(struct nm_drv_s *drv)
{
  struct nm_sm_s *s = drv->priv;
  struct nm_sm_seg_hdr_s *hdr = (struct nm_sm_seg_hdr_s *)s->seg;
  if (!atomic_load_explicit(&hdr->express, memory_order_relaxed) ||
      !atomic_exchange_explicit(&hdr->express, 0, memory_order_acq_rel))
    return 0;
  int n = 0;
  for (uint64_t w = 0; w < (s->n_peers + 63) / 64; w++) {
    if (!atomic_load_explicit(&hdr->express_from[w], memory_order_relaxed))
      continue;
    uint64_t bits = atomic_exchange_explicit(&hdr->express_from[w], 0, memory_order_acq_rel);
    while (bits) {
      uint64_t i = w * 64 + (uint64_t)__builtin_ctzll(bits);
      bits &= bits - 1;
      if (i < s->n_peers && (int)i != s->self_index && !s->peers[i].dead) /* untrusted bits */
        n += nm_sm_drain_express(drv, i);
    }
  }
  return n;
}

/* Give peer @p p's ring (control page @p ctl) back up to in_head: the done mark on the last record taken, then the
 * head (release: a sender that reads either may write over what came before). A record is marked once only: its
 * sender, once it saw the mark, may have written a new record at the same place. */
static void nm_sm_give_back(const struct nm_sm_s *s, struct nm_sm_peer_s *p, struct nm_sm_ring_ctl_s *ctl)
{
  if (p->in_last != UINT64_MAX) {
    struct nm_sm_rec_s *r = (struct nm_sm_rec_s *)((uint8_t *)ctl + NM_SM_PAGE + p->in_last % NM_SM_RING_BYTES);
    atomic_store_explicit(&r->stamp, nm_sm_stamp_done(s->self.nonce, p->in_last), memory_order_release);
    p->in_last = UINT64_MAX;
  }
  atomic_store_explicit(&ctl->head, p->in_head, memory_order_release);
}

static int nm_sm_drain(struct nm_drv_s *drv, uint64_t peer)
{
  struct nm_sm_s *s = drv->priv;
  struct nm_sm_peer_s *p = &s->peers[peer];
  struct nm_sm_ring_ctl_s *ctl = p->in_ctl; /* kept: a malformed record clears in_ctl below */
  uint64_t at;
  const struct nm_sm_rec_s *r = nm_sm_peer_next(s, p, &at);
  if (!r)
    return 0; /* nothing new: no store to the ring's head line on an idle pass (one per peer per pass before) */
  int n = 0;
  if (!p->in_mapped) { /* first traffic from this peer: map the pages its sender made, all at once */
    madvise(ctl, NM_SM_RING_STRIDE, NM_SM_MADV_POPULATE_WRITE);
    p->in_mapped = 1;
  }
  p->in_depth++;
  for (; r && n < NM_SM_BURST; r = nm_sm_peer_next(s, p, &at)) {
    uint64_t off = at % NM_SM_RING_BYTES;
    uint32_t kind = r->kind, len = r->len;
    int bad = kind == NM_SM_WRAP && off == 0; /* a wrap only ever ends a lap */
    if (!bad && kind == NM_SM_WRAP) {
      p->in_head = at + NM_SM_RING_BYTES - off;
      continue;
    }
    uint64_t need = nm_sm_align(NM_SM_REC_HDR + (uint64_t)len);
    bad = bad || len > NM_SM_MAX_PACKET || off + need > NM_SM_RING_BYTES;
    if (!bad) {
      p->in_head = at + need;
      p->in_last = at;
      if (kind == NM_SM_PKT)
        drv->up.packet(drv->up.ref, drv, (const uint8_t *)r + NM_SM_REC_HDR, len, peer);
      else
        bad = nm_sm_control(drv, peer, kind, (const uint8_t *)r + NM_SM_REC_HDR, len) != 0;
    }
    if (bad) { /* untrusted bytes (DESIGN.md rule 5): stop reading this peer; its gate fails by the core's means */
      fprintf(stderr, "nmad: sm: malformed record from rank %llu: its ring is no longer read\n",
              (unsigned long long)peer);
      p->dead = 1;
      p->in_ctl = NULL;
      break;
    }
    if (p->in_depth == 1) /* every record before in_head is done: give the space back now */
      nm_sm_give_back(s, p, ctl);
    n++;
    if (atomic_load_explicit(&((struct nm_sm_seg_hdr_s *)s->seg)->express, memory_order_relaxed))
      break; /* an express packet came meanwhile: it goes before the rest of this ring (nm_sm_progress()) */
  }
  if (--p->in_depth == 0 && !p->dead)
    nm_sm_give_back(s, p, ctl);
  return n;
}

static int nm_sm_progress(struct nm_drv_s *drv)
{
  struct nm_sm_s *s = drv->priv;
  int n = 0;
  if (s->armed) { /* we were about to sleep: we are awake now, and drain the pipe's bytes */
    s->armed = 0;
    atomic_store_explicit(&((struct nm_sm_seg_hdr_s *)s->seg)->sleeping, 0, memory_order_relaxed);
    /* A short read emptied the pipe: reading again only to see EAGAIN would add a system call to every wake-up
     * (a byte written after this read only makes a later sleep return at once, as it would after an EAGAIN). */
    char buf[64];
    while (read(s->wake_rd, buf, sizeof(buf)) == (ssize_t)sizeof(buf))
      ;
  }
  if (s->ctrl_head)
    nm_sm_ctrl_flush(s);
  /* The peer count and the header read once a pass, not again after each ring (a packet's upcall could change them
   * as far as the compiler knows); a peer that joins during the pass is read from the next one. The flags and
   * tails are read inline: a quiet pass makes no call (issue 18: ~180 instructions of a pass over 4 rings, read
   * about 5 times per barrier and collective by each waiting rank, came down to ~60). */
  const uint64_t n_peers = s->n_peers;
  const struct nm_sm_seg_hdr_s *hdr = (const struct nm_sm_seg_hdr_s *)s->seg;
  int packets = atomic_load_explicit(&hdr->express, memory_order_relaxed) ? nm_sm_drain_all_express(drv) : 0;
  for (uint64_t i = 0; i < n_peers; i++) {
    const struct nm_sm_peer_s *p = &s->peers[i]; /* again after each drain: an upcall may grow the table */
    uint64_t at;
    if (!nm_sm_peer_next(s, p, &at))
      continue; /* ourselves, a dead peer, or nothing new */
    packets += nm_sm_drain(drv, i);
    /* what came while that ring was read, before the next ring */
    if (atomic_load_explicit(&hdr->express, memory_order_relaxed))
      packets += nm_sm_drain_all_express(drv);
  }
  n += packets;
  /* A pass that delivered packets returns before its copy step: the application (or the core) answers what they
   * carried (an urgent message, an RTR) without waiting ~25 us for 256 KiB to be copied. Every other pass copies
   * whatever arrives, so that a stream of packets cannot starve the large transfers (at most half speed). */
  if (packets && (s->pulls || nm_sm_stage_filling(s)) && !s->pull_yielded) {
    s->pull_yielded = 1;
  } else {
    s->pull_yielded = 0;
    n += nm_sm_pull_step(s);
    n += nm_sm_stage_fill_step(s);
  }
  if (s->coop_invited)
    n += nm_sm_coop_push(s);
  while (s->done) {
    struct nm_sm_large_s *l = s->done;
    s->done = l->next;
    void *ctx = l->ctx;
    int err = l->err;
    size_t len = l->len;
    free(l);
    drv->up.large_done(drv->up.ref, ctx, err, len);
    n++;
  }
  return n;
}

static int nm_sm_wait_fd(struct nm_drv_s *drv) { return ((struct nm_sm_s *)drv->priv)->wake_rd; }

static int nm_sm_pending(const struct nm_sm_s *s)
{
  if (s->done || s->ctrl_head || s->pulls || nm_sm_stage_filling(s) ||
      atomic_load(&((struct nm_sm_seg_hdr_s *)s->seg)->express))
    return 1;
  for (uint64_t i = 0; i < s->n_peers; i++) {
    uint64_t at;
    if (nm_sm_peer_next(s, &s->peers[i], &at))
      return 1;
  }
  return 0;
}

/* Raise our flag, then look at the rings once more (the other half of nm_sm_wake()'s pair). */
static int nm_sm_trywait(struct nm_drv_s *drv)
{
  struct nm_sm_s *s = drv->priv;
  struct nm_sm_seg_hdr_s *hdr = (struct nm_sm_seg_hdr_s *)s->seg;
  s->armed = 1;
  atomic_store(&hdr->sleeping, 1);
  /* our flag before the stamps nm_sm_pending() reads (acquire loads, which alone could pass the store) */
  atomic_thread_fence(memory_order_seq_cst);
  /* The heavy half of nm_sm_wake()'s fence: a registered sender that published before this returns is seen by
   * nm_sm_pending(), one that publishes after sees our flag. Where the kernel has no membarrier(), no peer on this
   * host registered either (they all fence). Should the call fail here and now, the senders that skip their fence
   * could miss us: we do not sleep this time. */
  if (s->membarrier && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0) {
    atomic_store_explicit(&hdr->sleeping, 0, memory_order_relaxed);
    return -NM_EAGAIN;
  }
  if (nm_sm_pending(s)) {
    atomic_store_explicit(&hdr->sleeping, 0, memory_order_relaxed);
    return -NM_EAGAIN;
  }
  return NM_ESUCCESS;
}

static void nm_sm_host_oversubscribed(struct nm_drv_s *drv, int oversubscribed)
{
  struct nm_sm_s *s = drv->priv;
  s->coop_on = !oversubscribed;
  s->coop_told = 1;
  /* Every peer is connected: the sleep/wake pair without a fence on each of our sends (nm_sm_wake()), on a host of
   * at most NM_SM_ASYM_PEERS ranks, where a sleeper's membarrier() interrupts few processors. Registering here,
   * after our fenced sends, is safe: the registration is itself a full barrier. A process that does not register
   * keeps its fence. */
  if (s->membarrier && !s->asym_fence && s->n_peers <= NM_SM_ASYM_PEERS)
    s->asym_fence = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

/* Bytes of our records peer @p peer has not read yet (nm_drv_ops_s.backlog). */
static size_t nm_sm_backlog(struct nm_drv_s *drv, uint64_t peer)
{
  struct nm_sm_s *s = drv->priv;
  if (peer >= s->n_peers)
    return 0;
  struct nm_sm_peer_s *p = &s->peers[peer];
  if (!p->out || p->dead)
    return 0;
  nm_sm_head_read(p);
  return p->out_tail > p->out_head_seen ? (size_t)(p->out_tail - p->out_head_seen) : 0;
}

const struct nm_drv_ops_s nm_drv_sm_ops = {
  .name = "sm",
  .open = nm_sm_open,
  .close = nm_sm_close,
  .get_address = nm_sm_get_address,
  .connect = nm_sm_connect,
  .send = nm_sm_send,
  .sendv = nm_sm_sendv,
  .large_send = nm_sm_large_send,
  .large_recv = nm_sm_large_recv,
  .large_cancel = nm_sm_large_cancel,
  .progress = nm_sm_progress,
  .wait_fd = nm_sm_wait_fd,
  .trywait = nm_sm_trywait,
  .host_oversubscribed = nm_sm_host_oversubscribed,
  .backlog = nm_sm_backlog,
  .send_urgent = nm_sm_send_urgent,
};
