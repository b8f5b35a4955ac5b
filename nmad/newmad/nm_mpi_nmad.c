/* nm_mpi_nmad.h and PIOMan's thread placement over nmad's MPI shim (issue 16, deliverable 2). Built into
 * libnmad_mpi: it reads the shim's communicator and datatype tables.
 *
 * State: the table of communicator sessions is process-wide, like the MPI objects it maps (MPI_COMM_WORLD is
 * one per process); it lives here rather than in the core so that the core keeps no global state (DESIGN.md
 * rule 1). A mutex guards it because StarPU resolves destinations from several worker threads at once. */
#include "nm_mpi_private.h"
#include <nm_data.h>
#include <nm_coll_interface.h>
#include <pioman.h>
#include <pthread.h>
#include <stdio.h>
#include <uthash.h>

/* The session of one communicator (by context id: the same on every member). */
struct nm_mpi_nmad_comm_s {
  uint32_t context;
  nm_session_t session;
  struct nm_newmad_comm_s comm; /* what nm_mpi_comm() returns */
  UT_hash_handle hh;
};

static struct {
  pthread_mutex_t lock;
  struct nm_mpi_nmad_comm_s *by_context;
} nm_mpi_nmad = {PTHREAD_MUTEX_INITIALIZER, NULL};

/* NewMadeleine's requests complete through monitors while the application computes (PIOMan's thread): nmad's
 * progress thread does that. Started once; from then on the shim takes the core lock (nm_mpi.threaded). */
static int nm_mpi_nmad_progress_start(const int *cpus, int n_cpus)
{
  if (nm_core_progress_thread_running(nm_mpi.core))
    return NM_ESUCCESS;
  nm_mpi.threaded = 1; /* before the thread exists: the shim's lock is a no-op until it does */
  return nm_core_progress_thread_start(nm_mpi.core, cpus, n_cpus);
}

/* The entry of @p comm, made on first use. Caller holds nm_mpi_nmad.lock. */
static struct nm_mpi_nmad_comm_s *nm_mpi_nmad_get(MPI_Comm comm)
{
  const struct nm_mpi_comm_s *c = nm_mpi.initialized && !nm_mpi.finalized ? nm_mpi_comm_get(comm) : NULL;
  if (!c || c->is_inter)
    return NULL;
  struct nm_mpi_nmad_comm_s *e;
  HASH_FIND(hh, nm_mpi_nmad.by_context, &c->context, sizeof(c->context), e);
  if (e)
    return e;
  int err = nm_mpi_nmad_progress_start(NULL, 0);
  if (err) {
    fprintf(stderr, "nm_mpi_nmad: cannot start the progress thread: %s\n", nm_strerror(err));
    return NULL;
  }
  e = calloc(1, sizeof(*e));
  int *world = malloc(sizeof(int) * (size_t)c->size);
  if (!e || !world) {
    free(e);
    free(world);
    return NULL;
  }
  memcpy(world, c->world, sizeof(int) * (size_t)c->size);
  char name[64];
  snprintf(name, sizeof(name), "nm_mpi_nmad:%u", (unsigned)c->context);
  err = nm_session_open(nm_mpi.core, name, &e->session);
  if (!err && (err = nm_newmad_sr_init(e->session)) != 0)
    nm_session_close(e->session);
  if (err) {
    fprintf(stderr, "nm_mpi_nmad: cannot open session %s: %s\n", name, nm_strerror(err));
    free(e);
    free(world);
    return NULL;
  }
  e->context = c->context;
  e->comm = (struct nm_newmad_comm_s){.session = e->session, .rank = c->rank, .size = c->size, .world = world};
  nm_newmad_session_set_comm(e->session, &e->comm);
  HASH_ADD(hh, nm_mpi_nmad.by_context, context, sizeof(e->context), e);
  return e;
}

void nm_mpi_nmad_dest(nm_session_t *p_session, nm_gate_t *p_gate, MPI_Comm comm, int rank)
{
  pthread_mutex_lock(&nm_mpi_nmad.lock);
  struct nm_mpi_nmad_comm_s *e = nm_mpi_nmad_get(comm);
  pthread_mutex_unlock(&nm_mpi_nmad.lock);
  *p_session = e ? e->session : NULL;
  if (p_gate)
    *p_gate = e ? nm_comm_get_gate(&e->comm, rank) : NULL;
}

nm_comm_t nm_mpi_comm(MPI_Comm comm)
{
  pthread_mutex_lock(&nm_mpi_nmad.lock);
  struct nm_mpi_nmad_comm_s *e = nm_mpi_nmad_get(comm);
  pthread_mutex_unlock(&nm_mpi_nmad.lock);
  return e ? &e->comm : NULL;
}

/* ---- datatypes as data descriptors ---- */

struct nm_mpi_nmad_dt_s {
  char *base;
  int64_t count;
  const struct nm_mpi_datatype_s *d;
};

static void nm_mpi_nmad_dt_traverse(const struct nm_data_s *data, nm_data_apply_t apply, void *ctx)
{
  const struct nm_mpi_nmad_dt_s *t = (const void *)&data->content;
  const struct nm_mpi_datatype_s *d = t->d;
  if (t->count <= 0 || d->size == 0)
    return;
  if (d->contiguous) {
    apply(nm_mpi_datatype_contig_ptr(d, t->base), (nm_len_t)(d->size * t->count), ctx);
    return;
  }
  for (int64_t e = 0; e < t->count; e++)
    for (int k = 0; k < d->n_blocks; k++)
      if (d->blocks[k].len)
        apply(t->base + e * d->extent + d->blocks[k].disp, (nm_len_t)d->blocks[k].len, ctx);
}

static const struct nm_data_ops_s nm_mpi_nmad_dt_ops = {nm_mpi_nmad_dt_traverse};

void nm_mpi_nmad_data_get(struct nm_data_s *p_data, void *ptr, MPI_Datatype datatype, int count)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  if (!d || !d->committed || count < 0) {
    nm_data_null_build(p_data);
    return;
  }
  nm_mpi_datatype_ref(datatype);
  struct nm_mpi_nmad_dt_s t = {ptr, count, d};
  nm_data_generic_build(p_data, &nm_mpi_nmad_dt_ops, &t, sizeof(t), (nm_len_t)(d->size * count));
}

void nm_mpi_nmad_data_release(MPI_Datatype datatype)
{
  NM_MPI_LOCKED();
  if (nm_mpi_datatype_get(datatype))
    nm_mpi_datatype_unref(datatype);
}

/* ---- PIOMan's ltask calls: the progress thread's placement and a progress pass ---- */

void piom_ltask_schedule(int point)
{
  (void)point;
  if (nm_mpi.initialized && !nm_mpi.finalized)
    nm_core_progress(nm_mpi.core);
}

/* (Re)start the progress thread on the processors @p cpus (operating-system numbers). */
static void nm_mpi_nmad_bind(int level, const int *cpus, int n)
{
  if (!nm_mpi.initialized || nm_mpi.finalized || n <= 0)
    return;
  if (level != HWLOC_OBJ_PU) {
    fprintf(stderr, "piom_ltask_set_bound_thread: only HWLOC_OBJ_PU levels are mapped; placement unchanged\n");
    cpus = NULL;
    n = 0;
  }
  if (nm_core_progress_thread_running(nm_mpi.core))
    nm_core_progress_thread_stop(nm_mpi.core);
  int err = nm_mpi_nmad_progress_start(cpus, n);
  if (err == -NM_EINVAL) /* a processor this process may not use: keep the thread, unbound */
    err = nm_mpi_nmad_progress_start(NULL, 0);
  if (err)
    fprintf(stderr, "piom_ltask_set_bound_thread: cannot start the progress thread: %s\n", nm_strerror(err));
}

void piom_ltask_set_bound_thread_os_indexes(int level, int *indexes, int size)
{
  pthread_mutex_lock(&nm_mpi_nmad.lock);
  nm_mpi_nmad_bind(level, indexes, size);
  pthread_mutex_unlock(&nm_mpi_nmad.lock);
}

void piom_ltask_set_bound_thread_indexes(int level, int *indexes, int size)
{
  /* logical (topology-order) indexes -> the operating system's, through hwloc */
  hwloc_topology_t topo;
  int *os = size > 0 ? malloc(sizeof(int) * (size_t)size) : NULL;
  if (!os || hwloc_topology_init(&topo)) {
    free(os);
    return;
  }
  int n = 0;
  if (!hwloc_topology_load(topo))
    for (int i = 0; i < size; i++) {
      hwloc_obj_t o = hwloc_get_obj_by_type(topo, (hwloc_obj_type_t)level, (unsigned)indexes[i]);
      if (o)
        os[n++] = (int)o->os_index;
    }
  hwloc_topology_destroy(topo);
  piom_ltask_set_bound_thread_os_indexes(level, os, n);
  free(os);
}
