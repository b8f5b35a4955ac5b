/**
 * @file nm_core.h
 * @brief Core services visible to applications: sessions, progress and waiting.
 *
 * Progress model (DESIGN.md rule 2): nm_core_progress() never blocks. Waiting functions spin for a short time
 * (NMAD_SPIN_US, default 10 us), then spin with sched_yield() (NMAD_YIELD_US, default 10000 us; as fast as
 * spinning when a core is free, fair when ranks outnumber cores; also kept while a large transfer is in
 * flight, since libfabric's manual progress needs calls to move it), then block in the drivers (libfabric wait
 * object + poll(), or a sleeping back-off of 1..500 us where the provider has no usable wait object).
 * Thread-safety: one application thread uses a core at a time (the caller serializes), unless
 * nm_core_threads_enable() was called: then any number of application threads may call the interfaces (sendrecv,
 * rpc, mcast, coll, sessions, waits) at once, each call holding the core lock, each wait releasing it while it
 * yields or sleeps (issue 16 deliverable 3; tests/it_threads.c). With NMAD_PROGRESS=thread a
 * progress thread (nm_core_progress_thread_start()) also runs the core, so that transfers and the collectives
 * built on monitors advance while the application computes; every function of the interfaces then takes the core
 * lock (nm_core_lock()) for its duration, and every driver wait releases it (DESIGN.md rule 3).
 */
#ifndef NM_CORE_H
#define NM_CORE_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Open a named session: a namespace of tags. Several sessions can live on one core (several libraries
 * sharing it); messages of one session never match receives of another. Both sides must open the same name.
 * @param core the core (nm_launcher_get_core()).
 * @param name NUL-terminated label, at most 63 bytes.
 * @param[out] out the session.
 * @return 0, -NM_EINVAL (name empty or too long), -NM_EALREADY (already open on this core), -NM_ENOMEM.
 */
int nm_session_open(nm_core_t core, const char *name, nm_session_t *out);

/** Flag of nm_session_open_flags(): one ordering stream per (peer, context) instead of per (peer, tag). */
#define NM_SESSION_ORDER_BY_CONTEXT 0x1u
/** The context part of a tag (its upper 32 bits) for NM_SESSION_ORDER_BY_CONTEXT. */
#define NM_TAG_CONTEXT_MASK ((nm_tag_t)0xffffffff00000000ULL)

/**
 * @brief Open a named session with options (nm_session_open() is this with @p flags 0).
 * @param flags 0, or NM_SESSION_ORDER_BY_CONTEXT: the messages a peer sends on one context (the tag's upper 32
 *        bits) are delivered in send order, whatever their lower 32 bits. The core then keeps one sequence counter
 *        per (peer, context), not one per (peer, tag), so that a program using many distinct tags (an MPI
 *        library: a tag per user tag, one per collective instance) keeps a bounded state. Matching still uses
 *        the whole tag. Both sides must open the name with the same flags: the flag is part of the session id.
 * @return as nm_session_open(); -NM_EINVAL also for an unknown flag.
 * Thread-safety: takes the core lock.
 */
int nm_session_open_flags(nm_core_t core, const char *name, unsigned flags, nm_session_t *out);

/** @brief Close a session. Posted receives are cancelled (status -NM_ECANCELED).
 *  @return 0 or -NM_EBUSY if sends are still pending on it. */
int nm_session_close(nm_session_t session);

/** @brief Core of a session. */
nm_core_t nm_session_get_core(nm_session_t session);

/** @brief Run the engine once without blocking: poll drivers, match arrivals, schedule packets.
 *  @return number of events handled (>= 0). */
int nm_core_progress(nm_core_t core);

/**
 * @brief Progress until something happens or the deadline passes; spins briefly, then blocks in the drivers.
 * "Something happens" counts the events of every thread's progress: with a progress thread running
 * (nm_core_progress_thread_start()), the call also returns when that thread handled events while this one slept.
 * @param deadline_ns absolute time in ns on the core's clock (nm_core_time_ns()); 0 = no deadline.
 * @return 0 when events were handled, -NM_ETIMEDOUT when the deadline passed first.
 * Thread-safety: takes the core lock; releases it whole while blocked in the drivers.
 */
int nm_core_wait(nm_core_t core, uint64_t deadline_ns);

/**
 * @brief An application's poll (a test or probe that found nothing) is done: give the processor away when the
 *        ranks of this host outnumber its processors, so that a rank polling in a loop (MPI_Test, MPI_Iprobe)
 *        lets the rank it waits for run. Does nothing otherwise (one rank per core: polling is the fast way).
 * Same rule as the waits (nm_core_wait_flag() yields from the first idle pass when oversubscribed).
 * Thread-safety: as nm_core_progress(). Never blocks beyond sched_yield().
 */
void nm_core_idle(nm_core_t core);

/**
 * @brief The caller's burst of sends is over: what it sends next starts a new pass, so that a rail (a paced driver)
 *        that took a packet at post in this pass counts as free again, as after a wait that progressed
 *        (nm_core_wait_flag()). A blocking operation whose last sends left at post calls it before it returns
 *        (collectives/ eager paths): else the first sends of the next one, to the same peers, would find their
 *        rails busy and queue for the next progress pass (an 8 B MPI_Bcast right after an eager MPI_Barrier: 0.13 ->
 *        0.45 us). Within a burst the busy rail is what aggregates small sends to one gate.
 * Thread-safety: takes the core lock. Source: issue 18, deliverable 3.
 */
void nm_core_end_burst(nm_core_t core);

/**
 * @brief The core's clock in nanoseconds: the driver's clock when it has one (the simulation driver: simulated
 *        time since the start of the simulation), else CLOCK_MONOTONIC (DESIGN.md rule 7). Every deadline of the
 *        interfaces is on this clock; benchmarks time with it so that they report simulated time under nmad-sim.
 * @param core the core, or NULL for CLOCK_MONOTONIC.
 * Thread-safety: any thread.
 */
uint64_t nm_core_time_ns(nm_core_t core);

/**
 * @brief Whether the bytes of a message of @p len bytes reach the receiver. Always 1, except under nmad-sim
 *        --fake-payload B (doc/nmad-sim.md): a message that goes by rendezvous (more than NMAD_RDV_THRESHOLD
 *        bytes) and is larger than B moves only its size through the simulated network, and the receive buffer
 *        is left as it was. A program then neither checks such data nor needs to touch its buffers.
 * @param core the core. @param len message length in bytes.
 * @return 1 when the bytes are delivered, 0 when only the size moves. Thread-safety: any thread.
 */
int nm_core_payload_delivered(nm_core_t core, nm_len_t len);

/**
 * @brief The largest buffer nmad allocates for a size a peer announced (NMAD_PEER_ALLOC_MAX, default half the
 *        physical memory): a broadcast forwarder's temporary copy, MPI_Improbe's message buffer. A larger
 *        announced size fails that operation with -NM_ENOMEM (MPI_ERR_NO_MEM) instead of allocating
 *        (DESIGN.md rule 9; doc/reliability.md, "Untrusted sizes").
 * @param core the core. @return bytes. Thread-safety: any thread.
 */
nm_len_t nm_core_peer_alloc_max(nm_core_t core);

/** Flow-control figures of a core (nm_core_get_stats()). Credit bytes count a message's payload plus
 *  NM_WIRE_CREDIT_MSG_COST (128) for the receiver's record of it (doc/protocol.md, "Flow control"). */
struct nm_core_stats_s {
  uint64_t unexpected_bytes;      /**< eager data held now as unexpected, out of order or for an unopened session */
  uint64_t unexpected_bytes_peak; /**< the most ever held at once */
  uint64_t rdv_for_credit;        /**< sends that went by rendezvous only because their peer's credit was short */
  uint64_t credit_chunks_sent;    /**< CREDIT chunks sent back to senders */
};

/**
 * @brief Read the core's flow-control figures. The receiver-side bound they show: unexpected_bytes never exceeds
 *        NMAD_EAGER_CREDIT times the number of peers that send to this rank (doc/reliability.md, "Flow control").
 * @param core the core. @param stats out.
 * Thread-safety: takes the core lock.
 */
void nm_core_get_stats(nm_core_t core, struct nm_core_stats_s *stats);

/**
 * @brief The network's nominal figures, for cost models (the broadcast chooser, nm_coll_model.h): the lowest
 *        one-way latency and the summed bandwidth of the core's network rails (strategies split a large message
 *        over all of them), the gate to oneself left out. The figures are the drivers' nominal ones: a table per
 *        libfabric provider, or the simulated platform's route figures read once per job, hence the same on every
 *        rank of a job, which a collective's members need to reach the same choice without talking.
 * @param core the core; @param latency_ns out, ns; @param bandwidth_MBps out, 10^6 bytes/s.
 * @return 0, or -NM_EINVAL when the core has no network rail (a singleton: both outputs are then 0).
 * Thread-safety: any thread (the rails are fixed once the core is open).
 */
int nm_core_network_props(nm_core_t core, uint32_t *latency_ns, uint64_t *bandwidth_MBps);

/**
 * @brief nm_core_network_props() with the LogP split the broadcast model uses (nm_coll_model_logp(); issue 17,
 *        doc/collectives.md "The model in LogP form"): besides the lowest latency and the summed bandwidth, the
 *        sender's overhead per message (LogP's o, part of the latency: the wire latency is latency - overhead)
 *        and the least interval between two messages sent back to back (LogP's g, 0 when not known apart from
 *        o), both of the rail whose latency is taken, and how many messages a sender posts back to back after a
 *        pause before the gap applies (a send queue taking a burst at the overhead's cost; 0: every message
 *        pays the gap). The figures are the drivers' nominal ones (see nm_core_network_props()), the same on
 *        every rank of a job.
 * @param core the core; @param latency_ns, overhead_ns, gap_ns out, ns (overhead_ns <= latency_ns);
 *        @param gap_free out, messages;
 *        @param bandwidth_MBps out, 10^6 bytes/s. Any output may be NULL.
 * @return 0, or -NM_EINVAL when the core has no network rail (a singleton: the outputs are then 0).
 * Thread-safety: any thread (the rails are fixed once the core is open).
 */
int nm_core_network_logp(nm_core_t core, uint32_t *latency_ns, uint32_t *overhead_ns, uint32_t *gap_ns,
                         uint32_t *gap_free, uint64_t *bandwidth_MBps);

/** @brief Whether the whole job runs on one host with more ranks than usable cores (nm_core_configure()'s
 *  job_oversubscribed): the same answer on every rank, so collectives may choose an algorithm by it (all ranks
 *  choose alike). @return 1 or 0. Thread-safety: any thread (fixed once configured). */
int nm_core_job_oversubscribed(nm_core_t core);

/** @brief Progress until *flag becomes non-zero (or the deadline passes), spinning then blocking.
 *  @param deadline_ns absolute ns on nm_core_time_ns(), 0 for none. @return 0 or -NM_ETIMEDOUT. */
int nm_core_wait_flag(nm_core_t core, volatile int *flag, uint64_t deadline_ns);

/** @brief nm_core_wait_flag() that spins at least @p min_spin_ns before it yields, even on an oversubscribed host
 *  (whose configured spin is 0; such a short spin reads the clock every 4 idle passes, not every 64): for a waiter
 *  that knows its sender is running and about to send, such as a flat
 *  broadcast's receiver (collectives/bcast_classic.c), where yielding would hand the core to ranks that have
 *  nothing to do and come back a whole round of context switches later.
 *  @param min_spin_ns ns (0: the configured spin, as nm_core_wait_flag()); @return 0 or -NM_ETIMEDOUT.
 *  Thread-safety: as nm_core_wait_flag(). */
int nm_core_wait_flag_spin(nm_core_t core, volatile int *flag, uint64_t deadline_ns, uint64_t min_spin_ns);

/** @brief nm_core_wait_flag_spin() with a relative timeout: @p timeout_ns (> 0) counted from the wait's first look
 *  at the clock, a few idle passes after the call, so that a wait the flag ends at once reads no clock at all (a
 *  clock read costs as much as a progress pass on a VM: 5% of a 4-rank MPI_Barrier's user time, issue 18).
 *  @return 0 or -NM_ETIMEDOUT. Thread-safety: as nm_core_wait_flag(). */
int nm_core_wait_flag_for(nm_core_t core, volatile int *flag, uint64_t timeout_ns, uint64_t min_spin_ns);

/**
 * @brief Take the core lock: the thread-safety layer of the core (DESIGN.md rule 3). A no-op unless a progress
 *        thread runs. Recursive: a monitor running inside progress may call the interfaces again. Released whole
 *        by every driver wait (nm_core_wait(), nm_core_wait_flag()), so a thread that waits never holds it.
 * Layers above the core (the MPI shim) hold it for the duration of each of their calls; nmad's own interfaces
 * (sendrecv, rpc, mcast, sessions, progress and waits) take it themselves.
 * @param core the core. Thread-safety: any thread.
 */
void nm_core_lock(nm_core_t core);

/** @brief Release one level of nm_core_lock(). A no-op unless a progress thread runs. */
void nm_core_unlock(nm_core_t core);

/**
 * @brief Start the progress thread (NMAD_PROGRESS=thread; nm_launcher_init() does it from the environment).
 * It progresses the core whenever the lock is free, and otherwise waits in the drivers (never spins): requests
 * complete, rendezvous are answered, monitors run (so non-blocking collectives advance) while the application
 * computes. Its placement follows NMAD_BIND (progress-threads-split-tree-denis-2019, sections 4 and 5.2).
 * @param core the core; no other thread may use it during this call.
 * @param cpus the operating system's numbers of the processors to bind the thread to (n_cpus entries), or NULL
 *             to inherit the caller's affinity.
 * @param n_cpus entries in @p cpus (0 with NULL).
 * @return 0, -NM_EALREADY (running), -NM_EINVAL (a processor number out of range), -NM_ENOMEM (the system
 *         refused the thread or its wake-up fd: out of resources).
 */
int nm_core_progress_thread_start(nm_core_t core, const int *cpus, int n_cpus);

/** @brief Stop and join the progress thread (no-op when none runs). The caller must not hold the core lock.
 *  @param core the core. Thread-safety: the application thread only. */
void nm_core_progress_thread_stop(nm_core_t core);

/** @brief 1 when a progress thread runs on @p core (the lock layer is active), 0 otherwise. */
int nm_core_progress_thread_running(nm_core_t core);

/**
 * @brief Let several application threads call nmad at once (MPI_THREAD_MULTIPLE; issue 16 deliverable 3): turns
 *        the core lock on for good, with or without a progress thread. Every function of the interfaces then
 *        takes it for its duration; waits release it while they yield the processor or sleep in the drivers, and a
 *        thread whose request another thread's progress pass completed is woken at once (an eventfd beside the
 *        drivers' fds), not at its sleep's timeout.
 * @param core the core; no other thread may use it during this call (call it before starting the threads).
 * @return 0, or -NM_ENOTSUP on a core whose driver blocks by itself (the simulator: its ranks are coroutines of one
 *         OS thread, so a rank cannot have threads of its own). Calling it twice is harmless.
 */
int nm_core_threads_enable(nm_core_t core);

/** @brief 1 when several application threads may use @p core (nm_core_threads_enable() was called), else 0. */
int nm_core_threads_enabled(nm_core_t core);

/** @brief Give the processor away once (sched_yield()) from inside a wait loop. With several application threads
 *  (nm_core_threads_enable()) the core lock is released meanwhile, so that the other threads can post and progress;
 *  otherwise the lock, if any, is kept (the progress thread progresses by itself when the lock is free only).
 *  @param core the core. Thread-safety: any thread, holding the core lock or not. */
void nm_core_yield(nm_core_t core);

/** Packets the core refused at its doors (doc/reliability.md, "Authenticated sources and closed doors"). None of
 *  them failed a gate: their sender is not known to be one of the job's ranks. */
struct nm_core_refused_s {
  uint64_t foreign;        /**< not of this job: another job key, another protocol version, or not an nmad packet */
  uint64_t unknown_source; /**< from an address the driver does not know (drivers that authenticate sources) */
};

/**
 * @brief Read the counts of packets refused at the doors since the core was created.
 * @param core the core. @param[out] out the counts (packets).
 * @return 0, or -NM_EINVAL when @p out is NULL.
 * Thread-safety: takes the core lock.
 */
int nm_core_get_refused(nm_core_t core, struct nm_core_refused_s *out);

#ifdef __cplusplus
}
#endif
#endif /* NM_CORE_H */
