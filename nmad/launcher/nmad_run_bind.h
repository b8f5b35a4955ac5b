/**
 * @file nmad_run_bind.h
 * @brief nmad-run --bind-to: where each rank runs (process binding, as `mpirun --bind-to` in Open MPI).
 */
#ifndef NMAD_RUN_BIND_H
#define NMAD_RUN_BIND_H

#include <sched.h> /* cpu_set_t: the includer defines _GNU_SOURCE first */

/** Binding policies. */
enum nmad_run_bind_e {
  NMAD_RUN_BIND_NONE = 0, /**< the OS places and moves the ranks (default) */
  NMAD_RUN_BIND_CORE      /**< rank r on core r mod (number of cores), all its hardware threads */
};

/** Parse a policy name ("none", "core"). @return 0, or -1 for an unknown name. */
int nmad_run_bind_parse(const char *name, enum nmad_run_bind_e *out);

/**
 * CPU sets of @p n ranks under @p policy, from the host's topology (hwloc), in @p sets[0..n) (allocated by the
 * caller). Ranks beyond the number of cores wrap around (several ranks per core: oversubscribed).
 * @return 0, or -1 with a message on stderr (topology unavailable).
 * Not thread-safe (nmad-run is single-threaded). Called before the ranks are forked.
 */
int nmad_run_bind_plan(enum nmad_run_bind_e policy, int n, cpu_set_t *sets);

#endif /* NMAD_RUN_BIND_H */
