/* Where the progress thread of a rank runs (NMAD_BIND): see nm_progress_place.c. */
#ifndef NM_PROGRESS_PLACE_H
#define NM_PROGRESS_PLACE_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include "nmad/core/nm_core_interface.h" /* enum nm_bind_e */

/**
 * @brief Choose the processors of a rank's progress thread (progress-threads-split-tree-denis-2019, sections 4
 *        and 5.2). Idle processors are those of the host that no local rank's affinity mask contains.
 * @param policy NM_BIND_BIND: none (the thread inherits the rank's mask); NM_BIND_NUMA: the idle processor of
 *        the rank's NUMA node nearest to the rank's first processor; NM_BIND_ODD_EVEN: idle processor
 *        number (local_index mod idle processors), so that consecutive ranks (chain neighbours) never share
 *        one when two or more are idle; binomial-tree neighbours r, r + 2^j do when k divides 2^j.
 * @param local_index this rank's position among the ranks of its host (0-based, in rank order).
 * @param own this rank's affinity mask; @param used the union of the masks of the host's ranks.
 * @param[out] cpu the processor chosen.
 * @return 1 when a processor was chosen, 0 to inherit the rank's mask (policy bind, no idle processor, or no
 *         topology). Never fails: a placement that cannot be computed leaves the thread where the rank runs.
 */
int nm_progress_place(enum nm_bind_e policy, int local_index, const cpu_set_t *own, const cpu_set_t *used, int *cpu);

#endif
