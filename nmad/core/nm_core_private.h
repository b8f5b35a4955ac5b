/**
 * @file nm_core_private.h
 * @brief Private: the core's structures (core, session, gate, rail, packet wrapper, control chunk,
 * unexpected message, large transfer) and the functions the layers of the core share.
 * Everything hangs off struct nm_core_s (DESIGN.md rule 1: no global mutable state).
 */
#ifndef NM_CORE_PRIVATE_H
#define NM_CORE_PRIVATE_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_core.h>
#include "nm_core_interface.h" /* what the layers above the core may use; declared there, not here */
#include <uthash.h>
#include "drivers/nm_driver.h"
#include "strategies/nm_strategy.h"
#include "nm_wire.h"
#include "nm_pool.h"
#include <pthread.h>
#include <poll.h>
#include <sched.h>

#define NM_MAX_RAILS 4
#define NM_SESSION_NAME_MAX 64

/* Request states (struct nm_req_s.state). */
enum nm_req_state_e {
  NM_RS_INIT = 0,
  NM_RS_QUEUED,   /* send: in gate->send_queue */
  NM_RS_PACKED,   /* send: inside a packet wrapper being sent */
  NM_RS_RDV,      /* send: RDV sent, waiting for RTR; recv: large transfer posted */
  NM_RS_POSTED,   /* recv: in its session's matching tables (nm_match.c), not matched */
  NM_RS_CANCELLING, /* send: eager data left, in gate->cancelling until its CANCEL_REPLY */
  NM_RS_DONE
};
/* Request flags (struct nm_req_s.flags). */
#define NM_REQF_SYNC 0x01     /* synchronous send */
#define NM_REQF_SENT 0x02     /* sync send: data left */
#define NM_REQF_ACKED 0x04    /* sync send: receiver matched */
#define NM_REQF_TRUNC 0x08    /* recv: message larger than buffer */
#define NM_REQF_MATCHED 0x10  /* recv: gate/tag/msg_len known */
#define NM_REQF_CANCEL 0x20   /* send: CANCEL sent, outcome not known yet (nm_cancel.c) */
#define NM_REQF_CANCELLED 0x40 /* send: the receiver withdrew it; completes with -NM_ECANCELED once its data left */
#define NM_REQF_RDV 0x80      /* send: went by rendezvous although small enough for eager (no credit, nm_credit.c) */

/* Intrusive doubly-linked list of requests (through req->next/prev). A list with an @p index (a gate's
 * rdv_sends) also keeps it current on every append/insert/remove, so its requests are found by cookie in O(1)
 * (nm_match_hash.c); a request's cookie must not change while it is in such a list. */
struct nm_req_index_s;
struct nm_req_list_s {
  struct nm_req_s *head, *tail;
  struct nm_req_index_s *index; /* NULL for plain lists */
};
void nm_req_list_append(struct nm_req_list_s *l, struct nm_req_s *r);
void nm_req_list_insert_after(struct nm_req_list_s *l, struct nm_req_s *pos, struct nm_req_s *r);
void nm_req_list_remove(struct nm_req_list_s *l, struct nm_req_s *r);

/** A control chunk waiting for a packet (RTR, ACK, CANCEL or CANCEL_REPLY). */
struct nm_ctrl_s {
  struct nm_ctrl_s *next;
  nm_prio_t prio;                     /* its message's priority: the control queue is in decreasing prio order */
  uint8_t type, rail;
  uint64_t cookie, offset, len, rtag; /* RTR, ACK */
  uint8_t result;                     /* CANCEL_REPLY */
  uint32_t session, seq;              /* CANCEL, CANCEL_REPLY: the message */
  uint64_t tag;
  uint32_t n_rtr;                     /* RTR: how many RTRs the receiver sends for this cookie (0 means 1) */
};

/** Payloads of a packet left in their sender's buffer for a driver with sendv() (at most; the next are copied). */
#define NM_PW_GAPS 4
/** Shorter payloads are copied into the packet: a piece of the driver's gather costs more than their copy. */
#define NM_PW_GAP_MIN 256

/** A packet wrapper: one packet being built and sent. Requests whose data it carries are chained through
 *  req->next so they complete when the driver reports the send done. */
struct nm_pw_s {
  struct nm_pw_s *next;
  struct nm_gate_s *gate;
  int rail;
  uint16_t n_chunks;
  uint8_t urgent; /* started on urgent work (above the default priority; set by the strategy): a driver's
                   * send_urgent takes it if it can (and it then carries urgent work only), else it stamps
                   * gate->urgent_ns on a driver with a backlog op */
  size_t len, cap;
  struct nm_req_s *reqs, *reqs_tail; /* sends completed by this packet's send completion (via pw_next) */
  /* Payloads not copied into buf: their bytes [off, off + len) of the packet are at src, in the sender's buffer,
   * and a driver with sendv() copies them from there at post (nm_pw_put_payload()). */
  uint8_t n_gaps;
  struct nm_pw_gap_s {
    uint32_t off, len;
    const void *src;
  } gaps[NM_PW_GAPS];
  uint8_t buf[];
};

/** A large transfer in flight in a driver (sender or receiver side). Detached from its request when the gate
 *  fails, so a late driver completion never touches freed user memory. */
struct nm_large_s {
  struct nm_large_s *next, *prev;
  struct nm_req_s *req;
  struct nm_gate_s *gate;
  int rail;
  int is_send;
  struct nm_rdv_s *rdv; /* the chunked rendezvous message it is a chunk of, or NULL (nm_rdv.c) */
  /* A send the driver had no room for (-NM_EAGAIN): what to post again at the next progress pass. */
  const void *buf;
  size_t len;
  uint64_t rtag;
  int deferred;                  /* in core->large_retry, not in a driver */
  int uncounted;                 /* a get rendezvous' send: not in core->n_large (its receiver does the work) */
  struct nm_large_s *retry_next;
};

/** A rendezvous message moving as several chunks (nm_rdv.c). Receiver: the pieces (one per rail, from the
 *  strategy's rdv_accept) whose chunks are still to be asked for by RTR. Sender: a message whose receiver
 *  announced several RTRs, until all came and their data left. Its chunks in a driver are nm_large_s with ->rdv
 *  set; it lives until its request completed and no chunk is left in a driver. */
struct nm_rdv_s {
  struct nm_rdv_s *next, *prev;   /* in gate->rdv.head: receivers by decreasing priority, then senders */
  struct nm_req_s *req;           /* NULL once completed or detached (gate failure) */
  struct nm_gate_s *gate;
  uint64_t cookie;
  char *buf;                      /* receiver: where message byte `base` lands */
  nm_len_t base;                  /* receiver: message offset of buf[0] */
  int prio;
  int is_send;
  int inflight;                   /* chunks posted to a driver */
  nm_len_t chunk;                 /* receiver: bytes per chunk (NMAD_RDV_CHUNK, larger for huge messages) */
  uint32_t n_rtr, rtr_done;       /* RTRs in all / sent (receiver) or received (sender) */
  int n_pieces;
  int next_piece;                 /* round robin over the pieces */
  struct nm_rdv_chunk_s pieces[NM_MAX_RAILS]; /* receiver: bytes of buf still to ask for, per rail */
  UT_hash_handle hh;              /* sender: in gate->rdv.by_cookie */
};
/** A gate's chunked rendezvous messages (nm_rdv.c). */
struct nm_rdv_gate_s {
  struct nm_rdv_s *head, *tail;
  struct nm_rdv_s *by_cookie;     /* senders, uthash by cookie */
  int inflight[NM_MAX_RAILS];     /* receiver chunks posted per rail: at most NM_RDV_CHUNKS_PER_RAIL */
  int pump_retry;                 /* a driver refused a chunk's receive (-NM_EAGAIN): ask again at progress */
};

/** Key of one message in a gate's sets of held messages (out-of-order arrivals: the tag is the ordering stream's,
 *  nm_seq_tag(); tombstones: the message's tag). Explicit fields only, no padding, so it hashes deterministically. */
struct nm_msg_key_s {
  uint64_t tag;
  uint32_t session;
  nm_seq_t seq;
};

struct nm_match_bucket_s;
/** Payload bytes an unexpected message keeps in its own record (nm_unexp_s.small). */
#define NM_UNEXP_SMALL 64
/** Larger unexpected payloads of up to this many bytes take a buffer of this size, recycled by the core (at most
 *  NM_UNEXP_MEDIUM_KEEP kept free: 512 KiB): a malloc of 1 KiB and more misses glibc's per-thread cache (up to
 *  1,032 B with its header) and cost ~1,000 instructions with its free, per message of a 1 KiB MPI_Reduce whose
 *  contributions came before the root's receives (issue 18). Back-to-back 1 KiB gathers keep a few hundred such
 *  messages stored at once (the other ranks run ahead, within their eager credit): 64 kept buffers recycled a third
 *  of them, 256 nearly all. */
#define NM_UNEXP_MEDIUM 2048
#define NM_UNEXP_MEDIUM_KEEP 256
/** A message that arrived before its receive (eager data copied, or an RDV to answer later). */
struct nm_unexp_s {
  struct nm_unexp_s *next;
  struct nm_unexp_s *prev;              /* in its session's arrival list (next/prev), nm_match.c */
  struct nm_unexp_s *bnext, *bprev;     /* in its (gate, tag) bucket, arrival order */
  struct nm_match_bucket_s *bucket;     /* that bucket while stored unexpected, else NULL */
  struct nm_msg_key_s key;              /* in gate->ooo or gate->tombstones (uthash through hh) */
  UT_hash_handle hh;
  struct nm_gate_s *gate;
  uint32_t session_id;
  uint8_t type, flags;
  nm_tag_t tag;
  nm_seq_t seq;
  nm_len_t msg_len;
  uint32_t len;        /* bytes in data: the whole message (DATA) or its inline prefix (RDV) */
  uint32_t prefix_len; /* header bytes at the start of the message (rpc), 0 otherwise */
  uint32_t credit;     /* eager credit it holds of its gate's sender (nm_credit.c); 0 for local messages */
  uint64_t cookie;
  uint8_t *data;       /* len bytes: small[] up to NM_UNEXP_SMALL, else malloc'd (NULL when len is 0) */
  uint8_t medium;      /* data is an NM_UNEXP_MEDIUM buffer of the core's cache (core->unexp_bufs) */
  /* A small message's bytes kept in the record: no malloc and free per early message (an 8 B MPI_Alltoall stored
   * a third of its messages unexpected, ~270 instructions each way, issue 18) */
  uint8_t small[NM_UNEXP_SMALL];
};

/** Per-(session, tag) sequence numbers of one gate. */
struct nm_seq_key_s {
  uint64_t tag;
  uint32_t session;
  uint32_t zero; /* explicit padding, always 0, so the key hashes deterministically */
};
struct nm_seq_s {
  struct nm_seq_key_s key;
  nm_seq_t next_send;
  nm_seq_t next_recv;
  /* The prio strategy's index of the gate's send queue (strategies/nm_strat_prio.c): the stream's last queued
   * send and its order key, valid while queued_gen is the strategy's generation for the gate and the key is above
   * the key of the last send that left the queue. */
  uint32_t queued_gen;
  uint64_t queued_key;
  struct nm_req_s *queued_last;
  UT_hash_handle hh;
};

struct nm_rail_s {
  struct nm_drv_s *drv;
  uint64_t peer;    /* the peer's index in the driver */
  int inflight;     /* packets posted and not completed */
  struct nm_pw_s *retry; /* a built packet the driver refused (queue full), sent first next time */
  uint64_t inject_pass; /* core->pass + 1 when a packet of this gate completed at post during that pass: the gate's
                         * next packet waits for the next pass, so that a burst to it is aggregated */
};

struct nm_gate_s {
  struct nm_core_s *core;
  int rank;
  int status; /* 0, or -NM_E* once failed */
  int n_rails;
  struct nm_rail_s rails[NM_MAX_RAILS];
  struct nm_req_list_s send_queue;   /* sends waiting for a packet, strategy order */
  struct nm_ctrl_s *ctrl_head, *ctrl_tail;
  struct nm_req_list_s rdv_sends;    /* sends past RDV or waiting for ACK, indexed by cookie (rdv_index) */
  struct nm_req_list_s cancelling;   /* eager sends whose data left, waiting for their CANCEL_REPLY */
  struct nm_unexp_s *tombstones;     /* messages the sender withdrew before they arrived in order (nm_cancel.c),
                                      * uthash by key (session, tag, seq) */
  int n_tombstones;
  struct nm_large_s *large;          /* large transfers in flight on this gate */
  struct nm_pw_s *inflight_pws;      /* packets posted to a driver, not completed */
  struct nm_unexp_s *ooo;            /* arrivals ahead of their sequence number, uthash by key (session,
                                      * nm_seq_tag(), seq): the successor due is one lookup away */
  struct nm_seq_s *seqs;             /* uthash by (session, tag) */
  struct nm_seq_s *last_seq;         /* one-entry cache of seqs */
  int64_t credit;                    /* send: eager bytes the peer still accepts (nm_credit.c) */
  int64_t credit_owed;               /* receive: consumed eager bytes not yet returned to the peer (a stored
                                      * message's cost is taken off while it waits, nm_credit_stored()) */
  int in_work_list;
  struct nm_gate_s *work_next;
  nm_prio_t work_prio;               /* its most urgent pending work, when the work list was last sorted */
  uint64_t urgent_ns;                /* the core's time when a packet of urgent work (above the default priority)
                                      * last went into the main queue of a rail with a backlog op (not by
                                      * send_urgent); 0: none lately (nm_strat_bulk_held()) */
  void *strat;                       /* the strategy's per-gate state (gate_init), or NULL */
  UT_hash_handle hh;                 /* in core->gate_table, by rank */
  struct nm_req_index_s *rdv_index;  /* rdv_sends by cookie (nm_match_hash.c), NULL if out of memory */
  struct nm_rdv_gate_s rdv;          /* chunked rendezvous messages (nm_rdv.c) */
  struct nm_frag_s *frag_one;        /* an eager message being reassembled from DATA_FRAG pieces (nm_frag.c) */
  struct nm_frag_s *frags;           /* the others at the same time, uthash */
  uint64_t frag_bytes;               /* their flow-control cost, bounded by the eager window */
};

struct nm_session_s {
  struct nm_core_s *core;
  struct nm_session_s *next;
  uint32_t id;
  char name[NM_SESSION_NAME_MAX];
  nm_core_hook_t hook;                     /* when set, in-order messages go to it instead of matching */
  void *hook_ref;
  struct nm_session_s *owner;              /* for an internal session (rpc channel): the user session */
  void *rpc;                               /* the rpc channel of this session (nmad/rpc), or NULL */
  void (*rpc_close)(void *rpc);            /* releases it when the session closes */
  struct nm_unexp_s *unexp_head, *unexp_tail; /* unexpected messages, in arrival order (also in their buckets) */
  struct nm_match_s *match;                /* posted receives and unexpected messages by (gate, tag), nm_match.c */
};

/** Fault reporter (the launcher): fd readable on news, poll returns 1 + rank of a dead process. */
struct nm_fault_source_s {
  int fd;
  int (*poll)(void *ref, int *rank);
  void *ref;
};

struct nm_config_s {
  const struct nm_strategy_ops_s *strategy;
  size_t rdv_threshold; /* bytes: larger messages go by rendezvous */
  int rdv_threshold_set; /* the user chose it (NMAD_RDV_THRESHOLD): no driver lowers it (nm_core_configure()) */
  uint64_t spin_ns;     /* busy-poll time before yielding */
  uint64_t yield_ns;    /* busy-poll-and-yield time before blocking */
  uint64_t peer_alloc_max; /* largest buffer allocated on a peer's word (NMAD_PEER_ALLOC_MAX) */
  uint64_t eager_credit; /* bytes of unexpected eager data a receiver accepts per peer (NMAD_EAGER_CREDIT) */
  int progress_thread;  /* NMAD_PROGRESS=thread */
  enum nm_bind_e bind;  /* NMAD_BIND: where the progress thread runs */
  uint64_t rdv_chunk;   /* bytes: rendezvous data moves in chunks of at most this size (NMAD_RDV_CHUNK) */
  int split_local;      /* split messages across rails on one host too (NMAD_SPLIT_LOCAL=1; default 0) */
  uint64_t frag_max;    /* eager messages (header included) up to this many bytes are cut to the inject size
                         * (NMAD_EAGER_FRAG_MAX, nm_frag.c); NM_FRAG_MAX_AUTO: a few inject sizes */
  uint32_t oversub_hop_ns; /* a job with more ranks than cores: what a hop costs in wake-ups (NMAD_OVERSUB_HOP_US),
                            * added to the latency the collectives' model reads; 0 otherwise */
};

/** The core lock (nm_lock.c): the thread-safety layer around the core (DESIGN.md rule 3). Taken only while a
 *  progress thread runs (`threaded`); otherwise every lock call is one predictable branch. Recursive, because a
 *  monitor that runs inside progress may call the interfaces again; released whole in every driver wait. */
struct nm_core_lock_s {
  pthread_mutex_t mutex;  /* PTHREAD_MUTEX_RECURSIVE */
  unsigned depth;         /* how many times the holder took it (read and written by the holder only) */
  int threaded;           /* changes only while no second thread exists (progress thread start/stop) */
  int multi;              /* several application threads (nm_core_threads_enable()): `threaded` for good */
  int wake_fd;            /* eventfd (semaphore): wakes the threads asleep in nm_core_block() (threaded only) */
  unsigned sleepers;      /* threads asleep in nm_core_block() without the lock (written under the lock) */
};

/** The progress thread (nm_progress_thread.c). */
struct nm_progress_thread_s {
  pthread_t thread;
  int running;
  int wake_fd;            /* eventfd: nm_core_progress_thread_stop() wakes it from its driver wait */
  int stop;               /* read and written with __atomic builtins: the only field two threads share unlocked */
};

/** The doors of the incoming path (nm_incoming.c, doc/reliability.md): the job key every packet must carry, and
 *  what was refused. */
struct nm_core_door_s {
  uint64_t job_key;
  struct nm_core_refused_s refused;
};

/** Entries of the core's direct-mapped gate cache (a power of two): 512 bytes a core, every gate of a job of up
 *  to that many ranks found without hashing. */
#define NM_GATE_CACHE 64

struct nm_core_s {
  int rank, size;
  struct nm_core_door_s door;
  struct nm_config_s cfg;
  /* Gates are made on first use (DESIGN.md rule 8): a rank's state grows with the peers it talks to, not with
   * the job. uthash by rank, in front of it a direct-mapped cache by rank modulo NM_GATE_CACHE: a rank that hears
   * from a few peers in turn (a collective's root: three packets from three gates) hashed at every packet when only
   * the latest gate was remembered, 79 of the 655 instructions an incoming packet cost (issue 18). */
  struct nm_gate_s *gate_table;
  struct nm_gate_s *gate_cache[NM_GATE_CACHE];
  struct nm_drv_s *self_drv;  /* the rail of the gate to oneself */
  int n_always_polled; /* network rails without an idle() op (sm): polled every pass (nm_core_skip_quiet()) */
  struct nm_drv_s *clock_drv; /* the driver whose clock is the core's time (now_ns), or NULL: CLOCK_MONOTONIC */
  struct nm_drv_s *block_drv; /* the driver that blocks by itself (block), or NULL: poll() on the wait fds */
  int n_drvs;
  int one_host; /* every rank on this host: rails share its memory and cores, a message is not split (split_balance) */
  struct nm_drv_s drvs[NM_MAX_RAILS + 1];
  struct nm_session_s *sessions;
  struct nm_unexp_s *orphans; /* messages for sessions not opened yet */
  struct nm_unexp_s *orphans_tail; /* last of them: arrival order is kept in O(1) */
  struct nm_gate_fail_hook_s *gate_fail_hooks;
  struct nm_gate_s *work_head; /* gates with pending sends or control chunks */
  struct nm_gate_s *work_tail;
  nm_prio_t work_prio_max;     /* at least the most urgent work of the listed gates (nm_core_schedule()) */
  size_t pw_cap;
  struct nm_pool_s pw_pool, ctrl_pool, large_pool, unexp_pool;
  /* Payload buffers of NM_UNEXP_MEDIUM bytes freed by unexpected messages, kept for the next ones (at most
   * NM_UNEXP_MEDIUM_KEEP, linked through their first word; nm_match.c) */
  void *unexp_bufs;
  unsigned n_unexp_bufs;
  struct nm_pool_s frag_pool; /* records of messages being reassembled from DATA_FRAG pieces (nm_frag.c) */
  uint64_t next_cookie; /* RDV / sync-send identifiers */
  uint64_t next_rtag;   /* rendezvous tags for large receives */
  int n_large;          /* large transfers posted to drivers and not completed */
  int n_retry;          /* packets a driver refused (-NM_EAGAIN), held on their rail for the next pass: the core
                         * then sleeps by the short back-off (nm_core_block()), since no driver event may announce
                         * room */
  uint64_t bulk_held_pass; /* the last pass in which a strategy held bulk for a peer's backlog (nm_strat_bulk_held()):
                            * the room comes as the peer reads, which wakes nothing here, so the core sleeps by the
                            * short back-off as for n_retry */
  /* Large transfers a driver had no room for (-NM_EAGAIN), retried at the next progress pass instead of
   * progressing the driver from inside the packet handler (nm_rdv_retry()): sends to post, FIFO; and the number
   * of gates whose receiver side must ask for chunks again. */
  struct nm_large_s *large_retry, *large_retry_tail;
  int rdv_pump_retry;
  struct nm_core_stats_s stats; /* flow-control figures (nm_core_get_stats()) */
  /* Events handled by the progress passes of every thread (under the lock). A waiter compares it with the value
   * it saw on entry: with a progress thread, the event it waits for may be handled by the other thread. */
  unsigned long progress_events;
  uint64_t pass; /* progress passes so far (nm_core_progress_drivers()): the inject_pass stamps are relative to it */
  struct nm_fault_source_s fault;
  uint64_t last_fault_check_ns;
  /* called as a thread waits (nm_core_set_wait_hook(); the launcher: a displaced rank back on its processor) */
  void (*wait_hook)(void *ref);
  void *wait_hook_ref;
  unsigned waits; /* nm_core_wait_flag*() calls so far (the hook runs at the start of one in NM_WAIT_HOOK_EVERY) */
  struct nm_core_lock_s lock;
  struct nm_progress_thread_s pthread;
  struct nm_core_progress_hook_s *progress_hooks; /* run after each progress pass (nm_core_progress_hook_add()) */
};

/* ---- core/nm_lock.c ---- */
void nm_core_lock_init(struct nm_core_s *core);
void nm_core_lock_destroy(struct nm_core_s *core);
/** Take the lock if no other thread holds it. @return 1 taken, 0 busy (always 1 when not threaded). */
int nm_core_trylock(struct nm_core_s *core);
/** Release every level the calling thread holds, before a driver wait. @return the levels to take back. */
unsigned nm_core_lock_release_all(struct nm_core_s *core);
/** After a progress pass that handled events: wake the threads asleep in nm_core_block(), whose request this pass
 *  may have completed (nm_lock.c). Under the lock. */
void nm_core_wake_sleepers(struct nm_core_s *core);
/** Make the sleepers' wake fd if there is none: when a second thread starts using the core (nm_lock.c). */
void nm_core_lock_wake_fd_open(struct nm_core_s *core);
/** Take back the levels nm_core_lock_release_all() released. */
void nm_core_lock_reacquire(struct nm_core_s *core, unsigned depth);
/* The test of `threaded` inline: without a progress thread the interfaces' hot path makes no call for the lock. */
static inline struct nm_core_s *nm_core_lock_scope_enter(struct nm_core_s *core)
{
  if (core->lock.threaded)
    nm_core_lock(core);
  return core;
}
static inline void nm_core_lock_scope_exit(struct nm_core_s **core)
{
  if ((*core)->lock.threaded)
    nm_core_unlock(*core);
}
/** Hold the core lock until the end of the enclosing block (every return path releases it). */
#define NM_CORE_LOCKED(c)                                                                                      \
  struct nm_core_s *nm_locked_core_ __attribute__((cleanup(nm_core_lock_scope_exit), unused)) =               \
    nm_core_lock_scope_enter(c)

/* ---- core/nm_core.c: the pieces of waiting the progress thread shares ---- */
/** One progress pass over the drivers and the packet scheduler, without looking at the fault source. */
int nm_core_progress_drivers(struct nm_core_s *core);
/** Collect the wait fds of the drivers (and the fault source with @p faults) after fi_trywait().
 *  @return the number of fds, or -1 when events are already pending; *fd_less when a driver has none. */
int nm_core_block_fds(struct nm_core_s *core, struct pollfd *fds, int faults, int *fd_less);
#define NM_CORE_MAX_FDS (NM_MAX_RAILS + 3)

/* ---- core/nm_config.c ---- */
/** Read NMAD_STRATEGY, NMAD_RDV_THRESHOLD, NMAD_EAGER_CREDIT, NMAD_PEER_ALLOC_MAX, NMAD_SPIN_US, NMAD_YIELD_US, NMAD_PROGRESS, NMAD_BIND,
 *  NMAD_OVERSUB_HOP_US; @p oversubscribed (more ranks on this host than usable cores) makes the default spin 0;
 *  @p job_oversubscribed (the same on every rank) sets oversub_hop_ns. @return 0 or -NM_EINVAL (message printed). */
int nm_config_load(struct nm_config_s *cfg, size_t max_eager, int oversubscribed, int job_oversubscribed);
/** Parse a byte size with optional K/M/G suffix. @return 0 or -NM_EINVAL. */
int nm_config_parse_size(const char *s, uint64_t *out);
/** Default of NMAD_PEER_ALLOC_MAX: half the machine's physical memory (1 GiB if unknown). */
uint64_t nm_config_peer_alloc_default(void);

/* ---- core/nm_gate.c ---- */
/** The gate to @p rank if it exists, NULL otherwise (never creates one). */
struct nm_gate_s *nm_core_gate_find(struct nm_core_s *core, int rank);
/** The gate to @p rank if the direct-mapped cache holds it, NULL otherwise (the one probe of the cache). */
static inline struct nm_gate_s *nm_core_gate_cached(const struct nm_core_s *core, int rank)
{
  struct nm_gate_s *g = core->gate_cache[(unsigned)rank % NM_GATE_CACHE];
  return g && g->rank == rank ? g : NULL;
}
/** nm_core_gate() for a @p rank already checked to be in [0, size): the cache inline, the function on a miss
 *  (every incoming packet asks; the call cost 35 instructions of the 608 of a packet, issue 18). */
static inline struct nm_gate_s *nm_core_gate_of_rank(struct nm_core_s *core, int rank)
{
  struct nm_gate_s *g = nm_core_gate_cached(core, rank);
  return g ? g : nm_core_gate(core, rank);
}
/** Iterate over the existing gates (gates made during the loop are visited too: uthash appends them). */
#define NM_CORE_FOR_GATES(core, g) for (struct nm_gate_s *g = (core)->gate_table; g; g = g->hh.next)
void nm_gate_destroy(struct nm_gate_s *gate);
/** Sequence numbers of (session, stream tag) on a gate, created on first use; @p tag is already nm_seq_tag()'s.
 *  @return NULL when out of memory. */
struct nm_seq_s *nm_gate_seq_lookup(struct nm_gate_s *gate, uint32_t session, nm_tag_t tag);
/** Session id bit of NM_SESSION_ORDER_BY_CONTEXT (nm_session_open_flags()). */
#define NM_SESSION_ID_BY_CONTEXT 0x80000000u
/** The ordering stream a message of (@p session, @p tag) belongs to: its tag, or only the tag's context for a
 *  session opened with NM_SESSION_ORDER_BY_CONTEXT. */
static inline nm_tag_t nm_seq_tag(uint32_t session, nm_tag_t tag)
{
  return (session & NM_SESSION_ID_BY_CONTEXT) ? tag & NM_TAG_CONTEXT_MASK : tag;
}
/** Sequence numbers of the ordering stream of (@p session, @p tag) on a gate (nm_seq_tag()). */
static inline struct nm_seq_s *nm_gate_seq(struct nm_gate_s *gate, uint32_t session, nm_tag_t tag)
{
  struct nm_seq_s *s = gate->last_seq; /* one stream at a time is the common case: no hashing */
  nm_tag_t st = nm_seq_tag(session, tag);
  if (s && s->key.tag == st && s->key.session == session)
    return s;
  return nm_gate_seq_lookup(gate, session, st);
}
/** A zeroed control chunk of @p type from the core's pool (fill it, then nm_gate_push_ctrl()). NULL: no memory. */
struct nm_ctrl_s *nm_gate_new_ctrl(struct nm_gate_s *gate, uint8_t type);
void nm_gate_push_ctrl(struct nm_gate_s *gate, struct nm_ctrl_s *ctrl);
/** Something waits to be handed to a driver: queued sends, control chunks, or a packet a driver refused. */
static inline int nm_gate_has_work(const struct nm_gate_s *gate)
{
  if (gate->status)
    return 0;
  if (gate->send_queue.head || gate->ctrl_head)
    return 1;
  for (int i = 0; i < gate->n_rails; i++)
    if (gate->rails[i].retry)
      return 1;
  return 0;
}
void nm_gate_mark_work(struct nm_gate_s *gate);

/* ---- core/nm_outgoing.c ---- */
/** Queue a send request on its gate and try to post it now. */
int nm_core_post_send(struct nm_req_s *req);
/** Post packets for every gate with pending work while rails accept. @return packets posted. */
int nm_core_schedule(nm_core_t core);
/** Run the strategy's try_and_commit on one gate. @return packets posted. */
int nm_core_schedule_gate(struct nm_gate_s *gate);
/** Lowest priority value (what the work list compares against when nothing is listed). */
#define NM_PRIO_LOWEST INT32_MIN
/** The priority of the gate's most urgent queued work, as its strategy sees it (0 without gate_prio). */
nm_prio_t nm_work_prio(const struct nm_gate_s *gate);
/** Room left in a packet wrapper, in bytes. */
static inline size_t nm_pw_room(const struct nm_pw_s *pw) { return pw->cap - pw->len; }
/** Put @p len payload bytes from @p src at @p dst, inside @p pw's buffer: copied now, or left as a gap for a
 *  driver with sendv() (nm_outgoing.c). */
void nm_pw_put_payload(struct nm_pw_s *pw, uint8_t *dst, const void *src, size_t len);
/** Pack the head control chunk of the gate. @return 1 packed, 0 no room or none. */
int nm_pw_pack_ctrl(struct nm_pw_s *pw);
/** Pack send request @p req (removed from the send queue by this call). @return 1 packed, 0 no room. */
int nm_pw_pack_req(struct nm_pw_s *pw, struct nm_req_s *req);
void nm_core_send_done(void *ref, void *ctx, int err);

/* ---- core/nm_incoming.c ---- */
void nm_core_packet(void *ref, struct nm_drv_s *drv, const void *buf, size_t len, uint64_t src_hint);
/** A DATA or RDV message from @p gate (fresh chunk @p c, or a stored copy @p owned that this call takes over):
 *  order it by sequence number, then match it. */
void nm_incoming_msg(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c, struct nm_unexp_s *owned);

/* ---- core/nm_match.c ---- */
struct nm_session_s *nm_core_find_session(nm_core_t core, uint32_t id);
/** An in-order message for @p session from @p gate: match a posted receive or store as unexpected (reusing
 *  @p owned when given, else copying the chunk). */
void nm_match_incoming(struct nm_session_s *session, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c,
                       struct nm_unexp_s *owned);
/** A receive was posted: match an unexpected message or append to posted. */
void nm_match_post_recv(struct nm_session_s *session, struct nm_req_s *req);
/** Deliver an in-order message to its session: hook, posted receive, or unexpected; or keep it as an orphan
 *  until the session opens. @p owned as for nm_match_incoming(). */
void nm_match_in_order(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c, struct nm_unexp_s *owned);
void nm_match_adopt_orphans(struct nm_session_s *session);
/** Make / release the matching state of a session (close completes its posted receives with -NM_ECANCELED and
 *  frees its unexpected messages). @return 0 or -NM_ENOMEM. */
int nm_match_session_open(struct nm_session_s *session);
void nm_match_session_close(struct nm_session_s *session);
/** Take posted receive @p req out of matching (cancel, or matched by the caller). O(1). */
void nm_match_remove_posted(struct nm_session_s *session, struct nm_req_s *req);
/** The receive a message (@p gate, @p tag) would match, taken out of matching if it holds @p min_len bytes;
 *  NULL if none or too short (it is left posted). */
struct nm_req_s *nm_match_claim(struct nm_session_s *session, struct nm_gate_s *gate, nm_tag_t tag,
                                nm_len_t min_len);
/** Complete with @p err the receives of @p session posted for @p gate alone (the gate failed). */
void nm_match_gate_fail(struct nm_session_s *session, struct nm_gate_s *gate, int err);
/** Take stored message @p u out of its session's arrival list and its bucket (it is not freed). O(1). */
void nm_match_unexp_remove(struct nm_session_s *session, struct nm_unexp_s *u);
/** The stored message (gate, tag, seq) of @p session, or NULL (a scan of that (gate, tag) only). */
struct nm_unexp_s *nm_match_unexp_find_seq(struct nm_session_s *session, struct nm_gate_s *gate, nm_tag_t tag,
                                           nm_seq_t seq);
/** Drop orphan message (session, tag, seq) of @p gate. @return 1 if it was there. */
int nm_match_orphan_withdraw(struct nm_core_s *core, struct nm_gate_s *gate, uint32_t session, nm_tag_t tag,
                             nm_seq_t seq);
/** The chunk view of a stored message. */
void nm_unexp_to_chunk(const struct nm_unexp_s *u, struct nm_wire_chunk_s *c);
int nm_match_tag(nm_tag_t msg_tag, nm_tag_t want_tag, nm_tag_t mask);
struct nm_unexp_s *nm_unexp_from_chunk(nm_core_t core, struct nm_gate_s *gate, uint32_t session,
                                       const struct nm_wire_chunk_s *c);
void nm_unexp_free(nm_core_t core, struct nm_unexp_s *u);
/** Free the payload buffers the core keeps for unexpected messages (nm_core_destroy()). */
void nm_unexp_bufs_free(nm_core_t core);

/* ---- core/nm_credit.c: eager flow control ---- */
/** Default of NMAD_EAGER_CREDIT, bytes per peer. */
#define NM_EAGER_CREDIT_DEFAULT (1u << 20)
/** Default rendezvous threshold when this host runs more ranks than it has cores (nm_config_load()). */
#define NM_RDV_THRESHOLD_OVERSUB (128u * 1024u)
/** Accepted range of NMAD_EAGER_CREDIT: a window smaller than 4 KiB sends nearly everything by rendezvous;
 *  credit travels in 32-bit per-message costs and must not overflow the signed 64-bit window. */
#define NM_EAGER_CREDIT_MIN 4096u
#define NM_EAGER_CREDIT_MAX (1ULL << 40)
/** Sender: 1 if an eager message of @p total bytes finds too little credit left on @p gate (it must go by
 *  rendezvous), 0 if it may go eager. */
int nm_credit_short(const struct nm_gate_s *gate, nm_len_t total);
/** Sender: an eager message of @p total bytes leaves: take its cost from the gate's credit. */
void nm_credit_charge(struct nm_gate_s *gate, nm_len_t total);
/** Receiver: an eager message of @p gate was consumed (matched, taken by a hook, or its stored copy freed):
 *  its @p cost goes back to the sender, in one CREDIT chunk once enough is owed. */
void nm_credit_consumed(struct nm_gate_s *gate, uint64_t cost);
/** Receiver: an eager message of @p cost bytes of credit was stored (unexpected, out of order or orphan). */
void nm_credit_stored(struct nm_gate_s *gate, uint64_t cost);
/** Receiver: a stored message is freed: its credit goes back (nothing for local or rendezvous messages). */
void nm_credit_release(struct nm_unexp_s *u);
/** Sender: a CREDIT chunk returned @p bytes. @return 0, or -NM_EPROTO if the peer returns more than it holds. */
int nm_credit_handle(struct nm_gate_s *gate, uint64_t bytes);
/** Whether eager flow control applies on @p gate (not to oneself, not when disabled). */
static inline int nm_credit_on(const struct nm_gate_s *gate)
{
  return gate->core->cfg.eager_credit && gate->rank != gate->core->rank;
}
/** Whether a send goes (or went) by rendezvous. */
static inline int nm_req_is_rdv(const struct nm_core_s *core, const struct nm_req_s *req)
{
  return (req->flags & NM_REQF_RDV) || req->hdr_len + req->len > core->cfg.rdv_threshold;
}

/* ---- core/nm_rdv.c ---- */
/** Receiver: a posted receive matched an RDV (whose inline prefix is in @p c): copy the prefix, post the large
 *  receive of the rest, queue the RTR. */
void nm_rdv_accept(struct nm_req_s *req, struct nm_gate_s *gate, const struct nm_wire_chunk_s *c);
/** Receiver: ask for message bytes [offset, offset+n) into @p buf: post the large receive, queue the RTR.
 *  @p req completes when they are in (status -NM_ETRUNCATED if NM_REQF_TRUNC is set); at once if n is 0. */
void nm_rdv_post(struct nm_req_s *req, struct nm_gate_s *gate, uint64_t cookie, nm_len_t offset, void *buf,
                 nm_len_t n);
/** Total bytes of a send: header + body. */
static inline nm_len_t nm_req_total(const struct nm_req_s *req) { return req->hdr_len + req->len; }
/** Sender: an RTR arrived. @return 0 or -NM_EPROTO (unknown cookie / bad range). */
int nm_rdv_handle_rtr(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c);
/** Sender: whether @p req (going by rendezvous) goes by get rendezvous: one rail whose driver has
 *  NM_DRV_F_RDV_GET, data of one chunk at most (larger ones keep the receiver's prioritised chunks). */
int nm_rdv_get_wanted(const struct nm_gate_s *gate, const struct nm_req_s *req);
/** Sender: announce @p req's data (cookie already set, with NM_COOKIE_GET) to its rail's driver.
 *  @return 0, or the driver's error (-NM_EAGAIN included): the caller then sends a plain RDV. */
int nm_rdv_get_announce(struct nm_gate_s *gate, struct nm_req_s *req);
/** Sender: the receiver withdrew get-rendezvous send @p req (nm_cancel.c): take its announcement back. */
void nm_rdv_get_withdraw(struct nm_gate_s *gate, struct nm_req_s *req);
/** Sender: an ACK arrived for a synchronous send. @return 0 or -NM_EPROTO. */
int nm_rdv_handle_ack(struct nm_gate_s *gate, uint64_t cookie);
void nm_core_large_done(void *ref, void *ctx, int err, size_t len);
/** Queue an ACK for a synchronous eager send that just matched. */
void nm_rdv_send_ack(struct nm_gate_s *gate, uint64_t cookie);
/** Default of NMAD_RDV_CHUNK (bytes; doc/performance.md, "Rendezvous chunks and two rails"). */
#define NM_RDV_CHUNK_DEFAULT (4u << 20)
/** Bytes of one rendezvous chunk (NMAD_RDV_CHUNK; the default when the configuration was not loaded). */
static inline nm_len_t nm_core_rdv_chunk(const struct nm_core_s *core)
{
  return core->cfg.rdv_chunk ? core->cfg.rdv_chunk : NM_RDV_CHUNK_DEFAULT;
}
/** Accepted range of NMAD_RDV_CHUNK. */
#define NM_RDV_CHUNK_MIN (16u * 1024u)
#define NM_RDV_CHUNK_MAX (1ULL << 40)
/** Receiver chunks in flight per (gate, rail): two keep a rail busy while the next chunk's RTR travels. */
#define NM_RDV_CHUNKS_PER_RAIL 2
/** Cookie bit of a get rendezvous (nm_rdv.c): the sender announced the data on rail 0 with this cookie as its
 *  rendezvous tag; the receiver posts that large receive instead of asking by RTR (doc/protocol.md). Receiver-chosen
 *  tags count up from 1 and never reach it. */
#define NM_COOKIE_GET (1ull << 63)
/** Gate failure (from nm_gate_fail(), before the gate's large transfers are detached): complete the requests of
 *  the chunked rendezvous messages with @p err, forget their chunks not asked for yet, free those with no chunk
 *  left in a driver (the others go when their last chunk reports). */
void nm_rdv_gate_fail(struct nm_gate_s *gate, int err);
/** Gate destruction (drivers report nothing more): free every chunked rendezvous record left. */
void nm_rdv_gate_destroy(struct nm_gate_s *gate);
/** Progress pass: post the large sends and ask for the chunks that drivers had no room for earlier.
 *  @return the number of transfers posted. */
int nm_rdv_retry(struct nm_core_s *core);
/** Gate failure, once its large transfers are detached: release its large sends that never reached a driver
 *  (no completion will come for them). */
void nm_rdv_retry_gate_fail(struct nm_gate_s *gate, int err);
/** Whether a send of @p gate was cut in chunks and is not done (between two chunks no large transfer of it may
 *  be in a driver: a flush must still wait for it). Senders sit at the tail of gate->rdv. */
static inline int nm_rdv_gate_sending(const struct nm_gate_s *gate)
{
  return gate->rdv.tail && gate->rdv.tail->is_send;
}

/* ---- core/nm_cancel.c: withdrawing a send (CANCEL / CANCEL_REPLY) ---- */
/** Sender: ask the receiver to withdraw send @p req. @return 0 (outcome pending: req completes later),
 *  -NM_EBUSY (already matched: nothing to do), -NM_EALREADY (asked before), -NM_EINVAL, or the gate's error. */
int nm_cancel_send(struct nm_req_s *req);
/** Sender: the data of @p req (with NM_REQF_CANCEL or NM_REQF_CANCELLED) left: complete it if the outcome is
 *  known, else park it until the reply. */
void nm_cancel_data_left(struct nm_gate_s *gate, struct nm_req_s *req);
/** Receiver: a CANCEL arrived. @return 0 or -NM_EPROTO / -NM_ENOMEM (fails the gate). */
int nm_cancel_handle_request(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c);
/** Sender: a CANCEL_REPLY arrived. @return 0 or -NM_EPROTO (a withdrawal of no pending cancel). */
int nm_cancel_handle_reply(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c);
/** Receiver: message (session, tag, seq) from @p gate is due in order; if its sender withdrew it, drop the
 *  tombstone. @return 1 when the message must be dropped. */
int nm_cancel_take_tombstone(struct nm_gate_s *gate, uint32_t session, nm_tag_t tag, nm_seq_t seq);
/** Gate failure: complete the parked sends, free the tombstones. */
void nm_cancel_gate_fail(struct nm_gate_s *gate, int err);

/* ---- core/nm_match_hash.c: the hash tables of matching (uthash, out-of-memory reported, never fatal) ---- */
#include "nm_match_hash.h"
/* ---- core/nm_frag.c: eager messages cut to the rail's inject size (DATA_FRAG) ---- */
/** Sender: whether send @p req, going eager, must be cut into DATA_FRAG pieces in packets of @p pw's rail
 *  (its cut started, or its DATA packet would exceed the rail's inject size and the cut pays off there). */
int nm_frag_wanted(const struct nm_pw_s *pw, const struct nm_req_s *req);
/** Sender: pack the next piece of @p req into @p pw, the packet kept within the rail's inject size; the last
 *  piece takes req out of the send queue. @return 1 packed, 0 no room left in this packet. */
int nm_frag_pack(struct nm_pw_s *pw, struct nm_req_s *req);
/** NMAD_EAGER_FRAG_MAX unset: messages up to a few inject sizes of their rail are cut (nm_frag.c; measured in
 *  doc/performance.md, "Eager messages cut to the inject size"). */
#define NM_FRAG_MAX_AUTO UINT64_MAX
#define NM_FRAG_MAX_DEFAULT NM_FRAG_MAX_AUTO
/** The largest message (header included) that goes eager over a driver of @p core that sends nothing above its
 *  inject size well (NM_DRV_F_EAGER_INJECT_ONLY): what the cut takes (NMAD_EAGER_FRAG_MAX, a few inject sizes by
 *  default), or one inject-size packet's payload if that is more; the smallest over such drivers, 0 if none. */
nm_len_t nm_frag_eager_max(const struct nm_core_s *core);
/** Sender: the send at the head of @p gate's queue is partly packed (its next piece is due). */
static inline int nm_frag_cutting(const struct nm_gate_s *gate)
{
  return gate->send_queue.head && gate->send_queue.head->frag_off;
}
/** Receiver: a validated DATA_FRAG chunk from @p gate: place it; the completed message is delivered as DATA.
 *  A piece that contradicts the others or exceeds the bounds fails the gate. */
void nm_frag_incoming(struct nm_gate_s *gate, const struct nm_wire_chunk_s *c);
/** Bytes of one reassembly record (core->frag_pool's objects). */
size_t nm_frag_record_size(void);
/** Gate failure: free the partial messages, complete the receives they were going to with @p err. */
void nm_frag_gate_fail(struct nm_gate_s *gate, int err);

#endif /* NM_CORE_PRIVATE_H */
