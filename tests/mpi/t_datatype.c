/* MPI datatypes: predefined types, every constructor, bounds (markers, resized, epsilon padding), true extents,
 * pack/unpack round trips with count > 1, MPI_BOTTOM, partial receives and element counts, envelope/contents,
 * names, errors. Plain MPI: also builds and passes with Open MPI (mpicc.openmpi; the MPI-1 names it hides are
 * declared below). Every rank runs the single-process checks; rank 0 prints PASS/FAIL lines, any rank prints
 * its failures; the exit code is non-zero on failure. */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0 /* Open MPI: declare MPI_Type_extent, MPI_Address, ... */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && !defined(MPI_LB) /* Open MPI built without MPI-1 compatibility still has them */
extern struct ompi_predefined_datatype_t ompi_mpi_lb, ompi_mpi_ub;
#define MPI_LB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_lb)
#define MPI_UB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_ub)
#endif

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

/* lb, extent, true lb, true extent (bytes) and size of a type */
static int bounds_are(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text, int size)
{
  MPI_Aint l, e, tl, te;
  int s;
  MPI_Type_get_extent(t, &l, &e);
  MPI_Type_get_true_extent(t, &tl, &te);
  MPI_Type_size(t, &s);
  if (l != lb || e != ext || tl != tlb || te != text || s != size) {
    printf("  got lb %ld extent %ld true_lb %ld true_extent %ld size %d\n", (long)l, (long)e, (long)tl, (long)te, s);
    return 0;
  }
  return 1;
}

/* Pack @p count elements of an int-based type from an int array (buf = src + base), compare the packed stream
 * with the ints at offsets @p expect (relative to buf), unpack into a zeroed array and check that exactly those
 * ints come back. */
#define NINTS 256
static int int_map_is(MPI_Datatype t, int count, int base, const int *expect, int nexp)
{
  int src[NINTS], dst[NINTS], packed[NINTS], size, pos = 0, ok = 1;
  for (int k = 0; k < NINTS; k++)
    src[k] = 1000 + k;
  MPI_Pack_size(count, t, MPI_COMM_WORLD, &size);
  if (size != nexp * (int)sizeof(int))
    return printf("  pack_size %d, expected %d\n", size, nexp * (int)sizeof(int)), 0;
  if (MPI_Pack(src + base, count, t, packed, (int)sizeof(packed), &pos, MPI_COMM_WORLD) != MPI_SUCCESS ||
      pos != size)
    return printf("  pack failed (position %d)\n", pos), 0;
  for (int k = 0; k < nexp; k++)
    if (packed[k] != src[base + expect[k]]) {
      printf("  packed[%d] = %d, expected %d\n", k, packed[k], src[base + expect[k]]);
      ok = 0;
    }
  memset(dst, 0, sizeof(dst));
  pos = 0;
  if (MPI_Unpack(packed, size, &pos, dst + base, count, t, MPI_COMM_WORLD) != MPI_SUCCESS || pos != size)
    return printf("  unpack failed\n"), 0;
  for (int k = 0; k < NINTS; k++) {
    int in_map = 0;
    for (int j = 0; j < nexp; j++)
      in_map |= base + expect[j] == k;
    if (dst[k] != (in_map ? src[k] : 0)) {
      printf("  after unpack dst[%d] = %d\n", k, dst[k]);
      ok = 0;
    }
  }
  return ok;
}
#define MAP(...) ((const int[]){__VA_ARGS__}), (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static int envelope_is(MPI_Datatype t, int ni, int na, int nd, int combiner)
{
  int a, b, c, d;
  MPI_Type_get_envelope(t, &a, &b, &c, &d);
  if (a != ni || b != na || c != nd || d != combiner)
    return printf("  envelope %d %d %d combiner %d\n", a, b, c, d), 0;
  return 1;
}

/* Contents of @p t: ints, addresses and types must match (returned derived types are freed). */
static int contents_are(MPI_Datatype t, int ni, const int *ints, int na, const MPI_Aint *addrs, int nd,
                        const MPI_Datatype *types)
{
  int gi[16];
  MPI_Aint ga[16];
  MPI_Datatype gt[16];
  int ei, ea, ed, comb;
  MPI_Type_get_envelope(t, &ei, &ea, &ed, &comb);
  /* exact sizes: Open MPI 4.1 overruns with larger max_* arguments */
  int ok = ei == ni && ea == na && ed == nd && MPI_Type_get_contents(t, ni, na, nd, gi, ga, gt) == MPI_SUCCESS;
  for (int k = 0; ok && k < ni; k++)
    ok = gi[k] == ints[k];
  for (int k = 0; ok && k < na; k++)
    ok = ga[k] == addrs[k];
  for (int k = 0; k < nd; k++) {
    int c, x;
    MPI_Type_get_envelope(gt[k], &x, &x, &x, &c);
    if (c != MPI_COMBINER_NAMED) {
      MPI_Aint l1, e1, l2, e2;
      MPI_Type_get_extent(gt[k], &l1, &e1);
      MPI_Type_get_extent(types[k], &l2, &e2);
      ok = ok && l1 == l2 && e1 == e2;
      MPI_Type_free(&gt[k]);
    } else {
      ok = ok && gt[k] == types[k];
    }
  }
  return ok;
}

static void test_predefined(void)
{
  struct {
    MPI_Datatype t;
    const char *name;
    int size;
  } tab[] = {
    {MPI_CHAR, "MPI_CHAR", sizeof(char)},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", sizeof(signed char)},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", sizeof(unsigned char)},
    {MPI_BYTE, "MPI_BYTE", 1},
    {MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t)},
    {MPI_SHORT, "MPI_SHORT", sizeof(short)},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short)},
    {MPI_INT, "MPI_INT", sizeof(int)},
    {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned)},
    {MPI_LONG, "MPI_LONG", sizeof(long)},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long)},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long)},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long)},
    {MPI_FLOAT, "MPI_FLOAT", sizeof(float)},
    {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double)},
    {MPI_INT8_T, "MPI_INT8_T", 1},
    {MPI_INT16_T, "MPI_INT16_T", 2},
    {MPI_INT32_T, "MPI_INT32_T", 4},
    {MPI_INT64_T, "MPI_INT64_T", 8},
    {MPI_UINT8_T, "MPI_UINT8_T", 1},
    {MPI_UINT16_T, "MPI_UINT16_T", 2},
    {MPI_UINT32_T, "MPI_UINT32_T", 4},
    {MPI_UINT64_T, "MPI_UINT64_T", 8},
    {MPI_C_BOOL, "MPI_C_BOOL", sizeof(_Bool)},
    {MPI_C_FLOAT_COMPLEX, NULL, sizeof(float _Complex)},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex)},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex)},
    {MPI_AINT, "MPI_AINT", sizeof(MPI_Aint)},
    {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset)},
    {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count)},
    {MPI_PACKED, "MPI_PACKED", 1},
  };
  int ok = 1;
  for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    if (!bounds_are(tab[k].t, 0, tab[k].size, 0, tab[k].size, tab[k].size)) {
      printf("  %s\n", tab[k].name ? tab[k].name : "complex");
      ok = 0;
    }
    MPI_Type_get_name(tab[k].t, name, &len);
    if (tab[k].name && (strcmp(name, tab[k].name) || len != (int)strlen(name))) {
      printf("  name '%s' for %s\n", name, tab[k].name);
      ok = 0;
    }
    if (!envelope_is(tab[k].t, 0, 0, 0, MPI_COMBINER_NAMED))
      ok = 0;
  }
  CHECK(ok, "predefined types: size, extent, true extent, name, envelope");

  /* pair types: C layout of struct { T v; int i; } */
#define PAIR(T, H, N)                                                                                             \
  {                                                                                                               \
    struct p { T v; int i; };                                                                                     \
    char name[MPI_MAX_OBJECT_NAME];                                                                               \
    int len;                                                                                                      \
    MPI_Type_get_name(H, name, &len);                                                                             \
    if (!bounds_are(H, 0, sizeof(struct p), 0, offsetof(struct p, i) + sizeof(int), sizeof(T) + sizeof(int)) ||  \
        strcmp(name, N)) {                                                                                        \
      printf("  %s\n", N);                                                                                        \
      ok = 0;                                                                                                     \
    }                                                                                                             \
  }
  ok = 1;
  PAIR(float, MPI_FLOAT_INT, "MPI_FLOAT_INT")
  PAIR(double, MPI_DOUBLE_INT, "MPI_DOUBLE_INT")
  PAIR(long, MPI_LONG_INT, "MPI_LONG_INT")
  PAIR(int, MPI_2INT, "MPI_2INT")
  PAIR(short, MPI_SHORT_INT, "MPI_SHORT_INT")
  PAIR(long double, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT")
  CHECK(ok, "pair types: C layout, padding, names");

  CHECK(bounds_are(MPI_LB, 0, 0, 0, 0, 0) && bounds_are(MPI_UB, 0, 0, 0, 0, 0), "MPI_LB / MPI_UB are empty");

  /* pack/unpack of padded pairs: the padding is not transferred */
  struct {
    short v;
    int i;
  } si[3] = {{1, 10}, {2, 20}, {3, 30}}, so[3];
  char packed[64];
  int pos = 0, size;
  MPI_Pack_size(3, MPI_SHORT_INT, MPI_COMM_WORLD, &size);
  MPI_Pack(si, 3, MPI_SHORT_INT, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
  memset(so, 0, sizeof(so));
  int pos2 = 0;
  MPI_Unpack(packed, pos, &pos2, so, 3, MPI_SHORT_INT, MPI_COMM_WORLD);
  CHECK(size == 18 && pos == 18 && pos2 == 18 && so[0].v == 1 && so[1].i == 20 && so[2].v == 3 && so[2].i == 30,
        "pack/unpack MPI_SHORT_INT x3 (6 bytes each)");
}

static void test_constructors(void)
{
  MPI_Datatype t, u, w;

  MPI_Type_contiguous(3, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 12, 0, 12, 12) && int_map_is(t, 2, 0, MAP(0, 1, 2, 3, 4, 5)) &&
            envelope_is(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS) &&
            contents_are(t, 1, (int[]){3}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_contiguous(3, INT)");
  MPI_Type_free(&t);
  CHECK(t == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");

  MPI_Type_contiguous(0, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 0, 0, 0, 0) && int_map_is(t, 4, 0, NULL, 0), "Type_contiguous(0, INT) is empty");
  MPI_Type_free(&t);

  MPI_Type_vector(3, 2, 4, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 40, 0, 40, 24) &&
            int_map_is(t, 2, 0, MAP(0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19)) &&
            envelope_is(t, 3, 0, 1, MPI_COMBINER_VECTOR) &&
            contents_are(t, 3, (int[]){3, 2, 4}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_vector(3, 2, 4, INT), count 2");
  MPI_Type_free(&t);

  MPI_Type_vector(3, 1, -2, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, -16, 20, -16, 20, 12) && int_map_is(t, 2, 8, MAP(0, -2, -4, 5, 3, 1)),
        "Type_vector with a negative stride");
  MPI_Type_free(&t);

  MPI_Type_create_hvector(2, 3, 20, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 32, 0, 32, 24) && int_map_is(t, 2, 0, MAP(0, 1, 2, 5, 6, 7, 8, 9, 10, 13, 14, 15)) &&
            envelope_is(t, 2, 1, 1, MPI_COMBINER_HVECTOR) &&
            contents_are(t, 2, (int[]){2, 3}, 1, (MPI_Aint[]){20}, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_create_hvector(2, 3, 20 bytes, INT)");
  MPI_Type_free(&t);
  MPI_Type_hvector(2, 3, 20, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 32, 0, 32, 24) && envelope_is(t, 2, 1, 1, MPI_COMBINER_HVECTOR),
        "Type_hvector (deprecated)");
  MPI_Type_free(&t);

  /* epsilon: an int every 3 bytes is padded to the alignment of int (MPI-3.1 §4.1.6) */
  MPI_Type_create_hvector(2, 1, 3, MPI_INT, &t);
  CHECK(bounds_are(t, 0, 8, 0, 7, 8), "hvector extent padded to int alignment");
  MPI_Type_free(&t);

  MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){5, 0, 10}, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 52, 0, 52, 24) &&
            int_map_is(t, 2, 0, MAP(5, 6, 0, 10, 11, 12, 18, 19, 13, 23, 24, 25)) &&
            envelope_is(t, 7, 0, 1, MPI_COMBINER_INDEXED) &&
            contents_are(t, 7, (int[]){3, 2, 1, 3, 5, 0, 10}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_indexed keeps the type map order");
  /* nested: contiguous of indexed */
  MPI_Type_contiguous(2, t, &u);
  MPI_Type_commit(&u);
  CHECK(bounds_are(u, 0, 104, 0, 104, 48) &&
            int_map_is(u, 1, 0, MAP(5, 6, 0, 10, 11, 12, 18, 19, 13, 23, 24, 25)) &&
            contents_are(u, 1, (int[]){2}, 0, NULL, 1, (MPI_Datatype[]){t}),
        "contiguous of indexed; get_contents gives the inner type");
  MPI_Type_free(&t);
  CHECK(int_map_is(u, 1, 0, MAP(5, 6, 0, 10, 11, 12, 18, 19, 13, 23, 24, 25)),
        "a type stays usable after its old type is freed");
  MPI_Type_free(&u);

  MPI_Type_indexed(2, (int[]){0, 2}, (int[]){100, 1}, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 4, 8, 4, 8, 8) && int_map_is(t, 2, 0, MAP(1, 2, 3, 4)),
        "zero blocklength blocks do not count in the bounds");
  MPI_Type_free(&t);

  MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){12, 0}, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 16, 0, 16, 12) && int_map_is(t, 2, 0, MAP(3, 0, 1, 7, 4, 5)) &&
            envelope_is(t, 3, 2, 1, MPI_COMBINER_HINDEXED) &&
            contents_are(t, 3, (int[]){2, 1, 2}, 2, (MPI_Aint[]){12, 0}, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_create_hindexed");
  MPI_Type_free(&t);
  MPI_Type_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){12, 0}, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(int_map_is(t, 2, 0, MAP(3, 0, 1, 7, 4, 5)) && envelope_is(t, 3, 2, 1, MPI_COMBINER_HINDEXED),
        "Type_hindexed (deprecated)");
  MPI_Type_free(&t);

  MPI_Type_create_indexed_block(3, 2, (int[]){4, 0, 8}, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 40, 0, 40, 24) && int_map_is(t, 1, 0, MAP(4, 5, 0, 1, 8, 9)) &&
            envelope_is(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK) &&
            contents_are(t, 5, (int[]){3, 2, 4, 0, 8}, 0, NULL, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_create_indexed_block");
  MPI_Type_free(&t);

  MPI_Type_create_hindexed_block(2, 1, (MPI_Aint[]){16, 0}, MPI_INT, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 20, 0, 20, 8) && int_map_is(t, 2, 0, MAP(4, 0, 9, 5)) &&
            envelope_is(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK) &&
            contents_are(t, 2, (int[]){2, 1}, 2, (MPI_Aint[]){16, 0}, 1, (MPI_Datatype[]){MPI_INT}),
        "Type_create_hindexed_block");
  MPI_Type_free(&t);

  /* vector of vector */
  MPI_Type_vector(2, 1, 3, MPI_INT, &u);
  MPI_Type_vector(2, 1, 2, u, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, 48, 0, 48, 16) && int_map_is(t, 2, 0, MAP(0, 3, 8, 11, 12, 15, 20, 23)),
        "vector of vector");
  /* resized: interleave two vectors */
  MPI_Type_create_resized(u, 0, 8, &w);
  MPI_Type_commit(&w);
  CHECK(bounds_are(w, 0, 8, 0, 16, 8) && int_map_is(w, 3, 0, MAP(0, 3, 2, 5, 4, 7)) &&
            envelope_is(w, 0, 2, 1, MPI_COMBINER_RESIZED) &&
            contents_are(w, 0, NULL, 2, (MPI_Aint[]){0, 8}, 1, (MPI_Datatype[]){u}),
        "Type_create_resized: overlapping elements");
  MPI_Type_free(&t);
  MPI_Type_free(&u);
  MPI_Type_free(&w);

  MPI_Type_create_resized(MPI_INT, -4, 16, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, -4, 16, 0, 4, 4) && int_map_is(t, 3, 4, MAP(0, 4, 8)), "Type_create_resized(INT, -4, 16)");
  MPI_Type_contiguous(2, t, &u);
  MPI_Type_commit(&u);
  CHECK(bounds_are(u, -4, 32, 0, 20, 8) && int_map_is(u, 2, 4, MAP(0, 4, 8, 12)),
        "contiguous of resized: no padding, resized bounds are sticky");
  MPI_Type_free(&u);
  MPI_Type_indexed(2, (int[]){2, 1}, (int[]){0, 5}, t, &u);
  CHECK(bounds_are(u, -4, 96, 0, 84, 12), "indexed of resized");
  MPI_Type_free(&u);
  MPI_Type_free(&t);

  MPI_Type_create_resized(MPI_INT, 4, -8, &t);
  CHECK(bounds_are(t, 4, -8, 0, 4, 4), "resized with a negative extent");
  MPI_Type_free(&t);

  /* dup */
  MPI_Type_vector(3, 2, 4, MPI_INT, &u);
  MPI_Type_commit(&u);
  MPI_Type_dup(u, &t);
  CHECK(bounds_are(t, 0, 40, 0, 40, 24) && int_map_is(t, 1, 0, MAP(0, 1, 4, 5, 8, 9)) &&
            envelope_is(t, 0, 0, 1, MPI_COMBINER_DUP) && contents_are(t, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){u}),
        "Type_dup of a committed vector (committed too)");
  MPI_Type_free(&t);
  MPI_Type_free(&u);
  MPI_Type_dup(MPI_DOUBLE, &t);
  CHECK(bounds_are(t, 0, 8, 0, 8, 8) && envelope_is(t, 0, 0, 1, MPI_COMBINER_DUP) &&
            contents_are(t, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){MPI_DOUBLE}),
        "Type_dup of a predefined type");
  MPI_Type_free(&t);

  /* big contiguous types stay cheap */
  MPI_Type_contiguous(1 << 24, MPI_BYTE, &u);
  MPI_Type_contiguous(16, u, &t);
  MPI_Count sx;
  MPI_Type_size_x(t, &sx);
  CHECK(sx == (MPI_Count)1 << 28, "Type_size_x of contiguous(16, contiguous(2^24, BYTE))");
  MPI_Type_free(&t);
  MPI_Type_free(&u);
}

struct rec {
  char c;
  double d;
  int i[2];
};

static void test_struct(void)
{
  MPI_Datatype t, u;
  const MPI_Aint disp[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
  MPI_Type_create_struct(3, (int[]){1, 1, 2}, disp, (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}, &t);
  MPI_Type_commit(&t);
  CHECK(bounds_are(t, 0, sizeof(struct rec), 0, sizeof(struct rec), 17) &&
            envelope_is(t, 4, 3, 3, MPI_COMBINER_STRUCT) &&
            contents_are(t, 4, (int[]){3, 1, 1, 2}, 3, disp, 3, (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_INT}),
        "Type_create_struct of struct rec");

  struct rec in[3], out[3];
  memset(in, 0x55, sizeof(in));
  for (int k = 0; k < 3; k++) {
    in[k].c = (char)('a' + k);
    in[k].d = 1.5 * k;
    in[k].i[0] = 10 * k;
    in[k].i[1] = 10 * k + 1;
  }
  char packed[128], zero[sizeof(out)];
  int pos = 0, pos2 = 0, size;
  MPI_Pack_size(3, t, MPI_COMM_WORLD, &size);
  MPI_Pack(in, 3, t, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
  double d1;
  memcpy(&d1, packed + 17 + 1, sizeof(double));
  memset(out, 0, sizeof(out));
  MPI_Unpack(packed, pos, &pos2, out, 3, t, MPI_COMM_WORLD);
  int ok = size == 51 && pos == 51 && pos2 == 51 && packed[0] == 'a' && packed[17] == 'b' && d1 == 1.5;
  for (int k = 0; k < 3; k++)
    ok = ok && out[k].c == in[k].c && out[k].d == in[k].d && out[k].i[0] == in[k].i[0] && out[k].i[1] == in[k].i[1];
  /* padding bytes untouched by unpack */
  memset(zero, 0, sizeof(zero));
  ok = ok && !memcmp((char *)&out[1] + 1, zero, offsetof(struct rec, d) - 1);
  CHECK(ok, "struct rec x3: pack order, unpack, padding untouched");
  MPI_Type_free(&t);

  MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &t);
  CHECK(bounds_are(t, 0, 16, 0, 9, 9), "struct {double; char}: extent padded to 16");
  MPI_Type_free(&t);
  MPI_Type_struct(2, (int[]){1, 0}, (MPI_Aint[]){0, 100}, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t);
  CHECK(bounds_are(t, 0, 4, 0, 4, 4) && envelope_is(t, 3, 2, 2, MPI_COMBINER_STRUCT),
        "Type_struct (deprecated), zero blocklength member ignored");
  MPI_Type_free(&t);

  /* MPI_LB / MPI_UB markers */
  MPI_Type_create_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){-4, 0, 20}, (MPI_Datatype[]){MPI_LB, MPI_INT, MPI_UB},
                         &t);
  MPI_Type_commit(&t);
  MPI_Aint ext, lb, ub;
  MPI_Type_extent(t, &ext);
  MPI_Type_lb(t, &lb);
  MPI_Type_ub(t, &ub);
  CHECK(bounds_are(t, -4, 24, 0, 4, 4) && ext == 24 && lb == -4 && ub == 20 && int_map_is(t, 3, 4, MAP(0, 6, 12)),
        "struct with MPI_LB / MPI_UB markers; Type_extent/lb/ub");
  MPI_Type_contiguous(2, t, &u);
  CHECK(bounds_are(u, -4, 48, 0, 28, 8), "contiguous of a marked type");
  MPI_Type_free(&u);
  MPI_Type_free(&t);

  /* MPI_BOTTOM with absolute addresses */
  int a = 42;
  double b = 2.25;
  MPI_Aint aa, ab;
  MPI_Get_address(&a, &aa);
  MPI_Address(&b, &ab);
  MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){ab, aa}, (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &t);
  MPI_Type_commit(&t);
  pos = 0;
  MPI_Pack(MPI_BOTTOM, 1, t, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
  double pb;
  int pa;
  memcpy(&pb, packed, sizeof(pb));
  memcpy(&pa, packed + sizeof(double), sizeof(pa));
  a = 0;
  b = 0;
  pos2 = 0;
  MPI_Unpack(packed, pos, &pos2, MPI_BOTTOM, 1, t, MPI_COMM_WORLD);
  CHECK(pos == 12 && pb == 2.25 && pa == 42 && a == 42 && b == 2.25, "Get_address / Address and MPI_BOTTOM");
  MPI_Type_free(&t);
}

static void test_pack_sequence(void)
{
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v);
  MPI_Type_commit(&v);
  int i1 = 7, s1, s2, s3, pos = 0, pos2 = 0, i2 = 0;
  double d[4] = {1, 2, 3, 4}, e[4] = {0, 0, 0, 0};
  short sh = -3, sh2 = 0;
  char buf[64];
  MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1);
  MPI_Pack_size(1, v, MPI_COMM_WORLD, &s2);
  MPI_Pack_size(1, MPI_SHORT, MPI_COMM_WORLD, &s3);
  MPI_Pack(&i1, 1, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
  MPI_Pack(d, 1, v, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
  MPI_Pack(&sh, 1, MPI_SHORT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
  MPI_Unpack(buf, pos, &pos2, &i2, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Unpack(buf, pos, &pos2, e, 1, v, MPI_COMM_WORLD);
  MPI_Unpack(buf, pos, &pos2, &sh2, 1, MPI_SHORT, MPI_COMM_WORLD);
  CHECK(s1 == 4 && s2 == 16 && s3 == 2 && pos == 22 && pos2 == 22 && i2 == 7 && e[0] == 1 && e[1] == 0 &&
            e[2] == 3 && e[3] == 0 && sh2 == -3,
        "Pack / Unpack sequence with position");
  MPI_Type_free(&v);
}

static void test_counts(void)
{
  MPI_Datatype c3, t, u;
  MPI_Status st;
  int cnt, el;
  MPI_Count elx;

  /* a partial receive into a homogeneous derived type */
  int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {0};
  MPI_Type_contiguous(3, MPI_INT, &c3);
  MPI_Type_commit(&c3);
  MPI_Sendrecv(src, 5, MPI_INT, 0, 1, dst, 2, c3, 0, 1, MPI_COMM_SELF, &st);
  MPI_Get_count(&st, c3, &cnt);
  MPI_Get_elements(&st, c3, &el);
  MPI_Get_elements_x(&st, c3, &elx);
  CHECK(cnt == MPI_UNDEFINED && el == 5 && elx == 5 && dst[4] == 5 && dst[5] == 0,
        "partial receive of 5 ints in 2 x contiguous(3): count UNDEFINED, 5 elements");
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK(cnt == 5, "Get_count with the basic type");

  /* a partial receive into a heterogeneous struct: {2 x INT, DOUBLE} */
  MPI_Type_create_struct(2, (int[]){2, 1}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t);
  MPI_Type_commit(&t);
  MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 16}, (MPI_Datatype[]){t, MPI_INT}, &u);
  MPI_Type_commit(&u);
  struct {
    int i[2];
    double d;
  } s_in[2] = {{{1, 2}, 3.5}, {{4, 0}, 0}}, s_out[3];
  memset(s_out, 0, sizeof(s_out));
  MPI_Sendrecv(s_in, 1, u, 0, 2, s_out, 3, t, 0, 2, MPI_COMM_SELF, &st);
  MPI_Get_count(&st, t, &cnt);
  MPI_Get_elements(&st, t, &el);
  CHECK(cnt == MPI_UNDEFINED && el == 4 && s_out[0].i[1] == 2 && s_out[0].d == 3.5 && s_out[1].i[0] == 4 &&
            s_out[1].i[1] == 0 && s_out[1].d == 0,
        "partial receive of a struct {2 INT, DOUBLE}: 4 elements");

  int ok = 1;
  for (int k = 0; k <= 9; k++) {
    MPI_Status_set_elements(&st, t, k);
    MPI_Get_elements(&st, t, &el);
    MPI_Get_count(&st, t, &cnt);
    ok = ok && el == k && cnt == (k % 3 ? MPI_UNDEFINED : k / 3);
  }
  MPI_Status_set_elements(&st, MPI_BYTE, 6);
  MPI_Get_elements(&st, t, &el);
  ok = ok && el == MPI_UNDEFINED;
  MPI_Status_set_elements(&st, MPI_BYTE, 20);
  MPI_Get_elements(&st, t, &el);
  ok = ok && el == 4;
  CHECK(ok, "Status_set_elements / Get_elements / Get_count on a struct");

  /* pair types count as one element */
  struct {
    float v;
    int i;
  } fi[7] = {{1, 1}, {2, 2}, {3, 3}};
  MPI_Sendrecv(fi, 3, MPI_FLOAT_INT, 0, 3, fi + 3, 4, MPI_FLOAT_INT, 0, 3, MPI_COMM_SELF, &st);
  MPI_Get_count(&st, MPI_FLOAT_INT, &cnt);
  MPI_Get_elements(&st, MPI_FLOAT_INT, &el);
  CHECK(cnt == 3 && el == 3, "pair types: Get_count == Get_elements");

  MPI_Datatype z;
  MPI_Type_contiguous(0, MPI_INT, &z);
  MPI_Type_commit(&z);
  MPI_Status_set_elements(&st, MPI_BYTE, 0);
  MPI_Get_count(&st, z, &cnt);
  MPI_Get_elements(&st, z, &el);
  CHECK(cnt == 0 && el == 0, "zero-size type: count 0");
  MPI_Type_free(&z);
  /* counts beyond INT_MAX through the _x variants (the status keeps 64 bits) */
  const MPI_Count big = (MPI_Count)0x7654321ff1234567LL;
  MPI_Count bx = 0;
  MPI_Status_set_elements_x(&st, MPI_BYTE, big);
  MPI_Get_elements_x(&st, MPI_BYTE, &bx);
  CHECK(bx == big, "Status_set_elements_x / Get_elements_x beyond INT_MAX");
  MPI_Get_count(&st, MPI_BYTE, &cnt);
  CHECK(cnt == MPI_UNDEFINED, "Get_count beyond INT_MAX: MPI_UNDEFINED");
  MPI_Type_free(&u);
  MPI_Type_free(&t);
  MPI_Type_free(&c3);
}

static void test_names_and_x(void)
{
  MPI_Datatype t;
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Type_vector(2, 1, 2, MPI_SHORT, &t);
  MPI_Type_get_name(t, name, &len);
  int ok = len == 0 && name[0] == '\0';
  MPI_Type_set_name(t, "my vector");
  MPI_Type_get_name(t, name, &len);
  CHECK(ok && !strcmp(name, "my vector") && len == 9, "Type_get_name / Type_set_name");
  MPI_Count lb, ext, tlb, text, size;
  MPI_Type_get_extent_x(t, &lb, &ext);
  MPI_Type_get_true_extent_x(t, &tlb, &text);
  MPI_Type_size_x(t, &size);
  CHECK(lb == 0 && ext == 6 && tlb == 0 && text == 6 && size == 4, "_x variants");
  MPI_Type_free(&t);
}

static void test_errors(void)
{
  MPI_Datatype t = MPI_DATATYPE_NULL, u;
  int size, pos = 0;
  char buf[64];
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(err_class(MPI_Type_contiguous(-1, MPI_INT, &u)) == MPI_ERR_COUNT, "negative count -> MPI_ERR_COUNT");
  CHECK(err_class(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &u)) == MPI_ERR_TYPE,
        "MPI_DATATYPE_NULL as old type -> MPI_ERR_TYPE");
  CHECK(err_class(MPI_Type_vector(1, -1, 1, MPI_INT, &u)) == MPI_ERR_ARG, "negative blocklength -> MPI_ERR_ARG");
  CHECK(err_class(MPI_Type_size(MPI_DATATYPE_NULL, &size)) == MPI_ERR_TYPE, "Type_size(NULL) -> MPI_ERR_TYPE");
  CHECK(err_class(MPI_Type_commit(&t)) == MPI_ERR_TYPE, "Type_commit(NULL) -> MPI_ERR_TYPE");
  t = MPI_INT;
  CHECK(err_class(MPI_Type_free(&t)) == MPI_ERR_TYPE, "Type_free(MPI_INT) -> MPI_ERR_TYPE");
  MPI_Type_contiguous(2, MPI_INT, &t);
  CHECK(err_class(MPI_Pack(buf, 1, t, buf + 32, 32, &pos, MPI_COMM_WORLD)) == MPI_ERR_TYPE,
        "Pack with an uncommitted type -> MPI_ERR_TYPE");
  MPI_Type_dup(t, &u);
  CHECK(err_class(MPI_Pack(buf, 1, u, buf + 32, 32, &pos, MPI_COMM_WORLD)) == MPI_ERR_TYPE,
        "dup of an uncommitted type is uncommitted");
  MPI_Type_free(&u);
  MPI_Type_free(&t);
  pos = 0;
  CHECK(err_class(MPI_Pack(buf, 3, MPI_INT, buf + 32, 8, &pos, MPI_COMM_WORLD)) == MPI_ERR_TRUNCATE,
        "Pack beyond outsize -> MPI_ERR_TRUNCATE");
  pos = 0;
  CHECK(err_class(MPI_Unpack(buf, 8, &pos, buf + 32, 3, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_TRUNCATE,
        "Unpack beyond insize -> MPI_ERR_TRUNCATE");
#ifndef OPEN_MPI /* Open MPI wraps silently */
  MPI_Datatype big1, big2;
  MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &big1);
  MPI_Type_contiguous(1 << 30, big1, &big2);
  CHECK(err_class(MPI_Type_contiguous(1 << 30, big2, &u)) == MPI_ERR_ARG &&
            err_class(MPI_Type_vector(2, 1, 1 << 30, big2, &u)) == MPI_ERR_ARG,
        "a type larger than MPI_Aint -> MPI_ERR_ARG");
  MPI_Type_free(&big2);
  MPI_Type_free(&big1);
#endif
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  test_predefined();
  test_constructors();
  test_struct();
  test_pack_sequence();
  test_counts();
  test_names_and_x();
  test_errors();
  int all = failures;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s t_datatype (%d failure(s) over all ranks)\n", all ? "FAIL" : "PASS", all);
  MPI_Finalize();
  return failures != 0;
}
