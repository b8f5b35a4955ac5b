/**
 * @file nm_core_interface.h
 * @brief The core interface: the ONLY core header that the layers above the core (sendrecv, rpc, mcast and the
 *        collectives, the launcher, the MPI shim) include (issue 15, part 6; DESIGN.md, "The flow of a message").
 *
 * The core's structures (struct nm_core_s, nm_session_s, nm_gate_s, rails, sequence counters) stay opaque here:
 * a layer calls functions and never writes core state. struct nm_req_s is public (nmad/nm_types.h: requests are
 * embedded in the caller's structs, DESIGN.md rule 4); a layer may READ its results (completed, status, buf) and
 * sets its fields only through the nm_core_req_*() functions below, which own the core's part of it (state,
 * flags, seq, cookie, kind, session, gate).
 *
 * The core's own files get all of this through nm_core_private.h, which includes this header.
 * tests/check-layers.sh fails `make check` when a file above the core includes another core header.
 *
 * Thread-safety, unless a function says otherwise: the functions that post, wait or test take the core lock
 * themselves (nm_core_lock(): a no-op without a progress thread); the others expect the caller to hold it or to be
 * the only thread using the core (set-up, hooks and monitors, which run under the lock).
 */
#ifndef NM_CORE_INTERFACE_H
#define NM_CORE_INTERFACE_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_core.h>
#include "nm_le.h"   /* little-endian field access: layers that encode their own headers (mcast) */
#include "nm_pool.h" /* object pools: layers that need fast-path objects of their own (rpc tokens) */

struct nm_drv_s;
struct nm_drv_ops_s;

/** Most network rails a core opens (a launcher's array of drivers); equal to the core's NM_MAX_RAILS. */
#define NM_CORE_MAX_RAILS 4

/* ======================================================================================================
 * Requests. The layers fill a request through these functions only (they own state, flags, seq, cookie).
 * ====================================================================================================== */

/** Flag of nm_core_req_isend(): a synchronous send (completes once the receiver matched it). */
#define NM_CORE_SEND_SYNC 0x1u
/** Flag of nm_core_req_isend() and nm_core_req_irecv(): reset the request first, as nm_core_req_init() on the
 *  session given (one call instead of two on the layers' fast path: nm_sr_isend(), nm_sr_irecv()). */
#define NM_CORE_REQ_FRESH 0x2u

/**
 * @brief Reset a request for a send or a receive on @p session (every field zeroed, its core state initial).
 * @param req the request (caller's storage, must stay at the same address until it completes).
 * @param session the session it will be posted on. @param kind NM_REQ_SEND or NM_REQ_RECV.
 * Thread-safety: touches only @p req; the request must not be posted.
 */
void nm_core_req_init(struct nm_req_s *req, nm_session_t session, enum nm_req_kind_e kind);

/**
 * @brief Post a send of @p hdr_len header bytes followed by @p len body bytes to (@p gate, @p tag): the core gives
 *        it its sequence number on (gate, session, tag) and queues it for the strategy.
 * @param req a request made by nm_core_req_init(..., NM_REQ_SEND) and not posted yet, or any request with
 *        NM_CORE_REQ_FRESH.
 * @param session the session to send on, or NULL for the one given to nm_core_req_init() (the rpc layer sends on
 *        its internal channel a request the caller initialised on the user session).
 * @param gate destination, a gate of the session's core. @param tag the message tag.
 * @param hdr optional header (rpc), @p hdr_len bytes, NULL when 0. @param buf body, @p len bytes, NULL when 0.
 * @param flags 0, NM_CORE_SEND_SYNC, NM_CORE_REQ_FRESH (a mask).
 * @return 0 (the request completes later, or already completed with an error status), -NM_EINVAL (not a fresh
 *         send request, bad gate, NULL buffer with a length).
 * Thread-safety: takes the core lock.
 */
int nm_core_req_isend(struct nm_req_s *req, nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *hdr,
                      nm_len_t hdr_len, const void *buf, nm_len_t len, unsigned flags);

/**
 * @brief Post a receive of at most @p len bytes into @p buf for messages of @p gate (NM_ANY_GATE: any source) whose
 *        tag matches @p tag under @p mask; matches a stored unexpected message at once if one fits.
 * @param req a request made by nm_core_req_init(..., NM_REQ_RECV) and not posted yet, or any request with
 *        NM_CORE_REQ_FRESH.
 * @param session the session to receive on, or NULL for the one given to nm_core_req_init().
 * @param flags 0 or NM_CORE_REQ_FRESH.
 * @return 0, or -NM_EINVAL (not a fresh receive request, a gate of another core, NULL buffer with a length).
 * Thread-safety: takes the core lock.
 */
int nm_core_req_irecv(struct nm_req_s *req, nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask,
                      void *buf, nm_len_t len, unsigned flags);

/**
 * @brief Send @p len bytes of @p buf to @p gate under @p tag at once, without a request, if the message can leave
 *        in this call: an eager message of at most 4 KiB to an idle gate whose one rail copies packets at post
 *        (sm; libfabric with fi_inject, up to its inject size), with nothing queued on the gate and nothing more
 *        urgent waiting (nm_outgoing.c, nm_send_direct_msg()).
 *        It takes the next sequence number of (gate, tag) only when it leaves, so a message not taken is posted
 *        the usual way (nm_core_req_isend()) and keeps its order. Issue 18, deliverable 3: a small collective's
 *        sends without a request each.
 * @param buf the data (@p len bytes), reusable as soon as this returns 1. @param len bytes (0 allowed).
 * @return 1 the message left (it is complete), 0 not taken (nothing was done: post it as a request),
 *         -NM_EINVAL (NULL session or gate, a gate of another core, NULL buffer with a length).
 * Thread-safety: takes the core lock.
 */
int nm_core_send_now(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len);

/**
 * @brief The fast path of nm_sr_isend(): nm_core_req_isend(req, session, gate, tag, NULL, 0, buf, len,
 *        NM_CORE_REQ_FRESH), with nm_sr_isend()'s argument order, so that the interface's call is a jump.
 * @return as nm_core_req_isend(); -NM_EINVAL also for a NULL session. Thread-safety: takes the core lock.
 */
int nm_core_isend(nm_session_t session, nm_gate_t gate, nm_tag_t tag, const void *buf, nm_len_t len,
                  struct nm_req_s *req);

/**
 * @brief The fast path of nm_sr_irecv(): nm_core_req_irecv(req, session, gate, tag, NM_TAG_MASK_FULL, buf, len,
 *        NM_CORE_REQ_FRESH), with nm_sr_irecv()'s argument order.
 * @return as nm_core_req_irecv(); -NM_EINVAL also for a NULL session. Thread-safety: takes the core lock.
 */
int nm_core_irecv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, void *buf, nm_len_t len,
                  struct nm_req_s *req);

/** @brief Priority of a send not posted yet (larger is more urgent, 0 the default).
 *  @return 0 or -NM_EINVAL (not a send, or already posted). Thread-safety: touches only @p req. */
int nm_core_req_set_prio(struct nm_req_s *req, nm_prio_t prio);

/**
 * @brief Install a request monitor: @p fn(req, event, ref) is called from progress for each event of @p mask.
 *        Allowed on a posted request (the core reads the monitor only when it delivers an event, under the lock).
 * @return 0, -NM_EINVAL (request never initialised), -NM_EALREADY (its events were delivered already).
 * Thread-safety: takes the core lock.
 */
int nm_core_req_set_monitor(struct nm_req_s *req, unsigned mask, nm_req_notifier_t fn, void *ref);

/** @brief Wait until @p req completes or the deadline passes (absolute ns on nm_core_time_ns(), 0 = none).
 *  @return the request's status, or -NM_ETIMEDOUT. Thread-safety: takes the core lock (released while blocked). */
int nm_core_req_wait(nm_session_t session, struct nm_req_s *req, uint64_t deadline_ns);

/** @brief One progress pass if @p req is not complete yet. @return its status once complete, else -NM_EAGAIN.
 *  Thread-safety: takes the core lock. */
int nm_core_req_test(nm_session_t session, struct nm_req_s *req);

/** @brief Withdraw a send (CANCEL to the receiver when its data left). @return 0 (outcome pending: the request
 *  completes later, -NM_ECANCELED if withdrawn), -NM_EBUSY (already matched), -NM_EALREADY, -NM_EINVAL (not a
 *  send of @p session), or its gate's error. Thread-safety: takes the core lock. */
int nm_core_req_cancel_send(nm_session_t session, struct nm_req_s *req);

/** @brief Withdraw a posted receive that matched nothing yet: it completes with -NM_ECANCELED.
 *  @return 0, or -NM_EBUSY (not a receive, or already matched). Thread-safety: takes the core lock. */
int nm_core_req_cancel_recv(nm_session_t session, struct nm_req_s *req);

/** @brief The source of a receive once matched (or the gate it was posted for).
 *  @return 0, or -NM_EAGAIN (any-source receive not matched yet). Thread-safety: takes the core lock. */
int nm_core_req_source(nm_session_t session, struct nm_req_s *req, nm_gate_t *gate);

/** @brief The tag of the message a receive matched. @return 0 or -NM_EAGAIN (not matched yet).
 *  Thread-safety: takes the core lock. */
int nm_core_req_tag(nm_session_t session, struct nm_req_s *req, nm_tag_t *tag);

/** @brief Bytes moved by a completed request: a send's length, a receive's delivered bytes (the message length
 *  cut to the buffer; 0 if it never matched). @return 0 or -NM_EAGAIN (not complete). Thread-safety: takes the lock. */
int nm_core_req_size(nm_session_t session, struct nm_req_s *req, nm_len_t *len);

/**
 * @brief Look for a stored (unexpected) message of @p session from @p gate (NM_ANY_GATE: any) whose tag matches
 *        @p tag under @p mask, after one progress pass; with @p block, progress (spin, then block) until one is
 *        there or the gate fails.
 * @param[out] out_gate, out_tag, out_len its source, tag and length in bytes (each may be NULL).
 * @return 0 found, -NM_EAGAIN (none, not blocking), or the failed gate's error.
 * Thread-safety: takes the core lock (released while blocked).
 */
int nm_core_probe(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_tag_t mask, int block,
                  nm_gate_t *out_gate, nm_tag_t *out_tag, nm_len_t *out_len);

/** Complete a request with a status and fire its monitor (the last access to req). */
void nm_req_complete(struct nm_req_s *req, int status);

/* ======================================================================================================
 * Cores, gates and sessions, read-only. Thread-safety: any thread (set at creation or read as one word).
 * ====================================================================================================== */

/** @brief This process's rank in the job. */
int nm_core_get_rank(nm_core_t core);
/** @brief Ranks in the job. */
int nm_core_get_size(nm_core_t core);
/** @brief The core a gate belongs to (a layer checks a caller's gate against its session's core). */
nm_core_t nm_gate_get_core(nm_gate_t gate);
/** @brief The peer's rank. */
int nm_gate_get_rank(nm_gate_t gate);
/** @brief 0 while the gate works, the negative error that failed it after. */
int nm_gate_get_status(nm_gate_t gate);

/* ---- core/nm_gate.c (declared here for the layers) ---- */
/** The gate to @p rank, made on first use with one rail per network driver (the self driver for one's own
 *  rank). @return NULL when @p rank is out of [0, size) or memory is short. */
struct nm_gate_s *nm_core_gate(struct nm_core_s *core, int rank);
/** Mark the gate failed with @p err and complete every request bound to it with err. */
void nm_gate_fail(struct nm_gate_s *gate, int err);

/* ======================================================================================================
 * Sequence numbers (a dynamic broadcast takes its place in the root's point-to-point order: Denis 2020, 4.3).
 * ====================================================================================================== */

/**
 * @brief Take the next send sequence number of (@p gate, @p session, @p tag), as a send posted now would.
 * @param[out] seq the number taken. @return 0 or -NM_ENOMEM. Thread-safety: the caller holds the core lock.
 */
int nm_core_send_seq_take(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t *seq);
/**
 * @brief Give back the last number taken by nm_core_send_seq_take() on (@p gate, @p session, @p tag), which no
 *        message used (nothing was posted): the stream keeps no hole. Thread-safety: the caller holds the lock.
 */
void nm_core_send_seq_give_back(nm_session_t session, nm_gate_t gate, nm_tag_t tag);

/* ======================================================================================================
 * Sessions of a layer (the rpc channel).
 * ====================================================================================================== */

/**
 * @brief Open the internal session "<owner's name><suffix>" owned by @p owner (closed with it, before it).
 * @return as nm_session_open(); -NM_EINVAL also when the name gets too long. Thread-safety: takes the lock.
 */
int nm_core_session_open_child(nm_session_t owner, const char *suffix, nm_session_t *out);
/** @brief The rpc channel attached to @p session (nm_core_session_set_rpc()), or NULL. */
void *nm_core_session_get_rpc(nm_session_t session);
/** @brief Attach the rpc channel @p rpc to @p session; @p close(rpc) releases it when the session closes. */
void nm_core_session_set_rpc(nm_session_t session, void *rpc, void (*close)(void *rpc));

/* ---- core/nm_hook.c: what the rpc and mcast layers need from the core ---- */
/** A message handed to a session hook (rpc channel) instead of tag matching. Valid during the hook only. */
struct nm_core_incoming_s {
  struct nm_gate_s *gate;
  nm_tag_t tag;
  const uint8_t *prefix;  /* the message's header bytes */
  nm_len_t prefix_len;
  const uint8_t *body;    /* DATA: the body bytes that follow the header; RDV: NULL (body comes on accept) */
  nm_len_t body_len;
  int is_rdv;
  uint64_t cookie;        /* RDV cookie */
  int accepted;
};
/** Session hook: @return 1 handled (accepted or discarded), 0 not for it (kept as unexpected), <0 fail the gate. */
typedef int (*nm_core_hook_t)(void *ref, struct nm_core_incoming_s *in);

/** A layer above the core that must know when a gate fails (the dynamic broadcast: a LIST whose parent died
 *  waits for a DATA message that will never come). Embedded in the layer's own state; see nm_core_gate_fail_hook_add(). */
struct nm_gate_fail_hook_s {
  void (*fn)(void *ref, struct nm_gate_s *gate);
  void *ref;
  struct nm_gate_fail_hook_s *next;
};

/** Route every in-order message of @p session to @p hook instead of tag matching. */
void nm_core_session_set_hook(nm_session_t session, nm_core_hook_t hook, void *ref);
/** The hook of @p session and its ref (NULL, NULL when none): a layer finds its own state on a session it hooked
 *  (the NewMadeleine compatibility layer, nmad/newmad). Thread-safety: the caller holds the core lock. */
void nm_core_session_get_hook(nm_session_t session, nm_core_hook_t *hook, void **ref);
/** Offer the session's stored (unexpected) messages to its hook again, in arrival order. */
void nm_core_session_replay(nm_session_t session);
/** From a hook: receive the body (bytes after the header) into buf[0..len); @p req completes when it is there
 *  (at once for eager data). @return 0 or -NM_EINVAL if already accepted. */
int nm_core_incoming_accept(struct nm_core_incoming_s *in, struct nm_req_s *req, void *buf, nm_len_t len);
/** If the message (gate, tag, seq) of @p session is the next one due and a posted receive of at least @p min_len
 *  bytes matches it, take that receive out of the posted list, advance the sequence and return it. */
struct nm_req_s *nm_core_claim_recv(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t seq,
                                    nm_len_t min_len);
/** Deliver @p len bytes at @p data (malloc'd; ownership passes to the core) as message @p seq of (gate, tag) on
 *  @p session, as if it had arrived from the network. */
void nm_core_inject(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t seq, void *data, nm_len_t len);
/** Message @p seq of (gate, tag) on @p session will never come (a dynamic broadcast lost on its way): give its
 *  place in the order to an entry that completes the receive it matches with @p err (negative), so that later
 *  messages are delivered. Nothing happens when that message was delivered already or is waiting for its turn.
 *  @return 1 placed, 0 nothing to do, -NM_ENOMEM. */
int nm_core_inject_lost(nm_session_t session, nm_gate_t gate, nm_tag_t tag, nm_seq_t seq, int err);
/** Call @p h->fn(h->ref, gate) at the end of every nm_gate_fail() (after the gate's requests completed). */
void nm_core_gate_fail_hook_add(nm_core_t core, struct nm_gate_fail_hook_s *h);
void nm_core_gate_fail_hook_remove(nm_core_t core, struct nm_gate_fail_hook_s *h);
/** A layer that must look at its own state after the core moved (the NewMadeleine compatibility layer: the
 *  notifier of a dynamic broadcast's root, called once the broadcast's sends completed). Embedded in the layer's
 *  state; see nm_core_progress_hook_add(). @p fn returns the number of events it handled (>= 0). */
struct nm_core_progress_hook_s {
  int (*fn)(void *ref);
  void *ref;
  struct nm_core_progress_hook_s *next;
};
/** Call @p h->fn(h->ref) at the end of every progress pass (under the core lock) until removed; @p fn may remove
 *  its own hook. Add a hook only while there is something to look at: no cost when the list is empty.
 *  Thread-safety: the caller holds the core lock. */
void nm_core_progress_hook_add(nm_core_t core, struct nm_core_progress_hook_s *h);
void nm_core_progress_hook_remove(nm_core_t core, struct nm_core_progress_hook_s *h);
/** Messages of more bytes than this go by rendezvous (NMAD_RDV_THRESHOLD). */
nm_len_t nm_core_rdv_threshold(nm_core_t core);
/** Rendezvous messages of up to this many bytes are pulled by their receiver at match, with no RTR round trip
 *  (the get rendezvous, doc/protocol.md), on every gate of this core: NMAD_RDV_CHUNK when the core has one network
 *  driver and it pulls (NM_DRV_F_RDV_GET), else nm_core_rdv_threshold(). The same on every rank of a job (the
 *  drivers and the configuration are), so that cost models may read it. Thread-safety: any thread. */
nm_len_t nm_core_rdv_pull_upto(nm_core_t core);
/** Fire @p events on a request's monitor (if it asked for them) without completing it. */
void nm_req_notify(struct nm_req_s *req, unsigned events);
/** Complete a request and fire @p events (a mask) on its monitor in one call. */
void nm_req_complete_events(struct nm_req_s *req, int status, unsigned events);

/* ======================================================================================================
 * Set-up and tear-down (the launcher).
 * ====================================================================================================== */

/* ---- core/nm_core.c ---- */
/** Create a core for @p size ranks; drivers are added with nm_core_add_driver(). */
int nm_core_create(int rank, int size, nm_core_t *out);
int nm_core_add_driver(nm_core_t core, const struct nm_drv_ops_s *ops, const char *word, int all_local,
                       struct nm_drv_s **out);
void nm_core_destroy(nm_core_t core);
/** Flush: progress until every queued packet of the live gates was handed to its driver; with @p all, until
 *  every send completed, rendezvous included (or the deadline, absolute ns, 0 = none). Without @p all it never
 *  waits for a completion that needs the peer's progress (shm medium sends, rendezvous). */
int nm_core_flush(nm_core_t core, int all, uint64_t deadline_ns);
void nm_core_set_fault_source(nm_core_t core, int fd, int (*poll)(void *, int *), void *ref);
/**
 * @brief Have @p hook(@p ref) called by a thread that waits in @p core: after each sleep in the drivers (ppoll on
 *        their wait fds), and at the start of one nm_core_wait_flag*() call in 16, however short the wait. The
 *        launcher uses it to put a rank the kernel moved back on the processor it was spread to
 *        (nm_rank_spread.h); a rank that computes outside nmad never calls it.
 * @param hook the function, or NULL for none. It may run with the core lock held or not, from any thread that
 *        waits, and must not call the core; it should cost a few ns when it has nothing to do.
 * Thread-safety: set up time only (before a progress thread or other application threads start).
 */
void nm_core_set_wait_hook(nm_core_t core, void (*hook)(void *ref), void *ref);

/* ---- core/nm_incoming.c ---- */
/** Set the key of the job (from the bootstrap: doc/reliability.md) that every packet sent carries and every packet
 *  received must carry. Call before the drivers can deliver packets. Thread-safety: none (set up time). */
void nm_core_set_job_key(nm_core_t core, uint64_t job_key);

/**
 * @brief Read the configuration from the environment (NMAD_STRATEGY, NMAD_RDV_THRESHOLD, ... as nm_config_load())
 *        once the drivers are open: the largest eager message follows from their packet size.
 * @param oversubscribed 1 when this host's ranks outnumber its usable cores (the default spin is then 0).
 * @param job_oversubscribed 1 when the whole job is known, alike on every rank, to have more ranks than cores
 *        (one host, the launcher's view): a hop of a collective then costs a wake-up, NMAD_OVERSUB_HOP_US
 *        (default 5 us), which nm_core_network_logp() adds to the latency the collectives' model reads.
 * @return 0 or -NM_EINVAL (a bad variable; the message names it). Thread-safety: set-up time, one thread.
 */
int nm_core_configure(nm_core_t core, int oversubscribed, int job_oversubscribed);

/**
 * @brief Tell the core that every rank of the job runs on this host (the launcher's view). Rails to a peer on the
 *        same host move bytes through the same memory and cores (shared memory, tcp over loopback), so splitting a
 *        message across them adds work, not bandwidth: split_balance then sends each message on the one rail its
 *        model prices best (doc/architecture.md, "split_balance"). Thread-safety: set-up time, one thread.
 * @param one_host 1: all ranks local; 0 (the default): split by bandwidth.
 */
void nm_core_set_one_host(nm_core_t core, int one_host);

/** NMAD_BIND: progress-thread placement (progress-threads-split-tree-denis-2019, sections 4 and 5.2). */
enum nm_bind_e {
  NM_BIND_BIND = 0, /* on the rank's own cores ("bind", section 4) */
  NM_BIND_NUMA,     /* on the idle core of the rank's NUMA node nearest to it ("numa", section 4) */
  NM_BIND_ODD_EVEN  /* local rank r on idle core r mod (idle cores) k: chain neighbours never share one for k >= 2
                       (section 5.2); binomial-tree neighbours r, r + 2^j do when k divides 2^j */
};

/** @brief Whether the configuration asks for a progress thread (NMAD_PROGRESS=thread), and where (NMAD_BIND).
 *  @param[out] bind its placement policy (may be NULL). @return 1 wanted, 0 not. Valid after nm_core_configure(). */
int nm_core_progress_thread_wanted(nm_core_t core, enum nm_bind_e *bind);

/* ======================================================================================================
 * The core lock for the layers' own multi-step operations (register a service, start a broadcast).
 * ====================================================================================================== */
#ifndef NM_CORE_PRIVATE_H /* the core's files get an inline version from nm_core_private.h */
static inline nm_core_t nm_core_iface_lock_(nm_core_t core)
{
  nm_core_lock(core);
  return core;
}
static inline void nm_core_iface_unlock_(nm_core_t *core) { nm_core_unlock(*core); }
/** Hold the core lock until the end of the enclosing block (every return path releases it). */
#define NM_CORE_LOCKED(c)                                                                                      \
  nm_core_t nm_locked_core_ __attribute__((cleanup(nm_core_iface_unlock_), unused)) = nm_core_iface_lock_(c)
#endif

#endif /* NM_CORE_INTERFACE_H */
