/**
 * @file mpi_unsupported.c
 * @brief One-sided communication (windows), MPI-IO (files) and distributed graph topologies: present so that
 *        programs link, failing cleanly with MPI_ERR_UNSUPPORTED_OPERATION through the error handler of the
 *        communicator given (else MPI_COMM_WORLD's: windows and files have no error handler of their own
 *        here, and MPI_FILE_NULL's default handler is MPI_ERRORS_RETURN in the standard but files cannot exist).
 *
 * Output handles are set to their null value so that a program that ignores the error does not use garbage.
 */
#include "nm_mpi_private.h"
#include <stddef.h>

#define NM_MPI_UNSUPPORTED(comm) nm_mpi_error((comm), MPI_ERR_UNSUPPORTED_OPERATION, __func__)

/* ---------------------------------------------------------------- windows and RMA */

NM_MPI_ALIAS(Win_create)
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
  (void)base, (void)size, (void)disp_unit, (void)info;
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
  (void)size, (void)disp_unit, (void)info;
  if (baseptr)
    *(void **)baseptr = NULL;
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Win_create_dynamic)
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
  (void)info;
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Win_attach)
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
  (void)win, (void)base, (void)size;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_detach)
int PMPI_Win_detach(MPI_Win win, const void *base)
{
  (void)win, (void)base;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_free)
int PMPI_Win_free(MPI_Win *win)
{
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_fence)
int PMPI_Win_fence(int assert, MPI_Win win)
{
  (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_lock)
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
  (void)lock_type, (void)rank, (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_unlock)
int PMPI_Win_unlock(int rank, MPI_Win win)
{
  (void)rank, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Put)
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp;
  (void)target_count, (void)target_datatype, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Get)
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp;
  (void)target_count, (void)target_datatype, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Accumulate)
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp;
  (void)target_count, (void)target_datatype, (void)op, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

/* ---------------------------------------------------------------- distributed graphs */

NM_MPI_ALIAS(Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph)
{
  (void)n, (void)sources, (void)degrees, (void)destinations, (void)weights, (void)info, (void)reorder;
  if (comm_dist_graph)
    *comm_dist_graph = MPI_COMM_NULL;
  return NM_MPI_UNSUPPORTED(comm_old);
}

NM_MPI_ALIAS(Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
  (void)indegree, (void)sources, (void)sourceweights, (void)outdegree, (void)destinations, (void)destweights;
  (void)info, (void)reorder;
  if (comm_dist_graph)
    *comm_dist_graph = MPI_COMM_NULL;
  return NM_MPI_UNSUPPORTED(comm_old);
}

NM_MPI_ALIAS(Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
  (void)indegree, (void)outdegree, (void)weighted;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
  (void)maxindegree, (void)sources, (void)sourceweights, (void)maxoutdegree, (void)destinations,
    (void)destweights;
  return NM_MPI_UNSUPPORTED(comm);
}

/* ---------------------------------------------------------------- files */

NM_MPI_ALIAS(File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
  (void)comm, (void)filename, (void)amode, (void)info;
  if (fh)
    *fh = MPI_FILE_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_close)
int PMPI_File_close(MPI_File *fh)
{
  if (fh)
    *fh = MPI_FILE_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
  (void)filename, (void)info;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_read)
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
  (void)fh, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_write)
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
  (void)fh, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_read_at)
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
  (void)fh, (void)offset, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_write_at)
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
  (void)fh, (void)offset, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_set_view)
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                       MPI_Info info)
{
  (void)fh, (void)disp, (void)etype, (void)filetype, (void)datarep, (void)info;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_get_size)
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
  (void)fh, (void)size;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}
