/**
 * @file mpi.h
 * @brief nmad's MPI shim: the MPI-3.1 subset listed in doc/mpi.md, on top of nmad's sendrecv and collectives.
 *
 * Handles are integers (as in MPICH), so predefined handles are compile-time constants. Every MPI_X function
 * also exists as PMPI_X (profiling interface): MPI_X is a weak alias of PMPI_X.
 * Extensions are prefixed MPIX_ (dynamic broadcast, send priorities, access to the nmad session and gates).
 */
#ifndef NM_MPI_H
#define NM_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define NMAD_MPI 1

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Group;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/** Status: the three public fields of the standard, then private ones. */
typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  /* private; also under MadMPI's (NewMadeleine's MPI) names `cancelled` and `size`, which StarPU's NewMadeleine
   * back end fills (issue 16, doc/newmad.md): same storage, same layout */
  union { int nm_cancelled; int cancelled; };
  union { long long nm_count; long long size; }; /* bytes received */
} MPI_Status;

#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_BOTTOM ((void *)0)
#define MPI_UNWEIGHTED ((int *)1)
#define MPI_WEIGHTS_EMPTY ((int *)2)

/* Null and predefined handles */
#define MPI_COMM_NULL 0
#define MPI_COMM_WORLD 1
#define MPI_COMM_SELF 2
#define MPI_GROUP_NULL 0
#define MPI_GROUP_EMPTY 1
#define MPI_REQUEST_NULL 0
#define MPI_MESSAGE_NULL 0
#define MPI_MESSAGE_NO_PROC 1
#define MPI_INFO_NULL 0
#define MPI_INFO_ENV 1
#define MPI_WIN_NULL 0
#define MPI_FILE_NULL 0
#define MPI_ERRHANDLER_NULL 0
#define MPI_ERRORS_ARE_FATAL 1
#define MPI_ERRORS_RETURN 2

/* Predefined datatypes (values index the shim's datatype table; see nmad/mpi/mpi_datatype.c) */
#define MPI_DATATYPE_NULL 0
#define MPI_CHAR 1
#define MPI_SIGNED_CHAR 2
#define MPI_UNSIGNED_CHAR 3
#define MPI_BYTE 4
#define MPI_WCHAR 5
#define MPI_SHORT 6
#define MPI_UNSIGNED_SHORT 7
#define MPI_INT 8
#define MPI_UNSIGNED 9
#define MPI_LONG 10
#define MPI_UNSIGNED_LONG 11
#define MPI_LONG_LONG_INT 12
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG 13
#define MPI_FLOAT 14
#define MPI_DOUBLE 15
#define MPI_LONG_DOUBLE 16
#define MPI_INT8_T 17
#define MPI_INT16_T 18
#define MPI_INT32_T 19
#define MPI_INT64_T 20
#define MPI_UINT8_T 21
#define MPI_UINT16_T 22
#define MPI_UINT32_T 23
#define MPI_UINT64_T 24
#define MPI_C_BOOL 25
#define MPI_C_FLOAT_COMPLEX 26
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX 27
#define MPI_C_LONG_DOUBLE_COMPLEX 28
#define MPI_AINT 29
#define MPI_OFFSET 30
#define MPI_COUNT 31
#define MPI_PACKED 32
#define MPI_FLOAT_INT 33
#define MPI_DOUBLE_INT 34
#define MPI_LONG_INT 35
#define MPI_2INT 36
#define MPI_SHORT_INT 37
#define MPI_LONG_DOUBLE_INT 38
#define MPI_UB 39
#define MPI_LB 40
#define NM_MPI_PREDEFINED_TYPES 41 /* first derived datatype handle */

/* Predefined operations */
#define MPI_OP_NULL 0
#define MPI_MAX 1
#define MPI_MIN 2
#define MPI_SUM 3
#define MPI_PROD 4
#define MPI_LAND 5
#define MPI_BAND 6
#define MPI_LOR 7
#define MPI_BOR 8
#define MPI_LXOR 9
#define MPI_BXOR 10
#define MPI_MAXLOC 11
#define MPI_MINLOC 12
#define MPI_REPLACE 13
#define MPI_NO_OP 14
#define NM_MPI_PREDEFINED_OPS 15

/* Special values */
#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 256
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 256
#define MPI_MAX_INFO_VAL 1024
#define MPI_BSEND_OVERHEAD 128

#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128

/* Subarray and darray constructors (MPI-3.1 4.1.3, 4.1.4) */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* MPI_Type_match_size classes */
#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* Thread levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* Comparison results */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* Topologies and split types */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3
#define MPI_COMM_TYPE_SHARED 1

/* Predefined attribute keys (MPI_Comm_get_attr on MPI_COMM_WORLD) */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE 5
#define MPI_APPNUM 6
#define MPI_LASTUSEDCODE 7

/* Predefined window attribute keys and their values (windows are unsupported: these exist so that programs
 * that test for one-sided support compile) */
#define MPI_WIN_BASE 8
#define MPI_WIN_SIZE 9
#define MPI_WIN_DISP_UNIT 10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL 12
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2

/* Type combiners (MPI_Type_get_envelope) */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_STRUCT_INTEGER 11
#define MPI_COMBINER_STRUCT 12
#define MPI_COMBINER_SUBARRAY 13
#define MPI_COMBINER_DARRAY 14
#define MPI_COMBINER_F90_REAL 15
#define MPI_COMBINER_F90_COMPLEX 16
#define MPI_COMBINER_F90_INTEGER 17
#define MPI_COMBINER_RESIZED 18
#define MPI_COMBINER_HINDEXED_BLOCK 19

/* Error classes (the error codes the shim returns are these classes) */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_FILE 38
#define MPI_ERR_NOT_SAME 39
#define MPI_ERR_AMODE 40
#define MPI_ERR_UNSUPPORTED_DATAREP 41
#define MPI_ERR_UNSUPPORTED_OPERATION 42
#define MPI_ERR_NO_SUCH_FILE 43
#define MPI_ERR_FILE_EXISTS 44
#define MPI_ERR_BAD_FILE 45
#define MPI_ERR_ACCESS 46
#define MPI_ERR_NO_SPACE 47
#define MPI_ERR_QUOTA 48
#define MPI_ERR_READ_ONLY 49
#define MPI_ERR_FILE_IN_USE 50
#define MPI_ERR_DUP_DATAREP 51
#define MPI_ERR_CONVERSION 52
#define MPI_ERR_IO 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_ERR_PROC_ABORTED 58
#define MPI_ERR_LASTCODE 64

/* File modes (File_* functions are present but unsupported) */
#define MPI_MODE_RDONLY 2
#define MPI_MODE_RDWR 8
#define MPI_MODE_WRONLY 4
#define MPI_MODE_CREATE 1
#define MPI_MODE_EXCL 64
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235

/* Callbacks */
typedef void(MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm *comm, int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                           void *extra_state);
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)1)

/* Attribute callbacks of datatypes and windows, and the deprecated MPI-1 names (still used by test suites) */
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                                           void *extra_state);
typedef int(MPI_Win_copy_attr_function)(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                                        void *attribute_val_out, int *flag);
typedef int(MPI_Win_delete_attr_function)(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state);
typedef int(MPI_Copy_function)(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                               void *attribute_val_out, int *flag);
typedef int(MPI_Delete_function)(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef void(MPI_Handler_function)(MPI_Comm *comm, int *errcode, ...);
typedef void(MPI_Win_errhandler_function)(MPI_Win *win, int *errcode, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef void(MPI_File_errhandler_function)(MPI_File *file, int *errcode, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int(MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int(MPI_Grequest_free_function)(void *extra_state);
typedef int(MPI_Grequest_cancel_function)(void *extra_state, int complete);
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_DUP_FN ((MPI_Copy_function *)1)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function *)1)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function *)1)

/* Every function is declared as MPI_name and PMPI_name. */
#define NM_MPI_PROTO(ret, name, args) ret MPI_##name args; ret PMPI_##name args;

NM_MPI_PROTO(int, Init, (int *argc, char ***argv))
NM_MPI_PROTO(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
NM_MPI_PROTO(int, Initialized, (int *flag))
NM_MPI_PROTO(int, Finalized, (int *flag))
NM_MPI_PROTO(int, Finalize, (void))
NM_MPI_PROTO(int, Abort, (MPI_Comm comm, int errorcode))
NM_MPI_PROTO(int, Query_thread, (int *provided))
NM_MPI_PROTO(int, Is_thread_main, (int *flag))
NM_MPI_PROTO(double, Wtime, (void))
NM_MPI_PROTO(double, Wtick, (void))
NM_MPI_PROTO(int, Get_processor_name, (char *name, int *resultlen))
NM_MPI_PROTO(int, Get_version, (int *version, int *subversion))
NM_MPI_PROTO(int, Get_library_version, (char *version, int *resultlen))
NM_MPI_PROTO(int, Error_string, (int errorcode, char *string, int *resultlen))
NM_MPI_PROTO(int, Error_class, (int errorcode, int *errorclass))
NM_MPI_PROTO(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
NM_MPI_PROTO(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
NM_MPI_PROTO(int, Errhandler_free, (MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Comm_get_attr, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
NM_MPI_PROTO(int, Comm_set_attr, (MPI_Comm comm, int keyval, void *attribute_val))
NM_MPI_PROTO(int, Comm_delete_attr, (MPI_Comm comm, int keyval))
NM_MPI_PROTO(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state))
NM_MPI_PROTO(int, Comm_free_keyval, (int *keyval))
NM_MPI_PROTO(int, Comm_set_name, (MPI_Comm comm, const char *name))
NM_MPI_PROTO(int, Comm_get_name, (MPI_Comm comm, char *name, int *resultlen))
NM_MPI_PROTO(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
NM_MPI_PROTO(int, Free_mem, (void *base))
NM_MPI_PROTO(int, Info_create, (MPI_Info *info))
NM_MPI_PROTO(int, Info_free, (MPI_Info *info))
NM_MPI_PROTO(int, Info_set, (MPI_Info info, const char *key, const char *value))
NM_MPI_PROTO(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
NM_MPI_PROTO(int, Send, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
NM_MPI_PROTO(int, Recv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status))
NM_MPI_PROTO(int, Isend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Irecv, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ssend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
NM_MPI_PROTO(int, Issend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Bsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
NM_MPI_PROTO(int, Ibsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Rsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
NM_MPI_PROTO(int, Irsend, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Buffer_attach, (void *buffer, int size))
NM_MPI_PROTO(int, Buffer_detach, (void *buffer_addr, int *size))
NM_MPI_PROTO(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
NM_MPI_PROTO(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status))
NM_MPI_PROTO(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
NM_MPI_PROTO(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
NM_MPI_PROTO(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
NM_MPI_PROTO(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status))
NM_MPI_PROTO(int, Mrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
NM_MPI_PROTO(int, Imrecv, (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
NM_MPI_PROTO(int, Cancel, (MPI_Request *request))
NM_MPI_PROTO(int, Test_cancelled, (const MPI_Status *status, int *flag))
NM_MPI_PROTO(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
NM_MPI_PROTO(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
NM_MPI_PROTO(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
NM_MPI_PROTO(int, Status_set_elements, (MPI_Status *status, MPI_Datatype datatype, int count))
NM_MPI_PROTO(int, Status_set_cancelled, (MPI_Status *status, int flag))
NM_MPI_PROTO(int, Wait, (MPI_Request *request, MPI_Status *status))
NM_MPI_PROTO(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]))
NM_MPI_PROTO(int, Waitany, (int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status))
NM_MPI_PROTO(int, Waitsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
NM_MPI_PROTO(int, Test, (MPI_Request *request, int *flag, MPI_Status *status))
NM_MPI_PROTO(int, Testall, (int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]))
NM_MPI_PROTO(int, Testany, (int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status))
NM_MPI_PROTO(int, Testsome, (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]))
NM_MPI_PROTO(int, Request_free, (MPI_Request *request))
NM_MPI_PROTO(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
NM_MPI_PROTO(int, Send_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ssend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Bsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Rsend_init, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Recv_init, (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Start, (MPI_Request *request))
NM_MPI_PROTO(int, Startall, (int count, MPI_Request array_of_requests[]))
NM_MPI_PROTO(int, Comm_size, (MPI_Comm comm, int *size))
NM_MPI_PROTO(int, Comm_rank, (MPI_Comm comm, int *rank))
NM_MPI_PROTO(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
NM_MPI_PROTO(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
NM_MPI_PROTO(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
NM_MPI_PROTO(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
NM_MPI_PROTO(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
NM_MPI_PROTO(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
NM_MPI_PROTO(int, Comm_free, (MPI_Comm *comm))
NM_MPI_PROTO(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
NM_MPI_PROTO(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
NM_MPI_PROTO(int, Comm_test_inter, (MPI_Comm comm, int *flag))
NM_MPI_PROTO(int, Comm_remote_size, (MPI_Comm comm, int *size))
NM_MPI_PROTO(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
NM_MPI_PROTO(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm))
NM_MPI_PROTO(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
NM_MPI_PROTO(int, Group_size, (MPI_Group group, int *size))
NM_MPI_PROTO(int, Group_rank, (MPI_Group group, int *rank))
NM_MPI_PROTO(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
NM_MPI_PROTO(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
NM_MPI_PROTO(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
NM_MPI_PROTO(int, Group_free, (MPI_Group *group))
NM_MPI_PROTO(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_indexed, (int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_hindexed, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_create_hindexed, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_create_indexed_block, (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_create_struct, (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_struct, (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[], MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Type_commit, (MPI_Datatype *datatype))
NM_MPI_PROTO(int, Type_free, (MPI_Datatype *datatype))
NM_MPI_PROTO(int, Type_size, (MPI_Datatype datatype, int *size))
NM_MPI_PROTO(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
NM_MPI_PROTO(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
NM_MPI_PROTO(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
NM_MPI_PROTO(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent))
NM_MPI_PROTO(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
NM_MPI_PROTO(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
NM_MPI_PROTO(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
NM_MPI_PROTO(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
NM_MPI_PROTO(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))
NM_MPI_PROTO(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))
NM_MPI_PROTO(int, Type_get_envelope, (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner))
NM_MPI_PROTO(int, Type_get_contents, (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]))
NM_MPI_PROTO(int, Get_address, (const void *location, MPI_Aint *address))
NM_MPI_PROTO(int, Address, (void *location, MPI_Aint *address))
NM_MPI_PROTO(int, Pack, (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm))
NM_MPI_PROTO(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm))
NM_MPI_PROTO(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))
NM_MPI_PROTO(int, Op_create, (MPI_User_function *user_fn, int commute, MPI_Op *op))
NM_MPI_PROTO(int, Op_free, (MPI_Op *op))
NM_MPI_PROTO(int, Op_commutative, (MPI_Op op, int *commute))
NM_MPI_PROTO(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))
NM_MPI_PROTO(int, Barrier, (MPI_Comm comm))
NM_MPI_PROTO(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
NM_MPI_PROTO(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
NM_MPI_PROTO(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
NM_MPI_PROTO(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
NM_MPI_PROTO(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
NM_MPI_PROTO(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
NM_MPI_PROTO(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
NM_MPI_PROTO(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
NM_MPI_PROTO(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
NM_MPI_PROTO(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
NM_MPI_PROTO(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
NM_MPI_PROTO(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ibcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Dims_create, (int nnodes, int ndims, int dims[]))
NM_MPI_PROTO(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart))
NM_MPI_PROTO(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
NM_MPI_PROTO(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
NM_MPI_PROTO(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
NM_MPI_PROTO(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
NM_MPI_PROTO(int, Cartdim_get, (MPI_Comm comm, int *ndims))
NM_MPI_PROTO(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
NM_MPI_PROTO(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
NM_MPI_PROTO(int, Topo_test, (MPI_Comm comm, int *status))
NM_MPI_PROTO(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
NM_MPI_PROTO(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
NM_MPI_PROTO(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
NM_MPI_PROTO(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
NM_MPI_PROTO(int, Win_detach, (MPI_Win win, const void *base))
NM_MPI_PROTO(int, Win_free, (MPI_Win *win))
NM_MPI_PROTO(int, Win_fence, (int assert, MPI_Win win))
NM_MPI_PROTO(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
NM_MPI_PROTO(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
NM_MPI_PROTO(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
NM_MPI_PROTO(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
NM_MPI_PROTO(int, Win_unlock, (int rank, MPI_Win win))
NM_MPI_PROTO(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[], const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
NM_MPI_PROTO(int, Dist_graph_create_adjacent, (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
NM_MPI_PROTO(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
NM_MPI_PROTO(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[], int destweights[]))
NM_MPI_PROTO(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
NM_MPI_PROTO(int, File_close, (MPI_File *fh))
NM_MPI_PROTO(int, File_delete, (const char *filename, MPI_Info info))
NM_MPI_PROTO(int, File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NM_MPI_PROTO(int, File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NM_MPI_PROTO(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NM_MPI_PROTO(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
NM_MPI_PROTO(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info))
NM_MPI_PROTO(int, File_get_size, (MPI_File fh, MPI_Offset *size))
NM_MPI_PROTO(int, Pcontrol, (const int level, ...))
/* ---- added for third-party suites (OSU, IMB, MPICH tests): see doc/mpi.md */
NM_MPI_PROTO(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
NM_MPI_PROTO(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
NM_MPI_PROTO(MPI_Fint, Comm_c2f, (MPI_Comm comm))
NM_MPI_PROTO(MPI_Comm, Comm_f2c, (MPI_Fint comm))
NM_MPI_PROTO(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
NM_MPI_PROTO(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
NM_MPI_PROTO(MPI_Fint, Group_c2f, (MPI_Group group))
NM_MPI_PROTO(MPI_Group, Group_f2c, (MPI_Fint group))
NM_MPI_PROTO(MPI_Fint, Op_c2f, (MPI_Op op))
NM_MPI_PROTO(MPI_Op, Op_f2c, (MPI_Fint op))
NM_MPI_PROTO(MPI_Fint, Request_c2f, (MPI_Request request))
NM_MPI_PROTO(MPI_Request, Request_f2c, (MPI_Fint request))
NM_MPI_PROTO(MPI_Fint, Info_c2f, (MPI_Info info))
NM_MPI_PROTO(MPI_Info, Info_f2c, (MPI_Fint info))
NM_MPI_PROTO(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
NM_MPI_PROTO(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
NM_MPI_PROTO(MPI_Fint, Win_c2f, (MPI_Win win))
NM_MPI_PROTO(MPI_Win, Win_f2c, (MPI_Fint win))
NM_MPI_PROTO(MPI_Fint, File_c2f, (MPI_File file))
NM_MPI_PROTO(MPI_File, File_f2c, (MPI_Fint file))
NM_MPI_PROTO(MPI_Fint, Message_c2f, (MPI_Message message))
NM_MPI_PROTO(MPI_Message, Message_f2c, (MPI_Fint message))
NM_MPI_PROTO(int, Info_delete, (MPI_Info info, const char *key))
NM_MPI_PROTO(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
NM_MPI_PROTO(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
NM_MPI_PROTO(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
NM_MPI_PROTO(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
NM_MPI_PROTO(int, Errhandler_create, (MPI_Handler_function *function, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
NM_MPI_PROTO(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state))
NM_MPI_PROTO(int, Keyval_free, (int *keyval))
NM_MPI_PROTO(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
NM_MPI_PROTO(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
NM_MPI_PROTO(int, Attr_delete, (MPI_Comm comm, int keyval))
NM_MPI_PROTO(int, Comm_get_parent, (MPI_Comm *parent))
NM_MPI_PROTO(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
NM_MPI_PROTO(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
NM_MPI_PROTO(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
NM_MPI_PROTO(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype datatype, MPI_Count count))
NM_MPI_PROTO(int, Type_create_subarray, (int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
NM_MPI_PROTO(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))

/* ---- present but unsupported (MPI_ERR_UNSUPPORTED_OPERATION), so that suites link: see doc/mpi.md */
NM_MPI_PROTO(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
NM_MPI_PROTO(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
NM_MPI_PROTO(int, Win_get_group, (MPI_Win win, MPI_Group *group))
NM_MPI_PROTO(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
NM_MPI_PROTO(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
NM_MPI_PROTO(int, Win_complete, (MPI_Win win))
NM_MPI_PROTO(int, Win_wait, (MPI_Win win))
NM_MPI_PROTO(int, Win_test, (MPI_Win win, int *flag))
NM_MPI_PROTO(int, Win_lock_all, (int assert, MPI_Win win))
NM_MPI_PROTO(int, Win_unlock_all, (MPI_Win win))
NM_MPI_PROTO(int, Win_flush, (int rank, MPI_Win win))
NM_MPI_PROTO(int, Win_flush_all, (MPI_Win win))
NM_MPI_PROTO(int, Win_flush_local, (int rank, MPI_Win win))
NM_MPI_PROTO(int, Win_flush_local_all, (MPI_Win win))
NM_MPI_PROTO(int, Win_sync, (MPI_Win win))
NM_MPI_PROTO(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
NM_MPI_PROTO(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win))
NM_MPI_PROTO(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
NM_MPI_PROTO(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
NM_MPI_PROTO(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
NM_MPI_PROTO(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
NM_MPI_PROTO(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
NM_MPI_PROTO(int, Win_set_name, (MPI_Win win, const char *win_name))
NM_MPI_PROTO(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
NM_MPI_PROTO(int, Win_create_errhandler, (MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
NM_MPI_PROTO(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Win_call_errhandler, (MPI_Win win, int errorcode))
NM_MPI_PROTO(int, Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn, MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state))
NM_MPI_PROTO(int, Win_free_keyval, (int *win_keyval))
NM_MPI_PROTO(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val))
NM_MPI_PROTO(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
NM_MPI_PROTO(int, Win_delete_attr, (MPI_Win win, int win_keyval))
NM_MPI_PROTO(int, Win_set_info, (MPI_Win win, MPI_Info info))
NM_MPI_PROTO(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
NM_MPI_PROTO(int, File_create_errhandler, (MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
NM_MPI_PROTO(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
NM_MPI_PROTO(int, Type_create_keyval, (MPI_Type_copy_attr_function *type_copy_attr_fn, MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state))
NM_MPI_PROTO(int, Type_free_keyval, (int *type_keyval))
NM_MPI_PROTO(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val))
NM_MPI_PROTO(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag))
NM_MPI_PROTO(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
NM_MPI_PROTO(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
NM_MPI_PROTO(int, Add_error_class, (int *errorclass))
NM_MPI_PROTO(int, Add_error_code, (int errorclass, int *errorcode))
NM_MPI_PROTO(int, Add_error_string, (int errorcode, const char *string))
NM_MPI_PROTO(int, Grequest_start, (MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request))
NM_MPI_PROTO(int, Grequest_complete, (MPI_Request request))
NM_MPI_PROTO(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))
NM_MPI_PROTO(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *comm_graph))
NM_MPI_PROTO(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
NM_MPI_PROTO(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
NM_MPI_PROTO(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
NM_MPI_PROTO(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
NM_MPI_PROTO(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
NM_MPI_PROTO(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
NM_MPI_PROTO(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
NM_MPI_PROTO(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))


/* ---- nmad extensions (MPIX_name, with PMPIX_name twins) ---- */
#define NM_MPIX_PROTO(ret, name, args) ret MPIX_##name args; ret PMPIX_##name args;
/** Dynamic broadcast (nm_mcast.h): only the root calls it, with the destination ranks of @p comm (intra-
 *  communicator) and optional priorities; receivers post an ordinary MPI_Irecv/MPI_Recv from the root's rank
 *  with @p tag. */
NM_MPIX_PROTO(int, Dynamic_bcast, (const void *buf, int count, MPI_Datatype datatype, const int dests[],
                                   const int prios[], int ndests, int tag, MPI_Comm comm, MPI_Request *request))
/** A send with an nmad priority (larger is more urgent; effective with NMAD_STRATEGY=prio). */
NM_MPIX_PROTO(int, Isend_prio, (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, int prio,
                                MPI_Comm comm, MPI_Request *request))
/** The nmad session and gate behind @p comm's rank @p rank, to mix MPI and the native API. The returned
 *  pointers are nm_session_t and nm_gate_t (nmad/nm_types.h). */
NM_MPIX_PROTO(int, Comm_get_nmad, (MPI_Comm comm, int rank, void **session, void **gate))
/** Split-tree non-blocking collectives (Denis et al. 2019, section 6; nmad/include/nmad/nm_coll_split.h,
 *  doc/mpi.md): the tree's lower @p S levels run in the caller's context, the others on the progress thread
 *  (NMAD_PROGRESS=thread). @p S >= 0 forces it (clamped to ceil(log2 size)); MPIX_SPLIT_AUTO: NMAD_SPLIT_S, else
 *  the model of section 6.2. Contiguous datatypes; commutative operations. Complete with MPIX_Split_wait(). */
typedef struct nm_mpix_split_s *MPIX_Split_request;
#define MPIX_SPLIT_AUTO (-1)
NM_MPIX_PROTO(int, Ibcast_split, (void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, int S,
                                  MPIX_Split_request *request))
NM_MPIX_PROTO(int, Ireduce_split, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                   int root, MPI_Comm comm, int S, MPIX_Split_request *request))
NM_MPIX_PROTO(int, Igather_split, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, int root,
                                   MPI_Comm comm, int S, MPIX_Split_request *request))
NM_MPIX_PROTO(int, Iscatter_split, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, int root,
                                    MPI_Comm comm, int S, MPIX_Split_request *request))
/** Complete a split collective (runs its lower levels for a broadcast or scatter) and free it; *request becomes
 *  NULL. @p S_used (may be NULL) gets the S it ran with. */
NM_MPIX_PROTO(int, Split_wait, (MPIX_Split_request *request, int *S_used))
/** Topology-ID multicast (Song 2009; nmad/nm_mcast_topo.h, doc/mcast-topo.md): as MPIX_Dynamic_bcast with the
 *  topology-ID tree (NMAD_MCAST_TOPO) and 8 KiB segments (NMAD_MCAST_TOPO_SEG); receivers use MPI_Recv. */
NM_MPIX_PROTO(int, Mcast_topo, (const void *buf, int count, MPI_Datatype datatype, const int dests[], int ndests,
                                int tag, MPI_Comm comm, MPI_Request *request))
/* Rootless broadcast (issue 19; nm_anycast.h, doc/anycast.md; Li et al. 2018, "Anycast: Rootless Broadcasting with
 * MPI"): a skip ring built once per communicator, then any member broadcasts at any time without the others
 * knowing it is the origin. Contiguous datatypes only. */
typedef struct nm_mpix_anycast_s *MPIX_Anycast;
/** Build the skip ring of intra-communicator @p comm (every member calls it, no message is exchanged; one ring per
 *  communicator at a time). Errors: MPI_ERR_COMM, MPI_ERR_ARG (a ring already on comm), MPI_ERR_NO_MEM. */
NM_MPIX_PROTO(int, Anycast_create, (MPI_Comm comm, MPIX_Anycast *anycast))
/** Free the ring (after every anycast it takes part in is over; progresses while some are still forwarded). */
NM_MPIX_PROTO(int, Anycast_free, (MPIX_Anycast *anycast))
/** Broadcast @p count elements to every other member of the ring's communicator; @p request completes when this
 *  rank's sends are done (the buffer may be reused), not when every member has it. */
NM_MPIX_PROTO(int, Ianycast, (const void *buf, int count, MPI_Datatype datatype, int tag, MPIX_Anycast anycast,
                              MPI_Request *request))
/** Receive one anycast with @p tag (or MPI_ANY_TAG) from any origin; the status gives the origin's rank in the
 *  communicator (MPI_SOURCE), the tag and the size. Anycasts of one origin and tag arrive in the origin's order. */
NM_MPIX_PROTO(int, Anycast_irecv, (void *buf, int count, MPI_Datatype datatype, int tag, MPIX_Anycast anycast,
                                   MPI_Request *request))
#undef NM_MPIX_PROTO

#undef NM_MPI_PROTO

#ifdef __cplusplus
}
#endif
#endif /* NM_MPI_H */
