/**
 * @file nm_core.h
 * @brief Core services visible to applications: sessions, progress and waiting.
 *
 * Progress model (DESIGN.md rule 2): nm_core_progress() never blocks. Waiting functions spin for a short time
 * (NMAD_SPIN_US, default 10 us), then spin with sched_yield() (NMAD_YIELD_US, default 10000 us; as fast as
 * spinning when a core is free, fair when ranks outnumber cores; also kept while a large transfer is in
 * flight, since libfabric's manual progress needs calls to move it), then block in the drivers (libfabric wait
 * object + poll(), or a sleeping back-off of 1..500 us where the provider has no usable wait object).
 * Thread-safety: a core is used by one thread at a time (the caller serializes); a thread-safe layer is added above.
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
 * @param deadline_ns absolute time in ns on CLOCK_MONOTONIC (see nm_core_time_ns()); 0 = no deadline.
 * @return 0 when events were handled, -NM_ETIMEDOUT when the deadline passed first.
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

/** @brief Current CLOCK_MONOTONIC time in nanoseconds. */
uint64_t nm_core_time_ns(void);

/** @brief Progress until *flag becomes non-zero (or the deadline passes), spinning then blocking.
 *  @param deadline_ns absolute CLOCK_MONOTONIC ns, 0 for none. @return 0 or -NM_ETIMEDOUT. */
int nm_core_wait_flag(nm_core_t core, volatile int *flag, uint64_t deadline_ns);

#ifdef __cplusplus
}
#endif
#endif /* NM_CORE_H */
