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
  NM_MPI_LOCKED();
  (void)base, (void)size, (void)disp_unit, (void)info;
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
  NM_MPI_LOCKED();
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
  NM_MPI_LOCKED();
  (void)info;
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Win_attach)
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
  NM_MPI_LOCKED();
  (void)win, (void)base, (void)size;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_detach)
int PMPI_Win_detach(MPI_Win win, const void *base)
{
  NM_MPI_LOCKED();
  (void)win, (void)base;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_free)
int PMPI_Win_free(MPI_Win *win)
{
  NM_MPI_LOCKED();
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_fence)
int PMPI_Win_fence(int assert, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_lock)
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)lock_type, (void)rank, (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_unlock)
int PMPI_Win_unlock(int rank, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)rank, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Put)
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp;
  (void)target_count, (void)target_datatype, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Get)
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp;
  (void)target_count, (void)target_datatype, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Accumulate)
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
  NM_MPI_LOCKED();
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
  NM_MPI_LOCKED();
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
  NM_MPI_LOCKED();
  (void)indegree, (void)sources, (void)sourceweights, (void)outdegree, (void)destinations, (void)destweights;
  (void)info, (void)reorder;
  if (comm_dist_graph)
    *comm_dist_graph = MPI_COMM_NULL;
  return NM_MPI_UNSUPPORTED(comm_old);
}

NM_MPI_ALIAS(Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
  NM_MPI_LOCKED();
  (void)indegree, (void)outdegree, (void)weighted;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
  NM_MPI_LOCKED();
  (void)maxindegree, (void)sources, (void)sourceweights, (void)maxoutdegree, (void)destinations,
    (void)destweights;
  return NM_MPI_UNSUPPORTED(comm);
}

/* ---------------------------------------------------------------- files */

NM_MPI_ALIAS(File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
  NM_MPI_LOCKED();
  (void)comm, (void)filename, (void)amode, (void)info;
  if (fh)
    *fh = MPI_FILE_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_close)
int PMPI_File_close(MPI_File *fh)
{
  NM_MPI_LOCKED();
  if (fh)
    *fh = MPI_FILE_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
  NM_MPI_LOCKED();
  (void)filename, (void)info;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_read)
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
  NM_MPI_LOCKED();
  (void)fh, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_write)
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
  NM_MPI_LOCKED();
  (void)fh, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_read_at)
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
  NM_MPI_LOCKED();
  (void)fh, (void)offset, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_write_at)
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
  NM_MPI_LOCKED();
  (void)fh, (void)offset, (void)buf, (void)count, (void)datatype, (void)status;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_set_view)
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                       MPI_Info info)
{
  NM_MPI_LOCKED();
  (void)fh, (void)disp, (void)etype, (void)filetype, (void)datarep, (void)info;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_get_size)
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
  NM_MPI_LOCKED();
  (void)fh, (void)size;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

/* ---------------------------------------------------------------- added so that third-party suites link
 * (OSU's one-sided and neighborhood benchmarks, the MPICH test suite's mtest helpers, IMB-EXT/RMA): the rest of
 * MPI-3.1 one-sided communication, window/datatype attributes and error handlers, neighborhood collectives
 * (distributed graphs cannot be created), graph topologies, dynamic processes, generalized requests, darrays and
 * user error classes. Each one fails with MPI_ERR_UNSUPPORTED_OPERATION through the error handler of the
 * communicator given (MPI_COMM_WORLD's otherwise), after setting its output handles to their null value. */

NM_MPI_ALIAS(Win_allocate_shared)
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
  NM_MPI_LOCKED();
  (void)size, (void)disp_unit, (void)info, (void)baseptr, (void)win;
  if (baseptr)
    *(void **)baseptr = NULL;
  if (win)
    *win = MPI_WIN_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Win_shared_query)
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
  NM_MPI_LOCKED();
  (void)win, (void)rank, (void)size, (void)disp_unit, (void)baseptr;
  if (baseptr)
    *(void **)baseptr = NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_get_group)
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
  NM_MPI_LOCKED();
  (void)win, (void)group;
  if (group)
    *group = MPI_GROUP_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_post)
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)group, (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_start)
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)group, (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_complete)
int PMPI_Win_complete(MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_wait)
int PMPI_Win_wait(MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_test)
int PMPI_Win_test(MPI_Win win, int *flag)
{
  NM_MPI_LOCKED();
  (void)win, (void)flag;
  if (flag)
    *flag = 0;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_lock_all)
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)assert, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_unlock_all)
int PMPI_Win_unlock_all(MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_flush)
int PMPI_Win_flush(int rank, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)rank, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_flush_all)
int PMPI_Win_flush_all(MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_flush_local)
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)rank, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_flush_local_all)
int PMPI_Win_flush_local_all(MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_sync)
int PMPI_Win_sync(MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Get_accumulate)
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)result_addr, (void)result_count, (void)result_datatype, (void)target_rank, (void)target_disp, (void)target_count, (void)target_datatype, (void)op, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Fetch_and_op)
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)result_addr, (void)datatype, (void)target_rank, (void)target_disp, (void)op, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Compare_and_swap)
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)compare_addr, (void)result_addr, (void)datatype, (void)target_rank, (void)target_disp, (void)win;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Rput)
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp, (void)target_count, (void)target_datatype, (void)win, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Rget)
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp, (void)target_count, (void)target_datatype, (void)win, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Raccumulate)
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)target_rank, (void)target_disp, (void)target_count, (void)target_datatype, (void)op, (void)win, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Rget_accumulate)
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)origin_addr, (void)origin_count, (void)origin_datatype, (void)result_addr, (void)result_count, (void)result_datatype, (void)target_rank, (void)target_disp, (void)target_count, (void)target_datatype, (void)op, (void)win, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_set_name)
int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
  NM_MPI_LOCKED();
  (void)win, (void)win_name;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_get_name)
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
  NM_MPI_LOCKED();
  (void)win, (void)win_name, (void)resultlen;
  if (win_name)
    win_name[0] = '\0';
  if (resultlen)
    *resultlen = 0;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_create_errhandler)
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  (void)win_errhandler_fn, (void)errhandler;
  if (errhandler)
    *errhandler = MPI_ERRHANDLER_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_set_errhandler)
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
  NM_MPI_LOCKED();
  (void)win, (void)errhandler;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_get_errhandler)
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  (void)win, (void)errhandler;
  if (errhandler)
    *errhandler = MPI_ERRHANDLER_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_call_errhandler)
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
  NM_MPI_LOCKED();
  (void)win, (void)errorcode;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_create_keyval)
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn, MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state)
{
  NM_MPI_LOCKED();
  (void)win_copy_attr_fn, (void)win_delete_attr_fn, (void)win_keyval, (void)extra_state;
  if (win_keyval)
    *win_keyval = MPI_KEYVAL_INVALID;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_free_keyval)
int PMPI_Win_free_keyval(int *win_keyval)
{
  NM_MPI_LOCKED();
  (void)win_keyval;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_set_attr)
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
  NM_MPI_LOCKED();
  (void)win, (void)win_keyval, (void)attribute_val;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_get_attr)
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
  NM_MPI_LOCKED();
  (void)win, (void)win_keyval, (void)attribute_val, (void)flag;
  if (flag)
    *flag = 0;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_delete_attr)
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
  NM_MPI_LOCKED();
  (void)win, (void)win_keyval;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_set_info)
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
  NM_MPI_LOCKED();
  (void)win, (void)info;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Win_get_info)
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
  NM_MPI_LOCKED();
  (void)win, (void)info_used;
  if (info_used)
    *info_used = MPI_INFO_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_create_errhandler)
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  (void)file_errhandler_fn, (void)errhandler;
  if (errhandler)
    *errhandler = MPI_ERRHANDLER_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_set_errhandler)
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
  NM_MPI_LOCKED();
  (void)file, (void)errhandler;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(File_get_errhandler)
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  (void)file, (void)errhandler;
  if (errhandler)
    *errhandler = MPI_ERRHANDLER_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Type_create_keyval)
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn, MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state)
{
  NM_MPI_LOCKED();
  (void)type_copy_attr_fn, (void)type_delete_attr_fn, (void)type_keyval, (void)extra_state;
  if (type_keyval)
    *type_keyval = MPI_KEYVAL_INVALID;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Type_free_keyval)
int PMPI_Type_free_keyval(int *type_keyval)
{
  NM_MPI_LOCKED();
  (void)type_keyval;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Type_set_attr)
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
  NM_MPI_LOCKED();
  (void)datatype, (void)type_keyval, (void)attribute_val;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Type_get_attr)
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
  NM_MPI_LOCKED();
  (void)datatype, (void)type_keyval, (void)attribute_val, (void)flag;
  if (flag)
    *flag = 0;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Type_delete_attr)
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
  NM_MPI_LOCKED();
  (void)datatype, (void)type_keyval;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  (void)size, (void)rank, (void)ndims, (void)array_of_gsizes, (void)array_of_distribs, (void)array_of_dargs, (void)array_of_psizes, (void)order, (void)oldtype, (void)newtype;
  if (newtype)
    *newtype = MPI_DATATYPE_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Add_error_class)
int PMPI_Add_error_class(int *errorclass)
{
  NM_MPI_LOCKED();
  (void)errorclass;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Add_error_code)
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
  NM_MPI_LOCKED();
  (void)errorclass, (void)errorcode;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Add_error_string)
int PMPI_Add_error_string(int errorcode, const char *string)
{
  NM_MPI_LOCKED();
  (void)errorcode, (void)string;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)query_fn, (void)free_fn, (void)cancel_fn, (void)extra_state, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Grequest_complete)
int PMPI_Grequest_complete(MPI_Request request)
{
  NM_MPI_LOCKED();
  (void)request;
  return NM_MPI_UNSUPPORTED(MPI_COMM_WORLD);
}

NM_MPI_ALIAS(Comm_spawn)
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
  NM_MPI_LOCKED();
  (void)command, (void)argv, (void)maxprocs, (void)info, (void)root, (void)intercomm, (void)array_of_errcodes;
  if (intercomm)
    *intercomm = MPI_COMM_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Graph_create)
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *comm_graph)
{
  NM_MPI_LOCKED();
  (void)nnodes, (void)index, (void)edges, (void)reorder, (void)comm_graph;
  if (comm_graph)
    *comm_graph = MPI_COMM_NULL;
  return NM_MPI_UNSUPPORTED(comm_old);
}

NM_MPI_ALIAS(Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
  NM_MPI_LOCKED();
  (void)nnodes, (void)nedges;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Graph_get)
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
  NM_MPI_LOCKED();
  (void)maxindex, (void)maxedges, (void)index, (void)edges;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
  NM_MPI_LOCKED();
  (void)rank, (void)nneighbors;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
  NM_MPI_LOCKED();
  (void)rank, (void)maxneighbors, (void)neighbors;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Neighbor_allgather)
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount, (void)recvtype;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Neighbor_allgatherv)
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcounts, (void)displs, (void)recvtype;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Neighbor_alltoall)
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount, (void)recvtype;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Neighbor_alltoallv)
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcounts, (void)sdispls, (void)sendtype, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtype;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Neighbor_alltoallw)
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcounts, (void)sdispls, (void)sendtypes, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtypes;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Ineighbor_allgather)
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount, (void)recvtype, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Ineighbor_allgatherv)
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcounts, (void)displs, (void)recvtype, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Ineighbor_alltoall)
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount, (void)recvtype, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Ineighbor_alltoallv)
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcounts, (void)sdispls, (void)sendtype, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtype, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}

NM_MPI_ALIAS(Ineighbor_alltoallw)
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  (void)sendbuf, (void)sendcounts, (void)sdispls, (void)sendtypes, (void)recvbuf, (void)recvcounts, (void)rdispls, (void)recvtypes, (void)request;
  if (request)
    *request = MPI_REQUEST_NULL;
  return NM_MPI_UNSUPPORTED(comm);
}
