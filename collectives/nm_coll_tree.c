/**
 * @file nm_coll_tree.c
 * @brief The one tree module of the collectives (see nm_coll_tree.h): every shape is described by the children
 * of a subtree [lo, hi), in sending order; a node is found by walking down from the root through the child whose
 * range holds it. No other file computes a tree.
 */
#include "nm_coll_tree.h"
#include <nmad/nm_errno.h>
#include <stddef.h>

int nm_coll_tree_init(struct nm_coll_tree_s *t, enum nm_coll_tree_kind_e kind, int n, int radix)
{
  if (t == NULL || n < 1 || (int)kind < 0 || kind >= NM_COLL_TREE_NKINDS)
    return -NM_EINVAL;
  if (kind == NM_COLL_TREE_KNOMIAL && radix < 2)
    return -NM_EINVAL;
  t->kind = kind;
  t->n = n;
  t->radix = kind == NM_COLL_TREE_BINOMIAL ? 2 : kind == NM_COLL_TREE_KNOMIAL ? radix : 0;
  return 0;
}

/* k-nomial subtree of s members: the largest power k^j < s (0 when s <= 1); *count_top gets the number of
 * children at that level, floor((s - 1) / k^j) (<= k - 1). */
static int nm_coll_knomial_top(int s, int k, int *count_top)
{
  int pw = 1;
  if (s <= 1) {
    *count_top = 0;
    return 0;
  }
  while ((long long)pw * k <= s - 1)
    pw *= k;
  *count_top = (s - 1) / pw;
  return pw;
}

/* Number of children of the subtree [lo, hi) (lo is the node). */
static int nm_coll_tree_count(const struct nm_coll_tree_s *t, int lo, int hi)
{
  int s = hi - lo;
  switch (t->kind) {
  case NM_COLL_TREE_FLAT:
  case NM_COLL_TREE_CHAIN:
    return s - 1 > 0 ? (t->kind == NM_COLL_TREE_FLAT ? s - 1 : 1) : 0;
  case NM_COLL_TREE_BINARY:
    return s > 2 ? 2 : s - 1;
  default: {
    int top, levels = 0;
    int pw = nm_coll_knomial_top(s, t->radix, &top);
    if (pw == 0)
      return 0;
    for (int p = pw; p > 1; p /= t->radix)
      levels++;
    return top + levels * (t->radix - 1);
  }
  }
}

/* The i-th child of the subtree [lo, hi) in sending order, with its own range; -1 if none. */
static int nm_coll_tree_child_of(const struct nm_coll_tree_s *t, int lo, int hi, int i, int *child_hi)
{
  int s = hi - lo, c, chi;
  if (i < 0 || i >= nm_coll_tree_count(t, lo, hi))
    return -1;
  switch (t->kind) {
  case NM_COLL_TREE_FLAT:
    c = lo + 1 + i;
    chi = c + 1;
    break;
  case NM_COLL_TREE_CHAIN:
    c = lo + 1;
    chi = hi;
    break;
  case NM_COLL_TREE_BINARY: {
    int left = s / 2; /* = ceil((s - 1) / 2): the left subtree is never the smaller one */
    c = i == 0 ? lo + 1 : lo + 1 + left;
    chi = i == 0 ? lo + 1 + left : hi;
    break;
  }
  default: {
    /* Highest level first (largest subtrees), then lower levels, digit d = 1..k-1 within a level. */
    int k = t->radix, top;
    int pw = nm_coll_knomial_top(s, k, &top), d;
    if (i < top) {
      d = i + 1;
    } else {
      int r = i - top;
      for (int l = 0; l <= r / (k - 1); l++)
        pw /= k;
      d = 1 + r % (k - 1);
    }
    c = lo + d * pw;
    chi = (long long)lo + (long long)(d + 1) * pw < hi ? lo + (d + 1) * pw : hi;
    break;
  }
  }
  if (child_hi)
    *child_hi = chi;
  return c;
}

void nm_coll_tree_node(const struct nm_coll_tree_s *t, int v, struct nm_coll_tree_node_s *node)
{
  int lo = 0, hi = t->n, parent = -1;
  switch (t->kind) {
  case NM_COLL_TREE_FLAT:
    if (v > 0) {
      parent = 0;
      lo = v;
      hi = v + 1;
    }
    break;
  case NM_COLL_TREE_CHAIN:
    parent = v - 1;
    lo = v;
    break;
  case NM_COLL_TREE_BINARY:
    while (lo != v) {
      int left = (hi - lo) / 2;
      parent = lo;
      if (v < lo + 1 + left) {
        hi = lo + 1 + left;
        lo = lo + 1;
      } else {
        lo = lo + 1 + left;
      }
    }
    break;
  default:
    /* The child holding v is at offset d k^j with k^j the largest power <= v - lo and d its leading digit. */
    while (lo != v) {
      int off = v - lo, pw = 1, k = t->radix;
      while ((long long)pw * k <= off)
        pw *= k;
      int d = off / pw;
      parent = lo;
      if ((long long)lo + (long long)(d + 1) * pw < hi)
        hi = lo + (d + 1) * pw;
      lo = lo + d * pw;
    }
    break;
  }
  node->vrank = v;
  node->parent = parent;
  node->hi = hi;
  node->n_children = nm_coll_tree_count(t, lo, hi);
}

int nm_coll_tree_child(const struct nm_coll_tree_s *t, const struct nm_coll_tree_node_s *node, int i, int *child_hi)
{
  return nm_coll_tree_child_of(t, node->vrank, node->hi, i, child_hi);
}
