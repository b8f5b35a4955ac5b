/* The progress thread (NMAD_PROGRESS=thread): runs the core's progress while the application computes, so that
 * rendezvous are answered, messages are matched and monitors run (the schedules of non-blocking collectives
 * forward data down their trees) without the application calling nmad. Source:
 * progress-threads-split-tree-denis-2019, section 1 (progress threads give overlap of non-blocking collectives)
 * and sections 4-5 (placement, computed by the launcher from NMAD_BIND).
 *
 * Sharing the core with the application (DESIGN.md rule 3): the thread only ever *tries* the core lock. When the
 * application holds it, the application is inside nmad and progresses by itself, so the thread sleeps instead of
 * queueing on the mutex (which would make every unlock of the application's fast path a futex wake-up). It never
 * spins either: when a pass finds nothing it sleeps in the drivers' wait objects, without the lock, until an
 * event, its wake-up fd, or a bounded timeout. */
#define _GNU_SOURCE /* ppoll, pthread_setaffinity_np */
#include "nm_core_private.h"
#include <sys/eventfd.h>
#include <unistd.h>
#include <time.h>
#include <errno.h>

/* Longest sleep in the drivers' wait objects: events wake the thread earlier; this bounds the delay of a
 * wake-up the wait object cannot give (a provider that signals only some completions). */
#define NM_PT_BLOCK_MAX_NS (10ULL * 1000000)
/* Sleep while the application holds the lock (it progresses itself meanwhile), and the back-off range on drivers
 * without a wait fd (shm here): it starts at 8 us, not 1, because each wake-up preempts the application's
 * computation when the thread shares its processor. */
#define NM_PT_BUSY_NS 100000ULL
#define NM_PT_BACKOFF_MIN_NS 8000ULL
#define NM_PT_BACKOFF_MAX_NS 200000ULL

/* Sleep up to @p ns on the drivers' fds and the wake-up fd (@p fds has room for it at index nfds). */
static void nm_pt_sleep(struct nm_progress_thread_s *pt, struct pollfd *fds, int nfds, uint64_t ns)
{
  fds[nfds].fd = pt->wake_fd;
  fds[nfds].events = POLLIN;
  struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
  ppoll(fds, (nfds_t)nfds + 1, &ts, NULL);
}

static void *nm_pt_main(void *arg)
{
  struct nm_core_s *core = arg;
  struct nm_progress_thread_s *pt = &core->pthread;
  struct pollfd fds[NM_CORE_MAX_FDS + 1];
  uint64_t backoff = 0;
  while (!__atomic_load_n(&pt->stop, __ATOMIC_ACQUIRE)) {
    if (!nm_core_trylock(core)) {
      nm_pt_sleep(pt, fds, 0, NM_PT_BUSY_NS);
      continue;
    }
    int n = nm_core_progress_drivers(core);
    int fd_less = 0, nfds = 0;
    if (n == 0)
      nfds = nm_core_block_fds(core, fds, 0, &fd_less); /* fi_trywait() needs the lock: done before release */
    int large = core->n_large;
    nm_core_unlock(core);
    if (n > 0) {
      backoff = 0;
      continue;
    }
    if (large) {
      /* a large transfer moves only when progress is called (libfabric's manual progress: segments, CMA): keep
       * calling, but let the application's thread run in between when it shares our processor */
      sched_yield();
      continue;
    }
    uint64_t ns = NM_PT_BLOCK_MAX_NS;
    if (nfds < 0) { /* fi_trywait() saw events the pass did not consume: retry soon, but never spin on it */
      nfds = 0;
      fd_less = 1;
    }
    if (fd_less) {
      backoff = backoff ? backoff * 2 : NM_PT_BACKOFF_MIN_NS;
      ns = backoff = backoff > NM_PT_BACKOFF_MAX_NS ? NM_PT_BACKOFF_MAX_NS : backoff;
    }
    nm_pt_sleep(pt, fds, nfds, ns);
  }
  return NULL;
}

int nm_core_progress_thread_start(nm_core_t core, const int *cpus, int n_cpus)
{
  struct nm_progress_thread_s *pt = &core->pthread;
  if (pt->running)
    return -NM_EALREADY;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = 0; cpus && i < n_cpus; i++) {
    if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE)
      return -NM_EINVAL;
    CPU_SET(cpus[i], &set);
  }
  pt->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (pt->wake_fd < 0)
    return -NM_ENOMEM;
  pt->stop = 0;
  nm_core_lock_wake_fd_open(core);
  core->lock.threaded = 1; /* before the thread exists: every lock call from now on is real */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (cpus && n_cpus > 0)
    pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
  int rc = pthread_create(&pt->thread, &attr, nm_pt_main, core);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    core->lock.threaded = core->lock.multi;
    close(pt->wake_fd);
    pt->wake_fd = -1;
    return rc == EINVAL ? -NM_EINVAL : -NM_ENOMEM; /* EINVAL: processors outside the allowed set */
  }
  pt->running = 1;
  return NM_ESUCCESS;
}

void nm_core_progress_thread_stop(nm_core_t core)
{
  struct nm_progress_thread_s *pt = &core->pthread;
  if (!pt->running)
    return;
  __atomic_store_n(&pt->stop, 1, __ATOMIC_RELEASE);
  uint64_t one = 1;
  if (write(pt->wake_fd, &one, sizeof(one)) < 0) {
    /* the counter is full: the thread is awake already */
  }
  pthread_join(pt->thread, NULL);
  core->lock.threaded = core->lock.multi; /* no progress thread any more; application threads may remain */
  close(pt->wake_fd);
  pt->wake_fd = -1;
  pt->running = 0;
}

int nm_core_progress_thread_running(nm_core_t core)
{
  return core->pthread.running;
}
