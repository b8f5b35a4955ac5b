/**
 * @file mpi_env.c
 * @brief The MPI environment: init/finalize, thread levels, time, versions, error strings and classes, error
 *        handlers, info objects, memory allocation, Abort and Pcontrol.
 *
 * Holds `nm_mpi`, the shim's only global (see nm_mpi_private.h: MPI's API has no context argument).
 *
 * Init order (MPI_Init_thread): launcher (bootstrap, drivers, gates), session "mpi", the gate of every world
 * rank, the dynamic-broadcast service (MPIX_Dynamic_bcast, nm_mcast.h), then the families: datatypes, ops,
 * communicators (WORLD, SELF), requests, collectives. MPI_Finalize completes what the application left behind
 * (freed requests, buffered sends), synchronizes every rank through the launcher, then releases in reverse order.
 */
#include "nm_mpi_private.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

struct nm_mpi_s nm_mpi;

#define NM_MPI_FIRST_ERRHANDLER (MPI_ERRORS_RETURN + 1)
#define NM_MPI_FIRST_INFO (MPI_INFO_ENV + 1)

/* ---------------------------------------------------------------- error strings and classes */

/* Indexed by error class (the codes the shim returns are classes). */
static const char *const nm_mpi_error_strings[] = {
  [MPI_SUCCESS] = "MPI_SUCCESS: no errors",
  [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer",
  [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
  [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
  [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
  [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
  [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
  [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
  [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
  [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
  [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduce operation",
  [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid communicator topology",
  [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid topology dimension",
  [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument of some other kind",
  [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
  [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated",
  [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
  [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
  [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
  [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
  [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid keyval",
  [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
  [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
  [MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: invalid info key (too long or empty)",
  [MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: invalid info value (too long or empty)",
  [MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: info key not defined",
  [MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: could not spawn processes",
  [MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
  [MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service name",
  [MPI_ERR_NAME] = "MPI_ERR_NAME: invalid name",
  [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
  [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size",
  [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement",
  [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
  [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
  [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assertion",
  [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
  [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
  [MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle",
  [MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: collective arguments not identical on all processes",
  [MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid file access mode",
  [MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
  [MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported by this MPI (nmad shim)",
  [MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: file does not exist",
  [MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
  [MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
  [MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
  [MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: not enough space",
  [MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
  [MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or file system",
  [MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file operation could not be completed, file in use",
  [MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation already defined",
  [MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: error in a user data conversion function",
  [MPI_ERR_IO] = "MPI_ERR_IO: other I/O error",
  [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory outside the window",
  [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
  [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
  [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
  [MPI_ERR_PROC_ABORTED] = "MPI_ERR_PROC_ABORTED: a peer process failed or aborted",
};
#define NM_MPI_N_ERROR_STRINGS ((int)(sizeof(nm_mpi_error_strings) / sizeof(nm_mpi_error_strings[0])))

/* Text of a code, or NULL for a code that is not a valid one. */
static const char *nm_mpi_error_text(int code)
{
  if (code < 0 || code > MPI_ERR_LASTCODE)
    return NULL;
  if (code < NM_MPI_N_ERROR_STRINGS && nm_mpi_error_strings[code])
    return nm_mpi_error_strings[code];
  return "MPI error: reserved error code";
}

NM_MPI_ALIAS(Error_string)
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
  NM_MPI_LOCKED();
  const char *s = nm_mpi_error_text(errorcode);
  if (!string || !resultlen)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (!s) {
    snprintf(string, MPI_MAX_ERROR_STRING, "invalid error code %d", errorcode);
    *resultlen = (int)strlen(string);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  }
  snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
  *resultlen = (int)strlen(string);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Error_class)
int PMPI_Error_class(int errorcode, int *errorclass)
{
  NM_MPI_LOCKED();
  if (!errorclass || errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  /* Every code the shim produces is already its own class; reserved codes above the last class are "other". */
  *errorclass = errorcode <= MPI_ERR_PROC_ABORTED ? errorcode : MPI_ERR_OTHER;
  return MPI_SUCCESS;
}

int nm_mpi_from_nm_err(int nm_err)
{
  switch (nm_err < 0 ? -nm_err : nm_err) {
  case NM_ESUCCESS: return MPI_SUCCESS;
  case NM_EINVAL: return MPI_ERR_ARG;
  case NM_ENOMEM: return MPI_ERR_NO_MEM;
  case NM_ETRUNCATED: return MPI_ERR_TRUNCATE;
  case NM_ECLOSED: return MPI_ERR_PROC_ABORTED;
  case NM_ENOTSUP: return MPI_ERR_UNSUPPORTED_OPERATION;
  case NM_EPROTO: return MPI_ERR_INTERN;
  case NM_EUNKNOWN: return MPI_ERR_UNKNOWN;
  default: return MPI_ERR_OTHER; /* ETIMEDOUT, ECANCELED, EBUSY, EDRIVER, ... */
  }
}

/* ---------------------------------------------------------------- error handlers */

static struct nm_mpi_errhandler_s *nm_mpi_errhandler_get(MPI_Errhandler eh)
{
  return nm_mpi_table_get(&nm_mpi.errhandlers, eh);
}

/* Before MPI_Init and after MPI_Finalize, or when no communicator is usable, errors are fatal (MPI-3.1 8.3). */
static int nm_mpi_error_fatal(MPI_Comm comm, int code, const char *fn)
{
  const char *s = nm_mpi_error_text(code);
  fprintf(stderr, "MPI error in %s: %s\n", fn ? fn : "?", s ? s : "invalid error code");
  fflush(stderr);
  /* A rank that only sees the consequence of another one's failure (typically its MPI_Abort) exits with 1, so
   * that the job's status (the largest one, nmad-run) is the failing rank's own code. */
  PMPI_Abort(comm, code == MPI_ERR_PROC_ABORTED ? 1 : code ? code : MPI_ERR_UNKNOWN);
  return code; /* not reached */
}

int nm_mpi_error(MPI_Comm comm, int code, const char *fn)
{
  if (code == MPI_SUCCESS)
    return MPI_SUCCESS;
  if (!nm_mpi.initialized || nm_mpi.finalized)
    return nm_mpi_error_fatal(MPI_COMM_WORLD, code, fn);
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c) {
    comm = MPI_COMM_WORLD;
    c = nm_mpi_comm_get(comm);
  }
  if (!c)
    return nm_mpi_error_fatal(comm, code, fn);
  MPI_Errhandler eh = c->errhandler;
  if (eh == MPI_ERRORS_RETURN)
    return code;
  struct nm_mpi_errhandler_s *e = eh > MPI_ERRORS_RETURN ? nm_mpi_errhandler_get(eh) : NULL;
  if (!e || !e->fn)
    return nm_mpi_error_fatal(comm, code, fn); /* MPI_ERRORS_ARE_FATAL (or a stale handle: be safe) */
  MPI_Comm hcomm = comm;
  int hcode = code;
  e->fn(&hcomm, &hcode);
  return code;
}

NM_MPI_ALIAS(Comm_create_errhandler)
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  if (!fn || !errhandler)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_errhandler_s *e = calloc(1, sizeof(*e));
  int h = e ? nm_mpi_table_add(&nm_mpi.errhandlers, e) : -1;
  if (h < 0) {
    free(e);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  }
  e->fn = fn;
  e->refcount = 1;
  *errhandler = h;
  return MPI_SUCCESS;
}

/* Handlers stay in the table until MPI_Finalize even when freed: communicators created by other families copy
 * the handle without a reference, so a freed handler must remain callable (they are few and tiny). The refcount
 * only tells whether the application still holds the handle. */
NM_MPI_ALIAS(Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  struct nm_mpi_errhandler_s *e = nm_mpi_errhandler_get(errhandler);
  if (!e)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  e->refcount++;
  c->errhandler = errhandler;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (!errhandler)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  struct nm_mpi_errhandler_s *e = nm_mpi_errhandler_get(c->errhandler);
  if (e)
    e->refcount++; /* the caller owns a reference (MPI_Errhandler_free it) */
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Comm_call_errhandler)
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
  NM_MPI_LOCKED();
  if (!nm_mpi_comm_get(comm))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  nm_mpi_error(comm, errorcode, __func__);
  return MPI_SUCCESS; /* the handler was called and returned */
}

NM_MPI_ALIAS(Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  if (!errhandler)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_errhandler_s *e = nm_mpi_errhandler_get(*errhandler);
  if (!e)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (e->refcount > 0)
    e->refcount--;
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

static int nm_mpi_errhandler_init(void)
{
  nm_mpi_table_init(&nm_mpi.errhandlers, NM_MPI_FIRST_ERRHANDLER);
  for (int h = MPI_ERRORS_ARE_FATAL; h <= MPI_ERRORS_RETURN; h++) {
    struct nm_mpi_errhandler_s *e = calloc(1, sizeof(*e));
    if (!e || nm_mpi_table_set(&nm_mpi.errhandlers, h, e)) {
      free(e);
      return -1;
    }
    e->refcount = 1;
  }
  return 0;
}

static void nm_mpi_errhandler_finalize(void)
{
  for (int h = 1; h < nm_mpi.errhandlers.n; h++)
    free(nm_mpi_table_get(&nm_mpi.errhandlers, h));
  nm_mpi_table_destroy(&nm_mpi.errhandlers);
}

/* ---------------------------------------------------------------- info objects */

struct nm_mpi_info_entry_s {
  struct nm_mpi_info_entry_s *next;
  char *key, *value;
};
struct nm_mpi_info_s {
  struct nm_mpi_info_entry_s *head; /* in insertion order */
};

static struct nm_mpi_info_s *nm_mpi_info_get(MPI_Info info)
{
  return nm_mpi_table_get(&nm_mpi.infos, info);
}

static void nm_mpi_info_clear(struct nm_mpi_info_s *in)
{
  while (in->head) {
    struct nm_mpi_info_entry_s *e = in->head;
    in->head = e->next;
    free(e->key);
    free(e->value);
    free(e);
  }
}

static int nm_mpi_info_put(struct nm_mpi_info_s *in, const char *key, const char *value)
{
  struct nm_mpi_info_entry_s **pp = &in->head;
  for (; *pp; pp = &(*pp)->next)
    if (strcmp((*pp)->key, key) == 0) {
      char *v = strdup(value);
      if (!v)
        return MPI_ERR_NO_MEM;
      free((*pp)->value);
      (*pp)->value = v;
      return MPI_SUCCESS;
    }
  struct nm_mpi_info_entry_s *e = calloc(1, sizeof(*e));
  if (e) {
    e->key = strdup(key);
    e->value = strdup(value);
  }
  if (!e || !e->key || !e->value) {
    if (e) {
      free(e->key);
      free(e->value);
    }
    free(e);
    return MPI_ERR_NO_MEM;
  }
  *pp = e;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Info_create)
int PMPI_Info_create(MPI_Info *info)
{
  NM_MPI_LOCKED();
  if (!info)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_info_s *in = calloc(1, sizeof(*in));
  int h = in ? nm_mpi_table_add(&nm_mpi.infos, in) : -1;
  if (h < 0) {
    free(in);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  }
  *info = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Info_free)
int PMPI_Info_free(MPI_Info *info)
{
  NM_MPI_LOCKED();
  if (!info || *info < NM_MPI_FIRST_INFO || !nm_mpi_info_get(*info))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  struct nm_mpi_info_s *in = nm_mpi_info_get(*info);
  nm_mpi_info_clear(in);
  free(in);
  nm_mpi_table_remove(&nm_mpi.infos, *info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Info_set)
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = info >= NM_MPI_FIRST_INFO ? nm_mpi_info_get(info) : NULL;
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!key || !*key || strlen(key) >= MPI_MAX_INFO_KEY)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  if (!value || !*value || strlen(value) >= MPI_MAX_INFO_VAL)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, __func__);
  return nm_mpi_error(MPI_COMM_WORLD, nm_mpi_info_put(in, key, value), __func__);
}

NM_MPI_ALIAS(Info_get)
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = nm_mpi_info_get(info);
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!key || !*key || strlen(key) >= MPI_MAX_INFO_KEY)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  if (!flag || valuelen < 0 || (!value && valuelen > 0))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *flag = 0;
  for (struct nm_mpi_info_entry_s *e = in->head; e; e = e->next)
    if (strcmp(e->key, key) == 0) {
      /* valuelen excludes the terminating NUL (MPI-3.1 9.1): copy at most valuelen characters. */
      size_t n = strlen(e->value);
      if (n > (size_t)valuelen)
        n = (size_t)valuelen;
      memcpy(value, e->value, n);
      value[n] = '\0';
      *flag = 1;
      break;
    }
  return MPI_SUCCESS;
}

static int nm_mpi_info_init(int argc, char **argv)
{
  nm_mpi_table_init(&nm_mpi.infos, NM_MPI_FIRST_INFO);
  struct nm_mpi_info_s *env = calloc(1, sizeof(*env));
  if (!env || nm_mpi_table_set(&nm_mpi.infos, MPI_INFO_ENV, env)) {
    free(env);
    return -1;
  }
  /* MPI_INFO_ENV (MPI-3.1 10.3.4): what this process was started with. */
  char buf[32];
  if (argc > 0 && argv && argv[0])
    nm_mpi_info_put(env, "command", argv[0]);
  snprintf(buf, sizeof(buf), "%d", nm_mpi.world_size);
  nm_mpi_info_put(env, "maxprocs", buf);
  return 0;
}

static void nm_mpi_info_finalize(void)
{
  for (int h = 1; h < nm_mpi.infos.n; h++) {
    struct nm_mpi_info_s *in = nm_mpi_info_get(h);
    if (in) {
      nm_mpi_info_clear(in);
      free(in);
    }
  }
  nm_mpi_table_destroy(&nm_mpi.infos);
}

/* ---------------------------------------------------------------- init / finalize */

static int nm_mpi_init_fail(const char *what, int nm_err)
{
  fprintf(stderr, "MPI_Init: %s failed: %s\n", what, nm_strerror(nm_err));
  fflush(stderr);
  return MPI_ERR_OTHER;
}

static int nm_mpi_do_init(int *argc, char ***argv)
{
  int err = nm_launcher_init(&nm_mpi.launcher, argc, argv);
  if (err)
    return nm_mpi_init_fail("nm_launcher_init", err);
  nm_launcher_get_rank(nm_mpi.launcher, &nm_mpi.world_rank);
  nm_launcher_get_size(nm_mpi.launcher, &nm_mpi.world_size);
  nm_mpi.core = nm_launcher_get_core(nm_mpi.launcher);
  /* NMAD_PROGRESS=thread: the launcher started the progress thread; from here on the shim holds the lock */
  nm_mpi.threaded = nm_core_progress_thread_running(nm_mpi.core);
  NM_MPI_LOCKED();
  /* one ordering stream per (peer, context): MPI orders per (source, communicator, tag), and a stream per tag
   * would keep state for every user tag and every collective instance ever used (nm_session_open_flags()) */
  err = nm_session_open_flags(nm_mpi.core, "mpi", NM_SESSION_ORDER_BY_CONTEXT, &nm_mpi.session);
  if (err)
    return nm_mpi_init_fail("nm_session_open(\"mpi\")", err);
  /* The table of gates by world rank: filled on first use (nm_mpi_world_gate()), as the core makes gates. */
  nm_mpi.gates = calloc((size_t)nm_mpi.world_size, sizeof(nm_gate_t));
  if (!nm_mpi.gates)
    return nm_mpi_init_fail("allocation of the gate table", -NM_ENOMEM);
  nm_coll_overrides_read(&nm_mpi.coll_overrides); /* once, as MPICH reads its control variables at init */
  err = nm_mcast_init(nm_mpi.session, &nm_mpi.mcast);
  if (err)
    return nm_mpi_init_fail("nm_mcast_init", err);
  if (nm_mpi_errhandler_init() || nm_mpi_info_init(argc ? *argc : 0, argv ? *argv : NULL))
    return nm_mpi_init_fail("allocation of the handle tables", -NM_ENOMEM);
  /* Families may call nm_mpi_error() from their init: it needs `initialized` (and falls back to fatal when
   * MPI_COMM_WORLD does not exist yet). */
  nm_mpi.initialized = 1;
  if ((err = nm_mpi_datatype_init()) != MPI_SUCCESS || (err = nm_mpi_op_init()) != MPI_SUCCESS ||
      (err = nm_mpi_comm_init()) != MPI_SUCCESS || (err = nm_mpi_request_init()) != MPI_SUCCESS ||
      (err = nm_mpi_coll_init()) != MPI_SUCCESS) {
    fprintf(stderr, "MPI_Init: initialization of the MPI objects failed (error %d)\n", err);
    return err > 0 ? err : MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
  if (nm_mpi.initialized || nm_mpi.finalized)
    return nm_mpi_error_fatal(MPI_COMM_WORLD, MPI_ERR_OTHER, __func__); /* MPI_Init may be called once only */
  int err = nm_mpi_do_init(argc, argv);
  if (err != MPI_SUCCESS) {
    /* The error handler of MPI_COMM_WORLD is ERRORS_ARE_FATAL by default and cannot be changed yet. */
    fflush(NULL);
    _exit(1);
  }
  /* MPI_THREAD_MULTIPLE (doc/mpi.md, "Threads"): the core lock becomes the shim's global critical section, for
   * good, with or without a progress thread; every public function holds it, every wait lets it go while it
   * yields or sleeps. Not under the simulator (its ranks are coroutines of one OS thread): SERIALIZED there. */
  int level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : required;
  if (level > MPI_THREAD_MULTIPLE)
    level = MPI_THREAD_MULTIPLE;
  if (level == MPI_THREAD_MULTIPLE) {
    if (nm_core_threads_enable(nm_mpi.core) == NM_ESUCCESS)
      nm_mpi.threaded = 1;
    else
      level = MPI_THREAD_SERIALIZED;
  }
  nm_mpi.main_thread = pthread_self();
  nm_mpi.thread_level = level;
  if (provided)
    *provided = level;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Init)
int PMPI_Init(int *argc, char ***argv)
{
  int provided;
  return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

NM_MPI_ALIAS(Initialized)
int PMPI_Initialized(int *flag)
{
  if (!flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *flag = nm_mpi.initialized;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Finalized)
int PMPI_Finalized(int *flag)
{
  if (!flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *flag = nm_mpi.finalized;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Finalize)
int PMPI_Finalize(void)
{
  if (!nm_mpi.initialized || nm_mpi.finalized)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, __func__);
  /* Finalizing runs on the application thread alone (the launcher's barrier and exit are not the core's to lock) */
  nm_core_progress_thread_stop(nm_mpi.core);
  nm_mpi.threaded = nm_core_threads_enabled(nm_mpi.core); /* MPI_THREAD_MULTIPLE: the lock stays (harmless) */
  /* Requests the application freed while active and buffered sends still in flight must reach their peers
   * first: nm_mpi_request_finalize() waits for them. It runs before the barrier so that every rank has
   * delivered its messages before any rank closes its session. */
  nm_mpi_coll_finalize();
  nm_mpi_request_finalize();
  int err = nm_launcher_barrier(nm_mpi.launcher);
  if (err)
    fprintf(stderr, "MPI_Finalize: barrier failed: %s\n", nm_strerror(err));
  nm_mpi_comm_finalize();
  nm_mpi_op_finalize();
  nm_mpi_datatype_finalize();
  nm_mpi_info_finalize();
  /* Broadcasts this rank forwards may still be in flight: let them finish (bounded, peers may be gone). */
  uint64_t deadline = nm_core_time_ns(nm_mpi.core) + 10ULL * 1000000000ULL;
  while (nm_mcast_finalize(nm_mpi.mcast) == -NM_EBUSY && nm_core_time_ns(nm_mpi.core) < deadline)
    nm_core_wait(nm_mpi.core, nm_core_time_ns(nm_mpi.core) + 1000000);
  nm_mpi.mcast = NULL;
  while (nm_session_close(nm_mpi.session) == -NM_EBUSY && nm_core_time_ns(nm_mpi.core) < deadline)
    nm_core_wait(nm_mpi.core, nm_core_time_ns(nm_mpi.core) + 1000000);
  nm_mpi.session = NULL;
  free(nm_mpi.gates);
  nm_mpi.gates = NULL;
  int xerr = nm_launcher_exit(nm_mpi.launcher);
  nm_mpi.launcher = NULL;
  nm_mpi.core = NULL;
  nm_mpi.threaded = 0; /* no core left to lock */
  nm_mpi_scratch_finalize(); /* after the launcher: no schedule is left to give a buffer back */
  nm_coll_sched_cache_drain(&nm_mpi.sched_cache);
  nm_mpi_errhandler_finalize();
  nm_mpi.finalized = 1;
  if (err || xerr)
    return MPI_ERR_OTHER; /* handlers are gone: report only */
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Abort)
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
  /* End the whole job, whatever @p comm (as Open MPI and MPICH do): nm_launcher_abort() asks nmad-run (or the
   * PMIx launcher) to terminate every rank at once; the job's exit status is errorcode modulo 256, the status
   * Open MPI's mpirun gives. Nothing of nmad is torn down: peers may be blocked on us. Before MPI_Init and after
   * MPI_Finalize there is no launcher to ask: only this process exits. */
  fprintf(stderr, "MPI_Abort: rank %d of %d aborting on communicator %d with error code %d\n", nm_mpi.world_rank,
          nm_mpi.world_size, comm, errorcode);
  nm_launcher_abort(nm_mpi.initialized && !nm_mpi.finalized ? nm_mpi.launcher : NULL, errorcode);
}

/* ---------------------------------------------------------------- threads, time, versions */

NM_MPI_ALIAS(Query_thread)
int PMPI_Query_thread(int *provided)
{
  if (!provided)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *provided = nm_mpi.thread_level;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
  if (!flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  /* The thread that called MPI_Init(_thread) (MPI-3.1 12.4.3), recorded there. */
  *flag = nm_mpi.initialized ? pthread_equal(nm_mpi.main_thread, pthread_self()) != 0 : 0;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Wtime)
double PMPI_Wtime(void)
{
  /* The core's clock (DESIGN.md rule 7): the driver's when it has one, CLOCK_MONOTONIC otherwise and before
   * MPI_Init (nm_mpi.core is NULL then). */
  return (double)nm_core_time_ns(nm_mpi.core) * 1e-9;
}

NM_MPI_ALIAS(Wtick)
double PMPI_Wtick(void)
{
  struct timespec ts;
  if (clock_getres(CLOCK_MONOTONIC, &ts) != 0 || (ts.tv_sec == 0 && ts.tv_nsec == 0))
    return 1e-9;
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

NM_MPI_ALIAS(Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
  NM_MPI_LOCKED();
  if (!name || !resultlen)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
  if (!version || !subversion)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Get_library_version)
int PMPI_Get_library_version(char *version, int *resultlen)
{
  if (!version || !resultlen)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  /* The provider as the launcher picks it (nm_launcher.h): NMAD_DRIVER, else shm on one host, tcp across hosts;
   * a singleton only talks to itself. */
  const char *drv = getenv("NMAD_DRIVER");
  const char *prov = drv && *drv ? drv
                     : (nm_mpi.initialized && !nm_mpi.finalized && nm_mpi.world_size == 1) ? "self"
                                                                                           : "shm|tcp (auto)";
  snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "nmad MPI shim 0.1 (MPI 3.1 subset) over libfabric %s", prov);
  *resultlen = (int)strlen(version);
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- memory, profiling */

NM_MPI_ALIAS(Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
  NM_MPI_LOCKED();
  if (size < 0 || !baseptr)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (info != MPI_INFO_NULL && !nm_mpi_info_get(info))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  void *p = malloc(size ? (size_t)size : 1);
  if (!p)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
  *(void **)baseptr = p;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Free_mem)
int PMPI_Free_mem(void *base)
{
  NM_MPI_LOCKED();
  free(base);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Pcontrol)
int PMPI_Pcontrol(const int level, ...)
{
  NM_MPI_LOCKED();
  (void)level; /* no profiling library of our own: MPI-3.1 14.2.4 allows ignoring it */
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- info objects: the rest of MPI-3.1 9.1 */

/** The info object of a handle that the user may modify (not MPI_INFO_ENV), or NULL. */
static struct nm_mpi_info_s *nm_mpi_info_get_user(MPI_Info info)
{
  return info >= NM_MPI_FIRST_INFO ? nm_mpi_info_get(info) : NULL;
}

static int nm_mpi_info_key_ok(const char *key)
{
  return key && *key && strlen(key) < MPI_MAX_INFO_KEY;
}

NM_MPI_ALIAS(Info_delete)
int PMPI_Info_delete(MPI_Info info, const char *key)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = nm_mpi_info_get_user(info);
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!nm_mpi_info_key_ok(key))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  for (struct nm_mpi_info_entry_s **pp = &in->head; *pp; pp = &(*pp)->next)
    if (strcmp((*pp)->key, key) == 0) {
      struct nm_mpi_info_entry_s *e = *pp;
      *pp = e->next;
      free(e->key);
      free(e->value);
      free(e);
      return MPI_SUCCESS;
    }
  return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, __func__); /* 9.1: deleting an absent key */
}

NM_MPI_ALIAS(Info_dup)
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = nm_mpi_info_get(info);
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!newinfo)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  MPI_Info h;
  int rc = PMPI_Info_create(&h);
  if (rc != MPI_SUCCESS)
    return rc;
  struct nm_mpi_info_s *out = nm_mpi_info_get(h);
  for (const struct nm_mpi_info_entry_s *e = in->head; e; e = e->next)
    if (nm_mpi_info_put(out, e->key, e->value) != MPI_SUCCESS) {
      PMPI_Info_free(&h);
      return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
    }
  *newinfo = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = nm_mpi_info_get(info);
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!nkeys)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  int n = 0;
  for (const struct nm_mpi_info_entry_s *e = in->head; e; e = e->next)
    n++;
  *nkeys = n;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = nm_mpi_info_get(info);
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!key)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  const struct nm_mpi_info_entry_s *e = in->head;
  for (int i = 0; e && i < n; i++)
    e = e->next;
  if (n < 0 || !e) /* keys are numbered 0 .. nkeys - 1, in insertion order (stable while unmodified) */
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  snprintf(key, MPI_MAX_INFO_KEY, "%s", e->key);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
  NM_MPI_LOCKED();
  struct nm_mpi_info_s *in = nm_mpi_info_get(info);
  if (!in)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, __func__);
  if (!nm_mpi_info_key_ok(key))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, __func__);
  if (!valuelen || !flag)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *flag = 0;
  for (const struct nm_mpi_info_entry_s *e = in->head; e; e = e->next)
    if (strcmp(e->key, key) == 0) {
      *valuelen = (int)strlen(e->value); /* without the terminating NUL (9.1) */
      *flag = 1;
      break;
    }
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- address arithmetic (MPI-3.1 4.1.5) */

NM_MPI_ALIAS(Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
  NM_MPI_LOCKED();
  /* Addresses are byte addresses in one flat space here, so plain (wrapping) integer arithmetic is exact. */
  return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

NM_MPI_ALIAS(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
  NM_MPI_LOCKED();
  return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---------------------------------------------------------------- handle conversion (MPI-3.1 17.2.4)
 * Handles are ints in C, so a Fortran handle (MPI_Fint) is the same value: both directions are the identity,
 * and the null handles convert to the null handles. */
#define NM_MPI_HANDLE_CONV(kind, ctype)                                                                            \
  NM_MPI_ALIAS(kind##_c2f)                                                                                         \
  MPI_Fint PMPI_##kind##_c2f(ctype h) { return (MPI_Fint)h; }                                                      \
  NM_MPI_ALIAS(kind##_f2c)                                                                                         \
  ctype PMPI_##kind##_f2c(MPI_Fint f) { return (ctype)f; }
NM_MPI_HANDLE_CONV(Comm, MPI_Comm)
NM_MPI_HANDLE_CONV(Type, MPI_Datatype)
NM_MPI_HANDLE_CONV(Group, MPI_Group)
NM_MPI_HANDLE_CONV(Op, MPI_Op)
NM_MPI_HANDLE_CONV(Request, MPI_Request)
NM_MPI_HANDLE_CONV(Info, MPI_Info)
NM_MPI_HANDLE_CONV(Errhandler, MPI_Errhandler)
NM_MPI_HANDLE_CONV(Win, MPI_Win)
NM_MPI_HANDLE_CONV(File, MPI_File)
NM_MPI_HANDLE_CONV(Message, MPI_Message)
#undef NM_MPI_HANDLE_CONV

/* ---------------------------------------------------------------- deprecated MPI-1 error handler names
 * (removed in MPI-3.0 but still called by older benchmarks; same semantics as their MPI-2 replacements) */

NM_MPI_ALIAS(Errhandler_create)
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_create_errhandler(function, errhandler);
}

NM_MPI_ALIAS(Errhandler_set)
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_set_errhandler(comm, errhandler);
}

NM_MPI_ALIAS(Errhandler_get)
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
  NM_MPI_LOCKED();
  return PMPI_Comm_get_errhandler(comm, errhandler);
}
