/* MPI reduction operations through MPI_Reduce_local: every predefined operation on every type MPI-3.1 §5.9.2
 * allows, compared with a reference loop; MAXLOC/MINLOC with ties on every pair type; derived datatypes
 * (contiguous, vector with gaps, resized, indexed, padded pairs); operations a type does not allow; user
 * operations, commutative or not, and what they receive; Op_create/free/commutative. Plain MPI: also builds
 * and passes with Open MPI (mpicc.openmpi). Single-process checks on every rank; rank 0 prints PASS/FAIL. */
#include <mpi.h>
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int rank, failures;

static void check(int ok, const char *what, int line)
{
  if (!ok) {
    failures++;
    printf("FAIL %s (rank %d, line %d)\n", what, rank, line);
  } else if (rank == 0) {
    printf("PASS %s\n", what);
  }
  fflush(stdout);
}
#define CHECK(cond, what) check((cond), (what), __LINE__)

static int err_class(int code)
{
  int c = code;
  if (code != MPI_SUCCESS)
    MPI_Error_class(code, &c);
  return c;
}

#define N 11

/* ---------------------------------------------------------------- predefined ops x predefined types */

static int is_negative(double x)
{
  return x < 0;
}
/* Initial values: integers in [-6, 6] for signed types, [0, 12] for unsigned ones, with zeros and repeats */
#define INIT_UINT(T)                                                                                              \
  for (int i = 0; i < N; i++) {                                                                                   \
    in[i] = (T)((i * 37 + 11) % 13);                                                                              \
    io[i] = (T)((i * 5 + 3) % 13);                                                                                \
  }
#define INIT_INT(T)                                                                                               \
  INIT_UINT(T)                                                                                                    \
  if (is_negative((double)(T)-1))                                                                                 \
    for (int i = 0; i < N; i++) {                                                                                 \
      in[i] = (T)(in[i] - 6);                                                                                     \
      io[i] = (T)(io[i] - 6);                                                                                     \
    }
#define INIT_FLOAT(T)                                                                                             \
  for (int i = 0; i < N; i++) {                                                                                   \
    in[i] = (T)(i * 0.5 - 1.5);                                                                                   \
    io[i] = (T)(2.0 - i * 0.25);                                                                                  \
  }
#define INIT_COMPLEX(T)                                                                                           \
  for (int i = 0; i < N; i++) {                                                                                   \
    in[i] = (T)(i * 0.5 - 1.0) + (T)(1.5 - i) * I;                                                              \
    io[i] = (T)(2.0 - i) + (T)(i * 0.25) * I;                                                                   \
  }
#define INIT_BOOL(T)                                                                                              \
  for (int i = 0; i < N; i++) {                                                                                   \
    in[i] = i & 1;                                                                                                \
    io[i] = (i >> 1) & 1;                                                                                         \
  }

/* one (op, type) check: reference loop with a = in[i], b = inout[i], then MPI_Reduce_local */
#define ONE(OP, EXPR, T, MT, INIT)                                                                                \
  {                                                                                                               \
    T in[N], io[N], ref[N];                                                                                       \
    INIT(T)                                                                                                       \
    for (int i = 0; i < N; i++) {                                                                                 \
      const T a = in[i], b = io[i];                                                                               \
      ref[i] = (T)(EXPR);                                                                                         \
    }                                                                                                             \
    int err = MPI_Reduce_local(in, io, N, MT, OP);                                                                \
    int same = 1;                                                                                                 \
    for (int i = 0; i < N; i++)                                                                                   \
      same = same && io[i] == ref[i];                                                                             \
    if (err != MPI_SUCCESS || !same) {                                                                            \
      printf("  %s on %s: err %d\n", #OP, #MT, err);                                                              \
      ok = 0;                                                                                                     \
    }                                                                                                             \
    n_checked++;                                                                                                  \
  }

#define MINMAX(T, MT, INIT) ONE(MPI_MAX, a > b ? a : b, T, MT, INIT) ONE(MPI_MIN, a < b ? a : b, T, MT, INIT)
#define ARITH_INT(T, MT, INIT)                                                                                    \
  ONE(MPI_SUM, (uintmax_t)a + (uintmax_t)b, T, MT, INIT) ONE(MPI_PROD, (uintmax_t)a * (uintmax_t)b, T, MT, INIT)
#define ARITH(T, MT, INIT) ONE(MPI_SUM, a + b, T, MT, INIT) ONE(MPI_PROD, a * b, T, MT, INIT)
#define LOGICAL(T, MT, INIT)                                                                                      \
  ONE(MPI_LAND, a && b, T, MT, INIT) ONE(MPI_LOR, a || b, T, MT, INIT) ONE(MPI_LXOR, !a != !b, T, MT, INIT)
#define BITWISE(T, MT, INIT)                                                                                      \
  ONE(MPI_BAND, a & b, T, MT, INIT) ONE(MPI_BOR, a | b, T, MT, INIT) ONE(MPI_BXOR, a ^ b, T, MT, INIT)

#define C_INTEGER(T, MT) MINMAX(T, MT, INIT_INT) ARITH_INT(T, MT, INIT_INT) LOGICAL(T, MT, INIT_INT) BITWISE(T, MT, INIT_INT)
/* non-negative values: Open MPI 4.1 compares MPI_OFFSET as unsigned */
#define MULTI_LANG(T, MT) MINMAX(T, MT, INIT_UINT) ARITH_INT(T, MT, INIT_UINT) BITWISE(T, MT, INIT_UINT)
#define FLOATING(T, MT) MINMAX(T, MT, INIT_FLOAT) ARITH(T, MT, INIT_FLOAT)

static void test_predefined(void)
{
  int ok = 1, n_checked = 0;
  C_INTEGER(signed char, MPI_SIGNED_CHAR)
  C_INTEGER(unsigned char, MPI_UNSIGNED_CHAR)
  C_INTEGER(short, MPI_SHORT)
  C_INTEGER(unsigned short, MPI_UNSIGNED_SHORT)
  C_INTEGER(int, MPI_INT)
  C_INTEGER(unsigned, MPI_UNSIGNED)
  C_INTEGER(long, MPI_LONG)
  C_INTEGER(unsigned long, MPI_UNSIGNED_LONG)
  C_INTEGER(long long, MPI_LONG_LONG)
  C_INTEGER(unsigned long long, MPI_UNSIGNED_LONG_LONG)
  C_INTEGER(int8_t, MPI_INT8_T)
  C_INTEGER(int16_t, MPI_INT16_T)
  C_INTEGER(int32_t, MPI_INT32_T)
  C_INTEGER(int64_t, MPI_INT64_T)
  C_INTEGER(uint8_t, MPI_UINT8_T)
  C_INTEGER(uint16_t, MPI_UINT16_T)
  C_INTEGER(uint32_t, MPI_UINT32_T)
  C_INTEGER(uint64_t, MPI_UINT64_T)
  CHECK(ok, "C integer types: MAX MIN SUM PROD LAND LOR LXOR BAND BOR BXOR");
  ok = 1;
  MULTI_LANG(MPI_Aint, MPI_AINT)
  MULTI_LANG(MPI_Offset, MPI_OFFSET)
  MULTI_LANG(MPI_Count, MPI_COUNT)
  CHECK(ok, "AINT, OFFSET, COUNT: MAX MIN SUM PROD BAND BOR BXOR");
  ok = 1;
  FLOATING(float, MPI_FLOAT)
  FLOATING(double, MPI_DOUBLE)
  FLOATING(long double, MPI_LONG_DOUBLE)
  CHECK(ok, "floating point types: MAX MIN SUM PROD");
  ok = 1;
  ARITH(float _Complex, MPI_C_FLOAT_COMPLEX, INIT_COMPLEX)
  ARITH(double _Complex, MPI_C_DOUBLE_COMPLEX, INIT_COMPLEX)
  ARITH(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, INIT_COMPLEX)
  CHECK(ok, "complex types: SUM PROD");
  ok = 1;
  LOGICAL(_Bool, MPI_C_BOOL, INIT_BOOL)
  CHECK(ok, "C_BOOL: LAND LOR LXOR");
  ok = 1;
  BITWISE(unsigned char, MPI_BYTE, INIT_INT)
  CHECK(ok, "BYTE: BAND BOR BXOR");
  if (rank == 0)
    printf("  (%d predefined op x type combinations)\n", n_checked);
}

/* ---------------------------------------------------------------- MAXLOC / MINLOC */

#define LOC_ONE(OP, CMP, V, MT)                                                                                   \
  {                                                                                                               \
    struct {                                                                                                      \
      V v;                                                                                                        \
      int i;                                                                                                      \
    } in[N], io[N], ref[N];                                                                                       \
    for (int k = 0; k < N; k++) {                                                                                 \
      in[k].v = (V)(k % 3);                                                                                       \
      in[k].i = 20 - k;                                                                                           \
      io[k].v = (V)((k * 2) % 3);                                                                                 \
      io[k].i = k + (k & 4 ? 30 : 0);                                                                             \
      ref[k] = io[k];                                                                                             \
      if (in[k].v CMP io[k].v || (in[k].v == io[k].v && in[k].i < io[k].i))                                      \
        ref[k] = in[k];                                                                                           \
    }                                                                                                             \
    int err = MPI_Reduce_local(in, io, N, MT, OP), same = 1;                                                      \
    for (int k = 0; k < N; k++)                                                                                   \
      same = same && io[k].v == ref[k].v && io[k].i == ref[k].i;                                                  \
    if (err != MPI_SUCCESS || !same) {                                                                            \
      printf("  %s on %s: err %d\n", #OP, #MT, err);                                                              \
      ok = 0;                                                                                                     \
    }                                                                                                             \
  }
#define LOC(V, MT) LOC_ONE(MPI_MAXLOC, >, V, MT) LOC_ONE(MPI_MINLOC, <, V, MT)

static void test_loc(void)
{
  int ok = 1;
  LOC(float, MPI_FLOAT_INT)
  LOC(double, MPI_DOUBLE_INT)
  LOC(long, MPI_LONG_INT)
  LOC(int, MPI_2INT)
  LOC(short, MPI_SHORT_INT)
  LOC(long double, MPI_LONG_DOUBLE_INT)
  CHECK(ok, "MAXLOC / MINLOC on every pair type, ties keep the smaller index");

  struct {
    double v;
    int i;
  } a = {1.0, 7}, b = {1.0, 3};
  MPI_Reduce_local(&a, &b, 1, MPI_DOUBLE_INT, MPI_MAXLOC);
  int ok1 = b.v == 1.0 && b.i == 3;
  b.i = 9;
  MPI_Reduce_local(&a, &b, 1, MPI_DOUBLE_INT, MPI_MINLOC);
  CHECK(ok1 && b.v == 1.0 && b.i == 7, "tie: (1.0, 7) vs (1.0, 3) -> index 3; vs (1.0, 9) -> index 7");
}

/* ---------------------------------------------------------------- derived datatypes */

static void test_derived(void)
{
  MPI_Datatype t;
#ifdef OPEN_MPI /* Open MPI 4.1 only applies predefined operations to predefined datatypes (MPICH, nmad: any
                   homogeneous derived datatype) */
  if (rank == 0)
    printf("SKIP predefined operations on derived datatypes (not supported by Open MPI)\n");
  return;
#endif

  /* contiguous of 3 ints */
  int ia[6] = {1, 2, 3, 4, 5, 6}, ib[6] = {10, 20, 30, 40, 50, 60};
  MPI_Type_contiguous(3, MPI_INT, &t);
  MPI_Type_commit(&t);
  int err = MPI_Reduce_local(ia, ib, 2, t, MPI_SUM);
  CHECK(err == MPI_SUCCESS && ib[0] == 11 && ib[5] == 66, "SUM on contiguous(3, INT) x2");
  MPI_Type_free(&t);

  /* vector of doubles: the gaps stay untouched */
  double da[10], db[10];
  for (int k = 0; k < 10; k++) {
    da[k] = k;
    db[k] = 4.5;
  }
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  err = MPI_Reduce_local(da, db, 2, t, MPI_MAX); /* extent 5 doubles: elements at 0,2,4 and 5,7,9 */
  int ok = err == MPI_SUCCESS;
  for (int k = 0; k < 10; k++) {
    const int in_map = k == 0 || k == 2 || k == 4 || k == 5 || k == 7 || k == 9;
    ok = ok && db[k] == (in_map ? (k > 4.5 ? k : 4.5) : 4.5);
  }
  CHECK(ok, "MAX on vector(3, 1, 2, DOUBLE) x2, gaps untouched");
  MPI_Type_free(&t);

  /* resized: one int every two */
  int ra[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rb[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &t);
  MPI_Type_commit(&t);
  err = MPI_Reduce_local(ra, rb, 4, t, MPI_PROD);
  CHECK(err == MPI_SUCCESS && rb[0] == 2 && rb[1] == 2 && rb[2] == 6 && rb[6] == 14 && rb[7] == 2,
        "PROD on resized(INT, 0, 8) x4");
  MPI_Type_free(&t);

  /* indexed, out of order */
  unsigned xa[6] = {1, 2, 4, 8, 16, 32}, xb[6] = {3, 3, 3, 3, 3, 3};
  MPI_Type_indexed(2, (int[]){2, 1}, (int[]){3, 0}, MPI_UNSIGNED, &t);
  MPI_Type_commit(&t);
  err = MPI_Reduce_local(xa, xb, 1, t, MPI_BXOR);
  CHECK(err == MPI_SUCCESS && xb[0] == 2 && xb[1] == 3 && xb[2] == 3 && xb[3] == 11 && xb[4] == 19 && xb[5] == 3,
        "BXOR on indexed({2,1}, {3,0}, UNSIGNED)");
  MPI_Type_free(&t);

  /* homogeneous struct with a hole */
  int sa[4] = {1, 2, 3, 4}, sb[4] = {5, 5, 5, 5};
  MPI_Type_create_struct(2, (int[]){2, 1}, (MPI_Aint[]){0, 12}, (MPI_Datatype[]){MPI_INT, MPI_INT}, &t);
  MPI_Type_commit(&t);
  err = MPI_Reduce_local(sa, sb, 1, t, MPI_MIN);
  CHECK(err == MPI_SUCCESS && sb[0] == 1 && sb[1] == 2 && sb[2] == 5 && sb[3] == 4,
        "MIN on struct {2 INT @0, INT @12}");
  MPI_Type_free(&t);

  /* padded pairs: DOUBLE_INT (12 bytes of data every 16) and SHORT_INT (two blocks) */
  struct {
    double v;
    int i;
  } pa[4] = {{1, 0}, {5, 1}, {2, 2}, {2, 3}}, pb[4] = {{3, 9}, {5, 0}, {1, 7}, {2, 8}};
  MPI_Type_contiguous(2, MPI_DOUBLE_INT, &t);
  MPI_Type_commit(&t);
  err = MPI_Reduce_local(pa, pb, 2, t, MPI_MAXLOC);
  CHECK(err == MPI_SUCCESS && pb[0].v == 3 && pb[0].i == 9 && pb[1].i == 0 && pb[2].v == 2 && pb[2].i == 2 &&
            pb[3].i == 3,
        "MAXLOC on contiguous(2, DOUBLE_INT) x2");
  MPI_Type_free(&t);
  struct {
    short v;
    int i;
  } qa[6] = {{1, 0}, {5, 1}, {2, 2}, {-2, 3}, {0, 4}, {7, 5}},
    qb[6] = {{3, 9}, {5, 0}, {1, 7}, {-2, 8}, {9, 9}, {9, 9}};
  MPI_Type_vector(2, 2, 3, MPI_SHORT_INT, &t); /* pairs 0, 1, 3, 4 */
  MPI_Type_commit(&t);
  err = MPI_Reduce_local(qa, qb, 1, t, MPI_MINLOC);
  CHECK(err == MPI_SUCCESS && qb[0].v == 1 && qb[0].i == 0 && qb[1].i == 0 && qb[2].v == 1 && qb[2].i == 7 &&
            qb[3].v == -2 && qb[3].i == 3 && qb[4].v == 0 && qb[4].i == 4 && qb[5].v == 9,
        "MINLOC on vector(2, 2, 3, SHORT_INT)");
  MPI_Type_free(&t);
}

/* ---------------------------------------------------------------- operations a type does not allow */

static void test_not_allowed(void)
{
  char a[64] = {0}, b[64] = {0};
  struct {
    MPI_Op op;
    MPI_Datatype type;
  } bad[] = {
    {MPI_BAND, MPI_DOUBLE}, {MPI_LAND, MPI_FLOAT},  {MPI_MAX, MPI_C_BOOL},          {MPI_SUM, MPI_C_BOOL},
    {MPI_BOR, MPI_C_BOOL},  {MPI_MAX, MPI_C_DOUBLE_COMPLEX}, {MPI_LXOR, MPI_C_FLOAT_COMPLEX}, {MPI_MAXLOC, MPI_INT},
    {MPI_MINLOC, MPI_DOUBLE}, {MPI_MAX, MPI_2INT}, {MPI_SUM, MPI_DOUBLE_INT}, {MPI_SUM, MPI_PACKED},
    {MPI_MAX, MPI_WCHAR},
  };
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ok = 1;
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
    if (err_class(MPI_Reduce_local(a, b, 1, bad[k].type, bad[k].op)) != MPI_ERR_OP) {
      printf("  case %d accepted\n", (int)k);
      ok = 0;
    }
  CHECK(ok, "operations on types they are not defined for -> MPI_ERR_OP");

  MPI_Datatype t;
  MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t);
  MPI_Type_commit(&t);
  CHECK(err_class(MPI_Reduce_local(a, b, 1, t, MPI_SUM)) == MPI_ERR_OP, "SUM on a heterogeneous struct -> MPI_ERR_OP");
  MPI_Type_free(&t);
  MPI_Type_contiguous(2, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(err_class(MPI_Reduce_local(a, b, 1, t, MPI_MAXLOC)) == MPI_ERR_OP,
        "MAXLOC on contiguous(2, INT) -> MPI_ERR_OP");
  MPI_Type_free(&t);
  CHECK(err_class(MPI_Reduce_local(a, b, 1, MPI_INT, MPI_REPLACE)) == MPI_ERR_OP &&
            err_class(MPI_Reduce_local(a, b, 1, MPI_INT, MPI_NO_OP)) == MPI_ERR_OP,
        "Reduce_local with MPI_REPLACE / MPI_NO_OP -> MPI_ERR_OP");
  CHECK(err_class(MPI_Reduce_local(a, b, 1, MPI_INT, MPI_OP_NULL)) == MPI_ERR_OP, "MPI_OP_NULL -> MPI_ERR_OP");
  MPI_Op op = MPI_SUM;
  CHECK(err_class(MPI_Op_free(&op)) == MPI_ERR_OP, "Op_free(MPI_SUM) -> MPI_ERR_OP");
#ifndef OPEN_MPI /* Open MPI 4.1 crashes on this one */
  CHECK(err_class(MPI_Reduce_local(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM)) == MPI_ERR_BUFFER,
        "Reduce_local(MPI_IN_PLACE) -> MPI_ERR_BUFFER");
#endif
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---------------------------------------------------------------- user operations */

static int seen_len;
static MPI_Datatype seen_type;

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
  int size;
  seen_len = *len;
  seen_type = *type;
  MPI_Type_size(*type, &size);
  const int n = *len * size / (int)sizeof(int); /* contiguous int types only */
  for (int k = 0; k < n; k++)
    ((int *)inout)[k] += ((int *)in)[k];
}

/* 2x2 matrices (row major, 4 doubles): inout = in x inout, not commutative */
static void user_matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
  (void)type;
  for (int k = 0; k < *len; k++) {
    const double *a = (double *)in + 4 * k;
    double *b = (double *)inout + 4 * k, r[4];
    r[0] = a[0] * b[0] + a[1] * b[2];
    r[1] = a[0] * b[1] + a[1] * b[3];
    r[2] = a[2] * b[0] + a[3] * b[2];
    r[3] = a[2] * b[1] + a[3] * b[3];
    memcpy(b, r, sizeof(r));
  }
}

static void test_user(void)
{
  MPI_Op sum, mm;
  MPI_Datatype t, m;
  int commute;

  MPI_Op_create(user_sum, 1, &sum);
  MPI_Op_commutative(sum, &commute);
  CHECK(commute == 1, "Op_create(commute = 1) / Op_commutative");
  MPI_Type_contiguous(3, MPI_INT, &t);
  MPI_Type_commit(&t);
  int a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 1, 1, 1, 1, 1};
  int err = MPI_Reduce_local(a, b, 2, t, sum);
  CHECK(err == MPI_SUCCESS && seen_len == 2 && seen_type == t && b[0] == 2 && b[5] == 7,
        "user op receives the count and the derived datatype handle");
  MPI_Op_free(&sum);
  CHECK(sum == MPI_OP_NULL, "Op_free sets MPI_OP_NULL");
  MPI_Type_free(&t);

  MPI_Op_create(user_matmul, 0, &mm);
  MPI_Op_commutative(mm, &commute);
  MPI_Type_contiguous(4, MPI_DOUBLE, &m);
  MPI_Type_commit(&m);
  double A[4] = {1, 2, 3, 4}, B[4] = {0, 1, 1, 0};
  err = MPI_Reduce_local(A, B, 1, m, mm); /* B = A x B: columns of A swapped */
  CHECK(commute == 0 && err == MPI_SUCCESS && B[0] == 2 && B[1] == 1 && B[2] == 4 && B[3] == 3,
        "non-commutative user op: inoutbuf = inbuf op inoutbuf");
  MPI_Op_free(&mm);
  MPI_Type_free(&m);

  MPI_Op_commutative(MPI_SUM, &commute);
  int c2;
  MPI_Op_commutative(MPI_MAXLOC, &c2);
  CHECK(commute == 1 && c2 == 1, "predefined operations are commutative");

  int z = 5;
  CHECK(MPI_Reduce_local(a, &z, 0, MPI_INT, MPI_SUM) == MPI_SUCCESS && z == 5, "Reduce_local with count 0");
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  test_predefined();
  test_loc();
  test_derived();
  test_not_allowed();
  test_user();
  int all = failures;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s t_op (%d failure(s) over all ranks)\n", all ? "FAIL" : "PASS", all);
  MPI_Finalize();
  return failures != 0;
}
