/**
 * @file t_compat.c
 * @brief What third-party MPI suites (OSU micro-benchmarks, IMB, the MPICH test suite's mtest helpers) need
 *        from the shim, exercised the way they use it. Plain MPI: also runs with Open MPI. 1..8 ranks.
 *
 * Sections:
 *  - compile-time: MPI_VERSION >= 3, MPI_MAX_LIBRARY_VERSION_STRING, MPI_Count/MPI_Aint/MPI_Fint, Aint_add/diff,
 *    c2f/f2c round trips, Type_size_x;
 *  - an OSU-style latency loop: Get_library_version banner, Alloc_mem'd page-aligned buffers, warm-up then timed
 *    ping-pong between ranks 0 and 1 (other ranks idle) over several sizes, each message checked, the
 *    times combined with Reduce;
 *  - an mtest-style communicator walk: Comm_split_type(SHARED), Comm_dup_with_info / Comm_get_info,
 *    Comm_get_parent, attribute keyvals with copy/delete callbacks through Comm_dup/Comm_free (MPI-2 names and
 *    the MPI-1 Keyval_create/Attr_put/Attr_get ones), Info nkeys/nthkey/dup/delete/valuelen;
 *  - datatypes as mtest builds them: Type_create_hvector and Type_create_subarray sent to a contiguous receive;
 *  - Alltoallw and Ialltoallw with a different datatype per peer;
 *  - (nmad only: Open MPI implements them) link-time stubs of one-sided and neighborhood functions fail with
 *    MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN.
 *
 * Prints `PASS <what>` / `FAIL <what>` (rank 0) and exits with 1 on failure.
 *   mpicc.openmpi tests/mpi/t_compat.c -o t_compat && mpirun.openmpi --oversubscribe -np 4 ./t_compat
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(MPI_VERSION) || MPI_VERSION < 3
#error "MPI-3 expected"
#endif

static int rank, size;
static int local_fail;

#include "t_check.h" /* CHECK(cond, fmt, ...): counts a failure in local_fail, says where on stderr */

static int section(const char *what)
{
  int f = 0;
  MPI_Allreduce(&local_fail, &f, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s %s\n", f ? "FAIL" : "PASS", what);
    fflush(stdout);
  }
  local_fail = 0;
  return f != 0;
}

/* ---------------------------------------------------------------- compile-time things */

static void test_types(void)
{
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = -1, v = 0, sv = -1;
  CHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS, "Get_library_version");
  CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len, "len %d", len);
  MPI_Get_version(&v, &sv);
  CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "version %d.%d", v, sv);

  double a[4];
  MPI_Aint a0, a3;
  MPI_Get_address(&a[0], &a0);
  MPI_Get_address(&a[3], &a3);
  CHECK(MPI_Aint_diff(a3, a0) == (MPI_Aint)(3 * sizeof(double)), "Aint_diff %ld", (long)MPI_Aint_diff(a3, a0));
  CHECK(MPI_Aint_add(a0, 3 * sizeof(double)) == a3, "Aint_add");

  MPI_Count sz = 0;
  MPI_Type_size_x(MPI_DOUBLE, &sz);
  CHECK(sz == (MPI_Count)sizeof(double), "Type_size_x %lld", (long long)sz);

  MPI_Fint f = MPI_Comm_c2f(MPI_COMM_WORLD);
  CHECK(MPI_Comm_f2c(f) == MPI_COMM_WORLD, "Comm c2f/f2c");
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT, "Type c2f/f2c");
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "Op c2f/f2c");
  CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "Group c2f/f2c");
  CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "Request c2f/f2c");
  CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "Info c2f/f2c");
}

/* ---------------------------------------------------------------- OSU-style latency */

static void fill(char *buf, int n, int seed)
{
  for (int i = 0; i < n; i++)
    buf[i] = (char)((i * 7 + seed) & 0x7f);
}

static int verify(const char *buf, int n, int seed)
{
  for (int i = 0; i < n; i++)
    if (buf[i] != (char)((i * 7 + seed) & 0x7f))
      return 0;
  return 1;
}

static void test_latency(void)
{
  const int max_size = 1 << 20, iters = 20, skip = 5;
  char *sbuf = NULL, *rbuf = NULL;
  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    printf("# latency loop with %.60s\n", lib);
  }
  CHECK(MPI_Alloc_mem(max_size, MPI_INFO_NULL, &sbuf) == MPI_SUCCESS && sbuf, "Alloc_mem send");
  CHECK(MPI_Alloc_mem(max_size, MPI_INFO_NULL, &rbuf) == MPI_SUCCESS && rbuf, "Alloc_mem recv");
  if (!sbuf || !rbuf)
    return;
  for (int n = 0; n <= max_size; n = n ? n * 4 : 1) {
    double t0 = 0, lat = 0, total = 0;
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip && size > 1; i++) {
      if (i == skip)
        t0 = MPI_Wtime();
      if (rank == 0) {
        fill(sbuf, n, i);
        MPI_Send(sbuf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += !verify(rbuf, n, i + 1);
      } else if (rank == 1) {
        MPI_Recv(rbuf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += !verify(rbuf, n, i);
        fill(sbuf, n, i + 1);
        MPI_Send(sbuf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
    if (rank < 2 && size > 1)
      lat = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    CHECK(bad == 0, "%d corrupted messages of %d bytes", bad, n);
    MPI_Reduce(&lat, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && size > 1 && (n == 0 || n == 1024 || n == max_size))
      printf("# %-8d %10.2f us\n", n, total / 2);
  }
  MPI_Free_mem(sbuf);
  MPI_Free_mem(rbuf);
}

/* ---------------------------------------------------------------- mtest-style communicators and attributes */

static int copies, deletes;

static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
  (void)oldcomm, (void)keyval;
  CHECK(extra == (void *)&copies, "extra_state");
  copies++;
  *(void **)out = (char *)in + 1; /* the copy is the value + 1, to tell them apart */
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
  (void)comm, (void)keyval, (void)val, (void)extra;
  deletes++;
  return MPI_SUCCESS;
}

static void test_comms(void)
{
  MPI_Comm shm = MPI_COMM_NULL, dup = MPI_COMM_NULL, parent = MPI_COMM_WORLD;
  int srank = -1, ssize = 0;
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm) == MPI_SUCCESS,
        "split_type");
  MPI_Comm_rank(shm, &srank);
  MPI_Comm_size(shm, &ssize);
  CHECK(ssize == size && srank == rank, "one host: shm comm %d/%d", srank, ssize); /* tests run on one host */
  MPI_Comm_free(&shm);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &shm);
  CHECK(shm == MPI_COMM_NULL, "split_type UNDEFINED gives COMM_NULL");

  MPI_Comm_get_parent(&parent);
  CHECK(parent == MPI_COMM_NULL, "no parent");

  /* keyvals: MPI-2 names */
  int key = MPI_KEYVAL_INVALID, flag = 0;
  char base[8];
  void *val = NULL;
  copies = deletes = 0;
  MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &copies);
  MPI_Comm_set_attr(MPI_COMM_WORLD, key, base);
  MPI_Info info, used = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "nmad_hint", "true");
  CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup) == MPI_SUCCESS, "dup_with_info");
  MPI_Comm_get_attr(dup, key, &val, &flag);
  CHECK(flag && val == base + 1 && copies == 1, "copied attribute flag %d copies %d", flag, copies);
  CHECK(MPI_Comm_get_info(dup, &used) == MPI_SUCCESS && used != MPI_INFO_NULL, "get_info");
  if (used != MPI_INFO_NULL)
    MPI_Info_free(&used);
  MPI_Comm_free(&dup);
  CHECK(deletes == 1, "delete on free: %d", deletes);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
  CHECK(deletes == 2, "delete: %d", deletes);
  MPI_Comm_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID, "free_keyval resets");

  /* keyvals: the MPI-1 names, with MPI_DUP_FN */
  int key1 = MPI_KEYVAL_INVALID;
  MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key1, NULL);
  MPI_Attr_put(MPI_COMM_WORLD, key1, base + 5);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  val = NULL;
  flag = 0;
  MPI_Attr_get(dup, key1, &val, &flag);
  CHECK(flag && val == base + 5, "MPI_DUP_FN copies the value");
  MPI_Comm_free(&dup);
  MPI_Attr_delete(MPI_COMM_WORLD, key1);
  MPI_Keyval_free(&key1);

  /* MPI_TAG_UB as OSU/IMB read it */
  int *ub = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  CHECK(flag && ub && *ub >= 32767, "TAG_UB");

  /* Info: the rest of 9.1 */
  int nkeys = -1, vlen = 0;
  char k[MPI_MAX_INFO_KEY], v[MPI_MAX_INFO_VAL];
  MPI_Info copy;
  MPI_Info_set(info, "second", "12345");
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 2, "nkeys %d", nkeys);
  MPI_Info_get_nthkey(info, 1, k);
  CHECK(strcmp(k, "second") == 0, "nthkey %s", k);
  MPI_Info_get_valuelen(info, "second", &vlen, &flag);
  CHECK(flag && vlen == 5, "valuelen %d", vlen);
  MPI_Info_dup(info, &copy);
  MPI_Info_delete(info, "second");
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 1, "after delete %d", nkeys);
  MPI_Info_get(copy, "second", sizeof(v) - 1, v, &flag);
  CHECK(flag && strcmp(v, "12345") == 0, "dup kept the key");
  MPI_Info_get_valuelen(copy, "absent", &vlen, &flag);
  CHECK(!flag, "absent key");
  MPI_Info_free(&copy);
  MPI_Info_free(&info);
}

/* ---------------------------------------------------------------- datatypes as mtest builds them */

static void test_datatypes(void)
{
  /* hvector of 4 ints with a 3-int stride, and a 2-D subarray: both to a contiguous receive */
  int src[12], dst[12];
  MPI_Datatype hv, sub;
  MPI_Type_create_hvector(4, 1, 3 * sizeof(int), MPI_INT, &hv);
  MPI_Type_commit(&hv);
  int sizes[2] = {3, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 1};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
  MPI_Type_commit(&sub);
  MPI_Aint lb = -1, ext = 0;
  MPI_Type_get_extent(sub, &lb, &ext);
  CHECK(lb == 0 && ext == (MPI_Aint)(12 * sizeof(int)), "subarray extent lb %ld ext %ld", (long)lb, (long)ext);
  int tsize = 0;
  MPI_Type_size(sub, &tsize);
  CHECK(tsize == (int)(4 * sizeof(int)), "subarray size %d", tsize);
  int ni, na, nd, comb;
  MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb);
  CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && na == 0 && nd == 1, "subarray envelope %d", comb);

  for (int i = 0; i < 12; i++)
    src[i] = 100 * rank + i;
  int to = (rank + 1) % size, from = (rank + size - 1) % size;
  memset(dst, -1, sizeof(dst));
  MPI_Sendrecv(src, 1, hv, to, 5, dst, 4, MPI_INT, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < 4; i++)
    CHECK(dst[i] == 100 * from + 3 * i, "hvector dst[%d] = %d", i, dst[i]);
  memset(dst, -1, sizeof(dst));
  MPI_Sendrecv(src, 1, sub, to, 6, dst, 4, MPI_INT, from, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const int expect[4] = {5, 6, 9, 10}; /* rows 1-2, columns 1-2 of a 3x4 row-major array */
  for (int i = 0; i < 4; i++)
    CHECK(dst[i] == 100 * from + expect[i], "subarray dst[%d] = %d", i, dst[i]);
  /* Fortran order: the first index varies fastest */
  MPI_Datatype subf;
  int fsizes[2] = {4, 3}, fsub[2] = {2, 2}, fstart[2] = {1, 1};
  MPI_Type_create_subarray(2, fsizes, fsub, fstart, MPI_ORDER_FORTRAN, MPI_INT, &subf);
  MPI_Type_commit(&subf);
  memset(dst, -1, sizeof(dst));
  MPI_Sendrecv(src, 1, subf, to, 7, dst, 4, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < 4; i++)
    CHECK(dst[i] == 100 * from + expect[i], "fortran subarray dst[%d] = %d", i, dst[i]);
  MPI_Type_free(&subf);
  MPI_Type_free(&sub);
  MPI_Type_free(&hv);
}

/* ---------------------------------------------------------------- Alltoallw */

static void test_alltoallw(int nonblocking)
{
  /* to peer j: (j + 1) ints when j is even, j + 1 doubles when odd; byte displacements */
  int *scounts = malloc(sizeof(int) * 4 * (size_t)size);
  int *sdispls = scounts + size, *rcounts = scounts + 2 * size, *rdispls = scounts + 3 * size;
  MPI_Datatype *stypes = malloc(sizeof(MPI_Datatype) * 2 * (size_t)size), *rtypes = stypes + size;
  size_t block = sizeof(double) * (size_t)(size + 1);
  char *sbuf = calloc((size_t)size, block), *rbuf = calloc((size_t)size, block);
  for (int j = 0; j < size; j++) {
    scounts[j] = j + 1;
    stypes[j] = (j % 2) ? MPI_DOUBLE : MPI_INT;
    sdispls[j] = (int)(j * block);
    rcounts[j] = rank + 1; /* what peer j sends me: rank + 1 of my type */
    rtypes[j] = (rank % 2) ? MPI_DOUBLE : MPI_INT;
    rdispls[j] = (int)(j * block);
    for (int e = 0; e < scounts[j]; e++) {
      if (j % 2)
        ((double *)(sbuf + sdispls[j]))[e] = 1000.0 * rank + j + e / 4.0;
      else
        ((int *)(sbuf + sdispls[j]))[e] = 1000 * rank + 10 * j + e;
    }
  }
  if (nonblocking) {
    MPI_Request req;
    MPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, MPI_COMM_WORLD);
  }
  for (int j = 0; j < size; j++)
    for (int e = 0; e < rank + 1; e++) {
      if (rank % 2) {
        double got = ((double *)(rbuf + rdispls[j]))[e];
        CHECK(got == 1000.0 * j + rank + e / 4.0, "from %d elem %d: %g", j, e, got);
      } else {
        int got = ((int *)(rbuf + rdispls[j]))[e];
        CHECK(got == 1000 * j + 10 * rank + e, "from %d elem %d: %d", j, e, got);
      }
    }
  free(sbuf);
  free(rbuf);
  free(stypes);
  free(scounts);
}

/* ---------------------------------------------------------------- link-time stubs */

static void test_unsupported(void)
{
#ifdef NMAD_MPI
  int x = 0, y = 0, cls = -1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Get_accumulate(&x, 1, MPI_INT, &y, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, MPI_WIN_NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "Get_accumulate: %d", cls);
  MPI_Request req = 12345;
  rc = MPI_Ineighbor_alltoall(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD, &req);
  CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION && req == MPI_REQUEST_NULL, "Ineighbor_alltoall: %d", rc);
  MPI_Win win = 7;
  rc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &x, &win);
  CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION && win == MPI_WIN_NULL, "Win_allocate_shared: %d", rc);
  rc = PMPI_Win_flush(0, MPI_WIN_NULL); /* the profiling names exist too */
  CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "PMPI_Win_flush: %d", rc);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#endif
}

int main(int argc, char **argv)
{
  int failed = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_types();
  failed += section("versions, address arithmetic, handle conversion");
  test_latency();
  failed += section("OSU-style latency loop on Alloc_mem buffers");
  test_comms();
  failed += section("mtest-style communicators, keyvals, info");
  test_datatypes();
  failed += section("hvector and subarray datatypes");
  test_alltoallw(0);
  failed += section("Alltoallw");
  test_alltoallw(1);
  failed += section("Ialltoallw");
  test_unsupported();
  failed += section("unsupported one-sided/neighborhood stubs");
  if (rank == 0)
    printf("%s t_compat: %d ranks, %d failed section(s)\n", failed ? "FAIL" : "PASS", size, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
