/**
 * @file nm_driver.h
 * @brief Private: the one ops table every driver implements (DESIGN.md "Drivers").
 *
 * A driver instance (struct nm_drv_s) is one network endpoint: it carries packets (small, up to
 * props.max_packet bytes, received into driver-owned buffers) and large transfers (posted straight from/into
 * user buffers, matched by a 64-bit rendezvous tag chosen by the receiver). Completions reach the core only
 * through the upcalls registered at open time (lower layers never call upper layers directly).
 */
#ifndef NM_DRIVER_H
#define NM_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct nm_drv_s;

/** Callbacks into the core, registered at open. */
struct nm_drv_upcalls_s {
  void *ref; /* the core */
  /** A packet send posted with ctx finished (err 0 or -NM_E*). */
  void (*send_done)(void *ref, void *ctx, int err);
  /** A packet arrived; @p buf is valid only during the call. @p src_hint is the peer index the driver knows
   *  the packet came from, or UINT64_MAX if it cannot tell (with NM_DRV_F_AUTH_SOURCE: a sender the driver does
   *  not know, whose packet the core drops). */
  void (*packet)(void *ref, struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src_hint);
  /** A large send or receive posted with ctx finished; @p len bytes moved. */
  void (*large_done)(void *ref, void *ctx, int err, size_t len);
};

/** Properties the strategies and the core read. */
struct nm_drv_props_s {
  size_t max_packet;      /* bytes; packets never exceed this */
  size_t inject_size;     /* packets up to this size complete at post time */
  uint64_t max_large;     /* largest single large transfer in bytes */
  uint32_t latency_ns;    /* nominal one-way latency of a lone small message (Hockney's alpha), for multi-rail
                             splitting and the collectives' cost models */
  uint32_t bandwidth_MBps;/* nominal bandwidth */
  uint32_t overhead_ns;   /* the sender's CPU time per message (LogP's o), part of latency_ns: the wire latency
                             L is latency_ns - overhead_ns (nm_coll_model_logp()) */
  uint32_t gap_ns;        /* least interval between two messages a sender sends back to back (LogP's g); 0: the
                             overhead. The broadcast model charges max(o, g) per message sent */
  uint32_t gap_free;      /* messages a sender posts back to back, after a pause, before the gap applies (a send
                             queue that takes a burst at the overhead's cost); 0: every message pays the gap */
  char provider[32];      /* e.g. "shm", "tcp;ofi_rxm", "self" */
  unsigned flags;         /* NM_DRV_F_* */
  uint64_t fake_above;    /* with NM_DRV_F_FAKE_PAYLOAD: large transfers of more bytes move only their size */
  size_t urgent_max;      /* with send_urgent: the largest packet it takes, in bytes */
};
/** Peers are reached by rank: no address exchange and no connect() (the simulation driver). */
#define NM_DRV_F_RANK_ADDRESSED 0x1u
/** Large transfers above props.fake_above bytes move only their size (nmad-sim --fake-payload). */
#define NM_DRV_F_FAKE_PAYLOAD 0x2u
/** The driver authenticates sources: the packet upcall's src_hint is the peer the transport says sent it, and
 *  UINT64_MAX means a sender outside the address table, so the core drops the packet instead of trusting the rank
 *  its header claims (libfabric FI_SOURCE where nm_ofi_quirks.c says it holds). */
#define NM_DRV_F_AUTH_SOURCE 0x4u
/** The receiver pulls large transfers from the sender's announcement (sm: LRTS, then CMA), so the core may post a
 *  large send before any receive is posted: the get rendezvous (nm_rdv.c; UCX's rndv get, vader's RGET). Such a
 *  driver also takes a large receive shorter than its send (it copies the first len bytes: truncation, and 0 for
 *  a discarded message), never returns -NM_EAGAIN from large_recv, and withdraws a large send in large_cancel. */
#define NM_DRV_F_RDV_GET 0x8u
/** The driver's peers share one send queue (a NIC): a packet that completes at post keeps the whole driver busy
 *  until the next progress pass, so that the scheduler then picks the next packet across gates by priority (the
 *  libfabric driver; the simulation driver, whose LogP gap is one packet per pass: doc/collectives.md, "The model
 *  in LogP form"). Without it (sm: one ring per peer, nothing shared to order) only the packet's gate waits for
 *  the next pass, so that a burst to it is aggregated, and other gates' packets go at once. */
#define NM_DRV_F_PACED 0x10u
/** sendv() with a NULL context copies the packet before it returns: it returns 1 (done), -NM_EAGAIN (no room, nothing
 *  taken) or another error, never 0 (sm: every packet is copied into the peer's ring). A driver without sendv() sets
 *  it when send() with a NULL context does the same for every packet of at most props.inject_size bytes (libfabric:
 *  fi_inject). The core then sends a lone small message on an idle gate without a packet wrapper (nm_outgoing.c,
 *  nm_send_direct()). */
#define NM_DRV_F_SEND_AT_POST 0x20u
/** A packet above the inject size costs a rendezvous of the provider's own (libfabric's shm: the receiver reads it
 *  with CMA after a handshake), on top of the core's two copies of an eager payload; the core's rendezvous moves
 *  the data once for the same handshake. So on a host that is not oversubscribed and without NMAD_RDV_THRESHOLD, the
 *  rendezvous threshold is lowered to the largest message cut into inject-size pieces (nm_frag_eager_max()):
 *  32 KiB over libfabric's shm 10.2-10.7 us eager, 6.6-7.0 by rendezvous (doc/performance.md, "Rendezvous above
 *  the cut over libfabric's shm"). */
#define NM_DRV_F_EAGER_INJECT_ONLY 0x40u

/** Most pieces a sendv() packet has (NM_PW_GAPS payloads and the core's bytes around them). */
#define NM_DRV_SENDV_MAX 9
#define NM_DRV_ADDR_MAX 128 /* bytes of an endpoint address */
#define NM_DRV_NO_FD (-1)
#define NM_DRV_NO_EVENTS (-2)

struct nm_drv_ops_s {
  const char *name;
  /** Open an endpoint. @p provider: the NMAD_DRIVER word (shm, tcp, ...); @p all_local: all ranks on this
   *  host. @return 0, -NM_ENOTSUP (provider not usable here, message printed), -NM_EDRIVER. */
  int (*open)(struct nm_drv_s *drv, const char *provider, int all_local);
  void (*close)(struct nm_drv_s *drv);
  /** Local endpoint address into addr (*len in: capacity, out: bytes). */
  int (*get_address)(struct nm_drv_s *drv, void *addr, size_t *len);
  /** Make peer @p index reachable at @p addr (called for index 0..n-1 in order at start: the address table;
   *  not called for drivers with NM_DRV_F_RANK_ADDRESSED). */
  int (*connect)(struct nm_drv_s *drv, uint64_t index, const void *addr, size_t len);
  /** Post a packet send. @return 0 posted (send_done follows), 1 completed already (no upcall),
   *  -NM_EAGAIN queue full (retry later), other -NM_E* on failure. */
  int (*send)(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, void *ctx);
  /** Optional: post a packet given in @p iovcnt pieces (at most NM_DRV_SENDV_MAX) whose concatenation is its
   *  @p len bytes; the same returns as send. A driver that copies packets into its own memory (sm's ring) has it,
   *  so that a message's payload is copied once, from the caller's buffer, instead of into the core's packet
   *  first (nm_outgoing.c, "gaps"). The pieces stay valid until the send completes. */
  int (*sendv)(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len, void *ctx);
  /** Post a large send of [buf, buf+len) matched by rtag at the receiver. @return 0, -NM_EAGAIN (queue full:
   *  the core posts it again at a later progress pass; never progress from inside this call) or -NM_E*. */
  int (*large_send)(struct nm_drv_s *drv, uint64_t peer, const void *buf, size_t len, uint64_t rtag, void *ctx);
  /** Post a large receive into [buf, buf+len) for rtag. @return 0, -NM_EAGAIN (as large_send) or -NM_E*. */
  int (*large_recv)(struct nm_drv_s *drv, uint64_t peer, void *buf, size_t len, uint64_t rtag, void *ctx);
  /** Cancel a posted large receive, or with NM_DRV_F_RDV_GET a large send (its large_done reports -NM_ECANCELED,
   *  or never comes if already done). @return 0, -NM_ENOTFOUND. */
  int (*large_cancel)(struct nm_drv_s *drv, void *ctx);
  /** Poll completions without blocking; runs the upcalls. @return number handled. */
  int (*progress)(struct nm_drv_s *drv);
  /** Optional, for drivers whose progress call is costly (a system call): 1 when the driver has nothing of its
   *  own in flight (no send, no large transfer, nothing queued to post), so that a progress call could only find
   *  an arrival. Beside a network rail polled every pass, the core then polls it once per NM_DRV_QUIET_NS once
   *  NM_DRV_QUIET_AFTER calls in a row found nothing (nm_core_progress_drivers()). */
  int (*idle)(struct nm_drv_s *drv);
  /** fd that becomes readable when progress may have work; NM_DRV_NO_FD if the driver has none (the core then
   *  backs off by sleeping briefly); NM_DRV_NO_EVENTS if nothing can happen without a local call (self). */
  int (*wait_fd)(struct nm_drv_s *drv);
  /** 0 when it is safe to block on wait_fd now, -NM_EAGAIN when progress must be called first. */
  int (*trywait)(struct nm_drv_s *drv);
  /** Optional: the driver's clock in ns (DESIGN.md rule 7). When a driver has one, it is the core's time
   *  (nm_core_time_ns()): deadlines, timeouts and the spin and yield phases run on it (simulated time). */
  uint64_t (*now_ns)(struct nm_drv_s *drv);
  /** Optional: block until the driver has an event to progress or until @p deadline_ns (absolute, on now_ns;
   *  0 = none). A driver with this op replaces poll() on the wait fds; it also moves large transfers without
   *  progress calls, so the core blocks while they are in flight. @return 0 on an event, -NM_ETIMEDOUT. */
  int (*block)(struct nm_drv_s *drv, uint64_t deadline_ns);
  /** Optional: whether this host's ranks outnumber the cores they may use, as the launcher counts them from
   *  every local rank's affinity mask (nm_core_configure() calls it once the drivers are connected). A driver
   *  that shares the work of a transfer between its two ends (sm's shared copy) stops when the other end may
   *  have no core of its own. */
  void (*host_oversubscribed)(struct nm_drv_s *drv, int oversubscribed);
  /** Optional, for drivers whose packets to a peer queue in one FIFO the peer reads at its own pace (sm's ring):
   *  bytes of packets posted to @p peer that it has not read yet. A priority-aware strategy keeps this short for
   *  bulk while urgent traffic flows to the peer (nm_strat_bulk_held()). Thread-safety: called with the core lock
   *  held, like every op. */
  size_t (*backlog)(struct nm_drv_s *drv, uint64_t peer);
  /** Optional: post a packet of at most props.urgent_max bytes that carries urgent work (above the default
   *  priority) so that it reaches @p peer ahead of the packets posted to it before (sm: a small ring of its own,
   *  read first), in pieces as sendv(). The core keeps no order between packets of one gate (sequence numbers
   *  restore it), so none is lost. @return 1 (complete at post), -NM_EAGAIN (no room now: the core posts it with
   *  send or sendv instead), -NM_EINVAL, -NM_ECLOSED. Thread-safety: called with the core lock held. */
  int (*send_urgent)(struct nm_drv_s *drv, uint64_t peer, const struct iovec *iov, int iovcnt, size_t len, void *ctx);
};

struct nm_drv_s {
  const struct nm_drv_ops_s *ops;
  struct nm_drv_upcalls_s up;
  struct nm_drv_props_s props;
  int index;      /* rail index in the core */
  unsigned quiet_calls; /* progress calls in a row that found nothing (saturates at NM_DRV_QUIET_AFTER) */
  uint64_t quiet_polled_ns; /* the core's time at its last poll while quiet (nm_core_progress_drivers()) */
  uint64_t inject_pass; /* NM_DRV_F_PACED: the core's pass + 1 when a packet completed at post in that pass (the
                         * driver is busy until the next pass; nm_rail_s.inject_pass is the same for one gate) */
  /* Optional, for a driver that learns of all its work at its own calls (self): the items a progress call would
   * handle. The core does not call progress while it reads 0 (an idle pass then costs no call). NULL: always. */
  const unsigned *queued;
  void *priv;
};

/** A driver with an idle() op whose last NM_DRV_QUIET_AFTER progress calls found nothing is polled at most once
 *  every NM_DRV_QUIET_NS of the core's time while idle() holds, when another network rail is polled every pass
 *  (one without idle(), or not quiet; the clock is read one pass in NM_DRV_QUIET_EVERY): libfabric's tcp costs a system call per poll, and polled every
 *  pass beside sm it took 6-9% of sm's bandwidth at 1-4 MiB; polled one pass in 8 it still made sm's 8 B
 *  ping-pong 1.3x slower (doc/performance.md, "The second rail's polls" and "A quiet rail polled by the clock").
 *  An arrival on it waits at most NM_DRV_QUIET_NS, plus NM_DRV_QUIET_EVERY passes of the other rails. */
#define NM_DRV_QUIET_AFTER 64
#define NM_DRV_QUIET_EVERY 8
#define NM_DRV_QUIET_NS 10000

extern const struct nm_drv_ops_s nm_drv_ofi_ops;
extern const struct nm_drv_ops_s nm_drv_self_ops;
extern const struct nm_drv_ops_s nm_drv_sm_ops;
extern const struct nm_drv_ops_s nm_drv_tcp_ops;

/* Helpers the drivers share (drivers/nm_driver.c). */
/** A random odd 64-bit value (getrandom, else the clock and the pid): a driver publishes it in its address, and a
 *  peer proves it read that address by echoing it. */
uint64_t nm_drv_nonce(void);
/** get_address for a driver whose address is the struct @p self of @p size bytes: copy it into @p addr if
 *  *@p len allows. @return 0 (and *len = size), -NM_EINVAL. */
int nm_drv_copy_address(const void *self, size_t size, void *addr, size_t *len);
/** Make room for peer @p index in a growing table (*@p peers of *@p cap elements of @p elem bytes, @p n used):
 *  connect() is called for index 0, 1, ... in order. @return 0, -NM_EINVAL (index != n), -NM_ENOMEM. */
int nm_drv_peer_slot(void **peers, size_t *cap, size_t n, size_t elem, uint64_t index);
/** The host's coarse monotonic clock in ns (CLOCK_MONOTONIC_COARSE: a resolution of a few ms, ~3 ns a read against
 *  ~21 for nm_core_time_ns()): for a driver's "urgent traffic lately" windows, read on the urgent path itself.
 *  Real time: only for drivers over real processes (sm, ntcp), never under the simulator. */
uint64_t nm_drv_coarse_ns(void);
/** The nominal figures a driver gives the core (nm_drv_props_s): latency and overhead in ns, bandwidth in MB/s;
 *  gap and gap_free 0 (every message pays the overhead); @p provider names it. */
void nm_drv_set_nominal(struct nm_drv_props_s *props, uint32_t latency_ns, uint32_t overhead_ns,
                        uint32_t bandwidth_MBps, const char *provider);

/** Ops table for a NMAD_DRIVER word: "self" -> self driver, "sm" -> nmad's shared memory, "ntcp" -> nmad's own TCP
 *  sockets, the rest -> ofi (which validates the word).
 *  @return the table or NULL if the word is unknown. */
const struct nm_drv_ops_s *nm_driver_lookup(const char *word);

#endif /* NM_DRIVER_H */
