/* The core lock: the thread-safety layer around the core (DESIGN.md rule 3). It is taken only while a progress
 * thread runs (nm_progress_thread.c); without one, each call is a single predictable branch, so the latency path
 * of a one-thread program does not pay for it. Recursive, because a monitor that runs inside progress (a
 * collective's schedule) posts new requests through the interfaces, which take the lock again. Every driver wait
 * releases it whole (nm_core_lock_release_all()), so it is never held while a thread sleeps. */
#include "nm_core_private.h"
#include <sched.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

void nm_core_lock_init(struct nm_core_s *core)
{
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&core->lock.mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  core->lock.depth = 0;
  core->lock.threaded = 0;
  core->lock.multi = 0;
  core->lock.sleepers = 0;
  core->lock.wake_fd = -1; /* made when a second thread comes (nm_core_lock_wake_fd_open()) */
}

void nm_core_lock_wake_fd_open(struct nm_core_s *core)
{
  /* Without it (out of fds) a sleeper only wakes at its bounded timeout. */
  if (core->lock.wake_fd < 0)
    core->lock.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
}

void nm_core_lock_destroy(struct nm_core_s *core)
{
  pthread_mutex_destroy(&core->lock.mutex);
  if (core->lock.wake_fd >= 0)
    close(core->lock.wake_fd);
  core->lock.wake_fd = -1;
}

void nm_core_lock(nm_core_t core)
{
  if (!core->lock.threaded)
    return;
  pthread_mutex_lock(&core->lock.mutex);
  core->lock.depth++;
}

void nm_core_unlock(nm_core_t core)
{
  if (!core->lock.threaded)
    return;
  core->lock.depth--;
  pthread_mutex_unlock(&core->lock.mutex);
}

int nm_core_trylock(struct nm_core_s *core)
{
  if (!core->lock.threaded)
    return 1;
  if (pthread_mutex_trylock(&core->lock.mutex) != 0)
    return 0;
  core->lock.depth++;
  return 1;
}

/* Only a thread that holds the lock calls this (every path to a driver wait goes through a locked interface). */
unsigned nm_core_lock_release_all(struct nm_core_s *core)
{
  if (!core->lock.threaded)
    return 0;
  unsigned depth = core->lock.depth;
  core->lock.depth = 0;
  for (unsigned i = 0; i < depth; i++)
    pthread_mutex_unlock(&core->lock.mutex);
  return depth;
}

void nm_core_lock_reacquire(struct nm_core_s *core, unsigned depth)
{
  if (!depth)
    return;
  for (unsigned i = 0; i < depth; i++)
    pthread_mutex_lock(&core->lock.mutex);
  core->lock.depth = depth;
}

int nm_core_threads_enable(nm_core_t core)
{
  if (core->block_drv)
    return -NM_ENOTSUP; /* the simulator's ranks are coroutines of one OS thread */
  if (core->lock.threaded) { /* the progress thread runs and reads both fields: under the lock (ThreadSanitizer) */
    nm_core_lock(core);
    core->lock.multi = 1;
    nm_core_unlock(core);
    return NM_ESUCCESS;
  }
  nm_core_lock_wake_fd_open(core);
  core->lock.multi = 1;
  core->lock.threaded = 1; /* no other thread uses the core yet (the caller's contract) */
  return NM_ESUCCESS;
}

int nm_core_threads_enabled(nm_core_t core)
{
  return core->lock.multi;
}

/* A waiter that kept the lock while it yields would stop every other application thread from posting: with
 * several of them the lock goes for the yield. With the progress thread alone it stays (that thread tries the
 * lock and progresses when the application is outside nmad: releasing here only makes the two race). */
void nm_core_yield(nm_core_t core)
{
  if (!core->lock.multi) {
    sched_yield();
    return;
  }
  unsigned held = nm_core_lock_release_all(core);
  sched_yield();
  nm_core_lock_reacquire(core, held);
}

/* One count per sleeper (EFD_SEMAPHORE: each woken sleeper takes one). A count left by a sleeper that woke for
 * another reason costs one spurious pass later: harmless, and bounded by the number of sleepers. */
void nm_core_wake_sleepers(struct nm_core_s *core)
{
  if (!core->lock.sleepers || core->lock.wake_fd < 0)
    return;
  uint64_t n = core->lock.sleepers;
  if (write(core->lock.wake_fd, &n, sizeof(n)) < 0) {
    /* the counter is full: the sleepers are awake already */
  }
}
