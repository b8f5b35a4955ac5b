/**
 * @file nmad_run_bind.c
 * @brief nmad-run --bind-to: the CPU set of each rank, computed with hwloc before the ranks are forked; each
 *        child applies its own with sched_setaffinity() before exec.
 *
 * Why: a ping-pong between two processes that the scheduler is free to place runs at 0.35 us one moment (both
 * on one core, handing the processor over) and at 0.9-1.3 us the next (on two cores): benchmarks that compare two
 * runs compare two placements. HPC launchers bind by default (Open MPI binds to cores for two processes);
 * binding rank r to core r mod ncores gives one placement, the one of a real job.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t */
#endif
#include "nmad_run_bind.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdio.h>
#include <string.h>

int nmad_run_bind_parse(const char *name, enum nmad_run_bind_e *out)
{
  if (strcmp(name, "none") == 0)
    *out = NMAD_RUN_BIND_NONE;
  else if (strcmp(name, "core") == 0)
    *out = NMAD_RUN_BIND_CORE;
  else
    return -1;
  return 0;
}

int nmad_run_bind_plan(enum nmad_run_bind_e policy, int n, cpu_set_t *sets)
{
  if (policy == NMAD_RUN_BIND_NONE)
    return 0;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    fprintf(stderr, "nmad-run: --bind-to core: cannot read the host's topology (hwloc)\n");
    return -1;
  }
  int rc = 0;
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  if (ncores <= 0) { /* some virtual machines report no cores: fall back to processing units */
    type = HWLOC_OBJ_PU;
    ncores = hwloc_get_nbobjs_by_type(topo, type);
  }
  if (ncores <= 0) {
    fprintf(stderr, "nmad-run: --bind-to core: the topology has no core\n");
    rc = -1;
  }
  for (int r = 0; rc == 0 && r < n; r++) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)(r % ncores));
    if (!core || hwloc_cpuset_to_glibc_sched_affinity(topo, core->cpuset, &sets[r], sizeof(sets[r])) != 0) {
      fprintf(stderr, "nmad-run: --bind-to core: no CPU set for rank %d\n", r);
      rc = -1;
    }
  }
  hwloc_topology_destroy(topo);
  return rc;
}
