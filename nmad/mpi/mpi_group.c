/**
 * @file mpi_group.c
 * @brief MPI groups (MPI-3.1 section 6.3): ordered sets of processes, kept as arrays of world ranks.
 *
 * A group is immutable once built, so every operation builds a new array; set operations use a scratch map
 * indexed by world rank (O(world_size) per call, no hashing). MPI_GROUP_EMPTY is a predefined object (handle 1)
 * and is what every operation returns when its result is empty, as Open MPI and MPICH do; freeing it only
 * resets the caller's handle. Groups have no communicator, so their errors go to MPI_COMM_WORLD's handler.
 */
#include "nm_mpi_private.h"
#include <stdlib.h>
#include <string.h>

/** The predefined empty group: a constant (DESIGN.md rule 1), never written, never freed. */
static const struct nm_mpi_group_s nm_mpi_group_empty = { .refcount = 1, .size = 0, .world = NULL };

struct nm_mpi_group_s *nm_mpi_group_get(MPI_Group g)
{
  if (g == MPI_GROUP_EMPTY)
    return (struct nm_mpi_group_s *)&nm_mpi_group_empty;
  return nm_mpi_table_get(&nm_mpi.groups, g);
}

MPI_Group nm_mpi_group_new(int size, const int *world)
{
  if (size <= 0)
    return MPI_GROUP_EMPTY;
  struct nm_mpi_group_s *g = malloc(sizeof(*g));
  if (!g)
    return MPI_GROUP_NULL;
  g->world = malloc(sizeof(int) * (size_t)size);
  if (!g->world) {
    free(g);
    return MPI_GROUP_NULL;
  }
  memcpy(g->world, world, sizeof(int) * (size_t)size);
  g->refcount = 1;
  g->size = size;
  int h = nm_mpi_table_add(&nm_mpi.groups, g);
  if (h < 0) {
    free(g->world);
    free(g);
    return MPI_GROUP_NULL;
  }
  return h;
}

static void nm_mpi_group_destroy(MPI_Group h)
{
  struct nm_mpi_group_s *g = nm_mpi_table_get(&nm_mpi.groups, h);
  if (!g)
    return;
  nm_mpi_table_remove(&nm_mpi.groups, h);
  free(g->world);
  free(g);
}

/** Error of a group function (no communicator: MPI_COMM_WORLD's handler). */
static int nm_mpi_group_err(int code, const char *fn)
{
  return nm_mpi_error(MPI_COMM_WORLD, code, fn);
}

/** Builds the result handle of an operation, or reports an allocation failure. */
static int nm_mpi_group_result(int size, const int *world, MPI_Group *newgroup, const char *fn)
{
  MPI_Group h = nm_mpi_group_new(size, world);
  if (h == MPI_GROUP_NULL)
    return nm_mpi_group_err(MPI_ERR_NO_MEM, fn);
  *newgroup = h;
  return MPI_SUCCESS;
}

/** Scratch map world rank -> position + 1 in @p g (0 = absent). Caller frees. NULL if out of memory. */
static int *nm_mpi_group_map(const struct nm_mpi_group_s *g)
{
  int *map = calloc((size_t)(nm_mpi.world_size > 0 ? nm_mpi.world_size : 1), sizeof(int));
  if (!map)
    return NULL;
  for (int i = 0; i < g->size; i++)
    if (g->world[i] >= 0 && g->world[i] < nm_mpi.world_size)
      map[g->world[i]] = i + 1;
  return map;
}

NM_MPI_ALIAS(Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (!size)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  *size = g->size;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (!rank)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  *rank = MPI_UNDEFINED;
  for (int i = 0; i < g->size; i++)
    if (g->world[i] == nm_mpi.world_rank) {
      *rank = i;
      break;
    }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (n < 0 || n > g->size || (n > 0 && !ranks) || !newgroup)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  if (n == 0) {
    *newgroup = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  int *world = malloc(sizeof(int) * (size_t)n);
  char *seen = calloc((size_t)g->size, 1);
  int rc = MPI_SUCCESS;
  if (!world || !seen) {
    rc = MPI_ERR_NO_MEM;
  } else {
    for (int i = 0; i < n; i++) {
      if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]]) { /* out of range or listed twice */
        rc = MPI_ERR_RANK;
        break;
      }
      seen[ranks[i]] = 1;
      world[i] = g->world[ranks[i]];
    }
  }
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_group_result(n, world, newgroup, __func__);
  else
    rc = nm_mpi_group_err(rc, __func__);
  free(world);
  free(seen);
  return rc;
}

NM_MPI_ALIAS(Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (n < 0 || n > g->size || (n > 0 && !ranks) || !newgroup)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  char *drop = calloc((size_t)g->size + 1, 1);
  int *world = malloc(sizeof(int) * ((size_t)g->size + 1));
  int rc = MPI_SUCCESS, m = 0;
  if (!drop || !world) {
    rc = MPI_ERR_NO_MEM;
  } else {
    for (int i = 0; i < n; i++) {
      if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
        rc = MPI_ERR_RANK;
        break;
      }
      drop[ranks[i]] = 1;
    }
    for (int i = 0; rc == MPI_SUCCESS && i < g->size; i++)
      if (!drop[i])
        world[m++] = g->world[i];
  }
  if (rc == MPI_SUCCESS)
    rc = nm_mpi_group_result(m, world, newgroup, __func__);
  else
    rc = nm_mpi_group_err(rc, __func__);
  free(drop);
  free(world);
  return rc;
}

/**
 * Expands @p n (first, last, stride) triplets over a group of @p size into a list of ranks (MPI-3.1 6.3.2).
 * Every rank must be in range and appear once. @return MPI_SUCCESS with *out (malloc'd) and *count, or an
 * error class.
 */
static int nm_mpi_group_expand_ranges(int size, int n, int ranges[][3], int **out, int *count)
{
  char *seen = calloc((size_t)size + 1, 1);
  int *list = malloc(sizeof(int) * ((size_t)size + 1));
  int m = 0;
  if (!seen || !list) {
    free(seen);
    free(list);
    return MPI_ERR_NO_MEM;
  }
  for (int i = 0; i < n; i++) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0 || first < 0 || first >= size || last < 0 || last >= size ||
        (stride > 0 && first > last) || (stride < 0 && first < last)) {
      free(seen);
      free(list);
      return stride == 0 ? MPI_ERR_ARG : MPI_ERR_RANK;
    }
    /* Walk with a long long so a huge stride cannot overflow. */
    for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (seen[r]) {
        free(seen);
        free(list);
        return MPI_ERR_RANK;
      }
      seen[r] = 1;
      list[m++] = (int)r;
    }
  }
  free(seen);
  *out = list;
  *count = m;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (n < 0 || (n > 0 && !ranges) || !newgroup)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  int *list = NULL, m = 0;
  int rc = nm_mpi_group_expand_ranges(g->size, n, ranges, &list, &m);
  if (rc != MPI_SUCCESS)
    return nm_mpi_group_err(rc, __func__);
  for (int i = 0; i < m; i++)
    list[i] = g->world[list[i]];
  rc = nm_mpi_group_result(m, list, newgroup, __func__);
  free(list);
  return rc;
}

NM_MPI_ALIAS(Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g = nm_mpi_group_get(group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (n < 0 || (n > 0 && !ranges) || !newgroup)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  int *list = NULL, m = 0;
  int rc = nm_mpi_group_expand_ranges(g->size, n, ranges, &list, &m);
  if (rc != MPI_SUCCESS)
    return nm_mpi_group_err(rc, __func__);
  char *drop = calloc((size_t)g->size + 1, 1);
  int *world = malloc(sizeof(int) * ((size_t)g->size + 1));
  if (!drop || !world) {
    free(list);
    free(drop);
    free(world);
    return nm_mpi_group_err(MPI_ERR_NO_MEM, __func__);
  }
  for (int i = 0; i < m; i++)
    drop[list[i]] = 1;
  int k = 0;
  for (int i = 0; i < g->size; i++)
    if (!drop[i])
      world[k++] = g->world[i];
  rc = nm_mpi_group_result(k, world, newgroup, __func__);
  free(list);
  free(drop);
  free(world);
  return rc;
}

/** Kinds of set operations (MPI-3.1 6.3.2): all keep group1's order, then (union) group2's newcomers. */
enum nm_mpi_group_setop_e { NM_MPI_GROUP_UNION, NM_MPI_GROUP_INTERSECTION, NM_MPI_GROUP_DIFFERENCE };

static int nm_mpi_group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op, const char *fn)
{
  struct nm_mpi_group_s *g1 = nm_mpi_group_get(group1), *g2 = nm_mpi_group_get(group2);
  if (!g1 || !g2)
    return nm_mpi_group_err(MPI_ERR_GROUP, fn);
  if (!newgroup)
    return nm_mpi_group_err(MPI_ERR_ARG, fn);
  int *in2 = nm_mpi_group_map(g2);
  int *world = malloc(sizeof(int) * ((size_t)g1->size + (size_t)g2->size + 1));
  int *in1 = op == NM_MPI_GROUP_UNION ? nm_mpi_group_map(g1) : NULL;
  if (!in2 || !world || (op == NM_MPI_GROUP_UNION && !in1)) {
    free(in2);
    free(in1);
    free(world);
    return nm_mpi_group_err(MPI_ERR_NO_MEM, fn);
  }
  int m = 0;
  for (int i = 0; i < g1->size; i++) {
    int w = g1->world[i];
    int present = w >= 0 && w < nm_mpi.world_size && in2[w];
    if (op == NM_MPI_GROUP_UNION || (op == NM_MPI_GROUP_INTERSECTION && present) ||
        (op == NM_MPI_GROUP_DIFFERENCE && !present))
      world[m++] = w;
  }
  if (op == NM_MPI_GROUP_UNION)
    for (int i = 0; i < g2->size; i++) {
      int w = g2->world[i];
      if (!(w >= 0 && w < nm_mpi.world_size && in1[w]))
        world[m++] = w;
    }
  int rc = nm_mpi_group_result(m, world, newgroup, fn);
  free(in2);
  free(in1);
  free(world);
  return rc;
}

NM_MPI_ALIAS(Group_union)
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  return nm_mpi_group_setop(group1, group2, newgroup, NM_MPI_GROUP_UNION, __func__);
}

NM_MPI_ALIAS(Group_intersection)
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  return nm_mpi_group_setop(group1, group2, newgroup, NM_MPI_GROUP_INTERSECTION, __func__);
}

NM_MPI_ALIAS(Group_difference)
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
  NM_MPI_LOCKED();
  return nm_mpi_group_setop(group1, group2, newgroup, NM_MPI_GROUP_DIFFERENCE, __func__);
}

NM_MPI_ALIAS(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g1 = nm_mpi_group_get(group1), *g2 = nm_mpi_group_get(group2);
  if (!g1 || !g2)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  for (int i = 0; i < n; i++)
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
      return nm_mpi_group_err(MPI_ERR_RANK, __func__);
  int *in2 = nm_mpi_group_map(g2);
  if (!in2)
    return nm_mpi_group_err(MPI_ERR_NO_MEM, __func__);
  for (int i = 0; i < n; i++) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    int w = g1->world[ranks1[i]];
    ranks2[i] = (w >= 0 && w < nm_mpi.world_size && in2[w]) ? in2[w] - 1 : MPI_UNDEFINED;
  }
  free(in2);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Group_compare)
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
  NM_MPI_LOCKED();
  struct nm_mpi_group_s *g1 = nm_mpi_group_get(group1), *g2 = nm_mpi_group_get(group2);
  if (!g1 || !g2)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (!result)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  if (g1->size != g2->size) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  if (g1->size == 0 || !memcmp(g1->world, g2->world, sizeof(int) * (size_t)g1->size)) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  int *in2 = nm_mpi_group_map(g2);
  if (!in2)
    return nm_mpi_group_err(MPI_ERR_NO_MEM, __func__);
  *result = MPI_SIMILAR; /* same size and every member of g1 in g2 (members are distinct) */
  for (int i = 0; i < g1->size; i++) {
    int w = g1->world[i];
    if (!(w >= 0 && w < nm_mpi.world_size && in2[w])) {
      *result = MPI_UNEQUAL;
      break;
    }
  }
  free(in2);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
  NM_MPI_LOCKED();
  if (!group)
    return nm_mpi_group_err(MPI_ERR_ARG, __func__);
  if (*group == MPI_GROUP_EMPTY) { /* predefined: returned by operations with an empty result */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  }
  struct nm_mpi_group_s *g = nm_mpi_table_get(&nm_mpi.groups, *group);
  if (!g)
    return nm_mpi_group_err(MPI_ERR_GROUP, __func__);
  if (--g->refcount <= 0)
    nm_mpi_group_destroy(*group);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}


int nm_mpi_group_init(void)
{
  nm_mpi_table_init(&nm_mpi.groups, MPI_GROUP_EMPTY + 1);
  return nm_mpi_table_set(&nm_mpi.groups, MPI_GROUP_EMPTY, (void *)&nm_mpi_group_empty) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

void nm_mpi_group_finalize(void)
{
  for (int h = nm_mpi.groups.first; h < nm_mpi.groups.n; h++)
    nm_mpi_group_destroy(h);
  nm_mpi_table_destroy(&nm_mpi.groups);
}
