/* Tree shapes of dynamic broadcasts (Denis 2020, section 3.2 and fig. 1); see nm_mcast_tree.h. */
#include "nm_mcast_tree.h"
#include <stdlib.h>

int nm_mcast_tree_children(enum nm_mcast_tree_e tree, int m, int *child, int *end)
{
  int n = 0;
  if (m <= 0)
    return 0;
  switch (tree) {
  case NM_MCAST_TREE_FLAT:
    for (int i = 1; i <= m; i++, n++) {
      child[n] = i;
      end[n] = i;
    }
    break;
  case NM_MCAST_TREE_CHAIN:
    child[0] = 1;
    end[0] = m;
    n = 1;
    break;
  case NM_MCAST_TREE_BINARY: {
    int left = (m + 1) / 2; /* positions 1..left go left, the rest right */
    child[n] = 1;
    end[n++] = left;
    if (m > left) {
      child[n] = left + 1;
      end[n++] = m;
    }
    break;
  }
  case NM_MCAST_TREE_BINOMIAL:
  default: {
    /* The largest power of two first: its subtree is the largest, so it starts forwarding earliest. */
    int j = 1;
    while (j * 2 <= m)
      j *= 2;
    for (; j >= 1; j /= 2, n++) {
      child[n] = j;
      end[n] = 2 * j - 1 < m ? 2 * j - 1 : m;
    }
    break;
  }
  }
  return n;
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
  if (m <= 0)
    return 0;
  /* Walk the tree: a node at position b with subtree b+1..e forwards to its k-th child at step(b) + k. */
  struct nm_mcast_slot_s *slot = calloc((size_t)m + 1, sizeof(*slot));
  int *stack_b = malloc(sizeof(int) * ((size_t)m + 1)), *stack_e = malloc(sizeof(int) * ((size_t)m + 1));
  int *child = malloc(sizeof(int) * (size_t)m), *end = malloc(sizeof(int) * (size_t)m);
  int err = (!slot || !stack_b || !stack_e || !child || !end) ? -NM_ENOMEM : NM_ESUCCESS;
  int sp = 0;
  if (!err) {
    stack_b[sp] = 0;
    stack_e[sp++] = m;
  }
  while (!err && sp > 0) {
    sp--;
    int b = stack_b[sp], e = stack_e[sp];
    int nc = nm_mcast_tree_children(tree, e - b, child, end);
    for (int k = 0; k < nc; k++) {
      int c = b + child[k];
      slot[c].pos = c;
      slot[c].step = slot[b].step + k + 1;
      stack_b[sp] = c;
      stack_e[sp++] = b + end[k];
    }
  }
  if (!err) {
    qsort(slot + 1, (size_t)m, sizeof(*slot), nm_mcast_slot_cmp);
    for (int i = 0; i < m; i++)
      order[i] = slot[i + 1].pos;
  }
  free(slot);
  free(stack_b);
  free(stack_e);
  free(child);
  free(end);
  return err;
}
