/* The launcher interface: bootstrap -> drivers -> address exchange; gates are made on first use. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include "nmad/core/nm_core_interface.h"
#include "drivers/nm_driver.h"
#include "nm_bootstrap.h"
#include "nm_progress_place.h"
#include "nm_rank_spread.h"
#include <nmad/nm_launcher.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NM_HOSTNAME_MAX 64
#define NM_EXIT_FLUSH_NS (10ULL * 1000000000ULL)

struct nm_launcher_s {
  struct nm_bootstrap_s bs;
  nm_core_t core;
  int n_net;                           /* network rails (drivers other than self) */
  struct nm_drv_s *net[NM_CORE_MAX_RAILS];
  /* where the ranks of this host run, for the progress thread's placement (nm_progress_place.c) */
  int local_index;                     /* this rank's position among them */
  cpu_set_t own_cpus, local_cpus;      /* its affinity mask, the union of theirs */
  int spread_cpu;                      /* the processor it was spread to (nm_rank_spread.c), or -1 */
  pthread_t spread_thread;             /* the thread that was spread (the one that initialized nmad) */
  struct nm_rank_spread_pace_s spread_pace; /* its returns (nm_rank_spread_pace()) */
};

/* One allgather record per rank and rail: address length, then the address. */
struct nm_addr_rec_s {
  uint32_t len;
  uint8_t addr[NM_DRV_ADDR_MAX];
};

static int nm_launcher_poll_fault(void *ref, int *rank)
{
  struct nm_bootstrap_s *bs = ref;
  return bs->ops->poll_fault(bs, rank);
}

/* What each rank tells the others at start: where it runs. */
struct nm_launcher_place_s {
  char host[NM_HOSTNAME_MAX];
  cpu_set_t cpus; /* its affinity mask (respects cpusets, taskset, a launcher's binding) */
};

/* All ranks on this host? Decides the default driver (shm) and loopback-only interfaces. Also counts the ranks
 * sharing this host and the cores they may use together (the union of their affinity masks), to know whether
 * they outnumber them: one rank bound to each core is not oversubscribed, though each sees a single core. */
static int nm_launcher_all_local(struct nm_launcher_s *l, int *all_local, int *local_ranks, int *local_cpus)
{
  struct nm_launcher_place_s me;
  memset(&me, 0, sizeof(me));
  gethostname(me.host, sizeof(me.host) - 1);
  if (sched_getaffinity(0, sizeof(me.cpus), &me.cpus) != 0)
    CPU_ZERO(&me.cpus); /* unknown: counted below as the online processors */
  struct nm_launcher_place_s *all = calloc((size_t)l->bs.size, sizeof(*all));
  if (!all)
    return -NM_ENOMEM;
  int err = l->bs.ops->allgather(&l->bs, &me, sizeof(me), all);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  *all_local = 1;
  *local_ranks = 0;
  for (int r = 0; !err && r < l->bs.size; r++) {
    if (memcmp(all[r].host, me.host, sizeof(me.host)) != 0) {
      *all_local = 0;
      continue;
    }
    if (r < l->bs.rank)
      l->local_index++;
    (*local_ranks)++;
    CPU_OR(&cpus, &cpus, &all[r].cpus);
  }
  free(all);
  l->own_cpus = me.cpus;
  l->local_cpus = cpus;
  *local_cpus = CPU_COUNT(&cpus);
  if (*local_cpus == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *local_cpus = n > 0 ? (int)n : 1;
  }
  return err;
}

/* Under simulation NMAD_DRIVER may only name "sim" rails: unset or "sim" is one, "sim+sim" two (the second on
 * the platform's second NICs, drivers/sim/nm_sim.cpp). */
static int nm_launcher_open_sim_rails(struct nm_launcher_s *l, const char *env)
{
  int rails = 0;
  char spec[128];
  snprintf(spec, sizeof(spec), "%s", env && *env ? env : "sim");
  char *save = NULL;
  for (char *w = strtok_r(spec, "+", &save); w; w = strtok_r(NULL, "+", &save)) {
    if (strcmp(w, "sim") != 0 || rails == NM_CORE_MAX_RAILS) {
      fprintf(stderr, "nmad: NMAD_DRIVER='%s' under simulation: accepted values: sim, sim+sim, ... (at most %d)\n",
              env, NM_CORE_MAX_RAILS);
      return -NM_EINVAL;
    }
    rails++;
  }
  for (int i = 0; i < rails; i++) {
    int err = nm_core_add_driver(l->core, l->bs.drv_ops, l->bs.drv_ops->name, 0, &l->net[l->n_net]);
    if (err)
      return err;
    l->n_net++;
  }
  return NM_ESUCCESS;
}

/* Open one ofi driver per word of NMAD_DRIVER ("a+b" = two rails), or the driver the bootstrap imposes. */
static int nm_launcher_open_drivers(struct nm_launcher_s *l, int all_local)
{
  const char *env = getenv("NMAD_DRIVER");
  if (l->bs.drv_ops) /* simulation: the bootstrap's driver, one rail per word of NMAD_DRIVER (sim, sim+sim, ...) */
    return nm_launcher_open_sim_rails(l, env);
  char spec[128];
  /* One host: nmad's own shared memory (drivers/sm), faster than libfabric's shm at every size up to 16 KiB
   * (doc/performance.md, "The sm driver"). */
  snprintf(spec, sizeof(spec), "%s", env && *env ? env : (all_local ? "sm" : "tcp"));
  char *save = NULL;
  for (char *w = strtok_r(spec, "+", &save); w; w = strtok_r(NULL, "+", &save)) {
    if (strcmp(w, "self") == 0)
      continue; /* the self driver is always there for one's own rank */
    if (l->n_net == NM_CORE_MAX_RAILS) {
      fprintf(stderr, "nmad: NMAD_DRIVER='%s' names more than %d rails\n", env, NM_CORE_MAX_RAILS);
      return -NM_EINVAL;
    }
    int err = nm_core_add_driver(l->core, nm_driver_lookup(w), w, all_local, &l->net[l->n_net]);
    if (err)
      return err;
    l->n_net++;
  }
  if (l->n_net == 0 && l->bs.size > 1) {
    fprintf(stderr, "nmad: NMAD_DRIVER='%s' names no network driver but the job has %d ranks\n", env, l->bs.size);
    return -NM_EINVAL;
  }
  return NM_ESUCCESS;
}

/* A driver that authenticates sources drops what comes from an address not in its table yet: no rank may send
 * before every rank has filled its table. */
static int nm_launcher_wait_tables(struct nm_launcher_s *l)
{
  for (int i = 0; i < l->n_net; i++)
    if (l->net[i]->props.flags & NM_DRV_F_AUTH_SOURCE)
      return l->bs.ops->barrier(&l->bs);
  return NM_ESUCCESS;
}

static int nm_launcher_exchange(struct nm_launcher_s *l)
{
  int size = l->bs.size, n = l->n_net;
  size_t rec = sizeof(struct nm_addr_rec_s) * (size_t)n;
  struct nm_addr_rec_s *mine = calloc((size_t)n, sizeof(*mine));
  struct nm_addr_rec_s *all = calloc((size_t)size * (size_t)n, sizeof(*all));
  int err = (!mine || !all) ? -NM_ENOMEM : NM_ESUCCESS;
  for (int i = 0; !err && i < n; i++) {
    size_t len = NM_DRV_ADDR_MAX;
    err = l->net[i]->ops->get_address(l->net[i], mine[i].addr, &len);
    mine[i].len = (uint32_t)len;
  }
  if (!err)
    err = l->bs.ops->allgather(&l->bs, mine, rec, all);
  for (int r = 0; !err && r < size; r++)
    for (int i = 0; !err && i < n; i++) {
      struct nm_addr_rec_s *a = &all[(size_t)r * (size_t)n + (size_t)i];
      err = a->len > NM_DRV_ADDR_MAX ? -NM_EPROTO : l->net[i]->ops->connect(l->net[i], (uint64_t)r, a->addr, a->len);
    }
  free(mine);
  free(all);
  return err ? err : nm_launcher_wait_tables(l);
}

/* NMAD_SPREAD: 1 (default) spreads the unbound ranks of an oversubscribed host at the end of start-up
 * (nm_rank_spread.c), 0 keeps the placement start-up left. @return 0 or 1 in *on, or -NM_EINVAL. */
static int nm_launcher_spread_wanted(int *on)
{
  const char *s = getenv("NMAD_SPREAD");
  *on = 1;
  if (!s || !*s || strcmp(s, "1") == 0)
    return NM_ESUCCESS;
  if (strcmp(s, "0") == 0) {
    *on = 0;
    return NM_ESUCCESS;
  }
  fprintf(stderr, "nmad: NMAD_SPREAD='%s' is invalid; accepted: 0, 1\n", s);
  return -NM_EINVAL;
}

/* The core's wait hook: a spread rank that waits on another processor than its own goes back there
 * (nm_rank_spread_return()). Only the thread that was spread: other application threads have their own places.
 * Once the application has placed that thread itself (its mask is no longer ours), never again. */
static void nm_launcher_wait_hook(void *ref)
{
  struct nm_launcher_s *l = ref;
  if (pthread_equal(pthread_self(), l->spread_thread) && l->spread_cpu >= 0 &&
      nm_rank_spread_return(l->spread_cpu, &l->own_cpus, &l->spread_pace) == NM_RANK_SPREAD_FOREIGN)
    l->spread_cpu = -1;
}

/* NMAD_PROGRESS=thread: start the progress thread where NMAD_BIND places it. */
static int nm_launcher_start_progress(struct nm_launcher_s *l)
{
  enum nm_bind_e bind;
  if (!nm_core_progress_thread_wanted(l->core, &bind))
    return NM_ESUCCESS;
  int cpu;
  int placed = nm_progress_place(bind, l->local_index, &l->own_cpus, &l->local_cpus, &cpu);
  int err = nm_core_progress_thread_start(l->core, placed ? &cpu : NULL, placed);
  if (err)
    fprintf(stderr, "nmad: rank %d: NMAD_PROGRESS=thread: cannot start the progress thread (%s)\n", l->bs.rank,
            nm_strerror(err));
  return err;
}

static int nm_launcher_setup(struct nm_launcher_s *l)
{
  int all_local = 1, local_ranks = 1, local_cpus = 1;
  if (sched_getaffinity(0, sizeof(l->own_cpus), &l->own_cpus) != 0)
    CPU_ZERO(&l->own_cpus);
  l->local_cpus = l->own_cpus; /* alone on the host until nm_launcher_all_local() says otherwise */
  int err = nm_core_create(l->bs.rank, l->bs.size, &l->core);
  if (!err)
    nm_core_set_job_key(l->core, l->bs.job_key); /* before a driver opens: its endpoint may get packets at once */
  /* Simulated ranks each have a host of the platform: not local, not oversubscribed, nothing to gather. */
  if (l->bs.drv_ops)
    all_local = 0;
  else if (!err && l->bs.size > 1)
    err = nm_launcher_all_local(l, &all_local, &local_ranks, &local_cpus);
  if (!err && (l->bs.size > 1 || l->bs.drv_ops))
    err = nm_launcher_open_drivers(l, all_local);
  struct nm_drv_s *self = NULL;
  if (!err)
    err = nm_core_add_driver(l->core, &nm_drv_self_ops, "self", 1, &self);
  if (!err)
    err = self->ops->connect(self, (uint64_t)l->bs.rank, NULL, 0);
  if (!err && l->n_net && !(l->net[0]->props.flags & NM_DRV_F_RANK_ADDRESSED))
    err = nm_launcher_exchange(l);
  if (err)
    return err;
  /* The job as a whole is oversubscribed only where every rank can tell alike: one host (all_local), whose ranks
   * all see the same count and the same union of masks. Across hosts each knows only its own: 0 there. */
  nm_core_set_one_host(l->core, all_local);
  err = nm_core_configure(l->core, local_ranks > local_cpus, all_local && local_ranks > local_cpus);
  if (err)
    return err;
  if (l->bs.drv_ops && nm_core_progress_thread_wanted(l->core, NULL)) {
    fprintf(stderr, "nmad: NMAD_PROGRESS=thread is not available under simulation (one OS thread runs every "
                    "rank); use NMAD_PROGRESS=poll\n");
    return -NM_EINVAL;
  }
  int fd = l->bs.ops->fault_fd(&l->bs);
  nm_core_set_fault_source(l->core, fd, nm_launcher_poll_fault, &l->bs);
  int spread, cpu;
  if (!err)
    err = nm_launcher_spread_wanted(&spread);
  if (!err)
    err = nm_launcher_start_progress(l);
  /* Start-up's blocking waits are over: from here the ranks yield instead, and go back to their processor when
   * they find themselves elsewhere as they wait (nm_rank_spread_return()). */
  l->spread_cpu = -1;
  if (!err && spread && !l->bs.drv_ops && !nm_core_progress_thread_running(l->core) &&
      nm_rank_spread_cpu(l->local_index, &l->own_cpus, &l->local_cpus, local_ranks, &cpu) &&
      nm_rank_spread_apply(cpu, &l->own_cpus) == 0) { /* refused (a cgroup's cpuset changed): left where it is */
    l->spread_cpu = cpu;
    l->spread_thread = pthread_self();
    nm_core_set_wait_hook(l->core, nm_launcher_wait_hook, l);
  }
  return err;
}

int nm_launcher_init(nm_launcher_t *out, int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  struct nm_launcher_s *l = calloc(1, sizeof(*l));
  if (!l)
    return -NM_ENOMEM;
  int err = nm_bootstrap_select(&l->bs);
  if (err) {
    free(l);
    return err;
  }
  err = nm_launcher_setup(l);
  if (err) {
    if (l->core)
      nm_core_destroy(l->core);
    l->bs.ops->fini(&l->bs);
    free(l);
    return err;
  }
  *out = l;
  return NM_ESUCCESS;
}

/* Packets refused at the doors mean a stranger (another job, a stray client) or a peer of another protocol
 * version wrote to this rank: say so once, at the end, instead of failing anything. */
static void nm_launcher_report_refused(struct nm_launcher_s *l)
{
  struct nm_core_refused_s r;
  if (nm_core_get_refused(l->core, &r) == 0 && (r.foreign || r.unknown_source))
    fprintf(stderr, "nmad: rank %d refused %llu packets not of this job and %llu from unknown sources\n",
            l->bs.rank, (unsigned long long)r.foreign, (unsigned long long)r.unknown_source);
}

int nm_launcher_exit(nm_launcher_t l)
{
  /* The exit runs on the application thread alone: the bootstrap's barrier is not the core's to lock. */
  nm_core_progress_thread_stop(l->core);
  /* Everything we sent must have left before the peers close their endpoints. */
  int err = nm_core_flush(l->core, 1, nm_core_time_ns(l->core) + NM_EXIT_FLUSH_NS);
  if (err)
    fprintf(stderr, "nmad: rank %d: sends still pending at exit (%s)\n", l->bs.rank, nm_strerror(err));
  int berr = l->bs.ops->barrier(&l->bs);
  nm_launcher_report_refused(l);
  nm_core_destroy(l->core);
  int ferr = l->bs.ops->fini(&l->bs);
  free(l);
  return err ? err : berr ? berr : ferr;
}

void nm_launcher_abort(nm_launcher_t l, int code)
{
  /* Nothing of nmad is torn down: peers may be blocked on us, and a flush could wait on them forever. */
  fflush(NULL);
  if (l) {
    int err = l->bs.ops->abort(&l->bs, code);
    if (err)
      fprintf(stderr, "nmad: rank %d: the %s launcher could not be asked to end the job (%s): only this rank "
                      "exits\n", l->bs.rank, l->bs.ops->name, nm_strerror(err));
  }
  _exit(code & 0xff); /* what a launcher reports as the job's status: the code modulo 256, as Open MPI */
}

int nm_launcher_get_rank(nm_launcher_t l, int *rank)
{
  *rank = l->bs.rank;
  return NM_ESUCCESS;
}

int nm_launcher_get_size(nm_launcher_t l, int *size)
{
  *size = l->bs.size;
  return NM_ESUCCESS;
}

int nm_launcher_get_gate(nm_launcher_t l, int rank, nm_gate_t *gate)
{
  if (rank < 0 || rank >= l->bs.size)
    return -NM_EINVAL;
  NM_CORE_LOCKED(l->core); /* a progress thread looks gates up while we may make one */
  *gate = nm_core_gate(l->core, rank); /* made on first use (DESIGN.md rule 8) */
  return *gate ? NM_ESUCCESS : -NM_ENOMEM;
}

nm_gate_t nm_launcher_gate_of(void *launcher, int rank)
{
  nm_gate_t g = NULL;
  return nm_launcher_get_gate(launcher, rank, &g) == NM_ESUCCESS ? g : NULL;
}

int nm_launcher_get_rank_of_gate(nm_launcher_t l, nm_gate_t gate, int *rank)
{
  if (!gate || nm_gate_get_core(gate) != l->core)
    return -NM_EINVAL;
  *rank = nm_gate_get_rank(gate);
  return NM_ESUCCESS;
}

nm_core_t nm_launcher_get_core(nm_launcher_t l)
{
  return l->core;
}

const char *nm_launcher_get_bootstrap(nm_launcher_t l)
{
  return l->bs.ops->name;
}

static int nm_launcher_progress(void *core)
{
  return nm_core_progress(core);
}

int nm_launcher_barrier(nm_launcher_t l)
{
  /* Queued packets go to the drivers first. Completions are not waited for: they may need receives posted after
   * the barrier. Where the bootstrap can, the core progresses while we wait, so that a rank in the barrier still
   * forwards (broadcasts, anycasts) and answers rendezvous for ranks that have not reached it yet. */
  int err = nm_core_flush(l->core, 0, 0);
  if (err)
    return err;
  if (l->bs.ops->barrier_progress)
    return l->bs.ops->barrier_progress(&l->bs, nm_launcher_progress, l->core);
  return l->bs.ops->barrier(&l->bs);
}

int nm_launcher_barrier_noprogress(nm_launcher_t l)
{
  int err = nm_core_flush(l->core, 0, 0);
  return err ? err : l->bs.ops->barrier(&l->bs);
}
