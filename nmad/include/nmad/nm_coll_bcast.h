/**
 * @file nm_coll_bcast.h
 * @brief The broadcast algorithms of Hasanov & Lastovetsky 2015 ("Topology-oblivious optimization of MPI
 * broadcast algorithms on extreme-scale platforms", section 2.1.1-2.1.8), by the paper's names, and their
 * hierarchical transformation (section 3). This header names the algorithms; the broadcasts themselves
 * (collectives/) and their cost models (collectives/nm_coll_model.c) both use these names.
 */
#ifndef NM_COLL_BCAST_H
#define NM_COLL_BCAST_H

#ifdef __cplusplus
extern "C" {
#endif

/** A broadcast algorithm, Hasanov 2015 section 2.1 (the section number is in each comment). */
enum nm_coll_bcast_algo_e {
  NM_COLL_BCAST_FLAT = 0,           /**< 2.1.1 flat tree: the root sends to every member */
  NM_COLL_BCAST_CHAIN,              /**< 2.1.2 linear tree (chain): each member forwards the whole message */
  NM_COLL_BCAST_PIPELINED_CHAIN,    /**< 2.1.3 pipelined linear tree: the chain, message cut into X segments */
  NM_COLL_BCAST_BINARY,             /**< 2.1.4 binary tree */
  NM_COLL_BCAST_SPLIT_BINARY,       /**< 2.1.5 split-binary tree: each half of the message down one subtree,
                                         then halves exchanged between the subtrees */
  NM_COLL_BCAST_BINOMIAL,           /**< 2.1.6 binomial tree */
  NM_COLL_BCAST_SCATTER_RING,       /**< 2.1.7 scatter (binomial) + ring allgather */
  NM_COLL_BCAST_SCATTER_RD,         /**< 2.1.8 scatter (binomial) + recursive-doubling allgather */
  NM_COLL_BCAST_NALGOS              /**< number of algorithms (not one) */
};

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_BCAST_H */
