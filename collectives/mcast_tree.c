/* Tree shapes of dynamic broadcasts (Denis 2020, section 3.2 and fig. 1); see nm_mcast_tree.h. The trees are the
 * tree module's (nm_coll_tree.h): a node numbers itself vrank 0 and its m destinations 1..m, and since the module
 * numbers trees in preorder, every child's subtree is a contiguous slice of the list. */
#include "nm_mcast_tree.h"
#include "nm_coll_tree.h"
#include <stdlib.h>

/* The tree module's kind for a dynamic broadcast's tree (unknown values: binomial, the default). */
static enum nm_coll_tree_kind_e nm_mcast_tree_kind(enum nm_mcast_tree_e tree)
{
  switch (tree) {
  case NM_MCAST_TREE_FLAT:
    return NM_COLL_TREE_FLAT;
  case NM_MCAST_TREE_CHAIN:
    return NM_COLL_TREE_CHAIN;
  case NM_MCAST_TREE_BINARY:
    return NM_COLL_TREE_BINARY;
  case NM_MCAST_TREE_BINOMIAL:
  default:
    return NM_COLL_TREE_BINOMIAL;
  }
}

int nm_mcast_tree_children(enum nm_mcast_tree_e tree, int m, int *child, int *end)
{
  struct nm_coll_tree_s t;
  struct nm_coll_tree_node_s root;
  if (m <= 0 || nm_coll_tree_init(&t, nm_mcast_tree_kind(tree), m + 1, 0) != 0)
    return 0;
  nm_coll_tree_node(&t, 0, &root);
  for (int i = 0; i < root.n_children; i++) {
    int hi;
    child[i] = nm_coll_tree_child(&t, &root, i, &hi);
    end[i] = hi - 1; /* last position of the child's subtree */
  }
  return root.n_children;
}

struct nm_mcast_slot_s {
  int pos, step;
};

static int nm_mcast_slot_cmp(const void *a, const void *b)
{
  const struct nm_mcast_slot_s *x = a, *y = b;
  if (x->step != y->step)
    return x->step - y->step;
  return x->pos - y->pos;
}

int nm_mcast_tree_arrival_order(enum nm_mcast_tree_e tree, int m, int *order)
{
  struct nm_coll_tree_s t;
  if (m <= 0 || nm_coll_tree_init(&t, nm_mcast_tree_kind(tree), m + 1, 0) != 0)
    return 0;
  struct nm_mcast_slot_s *slot = calloc((size_t)m + 1, sizeof(*slot));
  if (slot == NULL)
    return -NM_ENOMEM;
  /* A node forwards to its k-th child (k from 0) at step(node) + k + 1; in preorder a parent comes before its
   * children, so one pass in position order fills every step. */
  for (int v = 0; v <= m; v++) {
    struct nm_coll_tree_node_s node;
    nm_coll_tree_node(&t, v, &node);
    slot[v].pos = v;
    for (int k = 0; k < node.n_children; k++)
      slot[nm_coll_tree_child(&t, &node, k, NULL)].step = slot[v].step + k + 1;
  }
  qsort(slot + 1, (size_t)m, sizeof(*slot), nm_mcast_slot_cmp);
  for (int i = 0; i < m; i++)
    order[i] = slot[i + 1].pos;
  free(slot);
  return NM_ESUCCESS;
}
