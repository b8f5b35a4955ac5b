/* NewMadeleine's dynamic broadcasts (nm_mcast_interface.h) over nmad's (collectives/mcast.c; Denis 2020, 3.2 and
 * 4.3; issue 16, deliverable 2). What this file adds: communicator ranks -> job ranks, data descriptors (packed
 * once when in several pieces: nmad's broadcast takes one buffer), and the root's notifier. nmad's broadcast
 * request has no notifier, so the service looks at its broadcasts in flight after each progress pass (a core
 * progress hook, installed only while some are in flight). */
#include "nm_core_interface.h"
#include <nmad/nm_mcast.h>
#include <nm_newmad_mcast_types.h>
#include <string.h>

struct nm_newmad_mcast_service_s {
  nm_comm_t comm;
  nm_session_t session;
  nm_core_t core;
  nm_mcast_service_t native;
  struct nm_core_progress_hook_s hook;
  int hooked;
  struct nm_newmad_mcast_s *active; /* broadcasts whose notifier has not run */
};

void nm_newmad_mcast_send_destroy(struct nm_newmad_mcast_s *m);

static void nm_newmad_mcast_unlink(struct nm_newmad_mcast_service_s *svc, struct nm_newmad_mcast_s *m)
{
  if (m->prev)
    m->prev->next = m->next;
  else
    svc->active = m->next;
  if (m->next)
    m->next->prev = m->prev;
  m->next = m->prev = NULL;
}

/* Progress hook: run the notifier of every broadcast whose sends completed. */
static int nm_newmad_mcast_poll(void *ref)
{
  struct nm_newmad_mcast_service_s *svc = ref;
  int n = 0;
  for (struct nm_newmad_mcast_s *m = svc->active, *next; m; m = next) {
    next = m->next;
    nm_mcast_req_t *req = m->native;
    if (!req->completed)
      continue;
    nm_newmad_mcast_unlink(svc, m);
    m->status = req->status;
    m->completed = 1;
    n++;
    if (m->notifier)
      m->notifier(m->ref); /* may release m (nm_mcast_send_destroy() + free): last access */
  }
  if (!svc->active && svc->hooked) {
    nm_core_progress_hook_remove(svc->core, &svc->hook);
    svc->hooked = 0;
  }
  return n;
}

struct nm_newmad_mcast_service_s *nm_newmad_mcast_init(nm_comm_t comm)
{
  if (!comm || !comm->session)
    return NULL;
  struct nm_newmad_mcast_service_s *svc = calloc(1, sizeof(*svc));
  if (!svc)
    return NULL;
  svc->comm = comm;
  svc->session = comm->session;
  svc->core = nm_session_get_core(comm->session);
  svc->hook.fn = nm_newmad_mcast_poll;
  svc->hook.ref = svc;
  if (nm_mcast_init(comm->session, &svc->native)) {
    free(svc);
    return NULL;
  }
  return svc;
}

int nm_newmad_mcast_finalize(struct nm_newmad_mcast_service_s *svc)
{
  if (!svc)
    return -NM_EINVAL;
  NM_CORE_LOCKED(svc->core);
  if (svc->active)
    return -NM_EBUSY;
  int err = nm_mcast_finalize(svc->native);
  if (err)
    return err;
  free(svc);
  return NM_ESUCCESS;
}

void nm_newmad_mcast_send_init(struct nm_newmad_mcast_service_s *svc, struct nm_newmad_mcast_s *m)
{
  memset(m, 0, sizeof(*m));
  m->service = svc;
}

static enum nm_mcast_tree_e nm_newmad_tree(nm_coll_tree_kind_t kind)
{
  switch (kind) {
  case NM_COLL_TREE_FLAT: return NM_MCAST_TREE_FLAT;
  case NM_COLL_TREE_CHAIN:
  case NM_COLL_TREE_CHAIN_MODIFIED: return NM_MCAST_TREE_CHAIN;
  case NM_COLL_TREE_2ARY: return NM_MCAST_TREE_BINARY;
  default: return NM_MCAST_TREE_BINOMIAL;
  }
}

int nm_newmad_mcast_isend(struct nm_newmad_mcast_s *m, nm_comm_t comm, const int *dests, const int *prios, int n,
                          nm_tag_t tag, const struct nm_data_s *data, nm_len_t hlen, nm_coll_tree_kind_t tree)
{
  struct nm_newmad_mcast_service_s *svc = m ? m->service : NULL;
  if (!svc || !comm || comm->session != svc->session || n < 0 || (n && !dests) || !data || hlen > data->size)
    return -NM_EINVAL;
  for (int i = 0; i < n; i++)
    if (dests[i] < 0 || dests[i] >= comm->size)
      return -NM_EINVAL;
  NM_CORE_LOCKED(svc->core);
  m->native = calloc(1, sizeof(nm_mcast_req_t));
  m->world = malloc(sizeof(int) * (size_t)(n ? n : 1));
  const void *buf = data->size ? nm_data_contig_at(data, 0, data->size) : NULL;
  if (data->size && !buf && (m->packed = malloc(data->size)))
    buf = m->packed, nm_data_copy_to(data, 0, data->size, m->packed);
  if (!m->native || !m->world || (data->size && !buf)) {
    nm_newmad_mcast_send_destroy(m);
    return -NM_ENOMEM;
  }
  for (int i = 0; i < n; i++)
    m->world[i] = comm->world[dests[i]];
  int err = nm_mcast_isend(svc->native, m->world, prios, n, tag, buf, data->size, nm_newmad_tree(tree), m->native);
  if (err) {
    nm_newmad_mcast_send_destroy(m);
    return err;
  }
  m->next = svc->active;
  m->prev = NULL;
  if (svc->active)
    svc->active->prev = m;
  svc->active = m;
  if (!svc->hooked) {
    nm_core_progress_hook_add(svc->core, &svc->hook);
    svc->hooked = 1;
  }
  return NM_ESUCCESS;
}

int nm_newmad_mcast_wait(struct nm_newmad_mcast_s *m)
{
  struct nm_newmad_mcast_service_s *svc = m->service;
  NM_CORE_LOCKED(svc->core);
  if (!m->completed && m->native)
    nm_core_wait_flag(svc->core, &m->completed, 0);
  return m->status;
}

void nm_newmad_mcast_send_destroy(struct nm_newmad_mcast_s *m)
{
  free(m->native);
  free(m->packed);
  free(m->world);
  m->native = m->packed = NULL;
  m->world = NULL;
}
