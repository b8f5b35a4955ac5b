/**
 * @file mpi_scratch.c
 * @brief Scratch memory of the collectives' schedules (work buffers of the reductions, packing buffers), kept
 * for reuse from one collective to the next.
 *
 * Why: a schedule's buffers of 128 KiB and more come from malloc's mmap (or from a heap top that free() trims),
 * so every collective would fault fresh pages in, and the peer's single-copy transfer into them would fault too.
 * Measured on this host (doc/performance.md, run I): MPI_Allreduce of 256 KiB at 2 ranks took 1.7 ms instead of
 * 0.1 ms.
 *
 * How: buffers of NM_MPI_SCRATCH_MIN bytes and more are rounded up to a power of two; a freed one goes on its
 * class's list, as long as the cached total stays under NM_MPI_SCRATCH_CAP; a request takes the most recently
 * freed buffer of its class (cache-warm). Smaller buffers are plain malloc/free: malloc's arenas reuse them well.
 *
 * Thread-safety: callers hold the core lock when a progress thread runs (schedules are built in the public
 * functions and freed there or in monitors, both under it).
 */
#include "nm_mpi_private.h"
#include <stdlib.h>

#define NM_MPI_SCRATCH_MIN_LOG 16                          /* 64 KiB */
#define NM_MPI_SCRATCH_MIN (1ULL << NM_MPI_SCRATCH_MIN_LOG)
#define NM_MPI_SCRATCH_CAP (64ULL << 20)                   /* bytes kept while unused */

/* A free buffer's first bytes link it to the next free one of its class. */
struct nm_mpi_scratch_free_s {
  struct nm_mpi_scratch_free_s *next;
};

/** Class of a buffer of @p len bytes (>= NM_MPI_SCRATCH_MIN): its size is 2^(class + NM_MPI_SCRATCH_MIN_LOG);
 *  NM_MPI_SCRATCH_CLASSES when it is larger than every class. */
static int nm_mpi_scratch_class(size_t len)
{
  int c = 0;
  while (c < NM_MPI_SCRATCH_CLASSES && (NM_MPI_SCRATCH_MIN << c) < len)
    c++;
  return c;
}

void *nm_mpi_scratch_get(size_t len)
{
  if (len < NM_MPI_SCRATCH_MIN)
    return malloc(len);
  int c = nm_mpi_scratch_class(len);
  if (c >= NM_MPI_SCRATCH_CLASSES)
    return malloc(len); /* beyond every class: never cached (nm_mpi_scratch_put() frees it alike) */
  struct nm_mpi_scratch_s *sc = &nm_mpi.scratch;
  struct nm_mpi_scratch_free_s *f = sc->free[c];
  if (f) {
    sc->free[c] = f->next;
    sc->cached -= NM_MPI_SCRATCH_MIN << c;
    return f;
  }
  return malloc(NM_MPI_SCRATCH_MIN << c);
}

void nm_mpi_scratch_put(void *p, size_t len)
{
  if (!p)
    return;
  int c = len < NM_MPI_SCRATCH_MIN ? -1 : nm_mpi_scratch_class(len);
  struct nm_mpi_scratch_s *sc = &nm_mpi.scratch;
  if (c < 0 || c >= NM_MPI_SCRATCH_CLASSES || sc->cached + (NM_MPI_SCRATCH_MIN << c) > NM_MPI_SCRATCH_CAP) {
    free(p);
    return;
  }
  struct nm_mpi_scratch_free_s *f = p;
  f->next = sc->free[c];
  sc->free[c] = f;
  sc->cached += NM_MPI_SCRATCH_MIN << c;
}

void nm_mpi_scratch_finalize(void)
{
  struct nm_mpi_scratch_s *sc = &nm_mpi.scratch;
  for (int c = 0; c < NM_MPI_SCRATCH_CLASSES; c++) {
    while (sc->free[c]) {
      struct nm_mpi_scratch_free_s *f = sc->free[c];
      sc->free[c] = f->next;
      free(f);
    }
  }
  sc->cached = 0;
}
