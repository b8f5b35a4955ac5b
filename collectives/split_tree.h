/**
 * @file split_tree.h
 * @brief Private helpers of the split tree (collectives/split_tree.c), shared with its tests and benchmark.
 */
#ifndef NM_SPLIT_TREE_H
#define NM_SPLIT_TREE_H

/** @brief Level (from the leaves, 1..H) of the binomial-tree edge between vrank @p parent and its child @p child:
 *  log2(child - parent) + 1 (Denis 2019, fig. 8). */
int nm_split_edge_level(int parent, int child);

/**
 * @brief Edges of the binomial tree of @p n members (root-relative ranks = local ranks, root 0) whose two ends'
 * progress threads share a communication core under the odd-even placement of Denis 2019, section 5.2, as
 * NMAD_BIND=odd-even applies it (local rank r on idle core r mod @p k).
 * @param level_min count only the edges of levels >= level_min (2: those left to progress when S = 1).
 * @return the number of such edges (0 for k < 1: no idle core, nothing is placed).
 * Used to check the placement claim of doc/architecture.md: chain neighbours never share a core for k >= 2,
 * binomial neighbours r, r + 2^j do whenever k divides 2^j (always for k = 2 and j >= 1). Thread-safe.
 */
int nm_split_place_shared_edges(int n, int k, int level_min);

#endif
