/**
 * @file pioman.h
 * @brief The PIOMan calls StarPU's NewMadeleine back end makes, mapped onto nmad's progress thread and waits
 *        (issue 16, deliverable 2; doc/newmad.md). Compat layer.
 *
 * PIOMan runs NewMadeleine's progress in "ltasks" on dedicated threads; nmad has one progress thread per core
 * (NMAD_PROGRESS=thread, nm_core_progress_thread_start()). piom_cond_t is a condition on a bit mask: request
 * monitors signal it from the progress thread and application threads wait on it, blocking (no spin) on a
 * pthread condition. A wait therefore needs the progress thread running: nm_mpi_nmad.h starts it on first use
 * (and nm_newmad_progress_ensure() does so for a native program).
 * Thread-safety: every piom_cond_* call is safe from any thread.
 */
#ifndef PIOMAN_H
#define PIOMAN_H

#include <stdint.h>
#include <pthread.h>
#include <hwloc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t piom_cond_value_t; /**< the bits of a condition */

/** A condition: a bit mask plus what a waiter blocks on. */
typedef struct piom_cond_s {
  volatile piom_cond_value_t value;
  pthread_mutex_t lock;
  pthread_cond_t cond;
} piom_cond_t;

/** @brief Initialise @p cond with the bits @p initial. */
void piom_cond_init(piom_cond_t *cond, piom_cond_value_t initial);
/** @brief Release @p cond (no waiter may remain). */
void piom_cond_destroy(piom_cond_t *cond);
/** @brief Set the bits @p mask and wake every waiter. Callable from a request monitor. */
void piom_cond_signal(piom_cond_t *cond, piom_cond_value_t mask);
/** @brief Clear the bits @p mask. */
void piom_cond_mask(piom_cond_t *cond, piom_cond_value_t mask);
/** @brief The bits of @p mask set now (read without the lock). @return non-zero when any is set. */
piom_cond_value_t piom_cond_test(const piom_cond_t *cond, piom_cond_value_t mask);
/** @brief As piom_cond_test(), under the condition's lock: a signaller has finished with @p cond once this
 *  returns non-zero, so the caller may destroy it. */
piom_cond_value_t piom_cond_test_locked(piom_cond_t *cond, piom_cond_value_t mask);
/** @brief Block until a bit of @p mask is set (pthread wait: no spinning). Needs nmad's progress thread when the
 *  signal comes from a request monitor (see the file comment). */
void piom_cond_wait(piom_cond_t *cond, piom_cond_value_t mask);

/** Polling points of piom_ltask_schedule() (PIOMan's names; nmad runs one progress pass for each). */
#define PIOM_POLL_POINT_BUSY 0x01
#define PIOM_POLL_POINT_IDLE 0x02
#define PIOM_POLL_POINT_TIMER 0x04
#define PIOM_POLL_POINT_FORCED 0x08
#define PIOM_POLL_POINT_HOOK 0x10
#define PIOM_POLL_POINT_SINGLE 0x20

/** @brief One non-blocking progress pass of the MPI shim's core (StarPU registers it as a progression / idle hook).
 *  @param point a PIOM_POLL_POINT_* value (any value: nmad has one kind of pass). Thread-safety: any thread (the
 *  core lock is taken). Defined in libnmad_mpi (the core is the MPI shim's). */
void piom_ltask_schedule(int point);
/** @brief Bind nmad's progress thread (the MPI shim's core) to the processors of @p level whose operating-system
 *  indexes are @p indexes (@p size entries); starts the thread when not running. Only HWLOC_OBJ_PU and
 *  HWLOC_OBJ_CORE levels are mapped (a core: all its PUs); others leave the placement unchanged.
 *  Call from one thread while no other uses nmad (StarPU: at start-up). Defined in libnmad_mpi. */
void piom_ltask_set_bound_thread_os_indexes(int level, int *indexes, int size);
/** @brief As piom_ltask_set_bound_thread_os_indexes() with hwloc logical indexes (topology order). */
void piom_ltask_set_bound_thread_indexes(int level, int *indexes, int size);

#ifdef __cplusplus
}
#endif
#endif /* PIOMAN_H */
