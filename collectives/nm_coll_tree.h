/**
 * @file nm_coll_tree.h
 * @brief Private: the one tree module of every collective (static broadcasts, the dynamic broadcast's
 * forwarding trees, the MPI shim). Issue 17, deliverable 1; shapes of Hasanov 2015, section 2.1 and
 * Denis 2020, section 3.2 and fig. 1.
 *
 * Trees are over virtual ranks (vranks) 0..n-1, vrank 0 being the root (a caller maps vrank v to member
 * (v + root) % n, or to list position v). Every tree is numbered in preorder, so that the subtree of vrank v is
 * the contiguous range [v, hi): a forwarder's destination list is a slice of its parent's (dynamic broadcast),
 * and the blocks a scatter hands to a subtree are one contiguous run of bytes.
 *
 * A node's children come in sending order: for the binomial and k-nomial trees the farthest (offset k^j with the
 * highest j, the largest full subtree) first, so that under the single-port schedule of the paper (a node serves
 * its children one after the other) the binomial tree takes ceil(log2 n) rounds; for the binary tree left (the
 * larger half) first.
 *
 * Everything is O(depth) time (O(1) for flat and chain), no allocation, no state: thread-safe.
 */
#ifndef NM_COLL_TREE_H
#define NM_COLL_TREE_H

/** A tree shape. */
enum nm_coll_tree_kind_e {
  NM_COLL_TREE_FLAT = 0, /**< the root is the parent of everybody (Hasanov 2015, 2.1.1) */
  NM_COLL_TREE_CHAIN,    /**< v's parent is v - 1 (2.1.2, 2.1.3) */
  NM_COLL_TREE_BINARY,   /**< two children, left subtree floor(s/2) members of a subtree of s (2.1.4, 2.1.5);
                              depth floor(log2 n) */
  NM_COLL_TREE_BINOMIAL, /**< children at offsets 2^j (2.1.6; Denis 2020 fig. 1); ceil(log2 n) rounds */
  NM_COLL_TREE_KNOMIAL,  /**< children at offsets d k^j, d = 1..k-1 (k = radix >= 2; k = 2 is the binomial) */
  NM_COLL_TREE_NKINDS
};

/** A tree: kind, size and radix (k-nomial only). Made by nm_coll_tree_init(), then read-only. */
struct nm_coll_tree_s {
  enum nm_coll_tree_kind_e kind;
  int n;     /**< members, >= 1 */
  int radix; /**< k of the k-nomial tree (2 for the binomial, unused otherwise) */
};

/** One node: its parent and its subtree [vrank, hi). */
struct nm_coll_tree_node_s {
  int vrank;      /**< this node */
  int parent;     /**< parent vrank, -1 for the root */
  int hi;         /**< end (exclusive) of the subtree: the subtree is vranks [vrank, hi) */
  int n_children; /**< number of children */
};

/** Fill @p t. @param n members (>= 1). @param radix k >= 2 for NM_COLL_TREE_KNOMIAL (ignored otherwise).
 *  @return 0, or -NM_EINVAL (bad kind, n < 1, radix < 2 for the k-nomial). */
int nm_coll_tree_init(struct nm_coll_tree_s *t, enum nm_coll_tree_kind_e kind, int n, int radix);

/** Node of vrank @p v (0 <= v < t->n): parent, subtree end, number of children. O(depth). */
void nm_coll_tree_node(const struct nm_coll_tree_s *t, int v, struct nm_coll_tree_node_s *node);

/** The @p i-th child (0 <= i < node->n_children) of @p node in sending order (farthest level first).
 *  @param[out] child_hi if not NULL, end (exclusive) of that child's subtree. @return the child's vrank, or -1
 *  when i is out of range. O(1). */
int nm_coll_tree_child(const struct nm_coll_tree_s *t, const struct nm_coll_tree_node_s *node, int i, int *child_hi);

#endif /* NM_COLL_TREE_H */
