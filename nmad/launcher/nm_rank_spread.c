/**
 * @file nm_rank_spread.c
 * @brief Unbound ranks of an oversubscribed host start their work spread evenly over its processors.
 *
 * Why: with more ranks than cores and no binding (`nmad-run --bind-to none`, the default), the ranks wait by
 * yielding the processor (doc/architecture.md, "Waiting") and never let it go idle, so the kernel's balancer has
 * no idle processor to pull work to: whatever placement the blocking waits of start-up left stays for the whole
 * run. On the project's 2-core host four ranks were left three on one core and one alone on the other in about
 * half the runs; the lone rank then spins through every barrier while the three others share a core, and a
 * 4-rank MPI_Barrier over sm takes 4.9-6.7 us instead of 3.3-3.5 (doc/performance.md, "Three ranks on one core").
 * Open MPI's ranks end their start-up spread (its 4-rank barrier stays at 2.9-3.0 us).
 * The rank is moved at the end of start-up, then given its whole mask back: not a binding (a bound rank, or one
 * with a core of its own, is left alone). When it later waits on another processor (woken there, or pulled there
 * by a processor whose ranks had all blocked), it goes back (nm_rank_spread_return()); computing outside nmad, it
 * runs where the kernel puts it.
 */
#include "nm_rank_spread.h"
#include <nmad/nm_core.h>

int nm_rank_spread_cpu(int local_index, const cpu_set_t *own, const cpu_set_t *used, int local_ranks, int *cpu)
{
  int n = CPU_COUNT(own);
  if (local_index < 0 || n < 2 || local_ranks <= CPU_COUNT(used) || !CPU_EQUAL(own, used))
    return 0;
  int want = local_index % n;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, own) && want-- == 0) {
      *cpu = c;
      return 1;
    }
  return 0; /* not reached: own has n processors */
}

int nm_rank_spread_apply(int cpu, const cpu_set_t *own)
{
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  /* the first call moves the thread at once (it runs on a processor of its new mask when it returns) */
  int rc = sched_setaffinity(0, sizeof(one), &one);
  return sched_setaffinity(0, sizeof(*own), own) || rc ? -1 : 0;
}

int nm_rank_spread_pace(struct nm_rank_spread_pace_s *p, uint64_t now_ns)
{
  if (p->last_ns) {
    uint64_t since = now_ns - p->last_ns;
    if (since < p->holdoff_ns)
      return 0;
    if (since < p->holdoff_ns + NM_RANK_SPREAD_CONTESTED_NS)
      p->holdoff_ns = p->holdoff_ns == 0 ? NM_RANK_SPREAD_HOLDOFF_MIN_NS
                      : p->holdoff_ns >= NM_RANK_SPREAD_HOLDOFF_MAX_NS / 2 ? NM_RANK_SPREAD_HOLDOFF_MAX_NS
                                                                             : 2 * p->holdoff_ns;
    else
      p->holdoff_ns = 0;
  }
  p->last_ns = now_ns;
  return 1;
}

int nm_rank_spread_return(int cpu, const cpu_set_t *own, struct nm_rank_spread_pace_s *pace)
{
  if (sched_getcpu() == cpu)
    return 0;
  if (pace && !nm_rank_spread_pace(pace, nm_core_time_ns(NULL))) /* NULL: CLOCK_MONOTONIC */
    return NM_RANK_SPREAD_HELD;
  /* The application (or a runtime under it: hwloc binding after MPI_Init) may have placed the thread itself: its
   * mask is then no longer ours to restore. */
  cpu_set_t now;
  if (sched_getaffinity(0, sizeof(now), &now) != 0 || !CPU_EQUAL(&now, own))
    return NM_RANK_SPREAD_FOREIGN;
  return nm_rank_spread_apply(cpu, own) ? -1 : 1;
}
