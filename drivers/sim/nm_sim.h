/**
 * @file nm_sim.h
 * @brief Private: what the simulation launcher (nmad-sim), the SimGrid driver and libnmad's "sim" bootstrap share.
 *
 * nmad-sim runs every rank's main() as a SimGrid actor in one process (doc/nmad-sim.md). libnmad does not link
 * SimGrid: its bootstrap looks up nm_sim_self() in the running program (dlsym), which only nmad-sim exports, and
 * gets from it the calling actor's rank context, with the driver's ops table and the job's barrier. Nothing here
 * is global: the context hangs off the actor, the job's state off the context (DESIGN.md rule 1).
 */
#ifndef NM_SIM_H
#define NM_SIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nm_drv_ops_s;
struct nm_sim_job_s; /* nmad-sim's job: mailboxes, barrier, options (drivers/sim/nm_sim_job.h) */

/** One simulated rank: the data of its actor. */
struct nm_sim_rank_s {
  int rank, size;
  const struct nm_drv_ops_s *drv_ops; /* the simulation driver */
  struct nm_sim_job_s *job;
  /** The bootstrap's barrier over every rank of the job (costs no simulated time). @return 0. */
  int (*barrier)(struct nm_sim_rank_s *self);
  /** Simulation drivers this rank opened so far: the next one is rail `rails_open` (NMAD_DRIVER=sim+sim). */
  int rails_open;
  /** The simulation drivers this rank opened, chained (drivers/sim/nm_sim.cpp): the core blocks in one of
   *  them, which must wait on the activities of all. */
  void *drvs;
};

/** The name nmad-sim exports its context getter under, and its type: the calling actor's rank, or NULL when
 *  the caller is not a simulated rank. */
#define NM_SIM_SELF_SYMBOL "nm_sim_self"
typedef struct nm_sim_rank_s *(*nm_sim_self_fn)(void);

/** The simulation driver (drivers/sim/nm_sim.cpp), linked into nmad-sim only. */
extern const struct nm_drv_ops_s nm_drv_sim_ops;

/** The rank blocked outside its drivers (the job's barrier): its drivers' runs of idle polls end there, as when
 *  the core blocks in a driver, so what a rank did before a barrier does not change what its next polls cost.
 *  Called by the barrier's owner in the rank's own actor. */
void nm_sim_rank_blocked(struct nm_sim_rank_s *self);

#ifdef __cplusplus
}
#endif
#endif /* NM_SIM_H */
