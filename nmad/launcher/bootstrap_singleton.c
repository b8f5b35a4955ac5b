/**
 * @file bootstrap_singleton.c
 * @brief Bootstrap of a process started alone (no nmad-run, no PMIx): rank 0 of 1, no peers, no faults.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "nm_bootstrap.h"
#include "nmad_run_proto.h"

#include <nmad/nm_errno.h>

#include <string.h>
#include <unistd.h>

static int singleton_init(struct nm_bootstrap_s *bs)
{
  bs->rank = 0;
  bs->size = 1;
  bs->priv = NULL;
  /* Alone, the key only has to differ from other jobs'; without random bytes, the pid does that on this host. */
  if (nmad_run_key_new(&bs->job_key))
    bs->job_key = 0x5349474e00000000ULL | (uint64_t)getpid();
  return 0;
}

static int singleton_allgather(struct nm_bootstrap_s *bs, const void *mine, size_t len, void *all)
{
  (void)bs;
  if (len == 0)
    return 0;
  if (mine == NULL || all == NULL)
    return -NM_EINVAL;
  memmove(all, mine, len);
  return 0;
}

static int singleton_barrier(struct nm_bootstrap_s *bs)
{
  (void)bs;
  return 0;
}

static int singleton_poll_fault(struct nm_bootstrap_s *bs, int *rank)
{
  (void)bs;
  (void)rank;
  return 0;
}

static int singleton_fault_fd(struct nm_bootstrap_s *bs)
{
  (void)bs;
  return -1;
}

/* Alone in the job: the caller's own exit ends it. */
static int singleton_abort(struct nm_bootstrap_s *bs, int code)
{
  (void)bs;
  (void)code;
  return 0;
}

static int singleton_fini(struct nm_bootstrap_s *bs)
{
  (void)bs;
  return 0;
}

const struct nm_bootstrap_ops_s nm_bootstrap_singleton_ops = {
  .name = "singleton",
  .init = singleton_init,
  .allgather = singleton_allgather,
  .barrier = singleton_barrier,
  .poll_fault = singleton_poll_fault,
  .fault_fd = singleton_fault_fd,
  .abort = singleton_abort,
  .fini = singleton_fini,
};
