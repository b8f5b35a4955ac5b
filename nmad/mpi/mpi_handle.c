/* Handle tables of the MPI shim: integer handles index arrays of object pointers. Predefined handles sit below
 * `first`; invalid, freed or out-of-range handles give NULL (never a crash), which callers turn into
 * MPI_ERR_COMM / MPI_ERR_TYPE / ... */
#include "nm_mpi_private.h"
#include <stdlib.h>
#include <string.h>

void nm_mpi_table_init(struct nm_mpi_table_s *t, int first)
{
  memset(t, 0, sizeof(*t));
  t->first = first;
  t->n = first;
}

void nm_mpi_table_destroy(struct nm_mpi_table_s *t)
{
  free(t->obj);
  memset(t, 0, sizeof(*t));
}

static int nm_mpi_table_reserve(struct nm_mpi_table_s *t, int need)
{
  if (need <= t->cap)
    return 0;
  int cap = t->cap ? t->cap : 64;
  while (cap < need)
    cap *= 2;
  void **obj = realloc(t->obj, sizeof(void *) * (size_t)cap);
  if (!obj)
    return -1;
  memset(obj + t->cap, 0, sizeof(void *) * (size_t)(cap - t->cap));
  t->obj = obj;
  t->cap = cap;
  return 0;
}

int nm_mpi_table_add(struct nm_mpi_table_s *t, void *obj)
{
  /* Reuse a freed slot near the end first; a linear scan is fine for the object counts MPI programs use. */
  for (int h = t->first; h < t->n; h++)
    if (!t->obj[h]) {
      t->obj[h] = obj;
      return h;
    }
  if (nm_mpi_table_reserve(t, t->n + 1))
    return -1;
  t->obj[t->n] = obj;
  return t->n++;
}

int nm_mpi_table_set(struct nm_mpi_table_s *t, int handle, void *obj)
{
  if (handle < 0 || nm_mpi_table_reserve(t, handle + 1))
    return -1;
  t->obj[handle] = obj;
  if (handle >= t->n)
    t->n = handle + 1;
  return 0;
}

void nm_mpi_table_remove(struct nm_mpi_table_s *t, int handle)
{
  if (handle > 0 && handle < t->n && handle < t->cap)
    t->obj[handle] = NULL;
}
