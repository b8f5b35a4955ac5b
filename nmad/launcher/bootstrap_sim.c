/**
 * @file bootstrap_sim.c
 * @brief Bootstrap of a rank simulated by nmad-sim (doc/nmad-sim.md): rank and size come from the calling SimGrid
 *        actor's context, which nmad-sim exports through nm_sim_self(); the bootstrap also imposes the simulation
 *        driver. libnmad does not link SimGrid: the getter is looked up in the running program, where only nmad-sim
 *        defines it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "nm_bootstrap.h"
#include "drivers/sim/nm_sim.h"
#include <nmad/nm_errno.h>
#include <dlfcn.h>
#include <stddef.h>

#define NM_SIM_JOB_KEY 0x73696d2d6a6f6221ULL /* "sim-job!" */

struct nm_sim_rank_s *nm_bootstrap_sim_self(void)
{
  nm_sim_self_fn self = (nm_sim_self_fn)dlsym(RTLD_DEFAULT, NM_SIM_SELF_SYMBOL);
  return self ? self() : NULL;
}

static int sim_init(struct nm_bootstrap_s *bs)
{
  struct nm_sim_rank_s *me = nm_bootstrap_sim_self();
  if (!me)
    return -NM_ENOTSUP;
  bs->rank = me->rank;
  bs->size = me->size;
  bs->priv = me;
  bs->drv_ops = me->drv_ops;
  /* One simulation is one job, and nothing outside it reaches a simulated rank: any constant will do, and a
   * constant keeps runs deterministic. */
  bs->job_key = NM_SIM_JOB_KEY;
  return NM_ESUCCESS;
}

/* The launcher never gathers under simulation: hosts come from the platform, addresses are ranks. Gathering
 * N records on each of N ranks in one process is what must not happen at 6,144 ranks. */
static int sim_allgather(struct nm_bootstrap_s *bs, const void *mine, size_t len, void *all) { return -NM_ENOTSUP; }

static int sim_barrier(struct nm_bootstrap_s *bs)
{
  struct nm_sim_rank_s *me = bs->priv;
  return me->barrier(me);
}

static int sim_poll_fault(struct nm_bootstrap_s *bs, int *rank) { return 0; }
static int sim_fault_fd(struct nm_bootstrap_s *bs) { return -1; }
/* Every simulated rank lives in this one process: the caller's exit ends the whole simulated job. */
static int sim_abort(struct nm_bootstrap_s *bs, int code) { return 0; }
static int sim_fini(struct nm_bootstrap_s *bs) { return NM_ESUCCESS; }

const struct nm_bootstrap_ops_s nm_bootstrap_sim_ops = {
  .name = "sim",
  .init = sim_init,
  .allgather = sim_allgather,
  .barrier = sim_barrier,
  .poll_fault = sim_poll_fault,
  .fault_fd = sim_fault_fd,
  .abort = sim_abort,
  .fini = sim_fini,
};
