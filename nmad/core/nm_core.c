/* The core object: drivers, gates, progress and waiting (DESIGN.md "The flow of a message", rule 2). */
#define _GNU_SOURCE /* ppoll */
#include "nm_core_private.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sched.h>
#include <errno.h>
#include <unistd.h>

#define NM_FAULT_CHECK_EVERY 1024          /* progress passes between two looks at the fault source */
#define NM_BLOCK_MAX_NS (100ULL * 1000000) /* never block longer than this without re-checking */
#define NM_BACKOFF_MIN_NS 1000ULL
#define NM_BACKOFF_MAX_NS 500000ULL
#define NM_CLOCK_EVERY 64 /* idle progress passes between two clock reads (a power of 2: tested by a mask) */

uint64_t nm_core_time_ns(nm_core_t core)
{
  if (core && core->clock_drv)
    return core->clock_drv->ops->now_ns(core->clock_drv);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void nm_req_list_append(struct nm_req_list_s *l, struct nm_req_s *r)
{
  r->next = NULL;
  r->prev = l->tail;
  if (l->tail)
    l->tail->next = r;
  else
    l->head = r;
  l->tail = r;
  if (l->index)
    nm_req_index_add(l->index, r);
}

void nm_req_list_insert_after(struct nm_req_list_s *l, struct nm_req_s *pos, struct nm_req_s *r)
{
  if (!pos) { /* insert at head */
    r->prev = NULL;
    r->next = l->head;
    if (l->head)
      l->head->prev = r;
    else
      l->tail = r;
    l->head = r;
    if (l->index)
      nm_req_index_add(l->index, r);
    return;
  }
  r->prev = pos;
  r->next = pos->next;
  if (pos->next)
    pos->next->prev = r;
  else
    l->tail = r;
  pos->next = r;
  if (l->index)
    nm_req_index_add(l->index, r);
}

void nm_req_list_remove(struct nm_req_list_s *l, struct nm_req_s *r)
{
  if (r->prev)
    r->prev->next = r->next;
  else
    l->head = r->next;
  if (r->next)
    r->next->prev = r->prev;
  else
    l->tail = r->prev;
  r->next = r->prev = NULL;
  if (l->index)
    nm_req_index_del(l->index, l, r);
}

void nm_req_complete_events(struct nm_req_s *req, int status, unsigned events)
{
  nm_req_notifier_t notifier = req->notifier;
  void *ref = req->notifier_ref;
  unsigned fire = notifier ? (req->notifier_mask & events) : 0;
  req->status = status;
  req->state = NM_RS_DONE;
  req->completed = 1;
  /* The monitor may free or re-post the request: nothing touches req after it. */
  if (fire)
    notifier(req, fire, ref);
}

void nm_req_complete(struct nm_req_s *req, int status)
{
  nm_req_complete_events(req, status,
                         req->kind == NM_REQ_SEND ? NM_EVENT_SEND_COMPLETED : NM_EVENT_RECV_COMPLETED);
}

void nm_req_notify(struct nm_req_s *req, unsigned events)
{
  if (req->notifier && (req->notifier_mask & events))
    req->notifier(req, req->notifier_mask & events, req->notifier_ref);
}

int nm_core_create(int rank, int size, nm_core_t *out)
{
  if (size < 1 || rank < 0 || rank >= size)
    return -NM_EINVAL;
  struct nm_core_s *core = calloc(1, sizeof(*core));
  if (!core)
    return -NM_ENOMEM;
  core->rank = rank;
  core->size = size;
  core->cfg.eager_credit = NM_EAGER_CREDIT_DEFAULT;
  core->cfg.peer_alloc_max = nm_config_peer_alloc_default();
  core->cfg.frag_max = NM_FRAG_MAX_DEFAULT;
  nm_pool_init(&core->ctrl_pool, sizeof(struct nm_ctrl_s));
  nm_pool_init(&core->large_pool, sizeof(struct nm_large_s));
  nm_pool_init(&core->unexp_pool, sizeof(struct nm_unexp_s));
  nm_pool_init(&core->frag_pool, nm_frag_record_size());
  core->pw_cap = 0;
  core->next_cookie = 1;
  core->next_rtag = 1;
  core->fault.fd = -1;
  core->pthread.wake_fd = -1;
  nm_core_lock_init(core);
  *out = core;
  return NM_ESUCCESS;
}

int nm_core_add_driver(nm_core_t core, const struct nm_drv_ops_s *ops, const char *word, int all_local,
                       struct nm_drv_s **out)
{
  if (core->n_drvs > NM_MAX_RAILS)
    return -NM_EINVAL;
  struct nm_drv_s *drv = &core->drvs[core->n_drvs];
  memset(drv, 0, sizeof(*drv));
  drv->ops = ops;
  drv->index = core->n_drvs;
  drv->up.ref = core;
  drv->up.send_done = nm_core_send_done;
  drv->up.packet = nm_core_packet;
  drv->up.large_done = nm_core_large_done;
  int err = ops->open(drv, word, all_local);
  if (err)
    return err;
  core->n_drvs++;
  if (ops == &nm_drv_self_ops)
    core->self_drv = drv;
  else if (!ops->idle)
    core->n_always_polled++;
  if (ops->now_ns && !core->clock_drv)
    core->clock_drv = drv;
  if (ops->block && !core->block_drv)
    core->block_drv = drv;
  /* Packet wrappers are sized for the smallest packet any driver carries. */
  if (!core->pw_cap || drv->props.max_packet < core->pw_cap) {
    if (core->pw_cap)
      nm_pool_destroy(&core->pw_pool);
    core->pw_cap = drv->props.max_packet;
    nm_pool_init(&core->pw_pool, sizeof(struct nm_pw_s) + core->pw_cap);
  }
  *out = drv;
  return NM_ESUCCESS;
}

int nm_core_network_logp(nm_core_t core, uint32_t *latency_ns, uint32_t *overhead_ns, uint32_t *gap_ns,
                         uint32_t *gap_free, uint64_t *bandwidth_MBps)
{
  uint32_t lat = 0, o = 0, g = 0, free_msgs = 0;
  uint64_t bw = 0;
  for (int i = 0; i < core->n_drvs; i++) {
    const struct nm_drv_s *drv = &core->drvs[i];
    if (drv == core->self_drv)
      continue;
    if (bw == 0 || drv->props.latency_ns < lat) { /* the overheads of the rail whose latency is taken */
      lat = drv->props.latency_ns;
      o = drv->props.overhead_ns < lat ? drv->props.overhead_ns : lat;
      g = drv->props.gap_ns;
      free_msgs = drv->props.gap_free;
    }
    bw += drv->props.bandwidth_MBps;
  }
  if (bw && core->cfg.oversub_hop_ns) /* more ranks than cores: a hop costs a wake-up (nm_config_load()) */
    lat += core->cfg.oversub_hop_ns;
  if (latency_ns)
    *latency_ns = lat;
  if (overhead_ns)
    *overhead_ns = o;
  if (gap_ns)
    *gap_ns = g;
  if (gap_free)
    *gap_free = free_msgs;
  if (bandwidth_MBps)
    *bandwidth_MBps = bw;
  return bw ? 0 : -NM_EINVAL;
}

int nm_core_job_oversubscribed(nm_core_t core) { return core->cfg.oversub_hop_ns > 0; }

int nm_core_network_props(nm_core_t core, uint32_t *latency_ns, uint64_t *bandwidth_MBps)
{
  uint32_t lat = 0;
  uint64_t bw = 0;
  for (int i = 0; i < core->n_drvs; i++) {
    const struct nm_drv_s *drv = &core->drvs[i];
    if (drv == core->self_drv)
      continue;
    if (bw == 0 || drv->props.latency_ns < lat)
      lat = drv->props.latency_ns;
    bw += drv->props.bandwidth_MBps;
  }
  *latency_ns = lat;
  *bandwidth_MBps = bw;
  return bw ? 0 : -NM_EINVAL;
}

void nm_core_set_fault_source(nm_core_t core, int fd, int (*poll_fn)(void *, int *), void *ref)
{
  core->fault.fd = fd;
  core->fault.poll = poll_fn;
  core->fault.ref = ref;
}

#define NM_WAIT_HOOK_EVERY 16 /* waits per call of the wait hook at their start (a few ns each) */

void nm_core_set_wait_hook(nm_core_t core, void (*hook)(void *), void *ref)
{
  core->wait_hook = hook;
  core->wait_hook_ref = ref;
}

#define NM_FAULT_DRAIN_PASSES 64 /* progress passes that may deliver a dead peer's last messages */
static void nm_core_check_faults(nm_core_t core)
{
  if (!core->fault.poll)
    return;
  int rank, rc, drained = 0;
  while ((rc = core->fault.poll(core->fault.ref, &rank)) == 1) {
    struct nm_gate_s *g = rank != core->rank ? nm_core_gate(core, rank) : NULL; /* a dead peer's gate fails */
    /* What the dead peer sent before it died and has arrived here (a last message, then exit) is delivered
     * first: the drivers are read until a pass finds nothing (bounded), then the gate fails. */
    for (int pass = 0; g && !g->status && !drained && pass < NM_FAULT_DRAIN_PASSES; pass++)
      if (nm_core_progress_drivers(core) == 0)
        drained = 1;
    if (g) {
      nm_gate_fail(g, -NM_ECLOSED);
      core->progress_events++; /* its requests completed in error: a waiter has news */
    }
  }
  if (rc < 0) { /* the launcher is gone: nobody can be trusted to be alive */
    core->fault.poll = NULL;
    core->fault.fd = -1;
  }
}

/* Whether @p drv is quiet: a costly poll (it has an idle() op) that could only find an arrival, and whose last
 * NM_DRV_QUIET_AFTER calls found nothing. */
static int nm_core_drv_quiet(struct nm_drv_s *drv)
{
  return drv->ops->idle && drv->quiet_calls >= NM_DRV_QUIET_AFTER && drv->ops->idle(drv);
}

/* Whether @p drv may skip this pass: it is quiet, and another network rail that is not is polled every pass (sm
 * beside tcp; with every rail quiet, as two idle NICs, none is skipped: an arrival on any would wait).
 * Once quiet, it is polled when NM_DRV_QUIET_NS have passed since its last call, the clock being read one pass in
 * NM_DRV_QUIET_EVERY (drivers/nm_driver.h). */
static int nm_core_skip_quiet(nm_core_t core, struct nm_drv_s *drv)
{
  if (!nm_core_drv_quiet(drv))
    return 0;
  int other_polled = core->n_always_polled > 0; /* drv has idle(): it is not one of them */
  for (int i = 0; i < core->n_drvs && !other_polled; i++) {
    struct nm_drv_s *d = &core->drvs[i];
    other_polled = d != drv && d != core->self_drv && !nm_core_drv_quiet(d);
  }
  if (!other_polled || core->pass % NM_DRV_QUIET_EVERY != 0)
    return other_polled;
  uint64_t now = nm_core_time_ns(core);
  if (now - drv->quiet_polled_ns < NM_DRV_QUIET_NS)
    return 1;
  drv->quiet_polled_ns = now;
  return 0;
}

int nm_core_progress_drivers(struct nm_core_s *core)
{
  int n = 0;
  core->pass++; /* ends the pass in which packets completed at post kept their rail (paced: driver) busy */
  for (int i = 0; i < core->n_drvs; i++) {
    struct nm_drv_s *drv = &core->drvs[i];
    if ((drv->queued && *drv->queued == 0) || nm_core_skip_quiet(core, drv))
      continue;
    int k = drv->ops->progress(drv);
    if (k > 0)
      drv->quiet_calls = 0;
    else if (drv->quiet_calls < NM_DRV_QUIET_AFTER)
      drv->quiet_calls++;
    n += k;
  }
  if (core->large_retry || core->rdv_pump_retry)
    n += nm_rdv_retry(core);
  if (core->work_head)
    n += nm_core_schedule(core);
  for (struct nm_core_progress_hook_s *h = core->progress_hooks, *next; h; h = next) {
    next = h->next; /* a hook may remove itself */
    n += h->fn(h->ref);
  }
  core->progress_events += (unsigned long)n;
  if (n > 0 && core->lock.sleepers)
    nm_core_wake_sleepers(core);
  return n;
}

void nm_core_progress_hook_add(nm_core_t core, struct nm_core_progress_hook_s *h)
{
  h->next = core->progress_hooks;
  core->progress_hooks = h;
}

void nm_core_progress_hook_remove(nm_core_t core, struct nm_core_progress_hook_s *h)
{
  for (struct nm_core_progress_hook_s **pp = &core->progress_hooks; *pp; pp = &(*pp)->next)
    if (*pp == h) {
      *pp = h->next;
      return;
    }
}

int nm_core_progress(nm_core_t core)
{
  NM_CORE_LOCKED(core);
  int n = nm_core_progress_drivers(core);
  if (core->fault.poll && ++core->last_fault_check_ns % NM_FAULT_CHECK_EVERY == 0)
    nm_core_check_faults(core);
  return n;
}

int nm_core_block_fds(struct nm_core_s *core, struct pollfd *fds, int faults, int *fd_less)
{
  int nfds = 0;
  *fd_less = 0;
  for (int i = 0; i < core->n_drvs; i++) {
    struct nm_drv_s *drv = &core->drvs[i];
    if (drv->ops->trywait(drv) != 0)
      return -1; /* events are already pending: go back to progress */
    int fd = drv->ops->wait_fd(drv);
    if (fd == NM_DRV_NO_EVENTS)
      continue;
    if (fd < 0) {
      *fd_less = 1;
      continue;
    }
    fds[nfds].fd = fd;
    fds[nfds].events = POLLIN;
    nfds++;
  }
  if (faults && core->fault.fd >= 0) {
    fds[nfds].fd = core->fault.fd;
    fds[nfds].events = POLLIN;
    nfds++;
  }
  return nfds;
}

/* Block until a driver or the fault source has news, or the deadline. Drivers without a wait fd make us
 * sleep with an exponential back-off so idle ranks leave the cores to busy ones. The core lock is released
 * meanwhile (DESIGN.md rule 3): the progress thread, if any, runs while we sleep. */
static void nm_core_block(nm_core_t core, uint64_t deadline_ns, uint64_t *backoff_ns)
{
  if (core->block_drv) { /* the driver blocks by itself (simulation: waiting is where simulated time passes) */
    unsigned held = nm_core_lock_release_all(core);
    core->block_drv->ops->block(core->block_drv, deadline_ns);
    nm_core_lock_reacquire(core, held);
    return;
  }
  struct pollfd fds[NM_CORE_MAX_FDS + 1];
  int have_fd_less;
  int nfds = nm_core_block_fds(core, fds, 1, &have_fd_less);
  /* A packet waiting for room in a driver (a full sm ring) is like a driver without a wait fd: the room comes when
   * the peer reads, which wakes nothing here, so the sleep is the back-off's (1 us doubling to 500 us), not
   * NM_BLOCK_MAX_NS. */
  if (core->n_retry || (core->bulk_held_pass && core->pass - core->bulk_held_pass <= 1))
    have_fd_less = 1;
  if (nfds < 0)
    return;
  /* Another thread (the progress thread, or another application thread) may handle the event this one waits for
   * while it sleeps: its pass writes the wake fd (nm_core_wake_sleepers()). The fault fd, if any, stays last
   * (read below). */
  int wake = -1;
  if (core->lock.threaded && core->lock.wake_fd >= 0) {
    wake = nfds;
    if (nfds > 0 && core->fault.fd >= 0) { /* keep the fault fd last */
      fds[nfds] = fds[nfds - 1];
      wake = nfds - 1;
    }
    fds[wake].fd = core->lock.wake_fd;
    fds[wake].events = POLLIN;
    fds[wake].revents = 0;
    nfds++;
    core->lock.sleepers++;
  }
  uint64_t now = nm_core_time_ns(core);
  uint64_t wait_ns = NM_BLOCK_MAX_NS;
  if (have_fd_less) {
    *backoff_ns = *backoff_ns ? *backoff_ns * 2 : NM_BACKOFF_MIN_NS;
    if (*backoff_ns > NM_BACKOFF_MAX_NS)
      *backoff_ns = NM_BACKOFF_MAX_NS;
    wait_ns = *backoff_ns;
  }
  if (deadline_ns && deadline_ns - now < wait_ns)
    wait_ns = deadline_ns > now ? deadline_ns - now : 0;
  struct timespec ts = {(time_t)(wait_ns / 1000000000ULL), (long)(wait_ns % 1000000000ULL)};
  unsigned held = nm_core_lock_release_all(core);
  int rc = 0;
  if (nfds == 0 && wait_ns < 20000)
    sched_yield();
  else {
    rc = ppoll(fds, (nfds_t)nfds, &ts, NULL);
    if (core->wait_hook) /* a blocked thread is woken where the kernel likes: often on its waker's processor */
      core->wait_hook(core->wait_hook_ref);
  }
  nm_core_lock_reacquire(core, held);
  if (wake >= 0) {
    core->lock.sleepers--;
    uint64_t one;
    if (rc > 0 && (fds[wake].revents & POLLIN) && read(core->lock.wake_fd, &one, sizeof(one)) < 0) {
      /* another sleeper took the count */
    }
  }
  if (rc > 0 && core->fault.fd >= 0 && (fds[nfds - 1].revents & (POLLIN | POLLHUP | POLLERR)))
    nm_core_check_faults(core);
}

/* Three phases when nothing happens: spin (lowest latency), then spin with sched_yield (as fast when a core is
 * free, fair when ranks outnumber cores), then block in the drivers. Large transfers need progress calls to
 * move (manual progress), so while one is in flight we never go past the yield phase. */
int nm_core_wait_flag(nm_core_t core, volatile int *flag, uint64_t deadline_ns)
{
  return nm_core_wait_flag_spin(core, flag, deadline_ns, 0);
}

/* The wait of nm_core_wait_flag_spin() (absolute @p deadline_ns) and nm_core_wait_flag_for() (@p timeout_ns from
 * the first clock read, when deadline_ns is 0). */
static int nm_core_wait_flag_until(nm_core_t core, volatile int *flag, uint64_t deadline_ns, uint64_t timeout_ns,
                                   uint64_t min_spin_ns)
{
  NM_CORE_LOCKED(core);
  /* a caller's spin above the configured one is short (a microsecond or two): timed by the clock every few
   * passes, not every 64 */
  const int caller_spin = min_spin_ns > core->cfg.spin_ns;
  const uint64_t spin_ns = caller_spin ? min_spin_ns : core->cfg.spin_ns;
  const unsigned clock_mask = (caller_spin ? 4 : NM_CLOCK_EVERY) - 1; /* not `%`: a division per idle pass */
  uint64_t idle_since = 0, backoff = 0;
  unsigned idle_passes = 0;
  /* No spin phase (ranks outnumber cores): yield from the first idle pass, not after NM_CLOCK_EVERY passes
   * of spinning, which would hold the core for ~10 us while the peer that shares it has the message to send. */
  /* Several application threads: no spin with the lock held either (the others could not post meanwhile). */
  const int yield_at_once = spin_ns == 0 || core->block_drv || core->lock.multi;
  int yielding = yield_at_once;
  const uint64_t pass0 = core->pass;
  /* Every NM_WAIT_HOOK_EVERY-th wait, however short: a rank the kernel moved onto a crowded processor is the late
   * one that the others wait for, so its own waits end at their first pass (nm_core_set_wait_hook()). */
  if (core->wait_hook && ++core->waits % NM_WAIT_HOOK_EVERY == 0)
    core->wait_hook(core->wait_hook_ref);
  while (!*flag) {
    int n = nm_core_progress(core);
    if (*flag)
      break;
    if (n > 0) {
      idle_since = 0;
      idle_passes = 0;
      backoff = 0;
      yielding = yield_at_once;
      continue;
    }
    if (yielding)
      nm_core_yield(core); /* every idle pass: other ranks sharing this core (other threads: the lock) run */
    /* Reading the clock costs as much as a progress pass: look at it only now and then. */
    if ((++idle_passes & clock_mask) != 0 && !(yielding && idle_passes % 4 == 0))
      continue;
    uint64_t now = nm_core_time_ns(core);
    if (timeout_ns && !deadline_ns)
      deadline_ns = now + timeout_ns; /* the first look at the clock */
    if (deadline_ns && now >= deadline_ns)
      return -NM_ETIMEDOUT;
    if (!idle_since)
      idle_since = now;
    uint64_t idle = now - idle_since;
    /* A driver that blocks by itself (simulation) has no spin or yield phase: its time passes only while ranks
     * block, so such a phase would never end. */
    if (!core->block_drv && idle < spin_ns)
      continue;
    if (!core->block_drv && (idle < core->cfg.yield_ns || core->n_large)) {
      yielding = 1;
      if (idle > NM_BLOCK_MAX_NS && core->n_large)
        nm_core_check_faults(core); /* a peer may have died in the middle of the transfer */
      continue;
    }
    nm_core_check_faults(core);
    if (*flag)
      break;
    nm_core_block(core, deadline_ns, &backoff);
  }
  /* The caller resumes after the passes it waited through: its next sends start a new pass. Packets that
   * completed at post inside the last pass (a collective's last round, sent from a monitor) would otherwise keep
   * their rails "busy" for the rest of that pass (nm_strat_pw_post(), the burst aggregation), and the caller's
   * next collective would queue its first sends for the next pass: 3 sends of an 8 B MPI_Bcast right after an
   * MPI_Barrier went through nm_core_schedule() instead of at post, twice the instructions (issue 18). */
  if (core->pass != pass0)
    core->pass++;
  return NM_ESUCCESS;
}

int nm_core_wait_flag_spin(nm_core_t core, volatile int *flag, uint64_t deadline_ns, uint64_t min_spin_ns)
{
  return nm_core_wait_flag_until(core, flag, deadline_ns, 0, min_spin_ns);
}

int nm_core_wait_flag_for(nm_core_t core, volatile int *flag, uint64_t timeout_ns, uint64_t min_spin_ns)
{
  return nm_core_wait_flag_until(core, flag, 0, timeout_ns, min_spin_ns);
}

int nm_core_payload_delivered(nm_core_t core, nm_len_t len)
{
  if (len <= core->cfg.rdv_threshold)
    return 1; /* eager: the bytes travel in packets */
  for (int i = 0; i < core->n_drvs; i++) {
    const struct nm_drv_props_s *p = &core->drvs[i].props;
    if ((p->flags & NM_DRV_F_FAKE_PAYLOAD) && len > p->fake_above)
      return 0;
  }
  return 1;
}

nm_len_t nm_core_peer_alloc_max(nm_core_t core) { return core->cfg.peer_alloc_max; }

void nm_core_end_burst(nm_core_t core)
{
  NM_CORE_LOCKED(core);
  core->pass++; /* the stamps of this pass's packets completed at post (nm_rail_done_at_post()) are stale */
}

void nm_core_idle(nm_core_t core)
{
  if (core->cfg.spin_ns == 0) /* oversubscribed (nm_config_load) */
    sched_yield();
}

/* Returns when the core has progressed, in this thread's passes or in the progress thread's while this one slept
 * without the lock: counting only our own passes would make a waiter whose events the progress thread handled
 * (a flush whose sends the thread pushed out) sleep on until its deadline, or forever without one. */
int nm_core_wait(nm_core_t core, uint64_t deadline_ns)
{
  NM_CORE_LOCKED(core);
  uint64_t backoff = 0;
  const unsigned long seen = core->progress_events;
  for (;;) {
    nm_core_progress(core);
    if (core->progress_events != seen)
      return NM_ESUCCESS;
    if (deadline_ns && nm_core_time_ns(core) >= deadline_ns)
      return -NM_ETIMEDOUT;
    nm_core_block(core, deadline_ns, &backoff);
  }
}

static int nm_core_has_pending_sends(nm_core_t core, int all)
{
  NM_CORE_FOR_GATES(core, g) {
    if (g->status)
      continue;
    if (g->send_queue.head || g->ctrl_head)
      return 1;
    for (int r = 0; r < g->n_rails; r++)
      if (g->rails[r].retry || (all && g->rails[r].inflight))
        return 1;
    if (all && (g->rdv_sends.head || g->cancelling.head || nm_rdv_gate_sending(g)))
      return 1;
    for (struct nm_large_s *l = g->large; all && l; l = l->next)
      if (l->is_send)
        return 1;
  }
  return 0;
}

int nm_core_flush(nm_core_t core, int all, uint64_t deadline_ns)
{
  NM_CORE_LOCKED(core);
  while (nm_core_has_pending_sends(core, all)) {
    int err = nm_core_wait(core, deadline_ns);
    if (err)
      return err;
  }
  return NM_ESUCCESS;
}

void nm_core_destroy(nm_core_t core)
{
  nm_core_progress_thread_stop(core);
  NM_CORE_FOR_GATES(core, g)
    nm_gate_fail(g, -NM_ECLOSED);
  /* User sessions first: each closes the internal sessions it owns. */
  while (core->sessions) {
    struct nm_session_s *s = core->sessions;
    while (s->owner)
      s = s->owner;
    nm_session_close(s);
  }
  while (core->orphans) {
    struct nm_unexp_s *u = core->orphans;
    core->orphans = u->next;
    nm_unexp_free(core, u);
  }
  struct nm_gate_s *g, *tmp;
  HASH_ITER(hh, core->gate_table, g, tmp) {
    nm_gate_destroy(g);
    HASH_DEL(core->gate_table, g);
    free(g);
  }
  for (int i = core->n_drvs - 1; i >= 0; i--)
    core->drvs[i].ops->close(&core->drvs[i]);
  nm_pool_destroy(&core->pw_pool);
  nm_pool_destroy(&core->ctrl_pool);
  nm_pool_destroy(&core->large_pool);
  nm_pool_destroy(&core->unexp_pool);
  nm_unexp_bufs_free(core);
  nm_pool_destroy(&core->frag_pool);
  nm_core_lock_destroy(core);
  free(core);
}
