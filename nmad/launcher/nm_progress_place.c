/* Progress-thread placement (NMAD_BIND), after progress-threads-split-tree-denis-2019:
 *  - "bind" (section 4, Figure 2): the thread shares the rank's cores; no overlap when the rank computes on all
 *    of them, but nothing else is disturbed;
 *  - "numa" (section 4, Figure 3, equation 1): the idle core of the rank's NUMA node nearest to the rank; all
 *    ranks of a node with one idle core share it;
 *  - "odd-even" (section 5.2, equation 2): local rank r on idle core r mod k (k idle cores), so consecutive ranks,
 *    which send to each other in chains, never share a communication core once k >= 2. Tree neighbours may: the
 *    binomial tree's r and r + 2^j share one whenever k divides 2^j (with k = 2, every edge above the leaves'
 *    level; doc/architecture.md, corrected for issue 19). Nothing here relies on the tree case.
 * Equation 2 assumes the idle cores evenly spread; we index the list of the idle cores instead, which gives the
 * same placement on evenly spread cores and still applies when they are not. Every policy falls back to the
 * rank's own cores when no core is idle (the paper's rule for "numa"). */
#include "nm_progress_place.h"
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdlib.h>
#include <unistd.h>

/* The NUMA node's processors that contain @p cpu, into @p out; all processors when the topology says nothing. */
static void nm_place_numa_of(int cpu, cpu_set_t *out)
{
  hwloc_topology_t topo;
  CPU_ZERO(out);
  int ok = hwloc_topology_init(&topo) == 0;
  if (ok && hwloc_topology_load(topo) == 0) {
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu);
    hwloc_obj_t node = pu ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_NUMANODE, pu) : NULL;
    /* NUMA nodes are memory children in hwloc 2: the node of a PU is found through its cpuset instead */
    for (int i = 0; !node && pu && i < hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE); i++) {
      hwloc_obj_t n = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
      if (hwloc_bitmap_isset(n->cpuset, (unsigned)cpu))
        node = n;
    }
    if (node)
      hwloc_cpuset_to_glibc_sched_affinity(topo, node->cpuset, out, sizeof(*out));
  }
  if (ok)
    hwloc_topology_destroy(topo);
  if (CPU_COUNT(out) == 0)
    for (int c = 0; c < CPU_SETSIZE; c++)
      CPU_SET(c, out);
}

static int nm_place_first(const cpu_set_t *s)
{
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, s))
      return c;
  return -1;
}

int nm_progress_place(enum nm_bind_e policy, int local_index, const cpu_set_t *own, const cpu_set_t *used, int *cpu)
{
  if (policy == NM_BIND_BIND)
    return 0;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int idle[CPU_SETSIZE], k = 0;
  for (int c = 0; c < online && c < CPU_SETSIZE; c++)
    if (!CPU_ISSET(c, used))
      idle[k++] = c;
  if (k == 0)
    return 0;
  if (policy == NM_BIND_ODD_EVEN) {
    *cpu = idle[local_index % k];
    return 1;
  }
  int first = nm_place_first(own);
  if (first < 0)
    return 0;
  cpu_set_t node;
  nm_place_numa_of(first, &node);
  int best = -1;
  for (int i = 0; i < k; i++)
    if (CPU_ISSET(idle[i], &node) && (best < 0 || abs(idle[i] - first) < abs(best - first)))
      best = idle[i];
  if (best < 0)
    return 0;
  *cpu = best;
  return 1;
}
