/* The core lock: the thread-safety layer around the core (DESIGN.md rule 3). It is taken only while a progress
 * thread runs (nm_progress_thread.c); without one, each call is a single predictable branch, so the latency path
 * of a one-thread program does not pay for it. Recursive, because a monitor that runs inside progress (a
 * collective's schedule) posts new requests through the interfaces, which take the lock again. Every driver wait
 * releases it whole (nm_core_lock_release_all()), so it is never held while a thread sleeps. */
#include "nm_core_private.h"

void nm_core_lock_init(struct nm_core_s *core)
{
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&core->lock.mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  core->lock.depth = 0;
  core->lock.threaded = 0;
}

void nm_core_lock_destroy(struct nm_core_s *core)
{
  pthread_mutex_destroy(&core->lock.mutex);
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
