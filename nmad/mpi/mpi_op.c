/* Reduction operations of the MPI shim (MPI-3.1 §5.9): the predefined operations on the types §5.9.2 allows,
 * user operations, and their application to derived datatypes.
 *
 * Predefined operations are kernels `inout[i] = in[i] op inout[i]` over runs of one predefined type, generated
 * from the (operation x type category) table of §5.9.2 by X-macros: a kernel exists exactly where the standard
 * defines the operation (plus MPI_CHAR as a C integer, and the logical operations on MPI_AINT, MPI_OFFSET and
 * MPI_COUNT, as MPICH accepts them), so a missing kernel
 * is MPI_ERR_OP. A derived datatype is reduced through its `basic` type: the kernel runs over the blocks of its
 * flattened type map (mpi_datatype.c), which hold whole basic elements. MPI_REPLACE and MPI_NO_OP work on any
 * type (for accumulate-like callers); MPI_Reduce_local refuses them as the standard does. */
#include "nm_mpi_private.h"
#include <stdlib.h>
#include <string.h>

/** n consecutive elements: inout[i] = in[i] op inout[i]. */
typedef void nm_mpi_kernel_t(const void *in, void *inout, MPI_Count n);

/* Same layout as mpi_datatype.c's pair types: struct { value; int index; } */
#define NM_MPI_PAIR_TYPES(X)                                                                                      \
  X(FLOAT_INT, float) X(DOUBLE_INT, double) X(LONG_INT, long) X(2INT, int) X(SHORT_INT, short)                  \
  X(LONG_DOUBLE_INT, long double)
#define NM_MPI_PAIR_STRUCT(SUF, T) \
  struct nm_mpi_pair_##SUF {       \
    T v;                           \
    int i;                         \
  };
NM_MPI_PAIR_TYPES(NM_MPI_PAIR_STRUCT)

/* ---------------------------------------------------------------- type categories of §5.9.2 */
/* Each category calls E(K, suffix of MPI_<suffix>, C type) for its types. */
#define NM_MPI_CAT_C_INTEGER(K, E)                                                                                \
  E(K, CHAR, char) E(K, SIGNED_CHAR, signed char) E(K, UNSIGNED_CHAR, unsigned char) E(K, SHORT, short)         \
  E(K, UNSIGNED_SHORT, unsigned short) E(K, INT, int) E(K, UNSIGNED, unsigned) E(K, LONG, long)                 \
  E(K, UNSIGNED_LONG, unsigned long) E(K, LONG_LONG_INT, long long) E(K, UNSIGNED_LONG_LONG, unsigned long long) \
  E(K, INT8_T, int8_t) E(K, INT16_T, int16_t) E(K, INT32_T, int32_t) E(K, INT64_T, int64_t)                     \
  E(K, UINT8_T, uint8_t) E(K, UINT16_T, uint16_t) E(K, UINT32_T, uint32_t) E(K, UINT64_T, uint64_t)
#define NM_MPI_CAT_MULTI_LANG(K, E) E(K, AINT, MPI_Aint) E(K, OFFSET, MPI_Offset) E(K, COUNT, MPI_Count)
#define NM_MPI_CAT_FLOATING(K, E) E(K, FLOAT, float) E(K, DOUBLE, double) E(K, LONG_DOUBLE, long double)
#define NM_MPI_CAT_COMPLEX(K, E)                                                                                  \
  E(K, C_FLOAT_COMPLEX, float _Complex) E(K, C_DOUBLE_COMPLEX, double _Complex)                                 \
  E(K, C_LONG_DOUBLE_COMPLEX, long double _Complex)
#define NM_MPI_CAT_LOGICAL(K, E) E(K, C_BOOL, _Bool)
#define NM_MPI_CAT_BYTE(K, E) E(K, BYTE, unsigned char)

/* ---------------------------------------------------------------- operation groups */
/* Each group calls K(op, type suffix, C type, expression of a = in[i] and b = inout[i]). Integer sums and
 * products go through uintmax_t: modulo arithmetic, no signed overflow. */
#define NM_MPI_OPS_MINMAX(K, S, T) K(MAX, S, T, a > b ? a : b) K(MIN, S, T, a < b ? a : b)
#define NM_MPI_OPS_ARITH_INT(K, S, T) \
  K(SUM, S, T, (uintmax_t)a + (uintmax_t)b) K(PROD, S, T, (uintmax_t)a * (uintmax_t)b)
#define NM_MPI_OPS_ARITH(K, S, T) K(SUM, S, T, a + b) K(PROD, S, T, a * b)
#define NM_MPI_OPS_LOGICAL(K, S, T) K(LAND, S, T, a && b) K(LOR, S, T, a || b) K(LXOR, S, T, !a != !b)
#define NM_MPI_OPS_BITWISE(K, S, T) K(BAND, S, T, a & b) K(BOR, S, T, a | b) K(BXOR, S, T, a ^ b)

/** The table of §5.9.2: which operations apply to which categories. */
#define NM_MPI_ALL_KERNELS(K)                                                                                     \
  NM_MPI_CAT_C_INTEGER(K, NM_MPI_OPS_MINMAX)                                                                    \
  NM_MPI_CAT_C_INTEGER(K, NM_MPI_OPS_ARITH_INT)                                                                 \
  NM_MPI_CAT_C_INTEGER(K, NM_MPI_OPS_LOGICAL)                                                                   \
  NM_MPI_CAT_C_INTEGER(K, NM_MPI_OPS_BITWISE)                                                                   \
  NM_MPI_CAT_MULTI_LANG(K, NM_MPI_OPS_MINMAX)                                                                   \
  NM_MPI_CAT_MULTI_LANG(K, NM_MPI_OPS_ARITH_INT)                                                                \
  NM_MPI_CAT_MULTI_LANG(K, NM_MPI_OPS_BITWISE)                                                                  \
  NM_MPI_CAT_MULTI_LANG(K, NM_MPI_OPS_LOGICAL) /* beyond §5.9.2, as MPICH (its suite's coll/allred uses it) */    \
  NM_MPI_CAT_FLOATING(K, NM_MPI_OPS_MINMAX)                                                                     \
  NM_MPI_CAT_FLOATING(K, NM_MPI_OPS_ARITH)                                                                      \
  NM_MPI_CAT_COMPLEX(K, NM_MPI_OPS_ARITH)                                                                       \
  NM_MPI_CAT_LOGICAL(K, NM_MPI_OPS_LOGICAL)                                                                     \
  NM_MPI_CAT_BYTE(K, NM_MPI_OPS_BITWISE)

/* Memory speed (issue 18 deliverable 2): one plain loop per (op, type) that GCC vectorises. The operands never
 * overlap (MPI forbids aliased buffers; collectives/ combines a work vector into another one), so restrict spares
 * the run-time overlap check; and the build's -O2 uses GCC's "very cheap" vectoriser cost model, which refuses
 * loops of unknown trip count (every kernel here): the attribute asks for the dynamic model on these functions
 * only. doc/collectives.md lists which kernels vectorise (-fopt-info-vec). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
/* x86-64: a clone for AVX2, chosen at load time (ifunc), beside the baseline SSE2 one: twice the elements per
 * instruction (a 1 KiB MPI_SUM of doubles at the root of a 4-rank reduce: ~1,400 -> ~700 instructions). */
#define NM_MPI_KERNEL_ATTR \
  __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"), target_clones("avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
#define NM_MPI_KERNEL_ATTR __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define NM_MPI_KERNEL_ATTR
#endif

#define NM_MPI_KERNEL_DEF(OP, S, T, EXPR)                                                \
  NM_MPI_KERNEL_ATTR static void nm_mpi_k_##OP##_##S(const void *in_, void *inout_, MPI_Count n) \
  {                                                                                      \
    const T *restrict in = in_;                                                          \
    T *restrict inout = inout_;                                                          \
    for (MPI_Count i = 0; i < n; i++) {                                                  \
      const T a = in[i], b = inout[i];                                                   \
      inout[i] = (T)(EXPR);                                                              \
    }                                                                                    \
  }
NM_MPI_ALL_KERNELS(NM_MPI_KERNEL_DEF)

/* MAXLOC / MINLOC (§5.9.4): the better value wins; on a tie, the smaller index. Field by field, so the padding
 * of the pair (which may belong to a neighbour in an odd derived layout) is never written. */
#define NM_MPI_LOC_DEF(OP, CMP, S, T)                                                    \
  static void nm_mpi_k_##OP##_##S(const void *in_, void *inout_, MPI_Count n)            \
  {                                                                                      \
    const struct nm_mpi_pair_##S *in = in_;                                              \
    struct nm_mpi_pair_##S *inout = inout_;                                              \
    for (MPI_Count k = 0; k < n; k++)                                                    \
      if (in[k].v CMP inout[k].v || (in[k].v == inout[k].v && in[k].i < inout[k].i)) {   \
        inout[k].v = in[k].v;                                                            \
        inout[k].i = in[k].i;                                                            \
      }                                                                                  \
  }
#define NM_MPI_LOC_DEFS(S, T) NM_MPI_LOC_DEF(MAXLOC, >, S, T) NM_MPI_LOC_DEF(MINLOC, <, S, T)
NM_MPI_PAIR_TYPES(NM_MPI_LOC_DEFS)

#define NM_MPI_KERNEL_REG(OP, S, T, EXPR) [MPI_##OP][MPI_##S] = nm_mpi_k_##OP##_##S,
#define NM_MPI_LOC_REG(S, T) [MPI_MAXLOC][MPI_##S] = nm_mpi_k_MAXLOC_##S, [MPI_MINLOC][MPI_##S] = nm_mpi_k_MINLOC_##S,

static nm_mpi_kernel_t *const nm_mpi_kernels[NM_MPI_PREDEFINED_OPS][NM_MPI_PREDEFINED_TYPES] = {
  NM_MPI_ALL_KERNELS(NM_MPI_KERNEL_REG) NM_MPI_PAIR_TYPES(NM_MPI_LOC_REG)
};

/* ---------------------------------------------------------------- the op table */

struct nm_mpi_op_s *nm_mpi_op_get(MPI_Op op)
{
  struct nm_mpi_op_s *o = nm_mpi_table_get(&nm_mpi.ops, op);
  return (o && !o->freed) ? o : NULL;
}

void nm_mpi_op_hold(MPI_Op op)
{
  struct nm_mpi_op_s *o = nm_mpi_table_get(&nm_mpi.ops, op);
  if (o && !o->predefined)
    o->holds++;
}

void nm_mpi_op_release(MPI_Op op)
{
  struct nm_mpi_op_s *o = nm_mpi_table_get(&nm_mpi.ops, op);
  if (o && !o->predefined && --o->holds <= 0 && o->freed) {
    nm_mpi_table_remove(&nm_mpi.ops, op);
    free(o);
  }
}

int nm_mpi_op_init(void)
{
  nm_mpi_table_init(&nm_mpi.ops, NM_MPI_PREDEFINED_OPS);
  for (MPI_Op op = 1; op < NM_MPI_PREDEFINED_OPS; op++) {
    struct nm_mpi_op_s *o = calloc(1, sizeof(*o));
    if (!o || nm_mpi_table_set(&nm_mpi.ops, op, o)) {
      free(o);
      nm_mpi_op_finalize();
      return MPI_ERR_INTERN;
    }
    o->commute = 1;
    o->predefined = 1;
  }
  return MPI_SUCCESS;
}

void nm_mpi_op_finalize(void)
{
  for (int h = 1; h < nm_mpi.ops.n; h++)
    free(nm_mpi_table_get(&nm_mpi.ops, h));
  nm_mpi_table_destroy(&nm_mpi.ops);
}

/* ---------------------------------------------------------------- application */

static inline char *nm_mpi_at(const void *buf, MPI_Aint off)
{
  return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/** Apply @p k to one element of the derived type @p d (at offset @p base) made of basic elements @p b. */
static void nm_mpi_op_apply_elem(nm_mpi_kernel_t *k, const struct nm_mpi_datatype_s *d,
                                 const struct nm_mpi_datatype_s *b, const void *in, void *inout, MPI_Aint base)
{
  if (b->size == b->extent) {
    /* basic elements are dense: each block is a run of them */
    for (int j = 0; j < d->n_blocks; j++) {
      const MPI_Aint off = base + d->blocks[j].disp;
      k(nm_mpi_at(in, off), nm_mpi_at(inout, off), d->blocks[j].len / b->size);
    }
    return;
  }
  /* padded basic elements (pair types): walk the packed stream one element (b->size bytes) at a time; each
   * element starts where the stream stands, with the basic type's own layout from there */
  int j = 0;
  MPI_Aint pos = 0;
  while (j < d->n_blocks) {
    const MPI_Aint off = base + d->blocks[j].disp + pos;
    k(nm_mpi_at(in, off), nm_mpi_at(inout, off), 1);
    MPI_Aint rem = b->size;
    while (rem > 0 && j < d->n_blocks) {
      const MPI_Aint avail = d->blocks[j].len - pos;
      if (rem < avail) {
        pos += rem;
        rem = 0;
      } else {
        rem -= avail;
        j++;
        pos = 0;
      }
    }
  }
}

/** MPI_REPLACE: copy the data bytes of @p count elements. */
static void nm_mpi_op_replace(const struct nm_mpi_datatype_s *d, const void *in, void *inout, int count)
{
  for (int e = 0; e < count; e++)
    for (int j = 0; j < d->n_blocks; j++) {
      const MPI_Aint off = (MPI_Aint)e * d->extent + d->blocks[j].disp;
      memmove(nm_mpi_at(inout, off), nm_mpi_at(in, off), (size_t)d->blocks[j].len);
    }
}

int nm_mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
  /* also a freed op still held by the pending collective applying it (callers check the user's handle) */
  const struct nm_mpi_op_s *o = nm_mpi_table_get(&nm_mpi.ops, op);
  const struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(dt);
  if (!o)
    return MPI_ERR_OP;
  if (!d)
    return MPI_ERR_TYPE;
  if (count < 0)
    return MPI_ERR_COUNT;
  if (o->user) {
    int len = count;
    MPI_Datatype t = dt;
    o->user((void *)in, inout, &len, &t); /* the user signature has no const */
    return MPI_SUCCESS;
  }
  if (op == MPI_NO_OP)
    return MPI_SUCCESS;
  if (op == MPI_REPLACE) {
    nm_mpi_op_replace(d, in, inout, count);
    return MPI_SUCCESS;
  }
  if (d->basic == MPI_DATATYPE_NULL)
    return d->size == 0 && !d->predefined ? MPI_SUCCESS : MPI_ERR_OP; /* no data: nothing to reduce */
  nm_mpi_kernel_t *k = nm_mpi_kernels[op][d->basic];
  const struct nm_mpi_datatype_s *b = nm_mpi_datatype_get(d->basic);
  if (!k || !b)
    return MPI_ERR_OP;
  if (count == 0)
    return MPI_SUCCESS;
  if (d->predefined) {
    k(in, inout, count);
  } else if (d->contiguous && b->size == b->extent) {
    k(nm_mpi_at(in, d->true_lb), nm_mpi_at(inout, d->true_lb), (MPI_Count)count * d->basic_count);
  } else {
    for (int e = 0; e < count; e++)
      nm_mpi_op_apply_elem(k, d, b, in, inout, (MPI_Aint)e * d->extent);
  }
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI functions */

NM_MPI_ALIAS(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
  NM_MPI_LOCKED();
  if (!user_fn || !op)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_op_s *o = calloc(1, sizeof(*o));
  int h = o ? nm_mpi_table_add(&nm_mpi.ops, o) : -1;
  if (h < 0) {
    free(o);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_INTERN, __func__);
  }
  o->user = user_fn;
  o->commute = commute != 0;
  *op = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
  NM_MPI_LOCKED();
  struct nm_mpi_op_s *o = op ? nm_mpi_op_get(*op) : NULL;
  if (!o || o->predefined)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_OP, __func__);
  o->freed = 1; /* pending collectives using it complete normally (5.9.5); the last one frees it */
  if (o->holds <= 0) {
    nm_mpi_table_remove(&nm_mpi.ops, *op);
    free(o);
  }
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_op_s *o = nm_mpi_op_get(op);
  if (!o)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_OP, __func__);
  if (!commute)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  *commute = o->commute;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  if (!nm_mpi_op_get(op) || op == MPI_REPLACE || op == MPI_NO_OP) /* §11.3.4: for accumulate functions only */
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_OP, __func__);
  if (!d || !d->committed)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, __func__);
  if (count < 0)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE) /* MPI_BOTTOM (NULL) is a valid base */
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, __func__);
  int err = nm_mpi_op_apply(op, inbuf, inoutbuf, count, datatype);
  return err ? nm_mpi_error(MPI_COMM_WORLD, err, __func__) : MPI_SUCCESS;
}
