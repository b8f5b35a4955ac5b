/**
 * @file nm_mcast_tree.h
 * @brief Private: the tree shapes of dynamic broadcasts (Denis 2020, section 3.2, fig. 1).
 *
 * A node that must reach a list of m destinations numbers itself 0 and them 1..m. Its children are list
 * positions c, each responsible for the contiguous positions c+1..end (its subtree), so a child's list is a
 * slice of its parent's: every hop only trims. Children come in send order.
 */
#ifndef NM_MCAST_TREE_H
#define NM_MCAST_TREE_H

#include <nmad/nm_mcast.h>

/** Children of position 0 in a list of @p m destinations: child positions in child[], the last position of each
 *  child's subtree in end[] (both arrays of at least m entries), in send order. @return the number of children.
 *  Binomial: 0 -> 4 {5,6}, 2 {3}, 1 {} for m = 6 (paper fig. 1). */
int nm_mcast_tree_children(enum nm_mcast_tree_e tree, int m, int *child, int *end);

/** Positions 1..m sorted by the step at which they receive the data (ties: lower position first), so that
 *  destinations sorted by decreasing priority can be placed "closer to the root" (paper 3.2). @p order gets m
 *  entries. @return 0 or -NM_ENOMEM. */
int nm_mcast_tree_arrival_order(enum nm_mcast_tree_e tree, int m, int *order);

#endif
