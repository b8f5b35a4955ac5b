/**
 * @file nm_bootstrap.h
 * @brief Private: how a process finds its peers before the core exists (out-of-band channel).
 *
 * Four bootstraps behind one ops table, picked by nm_bootstrap_select():
 *  - "sim": the process is nmad-sim and the caller one of its simulated ranks (bootstrap_sim.c);
 *  - "nmad-run": NMAD_RUN_FD (a connected stream socket to nmad-run), NMAD_RUN_RANK, NMAD_RUN_SIZE set;
 *  - "pmix": PMIX_RANK set and nmad built with PMIx (PMIx_Init, PMIx_Put/Commit/Fence/Get);
 *  - "singleton": neither; size 1.
 * No global state: everything lives in struct nm_bootstrap_s.
 */
#ifndef NM_BOOTSTRAP_H
#define NM_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

struct nm_drv_ops_s;

struct nm_bootstrap_s;

struct nm_bootstrap_ops_s {
  const char *name;
  /** Connect to the launcher; fill rank and size. @return 0 or -NM_E*. */
  int (*init)(struct nm_bootstrap_s *bs);
  /** Collective: every rank contributes @p len bytes (same len everywhere); @p all receives size*len bytes,
   *  rank r's contribution at offset r*len. @return 0, -NM_ECLOSED if a rank died. */
  int (*allgather)(struct nm_bootstrap_s *bs, const void *mine, size_t len, void *all);
  /** Collective barrier. @return 0 or -NM_ECLOSED. */
  int (*barrier)(struct nm_bootstrap_s *bs);
  /** Collective barrier that calls @p progress(@p arg) while it waits for the other ranks (nm_bootstrap_idle()'s
   *  back-off between calls), so that what a rank forwards or answers from inside progress (a broadcast's
   *  forwarding, a rendezvous) does not stall behind a rank sitting in the barrier. NULL where the bootstrap
   *  cannot (then barrier()). @return as barrier(). */
  int (*barrier_progress)(struct nm_bootstrap_s *bs, int (*progress)(void *arg), void *arg);
  /** Non-blocking: has the launcher reported a dead rank? @return 1 and *rank set, 0 if nothing new,
   *  -NM_ECLOSED if the launcher itself is gone. Each dead rank is reported once. */
  int (*poll_fault)(struct nm_bootstrap_s *bs, int *rank);
  /** File descriptor that becomes readable when poll_fault() may have something, or -1 (then poll_fault is
   *  called periodically). */
  int (*fault_fd)(struct nm_bootstrap_s *bs);
  /** Ask the launcher to end every rank of the job now, the job exiting with @p code (modulo 256). Returns once
   *  the launcher has the request (it may kill the caller before); the caller exits next. Not collective; may be
   *  called while another thread is inside a collective. @return 0, or -NM_E* if the launcher cannot be told
   *  (then only the caller ends). */
  int (*abort)(struct nm_bootstrap_s *bs, int code);
  /** Tell the launcher this rank finishes normally, then release. @return 0 or -NM_E*. */
  int (*fini)(struct nm_bootstrap_s *bs);
};

struct nm_bootstrap_s {
  const struct nm_bootstrap_ops_s *ops;
  int rank, size;
  void *priv; /* bootstrap-specific state (malloc'd by init, freed by fini) */
  /** The job key (doc/reliability.md, "Authenticated sources and closed doors"), the same on every rank of the
   *  job, set by init: nmad-run's random key (NMAD_RUN_KEY), rank 0's random key shared through PMIx, a random
   *  key of its own for the singleton, a constant under simulation. */
  uint64_t job_key;
  /** The only driver this job may use, imposed by the bootstrap (the simulation driver), or NULL: NMAD_DRIVER. */
  const struct nm_drv_ops_s *drv_ops;
};

/** @brief One wait step of barrier_progress(): call @p progress(@p arg), then wait for @p fd to be readable (or,
 *  with @p fd < 0, just sleep) for *@p backoff_us, which starts at 0 and doubles up to 1 ms while progress finds
 *  nothing (reset to 0 when it does). An idle waiting rank costs one progress pass per ms and no processor
 *  otherwise, as the blocking barrier did. @return 1 when @p fd is readable, 0 otherwise. */
int nm_bootstrap_idle(int fd, int (*progress)(void *arg), void *arg, unsigned *backoff_us);

extern const struct nm_bootstrap_ops_s nm_bootstrap_nmadrun_ops;
extern const struct nm_bootstrap_ops_s nm_bootstrap_pmix_ops; /* only when HAVE_PMIX */
extern const struct nm_bootstrap_ops_s nm_bootstrap_singleton_ops;
extern const struct nm_bootstrap_ops_s nm_bootstrap_sim_ops;
struct nm_sim_rank_s;
/** The calling simulated rank's context when running under nmad-sim, NULL otherwise. */
struct nm_sim_rank_s *nm_bootstrap_sim_self(void);

/** Pick and init the bootstrap from the environment (see file comment). @return 0 or -NM_E* (message on
 *  stderr naming the problem). */
int nm_bootstrap_select(struct nm_bootstrap_s *bs);

#endif /* NM_BOOTSTRAP_H */
