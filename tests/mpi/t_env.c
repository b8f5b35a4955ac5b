/**
 * @file t_env.c
 * @brief MPI environment test (plain MPI: runs with nmad's shim and with Open MPI), 1..8 ranks.
 *
 * Covers: Initialized/Finalized, Init_thread/Query_thread/Is_thread_main, Wtime/Wtick, Get_processor_name,
 * Get_version, Get_library_version, Error_string/Error_class for every class, error handlers (predefined,
 * MPI_ERRORS_RETURN, a user handler, Comm_call_errhandler, Errhandler_free while attached), Alloc_mem/Free_mem,
 * Info objects, Pcontrol, and (nmad only: Open MPI implements them) the unsupported functions failing with
 * MPI_ERR_UNSUPPORTED_OPERATION.
 *
 * Modes (first argument): none = the tests above; "abort" = the last rank calls MPI_Abort(MPI_COMM_WORLD, 7)
 * while the others wait in a receive (the job must exit with status 7); "fatal" = an error under
 * MPI_ERRORS_ARE_FATAL (the job must fail, with "MPI error" or Open MPI's message on stderr).
 *
 * Prints `PASS <what>` / `FAIL <what>` (rank 0) and exits with 1 on failure.
 *   mpicc.openmpi tests/mpi/t_env.c -o t_env && mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 ./t_env
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int local_fail, sections_failed;

#include "t_check.h" /* CHECK(cond, fmt, ...): counts a failure in local_fail, says where on stderr */

/* Agreement through point-to-point on MPI_COMM_WORLD (tag reserved for the harness). */
static int agree_sum(int v)
{
  int sum = v, x;
  if (rank == 0) {
    for (int p = 1; p < size; p++) {
      MPI_Recv(&x, 1, MPI_INT, p, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += x;
    }
    for (int p = 1; p < size; p++)
      MPI_Send(&sum, 1, MPI_INT, p, 9999, MPI_COMM_WORLD);
  } else {
    MPI_Send(&v, 1, MPI_INT, 0, 9999, MPI_COMM_WORLD);
    MPI_Recv(&sum, 1, MPI_INT, 0, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return sum;
}

static void section(const char *what)
{
  int f = agree_sum(local_fail);
  if (rank == 0) {
    printf("%s %s\n", f ? "FAIL" : "PASS", what);
    fflush(stdout);
  }
  if (f)
    sections_failed++;
  local_fail = 0;
}

static int err_class(int err)
{
  int c = -1;
  MPI_Error_class(err, &c);
  return c;
}

/* ---------------------------------------------------------------- sections */

static void t_basics(int provided)
{
  int flag = 0, v = 0, sv = 0, len = 0;
  MPI_Initialized(&flag);
  CHECK(flag, "Initialized after Init");
  MPI_Finalized(&flag);
  CHECK(!flag, "Finalized before Finalize");
  int q = -1;
  MPI_Query_thread(&q);
  CHECK(q == provided, "Query_thread %d vs provided %d", q, provided);
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d", provided);
#ifdef NMAD_MPI
  /* MPI_THREAD_MULTIPLE since issue 16 deliverable 3 (doc/mpi.md, "Threads"); SERIALIZED only under the simulator */
  CHECK(provided == MPI_THREAD_MULTIPLE, "nmad provides MPI_THREAD_MULTIPLE, got %d", provided);
#endif
  flag = 0;
  MPI_Is_thread_main(&flag);
  CHECK(flag, "Is_thread_main");
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(tick > 0 && tick < 1, "Wtick %g", tick);
  double t1 = t0;
  for (int i = 0; i < 1000000 && t1 <= t0; i++)
    t1 = MPI_Wtime();
  CHECK(t1 > t0, "Wtime advances");
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(name, &len);
  CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len, "processor name '%s' (%d)", name,
        len);
  MPI_Get_version(&v, &sv);
  CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION && v >= 3, "version %d.%d", v, sv);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Get_library_version(lib, &len);
  /* (some implementations count the terminating NUL in resultlen) */
  CHECK(len > 0 && len <= MPI_MAX_LIBRARY_VERSION_STRING && ((int)strlen(lib) == len || (int)strlen(lib) == len - 1),
        "library version (%d)", len);
#ifdef NMAD_MPI
  CHECK(strncmp(lib, "nmad MPI shim", 13) == 0, "library version '%s'", lib);
#endif
  if (rank == 0)
    printf("# %s\n# processor %s, %d ranks, thread level %d\n", lib, name, size, provided);
  CHECK(MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(0) == MPI_SUCCESS, "Pcontrol");
  section("Initialized/Query_thread/Is_thread_main/Wtime/Wtick/names/versions/Pcontrol");
}

static void t_error_strings(void)
{
  static const int classes[] = {
    MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK,
    MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG,
    MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
    MPI_ERR_KEYVAL, MPI_ERR_NO_MEM, MPI_ERR_BASE, MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY,
    MPI_ERR_SPAWN, MPI_ERR_PORT, MPI_ERR_SERVICE, MPI_ERR_NAME, MPI_ERR_WIN, MPI_ERR_SIZE, MPI_ERR_DISP,
    MPI_ERR_INFO, MPI_ERR_LOCKTYPE, MPI_ERR_ASSERT, MPI_ERR_RMA_CONFLICT, MPI_ERR_RMA_SYNC, MPI_ERR_FILE,
    MPI_ERR_NOT_SAME, MPI_ERR_AMODE, MPI_ERR_UNSUPPORTED_DATAREP, MPI_ERR_UNSUPPORTED_OPERATION,
    MPI_ERR_NO_SUCH_FILE, MPI_ERR_FILE_EXISTS, MPI_ERR_BAD_FILE, MPI_ERR_ACCESS, MPI_ERR_NO_SPACE,
    MPI_ERR_QUOTA, MPI_ERR_READ_ONLY, MPI_ERR_FILE_IN_USE, MPI_ERR_DUP_DATAREP, MPI_ERR_CONVERSION, MPI_ERR_IO,
    MPI_ERR_RMA_RANGE, MPI_ERR_RMA_ATTACH, MPI_ERR_RMA_SHARED, MPI_ERR_RMA_FLAVOR, MPI_ERR_LASTCODE};
  int n = (int)(sizeof(classes) / sizeof(classes[0]));
  for (int i = 0; i < n; i++) {
    char s[MPI_MAX_ERROR_STRING];
    int len = -1, cls = -1;
    s[0] = '\0';
    int err = MPI_Error_string(classes[i], s, &len);
    CHECK(err == MPI_SUCCESS && len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len,
          "Error_string(%d): '%s' (%d)", classes[i], s, len);
    if (classes[i] == MPI_ERR_LASTCODE)
      continue; /* a code, not necessarily a class */
    err = MPI_Error_class(classes[i], &cls);
    CHECK(err == MPI_SUCCESS && cls == classes[i], "Error_class(%d) = %d", classes[i], cls);
  }
  /* All distinct, and no class is MPI_SUCCESS but MPI_SUCCESS itself */
  for (int i = 0; i < n - 1; i++)
    for (int j = i + 1; j < n - 1; j++)
      CHECK(classes[i] != classes[j], "classes %d and %d equal", i, j);
  char s[MPI_MAX_ERROR_STRING];
  int len;
  MPI_Error_string(MPI_ERR_TRUNCATE, s, &len);
  CHECK(strstr(s, "trunc") || strstr(s, "TRUNC"), "truncation string '%s'", s);
  /* Invalid codes are an error (reported through MPI_COMM_WORLD's handler) */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int cls = 0;
  int err = MPI_Error_class(-12345, &cls);
  CHECK(err != MPI_SUCCESS, "Error_class of an invalid code succeeded");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  section("MPI_Error_string / MPI_Error_class");
}

/* User error handler: records what it saw. */
static int handler_calls, handler_code;
static MPI_Comm handler_comm;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
  handler_calls++;
  handler_code = *code;
  handler_comm = *comm;
}

static void t_errhandlers(void)
{
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD");
  MPI_Errhandler_free(&eh);
  CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free nulls the handle");
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_SELF");
  MPI_Errhandler_free(&eh);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(dup, &eh);
  CHECK(eh == MPI_ERRORS_RETURN, "handler after set");
  MPI_Errhandler_free(&eh);
  int x = 0;
  int err = MPI_Send(&x, 1, MPI_INT, size + 1, 0, dup);
  CHECK(err != MPI_SUCCESS && err_class(err) == MPI_ERR_RANK, "ERRORS_RETURN: class %d", err_class(err));
  err = MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  CHECK(err == MPI_SUCCESS, "Comm_call_errhandler with ERRORS_RETURN: %d", err);

  MPI_Errhandler mine;
  MPI_Comm_create_errhandler(my_handler, &mine);
  MPI_Comm_set_errhandler(dup, mine);
  MPI_Errhandler_free(&mine); /* still attached: must keep working */
  CHECK(mine == MPI_ERRHANDLER_NULL, "freed user handler handle");
  handler_calls = 0;
  err = MPI_Send(&x, 1, MPI_INT, 0, -1, dup);
  CHECK(handler_calls == 1, "user handler called %d times", handler_calls);
  CHECK(err_class(handler_code) == MPI_ERR_TAG, "user handler saw class %d", err_class(handler_code));
  CHECK(handler_comm == dup, "user handler got the communicator");
  CHECK(err_class(err) == MPI_ERR_TAG, "call returned class %d after the user handler", err_class(err));
  handler_calls = 0;
  err = MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  CHECK(err == MPI_SUCCESS && handler_calls == 1 && handler_code == MPI_ERR_OTHER,
        "Comm_call_errhandler with a user handler (%d, %d calls, code %d)", err, handler_calls, handler_code);
  MPI_Comm_get_errhandler(dup, &eh);
  CHECK(eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRHANDLER_NULL,
        "get returns the user handler");
  /* A communicator duplicated from dup inherits its handler */
  MPI_Comm dup2;
  MPI_Comm_dup(dup, &dup2);
  handler_calls = 0;
  MPI_Send(&x, -1, MPI_INT, 0, 0, dup2);
  CHECK(handler_calls == 1 && err_class(handler_code) == MPI_ERR_COUNT && handler_comm == dup2,
        "inherited user handler (%d calls, class %d)", handler_calls, err_class(handler_code));
  MPI_Comm_free(&dup2);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&dup);
  section("error handlers (predefined, user, call, free while attached, inherited)");
}

static void t_memory_info(void)
{
  void *p = NULL;
  CHECK(MPI_Alloc_mem(4096, MPI_INFO_NULL, &p) == MPI_SUCCESS && p, "Alloc_mem");
  if (p) {
    memset(p, 0x5a, 4096);
    CHECK(MPI_Free_mem(p) == MPI_SUCCESS, "Free_mem");
  }
  MPI_Info info;
  char v[MPI_MAX_INFO_VAL];
  int flag = -1;
  MPI_Info_create(&info);
  CHECK(info != MPI_INFO_NULL, "Info_create");
  MPI_Info_set(info, "nmad_key", "value1");
  MPI_Info_set(info, "other", "xyz");
  MPI_Info_get(info, "nmad_key", MPI_MAX_INFO_VAL - 1, v, &flag);
  CHECK(flag && strcmp(v, "value1") == 0, "Info_get '%s'", v);
  MPI_Info_set(info, "nmad_key", "a-longer-value");
  MPI_Info_get(info, "nmad_key", 3, v, &flag);
  CHECK(flag && strcmp(v, "a-l") == 0, "Info_get truncated to valuelen: '%s'", v);
  MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL - 1, v, &flag);
  CHECK(!flag, "Info_get of a missing key");
  MPI_Info_get(info, "other", MPI_MAX_INFO_VAL - 1, v, &flag);
  CHECK(flag && strcmp(v, "xyz") == 0, "second key");
  MPI_Info_free(&info);
  CHECK(info == MPI_INFO_NULL, "Info_free nulls the handle");
  p = NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_hint", "none");
  CHECK(MPI_Alloc_mem(100, info, &p) == MPI_SUCCESS && p, "Alloc_mem with info");
  MPI_Free_mem(p);
  MPI_Info_free(&info);
  section("MPI_Alloc_mem / MPI_Free_mem / MPI_Info_*");
}

static void t_unsupported(void)
{
#ifdef NMAD_MPI
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int U = MPI_ERR_UNSUPPORTED_OPERATION;
  char buf[64];
  MPI_Win win = 123;
  MPI_File fh = 123;
  MPI_Comm g = 123;
  void *base = buf;
  int a, b, c;
  CHECK(err_class(MPI_Win_create(buf, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win)) == U && win == MPI_WIN_NULL,
        "Win_create");
  CHECK(err_class(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win)) == U, "Win_allocate");
  CHECK(err_class(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win)) == U, "Win_create_dynamic");
  CHECK(err_class(MPI_Win_attach(win, buf, 8)) == U, "Win_attach");
  CHECK(err_class(MPI_Win_detach(win, buf)) == U, "Win_detach");
  CHECK(err_class(MPI_Win_fence(0, win)) == U, "Win_fence");
  CHECK(err_class(MPI_Put(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win)) == U, "Put");
  CHECK(err_class(MPI_Get(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, win)) == U, "Get");
  CHECK(err_class(MPI_Accumulate(buf, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win)) == U, "Accumulate");
  CHECK(err_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)) == U, "Win_lock");
  CHECK(err_class(MPI_Win_unlock(0, win)) == U, "Win_unlock");
  CHECK(err_class(MPI_Win_free(&win)) == U, "Win_free");
  int src = 0, deg = 1, dst = 0;
  CHECK(err_class(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &deg, MPI_INFO_NULL, 0,
                                        &g)) == U && g == MPI_COMM_NULL, "Dist_graph_create");
  CHECK(err_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &deg, 1, &dst,
                                                 &deg, MPI_INFO_NULL, 0, &g)) == U,
        "Dist_graph_create_adjacent");
  CHECK(err_class(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &a, &b, &c)) == U, "Dist_graph_neighbors_count");
  CHECK(err_class(MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 1, &a, &b, 1, &c, &a)) == U, "Dist_graph_neighbors");
  CHECK(err_class(MPI_File_open(MPI_COMM_WORLD, "/tmp/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) == U &&
          fh == MPI_FILE_NULL, "File_open");
  MPI_Status st;
  CHECK(err_class(MPI_File_read(fh, buf, 1, MPI_INT, &st)) == U, "File_read");
  CHECK(err_class(MPI_File_write(fh, buf, 1, MPI_INT, &st)) == U, "File_write");
  CHECK(err_class(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st)) == U, "File_read_at");
  CHECK(err_class(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st)) == U, "File_write_at");
  CHECK(err_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL)) == U, "File_set_view");
  MPI_Offset off;
  CHECK(err_class(MPI_File_get_size(fh, &off)) == U, "File_get_size");
  CHECK(err_class(MPI_File_close(&fh)) == U, "File_close");
  CHECK(err_class(MPI_File_delete("/tmp/x", MPI_INFO_NULL)) == U, "File_delete");
  /* A user handler on the communicator given sees the error */
  MPI_Comm dup;
  MPI_Errhandler mine;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_create_errhandler(my_handler, &mine);
  MPI_Comm_set_errhandler(dup, mine);
  handler_calls = 0;
  MPI_Win_create(buf, 64, 1, MPI_INFO_NULL, dup, &win);
  CHECK(handler_calls == 1 && handler_comm == dup && handler_code == U, "Win_create goes to the comm's handler");
  MPI_Errhandler_free(&mine);
  MPI_Comm_free(&dup);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  section("unsupported functions fail with MPI_ERR_UNSUPPORTED_OPERATION");
#else
  if (rank == 0)
    printf("# unsupported-function checks skipped: not nmad's MPI\n");
  section("unsupported functions (skipped)");
#endif
}

int main(int argc, char **argv)
{
  int flag = 1, provided = -1;
  MPI_Initialized(&flag);
  int before = flag;
  MPI_Finalized(&flag);
  int fin_before = flag;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "abort") == 0) {
    int x;
    if (rank == size - 1)
      MPI_Abort(MPI_COMM_WORLD, 7);
    else
      MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 0; /* not reached */
  }
  if (strcmp(mode, "fatal") == 0) {
    int x = 0;
    if (rank == 0)
      MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD); /* MPI_ERR_RANK: fatal by default */
    else
      MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 0; /* not reached */
  }
  CHECK(!before, "Initialized before Init");
  CHECK(!fin_before, "Finalized before Init");
  t_basics(provided);
  t_error_strings();
  t_errhandlers();
  t_memory_info();
  t_unsupported();
  int failed = sections_failed; /* the same on every rank: section() agrees */
  if (rank == 0)
    printf("%s t_env: %d ranks, %d failed section(s)\n", failed ? "FAIL" : "PASS", size, failed);
  MPI_Finalize();
  /* After MPI_Finalize each rank reports for itself (no communication is allowed any more). */
  int bad = 0;
  flag = 0;
  MPI_Finalized(&flag);
  if (!flag) {
    fprintf(stderr, "rank %d: Finalized false after Finalize\n", rank);
    bad++;
  }
  MPI_Initialized(&flag);
  if (!flag) {
    fprintf(stderr, "rank %d: Initialized false after Finalize\n", rank);
    bad++;
  }
  if (rank == 0 || bad)
    printf("%s Finalized/Initialized after MPI_Finalize (rank %d)\n", bad ? "FAIL" : "PASS", rank);
  failed += bad;
  return failed ? 1 : 0;
}
