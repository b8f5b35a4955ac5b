/* Datatypes of the MPI shim (MPI-3.1 chapter 4): the predefined types, the type constructors, extents, names,
 * envelope/contents, pack/unpack and the element counts of a status.
 *
 * Representation: every type is flattened at construction into the merged list of byte blocks of one element
 * (struct nm_mpi_block_s, in type-map order, so packing is a walk over the list), plus its bounds. Blocks are
 * merged only when they follow each other both in the type map and in memory, so the packed stream is exactly
 * the concatenation of the blocks, and a basic element never straddles two blocks (its bytes are adjacent in
 * memory). Alongside, the type signature is kept as runs of basic elements of one size (for MPI_Get_elements and
 * MPI_Status_set_elements), and `basic`/`basic_count` tell reductions what a homogeneous type is made of.
 *
 * Bounds follow MPI-3.1 §4.1.6: MPI_LB/MPI_UB markers (and MPI_Type_create_resized, §4.1.7) are "sticky" and
 * win over the data; without an upper bound marker the extent is padded (epsilon) to the largest alignment of
 * the entries. The pair types of MAXLOC/MINLOC (§5.9.4) have the C layout of struct { T value; int index; }; as
 * in Open MPI, each of them counts as one basic element. */
#include "nm_mpi_private.h"
#include <limits.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the shim's private part of a type */

/** A run of @p n consecutive basic elements of @p esize bytes each in a type signature. */
struct nm_mpi_sig_s {
  MPI_Count esize;
  MPI_Count n;
};

struct nm_mpi_dtype_s {
  struct nm_mpi_datatype_s d; /* the part other files see: must stay first */
  int lb_sticky, ub_sticky;   /* explicit lower / upper bound (MPI_LB, MPI_UB, resized) */
  int user_refs;              /* handles the application holds (creation, get_contents); 0 = freed by it */
  MPI_Aint align;             /* largest alignment of the entries (epsilon of §4.1.6) */
  int n_sig;
  struct nm_mpi_sig_s *sig;   /* signature of one element */
  MPI_Count sig_elems;        /* basic elements in one element */
};
/* nm_mpi_datatype_get() (nm_mpi_private.h) reads the table's objects as their public part. */
_Static_assert(offsetof(struct nm_mpi_dtype_s, d) == 0, "the public part of a datatype must come first");

/** buf + off as a pointer: integer arithmetic, since buf may be MPI_BOTTOM with absolute displacements. */
static inline char *nm_mpi_at(const void *buf, MPI_Aint off)
{
  return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* ---------------------------------------------------------------- predefined types */

/* Layout of the MAXLOC/MINLOC pair types (mpi_op.c declares the same structs). */
#define NM_MPI_PAIR_TYPES(X)                                                                                      \
  X(FLOAT_INT, float) X(DOUBLE_INT, double) X(LONG_INT, long) X(2INT, int) X(SHORT_INT, short)                  \
  X(LONG_DOUBLE_INT, long double)
#define NM_MPI_PAIR_STRUCT(SUF, T) \
  struct nm_mpi_pair_##SUF {       \
    T v;                           \
    int i;                         \
  };
NM_MPI_PAIR_TYPES(NM_MPI_PAIR_STRUCT)

#define NM_MPI_SCALAR_TYPES(X)                                                                                    \
  X(CHAR, char) X(SIGNED_CHAR, signed char) X(UNSIGNED_CHAR, unsigned char) X(BYTE, unsigned char)             \
  X(WCHAR, wchar_t) X(SHORT, short) X(UNSIGNED_SHORT, unsigned short) X(INT, int) X(UNSIGNED, unsigned)        \
  X(LONG, long) X(UNSIGNED_LONG, unsigned long) X(LONG_LONG_INT, long long)                                    \
  X(UNSIGNED_LONG_LONG, unsigned long long) X(FLOAT, float) X(DOUBLE, double) X(LONG_DOUBLE, long double)      \
  X(INT8_T, int8_t) X(INT16_T, int16_t) X(INT32_T, int32_t) X(INT64_T, int64_t) X(UINT8_T, uint8_t)            \
  X(UINT16_T, uint16_t) X(UINT32_T, uint32_t) X(UINT64_T, uint64_t) X(C_BOOL, _Bool)                           \
  X(C_FLOAT_COMPLEX, float _Complex) X(C_DOUBLE_COMPLEX, double _Complex)                                      \
  X(C_LONG_DOUBLE_COMPLEX, long double _Complex) X(AINT, MPI_Aint) X(OFFSET, MPI_Offset) X(COUNT, MPI_Count)   \
  X(PACKED, unsigned char)

struct nm_mpi_predef_s {
  MPI_Datatype handle;
  const char *name;
  MPI_Aint size;     /* value (pairs: value + index) */
  MPI_Aint extent;
  MPI_Aint align;
  MPI_Aint vsize;    /* pairs: size of the value; 0 otherwise */
  MPI_Aint ioff;     /* pairs: offset of the index */
};

#define NM_MPI_PREDEF_SCALAR(SUF, T) {MPI_##SUF, "MPI_" #SUF, sizeof(T), sizeof(T), alignof(T), 0, 0},
#define NM_MPI_PREDEF_PAIR(SUF, T)                                                                                \
  {MPI_##SUF,                                                                                                     \
   "MPI_" #SUF,                                                                                                   \
   sizeof(T) + sizeof(int),                                                                                       \
   sizeof(struct nm_mpi_pair_##SUF),                                                                              \
   alignof(struct nm_mpi_pair_##SUF),                                                                             \
   sizeof(T),                                                                                                     \
   offsetof(struct nm_mpi_pair_##SUF, i)},

static const struct nm_mpi_predef_s nm_mpi_predefs[] = {
  NM_MPI_SCALAR_TYPES(NM_MPI_PREDEF_SCALAR) NM_MPI_PAIR_TYPES(NM_MPI_PREDEF_PAIR)
  {MPI_LB, "MPI_LB", 0, 0, 1, 0, 0},
  {MPI_UB, "MPI_UB", 0, 0, 1, 0, 0},
};

/* ---------------------------------------------------------------- object helpers */

static struct nm_mpi_dtype_s *nm_mpi_dtype_get(MPI_Datatype dt)
{
  return nm_mpi_table_get(&nm_mpi.datatypes, dt);
}

/** A type the application may still name: predefined, or derived and not freed by it. */
static struct nm_mpi_dtype_s *nm_mpi_dtype_user(MPI_Datatype dt)
{
  struct nm_mpi_dtype_s *t = nm_mpi_dtype_get(dt);
  if (!t || (!t->d.predefined && t->user_refs <= 0))
    return NULL;
  return t;
}

static void nm_mpi_dtype_free_obj(struct nm_mpi_dtype_s *t)
{
  free(t->d.blocks);
  free(t->d.ints);
  free(t->d.addrs);
  free(t->d.types);
  free(t->sig);
  free(t);
}

void nm_mpi_datatype_ref(MPI_Datatype dt)
{
  struct nm_mpi_dtype_s *t = nm_mpi_dtype_get(dt);
  if (t && !t->d.predefined)
    t->d.refcount++;
}

void nm_mpi_datatype_unref(MPI_Datatype dt)
{
  struct nm_mpi_dtype_s *t = nm_mpi_dtype_get(dt);
  if (!t || t->d.predefined || --t->d.refcount > 0)
    return;
  nm_mpi_table_remove(&nm_mpi.datatypes, dt);
  for (int k = 0; k < t->d.n_types; k++)
    nm_mpi_datatype_unref(t->d.types[k]);
  nm_mpi_dtype_free_obj(t);
}

/* ---------------------------------------------------------------- flattening */

/** One piece of a constructor: @p blocklen consecutive copies of @p type (extent apart) at byte @p disp. */
struct nm_mpi_piece_s {
  MPI_Aint disp;
  MPI_Count blocklen;
  MPI_Datatype type;
};

struct nm_mpi_builder_s {
  struct nm_mpi_block_s *blocks;
  int n_blocks, cap_blocks;
  struct nm_mpi_sig_s *sig;
  int n_sig, cap_sig;
  int nomem;
  int overflow; /* a size or bound does not fit in MPI_Aint / MPI_Count */
};

static int nm_mpi_grow(void **arr, int *cap, int need, size_t elsize)
{
  if (need <= *cap)
    return 0;
  if (*cap >= INT_MAX / 2)
    return -1;
  int ncap = *cap ? *cap * 2 : 8;
  void *p = realloc(*arr, elsize * (size_t)ncap);
  if (!p)
    return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

static void nm_mpi_builder_block(struct nm_mpi_builder_s *b, MPI_Aint disp, MPI_Aint len)
{
  if (len == 0 || b->nomem)
    return;
  if (b->n_blocks > 0) {
    struct nm_mpi_block_s *last = &b->blocks[b->n_blocks - 1];
    if (last->disp + last->len == disp) {
      last->len += len;
      return;
    }
  }
  if (nm_mpi_grow((void **)&b->blocks, &b->cap_blocks, b->n_blocks + 1, sizeof(*b->blocks))) {
    b->nomem = 1;
    return;
  }
  b->blocks[b->n_blocks++] = (struct nm_mpi_block_s){disp, len};
}

static void nm_mpi_builder_sig(struct nm_mpi_builder_s *b, MPI_Count esize, MPI_Count n)
{
  if (n == 0 || b->nomem)
    return;
  if (b->n_sig > 0 && b->sig[b->n_sig - 1].esize == esize) {
    b->sig[b->n_sig - 1].n += n;
    return;
  }
  if (nm_mpi_grow((void **)&b->sig, &b->cap_sig, b->n_sig + 1, sizeof(*b->sig))) {
    b->nomem = 1;
    return;
  }
  b->sig[b->n_sig++] = (struct nm_mpi_sig_s){esize, n};
}

static void nm_mpi_dtype_set_contiguous(struct nm_mpi_dtype_s *t)
{
  t->d.contiguous = t->d.size == 0 || (t->d.n_blocks == 1 && t->d.extent == t->d.size);
}

static inline MPI_Aint nm_mpi_min(MPI_Aint a, MPI_Aint b) { return a < b ? a : b; }
static inline MPI_Aint nm_mpi_max(MPI_Aint a, MPI_Aint b) { return a > b ? a : b; }

/** a * b + c, or set *overflow. */
static MPI_Aint nm_mpi_muladd(MPI_Aint a, MPI_Aint b, MPI_Aint c, int *overflow)
{
  MPI_Aint r;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r)) {
    *overflow = 1;
    return 0;
  }
  return r;
}

/** Build a derived type from its pieces (all type handles already checked) into *out. @return MPI code. */
static int nm_mpi_dtype_build(int n, const struct nm_mpi_piece_s *pc, struct nm_mpi_dtype_s **out)
{
  struct nm_mpi_dtype_s *t = calloc(1, sizeof(*t));
  if (!t)
    return MPI_ERR_NO_MEM;
  struct nm_mpi_builder_s b = {0};
  int have = 0, have_data = 0, found_lb = 0, found_ub = 0, hetero = 0;
  MPI_Aint lb_s = 0, ub_s = 0, lb_n = 0, ub_n = 0, tlb = 0, tub = 0;
  t->align = 1;
  t->d.basic = MPI_DATATYPE_NULL;
  for (int k = 0; k < n && !b.nomem && !b.overflow; k++) {
    if (pc[k].blocklen <= 0)
      continue; /* zero blocklength contributes nothing, not even bounds */
    const struct nm_mpi_dtype_s *o = nm_mpi_dtype_get(pc[k].type);
    const MPI_Aint bl = (MPI_Aint)pc[k].blocklen, ext = o->d.extent;
    const MPI_Aint span = nm_mpi_muladd(bl - 1, ext, 0, &b.overflow);
    const MPI_Aint lo = nm_mpi_min(0, span), hi = nm_mpi_max(0, span);
    const MPI_Aint base = nm_mpi_muladd(1, pc[k].disp, o->d.lb, &b.overflow);
    const MPI_Aint l = nm_mpi_muladd(1, base, lo, &b.overflow);
    const MPI_Aint u = nm_mpi_muladd(1, nm_mpi_muladd(1, base, ext, &b.overflow), hi, &b.overflow);
    const MPI_Count size = nm_mpi_muladd(bl, o->d.size, t->d.size, &b.overflow);
    if (b.overflow)
      break;
    if (o->lb_sticky) {
      lb_s = found_lb ? nm_mpi_min(lb_s, l) : l;
      found_lb = 1;
    }
    if (o->ub_sticky) {
      ub_s = found_ub ? nm_mpi_max(ub_s, u) : u;
      found_ub = 1;
    }
    lb_n = have ? nm_mpi_min(lb_n, l) : l;
    ub_n = have ? nm_mpi_max(ub_n, u) : u;
    have = 1;
    t->align = nm_mpi_max(t->align, o->align);
    if (o->d.size == 0)
      continue;
    /* true bounds lie within [l, u) shifted by lb - true_lb, which fit since the old type's did */
    const MPI_Aint tl = pc[k].disp + o->d.true_lb + lo, tu = pc[k].disp + o->d.true_lb + o->d.true_extent + hi;
    tlb = have_data ? nm_mpi_min(tlb, tl) : tl;
    tub = have_data ? nm_mpi_max(tub, tu) : tu;
    have_data = 1;
    t->d.size = size;
    /* homogeneity: what reductions will operate on */
    if (o->d.basic == MPI_DATATYPE_NULL || (t->d.basic != MPI_DATATYPE_NULL && t->d.basic != o->d.basic)) {
      hetero = 1;
    } else {
      t->d.basic = o->d.basic;
      t->d.basic_count += o->d.basic_count * bl;
    }
    /* blocks: a dense old type makes one block for the whole piece */
    if (o->d.n_blocks == 1 && o->d.blocks[0].len == ext) {
      nm_mpi_builder_block(&b, pc[k].disp + o->d.blocks[0].disp, bl * ext);
    } else {
      for (MPI_Aint c = 0; c < bl && !b.nomem; c++)
        for (int j = 0; j < o->d.n_blocks; j++)
          nm_mpi_builder_block(&b, pc[k].disp + c * ext + o->d.blocks[j].disp, o->d.blocks[j].len);
    }
    /* signature */
    if (o->n_sig == 1) {
      nm_mpi_builder_sig(&b, o->sig[0].esize, o->sig[0].n * bl);
    } else {
      for (MPI_Aint c = 0; c < bl && !b.nomem; c++)
        for (int j = 0; j < o->n_sig; j++)
          nm_mpi_builder_sig(&b, o->sig[j].esize, o->sig[j].n);
    }
    t->sig_elems += o->sig_elems * bl;
  }
  if (b.nomem || b.overflow) {
    free(b.blocks);
    free(b.sig);
    free(t);
    return b.overflow ? MPI_ERR_ARG : MPI_ERR_NO_MEM;
  }
  if (hetero) {
    t->d.basic = MPI_DATATYPE_NULL;
    t->d.basic_count = 0;
  }
  t->lb_sticky = found_lb;
  t->ub_sticky = found_ub;
  MPI_Aint lb = have ? (found_lb ? lb_s : lb_n) : 0;
  MPI_Aint ub = have ? (found_ub ? ub_s : ub_n) : 0;
  if (!found_ub) {
    MPI_Aint r = (ub - lb) % t->align;
    if (r != 0)
      ub += r > 0 ? t->align - r : -r;
  }
  t->d.lb = lb;
  t->d.extent = ub - lb;
  t->d.true_lb = have_data ? tlb : 0;
  t->d.true_extent = have_data ? tub - tlb : 0;
  t->d.blocks = b.blocks;
  t->d.n_blocks = b.n_blocks;
  t->sig = b.sig;
  t->n_sig = b.n_sig;
  t->d.refcount = 1;
  t->user_refs = 1;
  nm_mpi_dtype_set_contiguous(t);
  *out = t;
  return MPI_SUCCESS;
}

/** A copy of @p o's type map and bounds (for dup and resized). */
static struct nm_mpi_dtype_s *nm_mpi_dtype_clone(const struct nm_mpi_dtype_s *o)
{
  struct nm_mpi_dtype_s *t = calloc(1, sizeof(*t));
  if (!t)
    return NULL;
  t->d = o->d;
  t->lb_sticky = o->lb_sticky;
  t->ub_sticky = o->ub_sticky;
  t->align = o->align;
  t->n_sig = o->n_sig;
  t->sig_elems = o->sig_elems;
  t->d.ints = NULL;
  t->d.addrs = NULL;
  t->d.types = NULL;
  t->d.n_ints = t->d.n_addrs = t->d.n_types = 0;
  t->d.name[0] = '\0';
  t->d.predefined = 0;
  t->d.blocks = malloc(sizeof(*t->d.blocks) * (size_t)(o->d.n_blocks ? o->d.n_blocks : 1));
  t->sig = malloc(sizeof(*t->sig) * (size_t)(o->n_sig ? o->n_sig : 1));
  if (!t->d.blocks || !t->sig) {
    free(t->d.blocks);
    free(t->sig);
    free(t);
    return NULL;
  }
  memcpy(t->d.blocks, o->d.blocks, sizeof(*t->d.blocks) * (size_t)o->d.n_blocks);
  memcpy(t->sig, o->sig, sizeof(*t->sig) * (size_t)o->n_sig);
  t->d.refcount = 1;
  t->user_refs = 1;
  return t;
}

/** Record the constructor's arguments (MPI_Type_get_contents) and register @p t. @return MPI code. */
static int nm_mpi_dtype_finish(struct nm_mpi_dtype_s *t, int combiner, int ni, const int *ints, int na,
                               const MPI_Aint *addrs, int nd, const MPI_Datatype *types, MPI_Datatype *newtype)
{
  t->d.combiner = combiner;
  t->d.ints = malloc(sizeof(int) * (size_t)(ni ? ni : 1));
  t->d.addrs = malloc(sizeof(MPI_Aint) * (size_t)(na ? na : 1));
  t->d.types = malloc(sizeof(MPI_Datatype) * (size_t)(nd ? nd : 1));
  int h = -1;
  if (t->d.ints && t->d.addrs && t->d.types)
    h = nm_mpi_table_add(&nm_mpi.datatypes, t);
  if (h < 0) {
    nm_mpi_dtype_free_obj(t);
    return MPI_ERR_NO_MEM;
  }
  if (ni)
    memcpy(t->d.ints, ints, sizeof(int) * (size_t)ni);
  if (na)
    memcpy(t->d.addrs, addrs, sizeof(MPI_Aint) * (size_t)na);
  if (nd)
    memcpy(t->d.types, types, sizeof(MPI_Datatype) * (size_t)nd);
  t->d.n_ints = ni;
  t->d.n_addrs = na;
  t->d.n_types = nd;
  for (int k = 0; k < nd; k++)
    nm_mpi_datatype_ref(types[k]);
  *newtype = h;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- init / finalize */

int nm_mpi_datatype_init(void)
{
  nm_mpi_table_init(&nm_mpi.datatypes, NM_MPI_PREDEFINED_TYPES);
  for (size_t k = 0; k < sizeof(nm_mpi_predefs) / sizeof(nm_mpi_predefs[0]); k++) {
    const struct nm_mpi_predef_s *p = &nm_mpi_predefs[k];
    struct nm_mpi_dtype_s *t = calloc(1, sizeof(*t));
    if (t) {
      t->d.blocks = calloc(2, sizeof(*t->d.blocks));
      t->sig = calloc(1, sizeof(*t->sig));
    }
    if (!t || !t->d.blocks || !t->sig || nm_mpi_table_set(&nm_mpi.datatypes, p->handle, t)) {
      if (t)
        nm_mpi_dtype_free_obj(t);
      nm_mpi_datatype_finalize();
      return MPI_ERR_NO_MEM;
    }
    t->d.refcount = 1;
    t->d.committed = 1;
    t->d.predefined = 1;
    t->d.combiner = MPI_COMBINER_NAMED;
    t->d.size = p->size;
    t->d.extent = p->extent;
    t->align = p->align;
    strncpy(t->d.name, p->name, sizeof(t->d.name) - 1);
    if (p->handle == MPI_LB || p->handle == MPI_UB) {
      t->lb_sticky = p->handle == MPI_LB;
      t->ub_sticky = p->handle == MPI_UB;
      t->d.basic = MPI_DATATYPE_NULL;
    } else {
      t->d.basic = p->handle;
      t->d.basic_count = 1;
      t->n_sig = 1;
      t->sig[0] = (struct nm_mpi_sig_s){p->size, 1};
      t->sig_elems = 1;
      if (p->vsize && p->ioff != p->vsize) { /* pair with padding between value and index */
        t->d.blocks[0] = (struct nm_mpi_block_s){0, p->vsize};
        t->d.blocks[1] = (struct nm_mpi_block_s){p->ioff, (MPI_Aint)sizeof(int)};
        t->d.n_blocks = 2;
      } else {
        t->d.blocks[0] = (struct nm_mpi_block_s){0, p->size};
        t->d.n_blocks = 1;
      }
      t->d.true_extent = p->vsize ? p->ioff + (MPI_Aint)sizeof(int) : p->size;
    }
    nm_mpi_dtype_set_contiguous(t);
  }
  for (int h = 1; h < NM_MPI_PREDEFINED_TYPES; h++)
    if (!nm_mpi_dtype_get(h)) { /* mpi.h and the table above disagree */
      nm_mpi_datatype_finalize();
      return MPI_ERR_INTERN;
    }
  return MPI_SUCCESS;
}

void nm_mpi_datatype_finalize(void)
{
  for (int h = 1; h < nm_mpi.datatypes.n; h++) {
    struct nm_mpi_dtype_s *t = nm_mpi_dtype_get(h);
    if (t)
      nm_mpi_dtype_free_obj(t);
  }
  nm_mpi_table_destroy(&nm_mpi.datatypes);
}

/* ---------------------------------------------------------------- pack / unpack */

void nm_mpi_datatype_pack(const struct nm_mpi_datatype_s *d, const void *buf, MPI_Count count, void *out)
{
  char *o = out;
  if (count <= 0 || d->size == 0)
    return;
  if (d->contiguous) {
    memcpy(o, nm_mpi_datatype_contig_ptr(d, buf), (size_t)(d->size * count));
    return;
  }
  for (MPI_Count e = 0; e < count; e++) {
    const MPI_Aint base = (MPI_Aint)e * d->extent;
    for (int k = 0; k < d->n_blocks; k++) {
      memcpy(o, nm_mpi_at(buf, base + d->blocks[k].disp), (size_t)d->blocks[k].len);
      o += d->blocks[k].len;
    }
  }
}

void nm_mpi_datatype_unpack(const struct nm_mpi_datatype_s *d, const void *in, MPI_Count bytes, void *buf,
                            MPI_Count count)
{
  const char *i = in;
  if (count <= 0 || bytes <= 0 || d->size == 0)
    return;
  if (bytes > d->size * count)
    bytes = d->size * count;
  if (d->contiguous) {
    memcpy(nm_mpi_datatype_contig_ptr(d, buf), i, (size_t)bytes);
    return;
  }
  for (MPI_Count e = 0; e < count; e++) {
    const MPI_Aint base = (MPI_Aint)e * d->extent;
    for (int k = 0; k < d->n_blocks; k++) {
      const MPI_Count n = d->blocks[k].len < bytes ? d->blocks[k].len : bytes;
      memcpy(nm_mpi_at(buf, base + d->blocks[k].disp), i, (size_t)n);
      i += n;
      bytes -= n;
      if (bytes == 0)
        return;
    }
  }
}

/* ---------------------------------------------------------------- constructors */

#define NM_MPI_DT_ERR(code) nm_mpi_error(MPI_COMM_WORLD, (code), __func__)

/** Check an old type handle of a constructor. */
static int nm_mpi_check_old(MPI_Datatype old)
{
  return nm_mpi_dtype_user(old) ? MPI_SUCCESS : MPI_ERR_TYPE;
}

/** Build from pieces then record the contents; frees @p pc. */
static int nm_mpi_dtype_make(int n, struct nm_mpi_piece_s *pc, int combiner, int ni, const int *ints, int na,
                             const MPI_Aint *addrs, int nd, const MPI_Datatype *types, MPI_Datatype *newtype,
                             const char *fn)
{
  struct nm_mpi_dtype_s *t = NULL;
  int err = nm_mpi_dtype_build(n, pc, &t);
  free(pc);
  if (err)
    return nm_mpi_error(MPI_COMM_WORLD, err, fn);
  err = nm_mpi_dtype_finish(t, combiner, ni, ints, na, addrs, nd, types, newtype);
  return err ? nm_mpi_error(MPI_COMM_WORLD, err, fn) : MPI_SUCCESS;
}

static struct nm_mpi_piece_s *nm_mpi_pieces(int n)
{
  return malloc(sizeof(struct nm_mpi_piece_s) * (size_t)(n > 0 ? n : 1));
}

NM_MPI_ALIAS(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  if (count < 0)
    return NM_MPI_DT_ERR(MPI_ERR_COUNT);
  if (nm_mpi_check_old(oldtype))
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!newtype)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  struct nm_mpi_piece_s *pc = nm_mpi_pieces(1);
  if (!pc)
    return NM_MPI_DT_ERR(MPI_ERR_NO_MEM);
  pc[0] = (struct nm_mpi_piece_s){0, count, oldtype};
  return nm_mpi_dtype_make(1, pc, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype, newtype, __func__);
}

/** vector (@p stride in old extents when @p in_extents) and hvector (in bytes). */
static int nm_mpi_vector(int count, int blocklength, MPI_Aint stride, int in_extents, int combiner,
                         const int *ints, int ni, const MPI_Aint *addrs, int na, MPI_Datatype oldtype,
                         MPI_Datatype *newtype, const char *fn)
{
  if (count < 0)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
  if (blocklength < 0 || !newtype)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  const struct nm_mpi_dtype_s *o = nm_mpi_dtype_user(oldtype);
  if (!o)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
  int overflow = 0;
  const MPI_Aint stride_bytes = in_extents ? nm_mpi_muladd(stride, o->d.extent, 0, &overflow) : stride;
  struct nm_mpi_piece_s *pc = nm_mpi_pieces(count);
  if (!pc)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
  for (int k = 0; k < count; k++)
    pc[k] = (struct nm_mpi_piece_s){nm_mpi_muladd(k, stride_bytes, 0, &overflow), blocklength, oldtype};
  if (overflow) {
    free(pc);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  }
  return nm_mpi_dtype_make(count, pc, combiner, ni, ints, na, addrs, 1, &oldtype, newtype, fn);
}

NM_MPI_ALIAS(Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  const int ints[3] = {count, blocklength, stride};
  return nm_mpi_vector(count, blocklength, stride, 1, MPI_COMBINER_VECTOR, ints, 3, NULL, 0, oldtype, newtype,
                       __func__);
}

NM_MPI_ALIAS(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  const int ints[2] = {count, blocklength};
  return nm_mpi_vector(count, blocklength, stride, 0, MPI_COMBINER_HVECTOR, ints, 2, &stride, 1, oldtype, newtype,
                       __func__);
}

NM_MPI_ALIAS(Type_hvector)
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

/** The indexed family: per-block lengths (or one @p blocklength when @p blocklengths is NULL), displacements
 *  in old extents (@p idispl) or bytes (@p adispl). */
static int nm_mpi_indexed(int count, const int *blocklengths, int blocklength, const int *idispl,
                          const MPI_Aint *adispl, MPI_Datatype oldtype, MPI_Datatype *newtype, int combiner,
                          const char *fn)
{
  if (count < 0)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, fn);
  if (!newtype || (count > 0 && ((!blocklengths && blocklength < 0) || (!idispl && !adispl))))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  const struct nm_mpi_dtype_s *o = nm_mpi_dtype_user(oldtype);
  if (!o)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, fn);
  for (int k = 0; k < count && blocklengths; k++)
    if (blocklengths[k] < 0)
      return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  struct nm_mpi_piece_s *pc = nm_mpi_pieces(count);
  /* contents: [count, blocklength(s)..., int displacements...] and byte displacements */
  const int ni = 1 + (blocklengths ? count : 1) + (idispl ? count : 0), na = adispl ? count : 0;
  int *ints = malloc(sizeof(int) * (size_t)ni);
  if (!pc || !ints) {
    free(pc);
    free(ints);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn);
  }
  int *ip = ints;
  *ip++ = count;
  if (blocklengths) {
    memcpy(ip, blocklengths, sizeof(int) * (size_t)count);
    ip += count;
  } else {
    *ip++ = blocklength;
  }
  if (idispl)
    memcpy(ip, idispl, sizeof(int) * (size_t)count);
  int overflow = 0;
  for (int k = 0; k < count; k++)
    pc[k] = (struct nm_mpi_piece_s){idispl ? nm_mpi_muladd(idispl[k], o->d.extent, 0, &overflow) : adispl[k],
                                    blocklengths ? blocklengths[k] : blocklength, oldtype};
  if (overflow) {
    free(pc);
    free(ints);
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
  }
  int err = nm_mpi_dtype_make(count, pc, combiner, ni, ints, na, adispl, 1, &oldtype, newtype, fn);
  free(ints);
  return err;
}

NM_MPI_ALIAS(Type_indexed)
int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  if (count > 0 && !array_of_blocklengths)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  return nm_mpi_indexed(count, array_of_blocklengths, 0, array_of_displacements, NULL, oldtype, newtype,
                        MPI_COMBINER_INDEXED, __func__);
}

NM_MPI_ALIAS(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  if (count > 0 && !array_of_blocklengths)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  return nm_mpi_indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype, newtype,
                        MPI_COMBINER_HINDEXED, __func__);
}

NM_MPI_ALIAS(Type_hindexed)
int PMPI_Type_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype);
}

NM_MPI_ALIAS(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  return nm_mpi_indexed(count, NULL, blocklength, array_of_displacements, NULL, oldtype, newtype,
                        MPI_COMBINER_INDEXED_BLOCK, __func__);
}

NM_MPI_ALIAS(Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  return nm_mpi_indexed(count, NULL, blocklength, NULL, array_of_displacements, oldtype, newtype,
                        MPI_COMBINER_HINDEXED_BLOCK, __func__);
}

NM_MPI_ALIAS(Type_create_struct)
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  if (count < 0)
    return NM_MPI_DT_ERR(MPI_ERR_COUNT);
  if (!newtype || (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types)))
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  for (int k = 0; k < count; k++) {
    if (array_of_blocklengths[k] < 0)
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
    if (nm_mpi_check_old(array_of_types[k]))
      return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  }
  struct nm_mpi_piece_s *pc = nm_mpi_pieces(count);
  int *ints = malloc(sizeof(int) * (size_t)(count + 1));
  if (!pc || !ints) {
    free(pc);
    free(ints);
    return NM_MPI_DT_ERR(MPI_ERR_NO_MEM);
  }
  ints[0] = count;
  for (int k = 0; k < count; k++) {
    ints[k + 1] = array_of_blocklengths[k];
    pc[k] = (struct nm_mpi_piece_s){array_of_displacements[k], array_of_blocklengths[k], array_of_types[k]};
  }
  int err = nm_mpi_dtype_make(count, pc, MPI_COMBINER_STRUCT, count + 1, ints, count, array_of_displacements,
                              count, array_of_types, newtype, __func__);
  free(ints);
  return err;
}

NM_MPI_ALIAS(Type_struct)
int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype);
}

NM_MPI_ALIAS(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *o = nm_mpi_dtype_user(oldtype);
  if (!o)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!newtype)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  struct nm_mpi_dtype_s *t = nm_mpi_dtype_clone(o);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_NO_MEM);
  t->d.lb = lb;
  t->d.extent = extent;
  t->lb_sticky = t->ub_sticky = 1; /* §4.1.7: previous markers erased, new ones at lb and lb + extent */
  t->d.committed = 0;
  nm_mpi_dtype_set_contiguous(t);
  const MPI_Aint addrs[2] = {lb, extent};
  int err = nm_mpi_dtype_finish(t, MPI_COMBINER_RESIZED, 0, NULL, 2, addrs, 1, &oldtype, newtype);
  return err ? NM_MPI_DT_ERR(err) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_dup)
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *o = nm_mpi_dtype_user(oldtype);
  if (!o)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!newtype)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  struct nm_mpi_dtype_s *t = nm_mpi_dtype_clone(o); /* same committed state (§4.1.10) */
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_NO_MEM);
  int err = nm_mpi_dtype_finish(t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype, newtype);
  return err ? NM_MPI_DT_ERR(err) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype)
{
  NM_MPI_LOCKED();
  struct nm_mpi_dtype_s *t = datatype ? nm_mpi_dtype_user(*datatype) : NULL;
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  t->d.committed = 1; /* already flattened at construction */
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_free)
int PMPI_Type_free(MPI_Datatype *datatype)
{
  NM_MPI_LOCKED();
  struct nm_mpi_dtype_s *t = datatype ? nm_mpi_dtype_user(*datatype) : NULL;
  if (!t || t->d.predefined)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  /* the object lives on while types built on it or pending operations hold references */
  t->user_refs--;
  nm_mpi_datatype_unref(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

NM_MPI_ALIAS(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!size)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  *size = t->d.size;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
  NM_MPI_LOCKED();
  MPI_Count s = 0;
  int err = PMPI_Type_size_x(datatype, &s);
  if (err == MPI_SUCCESS) {
    if (!size)
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
    *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
  }
  return err;
}

NM_MPI_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!lb || !extent)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  *lb = t->d.lb;
  *extent = t->d.extent;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
  NM_MPI_LOCKED();
  MPI_Aint l = 0, e = 0;
  int err = PMPI_Type_get_extent(datatype, &l, &e);
  if (err == MPI_SUCCESS) {
    if (!lb || !extent)
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
    *lb = l;
    *extent = e;
  }
  return err;
}

NM_MPI_ALIAS(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!true_lb || !true_extent)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  *true_lb = t->d.true_lb;
  *true_extent = t->d.true_extent;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
  NM_MPI_LOCKED();
  MPI_Aint l = 0, e = 0;
  int err = PMPI_Type_get_true_extent(datatype, &l, &e);
  if (err == MPI_SUCCESS) {
    if (!true_lb || !true_extent)
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
    *true_lb = l;
    *true_extent = e;
  }
  return err;
}

NM_MPI_ALIAS(Type_extent)
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
  NM_MPI_LOCKED();
  MPI_Aint lb = 0;
  return PMPI_Type_get_extent(datatype, &lb, extent);
}

NM_MPI_ALIAS(Type_lb)
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
  NM_MPI_LOCKED();
  MPI_Aint extent = 0;
  return PMPI_Type_get_extent(datatype, displacement, &extent);
}

NM_MPI_ALIAS(Type_ub)
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
  NM_MPI_LOCKED();
  MPI_Aint lb = 0, extent = 0;
  int err = PMPI_Type_get_extent(datatype, &lb, &extent);
  if (err == MPI_SUCCESS) {
    if (!displacement)
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
    *displacement = lb + extent;
  }
  return err;
}

NM_MPI_ALIAS(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!type_name || !resultlen)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  strcpy(type_name, t->d.name);
  *resultlen = (int)strlen(type_name);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_set_name)
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
  NM_MPI_LOCKED();
  struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!type_name)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  strncpy(t->d.name, type_name, sizeof(t->d.name) - 1);
  t->d.name[sizeof(t->d.name) - 1] = '\0';
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                           int *combiner)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!num_integers || !num_addresses || !num_datatypes || !combiner)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  *num_integers = t->d.n_ints;
  *num_addresses = t->d.n_addrs;
  *num_datatypes = t->d.n_types;
  *combiner = t->d.combiner;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[])
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t || t->d.combiner == MPI_COMBINER_NAMED)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (max_integers < t->d.n_ints || max_addresses < t->d.n_addrs || max_datatypes < t->d.n_types ||
      (t->d.n_ints && !array_of_integers) || (t->d.n_addrs && !array_of_addresses) ||
      (t->d.n_types && !array_of_datatypes))
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  if (t->d.n_ints)
    memcpy(array_of_integers, t->d.ints, sizeof(int) * (size_t)t->d.n_ints);
  if (t->d.n_addrs)
    memcpy(array_of_addresses, t->d.addrs, sizeof(MPI_Aint) * (size_t)t->d.n_addrs);
  for (int k = 0; k < t->d.n_types; k++) {
    /* derived types are handed out again: the caller frees them with MPI_Type_free (§4.1.13) */
    struct nm_mpi_dtype_s *o = nm_mpi_dtype_get(t->d.types[k]);
    if (o && !o->d.predefined) {
      o->d.refcount++;
      o->user_refs++;
    }
    array_of_datatypes[k] = t->d.types[k];
  }
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
  NM_MPI_LOCKED();
  if (!address)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  *address = (MPI_Aint)(uintptr_t)location;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Address)
int PMPI_Address(void *location, MPI_Aint *address)
{
  NM_MPI_LOCKED();
  return PMPI_Get_address(location, address);
}

/* ---------------------------------------------------------------- MPI_Pack / MPI_Unpack */

/** Common checks of Pack/Unpack/Pack_size: a valid communicator, a valid committed type. */
static int nm_mpi_pack_check(MPI_Comm comm, MPI_Datatype datatype, int count, const struct nm_mpi_dtype_s **t,
                             MPI_Comm *errcomm)
{
  *errcomm = MPI_COMM_WORLD;
  if (!nm_mpi_comm_get(comm))
    return MPI_ERR_COMM;
  *errcomm = comm;
  *t = nm_mpi_dtype_user(datatype);
  if (!*t || !(*t)->d.committed)
    return MPI_ERR_TYPE;
  if (count < 0)
    return MPI_ERR_COUNT;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = NULL;
  MPI_Comm ec;
  int err = nm_mpi_pack_check(comm, datatype, incount, &t, &ec);
  if (err)
    return nm_mpi_error(ec, err, __func__);
  if (!position || *position < 0 || outsize < 0)
    return nm_mpi_error(ec, MPI_ERR_ARG, __func__);
  const MPI_Count bytes = nm_mpi_datatype_packed_size(&t->d, incount);
  if (bytes > (MPI_Count)outsize - *position)
    return nm_mpi_error(ec, MPI_ERR_TRUNCATE, __func__);
  if (bytes > 0 && !outbuf)
    return nm_mpi_error(ec, MPI_ERR_BUFFER, __func__);
  if (bytes > 0)
    nm_mpi_datatype_pack(&t->d, inbuf, incount, (char *)outbuf + *position);
  *position += (int)bytes;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = NULL;
  MPI_Comm ec;
  int err = nm_mpi_pack_check(comm, datatype, outcount, &t, &ec);
  if (err)
    return nm_mpi_error(ec, err, __func__);
  if (!position || *position < 0 || insize < 0)
    return nm_mpi_error(ec, MPI_ERR_ARG, __func__);
  const MPI_Count bytes = nm_mpi_datatype_packed_size(&t->d, outcount);
  if (bytes > (MPI_Count)insize - *position)
    return nm_mpi_error(ec, MPI_ERR_TRUNCATE, __func__);
  if (bytes > 0 && !inbuf)
    return nm_mpi_error(ec, MPI_ERR_BUFFER, __func__);
  if (bytes > 0)
    nm_mpi_datatype_unpack(&t->d, (const char *)inbuf + *position, bytes, outbuf, outcount);
  *position += (int)bytes;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = NULL;
  MPI_Comm ec;
  int err = nm_mpi_pack_check(comm, datatype, incount, &t, &ec);
  if (err)
    return nm_mpi_error(ec, err, __func__);
  const MPI_Count bytes = nm_mpi_datatype_packed_size(&t->d, incount);
  if (!size || bytes > INT_MAX)
    return nm_mpi_error(ec, MPI_ERR_ARG, __func__);
  *size = (int)bytes;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- counts of a status */

/** Basic elements in the first @p bytes bytes of one element, or -1 when they end inside a basic element. */
static MPI_Count nm_mpi_sig_elements(const struct nm_mpi_dtype_s *t, MPI_Count bytes)
{
  MPI_Count n = 0;
  for (int k = 0; k < t->n_sig && bytes > 0; k++) {
    const struct nm_mpi_sig_s *s = &t->sig[k];
    if (bytes >= s->esize * s->n) {
      n += s->n;
      bytes -= s->esize * s->n;
    } else {
      n += bytes / s->esize;
      bytes %= s->esize;
      break;
    }
  }
  return bytes ? -1 : n;
}

/** Bytes of the first @p elems basic elements of one element. */
static MPI_Count nm_mpi_sig_bytes(const struct nm_mpi_dtype_s *t, MPI_Count elems)
{
  MPI_Count bytes = 0;
  for (int k = 0; k < t->n_sig && elems > 0; k++) {
    const MPI_Count n = elems < t->sig[k].n ? elems : t->sig[k].n;
    bytes += n * t->sig[k].esize;
    elems -= n;
  }
  return bytes;
}

NM_MPI_ALIAS(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!status || !count)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  const MPI_Count bytes = status->nm_count;
  if (t->d.size == 0)
    *count = 0; /* §3.2.5: a zero-size type gives a count of zero */
  else if (bytes % t->d.size != 0 || bytes / t->d.size > INT_MAX)
    *count = MPI_UNDEFINED;
  else
    *count = (int)(bytes / t->d.size);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!status || !count)
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  const MPI_Count bytes = status->nm_count;
  if (t->d.size == 0) {
    *count = 0;
    return MPI_SUCCESS;
  }
  const MPI_Count part = nm_mpi_sig_elements(t, bytes % t->d.size);
  *count = part < 0 ? MPI_UNDEFINED : (bytes / t->d.size) * t->sig_elems + part;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
  NM_MPI_LOCKED();
  MPI_Count c = 0;
  int err = PMPI_Get_elements_x(status, datatype, &c);
  if (err == MPI_SUCCESS) {
    if (!count)
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
    *count = c > INT_MAX ? MPI_UNDEFINED : (int)c;
  }
  return err;
}

/** Sets the byte count of @p status to that of @p count basic elements of @p datatype (MPI_Count: counts
 *  beyond INT_MAX are representable, the status keeps a 64-bit byte count). @return an MPI code (no handler). */
static int nm_mpi_status_set_elements(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
  const struct nm_mpi_dtype_s *t = nm_mpi_dtype_user(datatype);
  if (!t)
    return MPI_ERR_TYPE;
  if (count < 0)
    return MPI_ERR_COUNT;
  if (!status)
    return MPI_ERR_ARG;
  if (t->sig_elems == 0) {
    status->nm_count = 0;
    return MPI_SUCCESS;
  }
  const MPI_Count whole = count / t->sig_elems;
  if (t->d.size > 0 && whole > (LLONG_MAX - t->d.size) / t->d.size)
    return MPI_ERR_COUNT; /* more bytes than a status can count */
  status->nm_count = whole * t->d.size + nm_mpi_sig_bytes(t, count % t->sig_elems);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_status_set_elements(status, datatype, count);
  return err ? NM_MPI_DT_ERR(err) : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- subarrays (MPI-3.1 4.1.3) */

/** Frees an intermediate type built by Type_create_subarray (no error reporting: it is ours). */
static void nm_mpi_subarray_drop(MPI_Datatype *t)
{
  if (*t != MPI_DATATYPE_NULL && *t >= NM_MPI_PREDEFINED_TYPES)
    PMPI_Type_free(t);
  *t = MPI_DATATYPE_NULL;
}

NM_MPI_ALIAS(Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
  NM_MPI_LOCKED();
  const struct nm_mpi_dtype_s *o = nm_mpi_dtype_user(oldtype);
  if (!o)
    return NM_MPI_DT_ERR(MPI_ERR_TYPE);
  if (!newtype || ndims <= 0 || !array_of_sizes || !array_of_subsizes || !array_of_starts ||
      (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
    return NM_MPI_DT_ERR(MPI_ERR_ARG);
  for (int i = 0; i < ndims; i++)
    if (array_of_sizes[i] <= 0 || array_of_subsizes[i] <= 0 || array_of_starts[i] < 0 ||
        array_of_subsizes[i] > array_of_sizes[i] - array_of_starts[i])
      return NM_MPI_DT_ERR(MPI_ERR_ARG);
  /* Built as nested strided vectors, fastest-varying dimension first (the last one in C order, the first in
   * Fortran order), then placed at the start offset and resized to the whole array: lb 0, extent
   * prod(sizes) x extent(oldtype), which is what 4.1.3 prescribes for the resulting type map. */
  const MPI_Aint ext = o->d.extent;
  MPI_Aint stride = ext, disp = 0;
  MPI_Datatype cur = oldtype, next = MPI_DATATYPE_NULL;
  int rc = MPI_SUCCESS;
  for (int k = 0; k < ndims && rc == MPI_SUCCESS; k++) {
    int i = (order == MPI_ORDER_C) ? ndims - 1 - k : k;
    rc = PMPI_Type_create_hvector(array_of_subsizes[i], 1, stride, cur, &next);
    if (cur != oldtype)
      nm_mpi_subarray_drop(&cur);
    cur = next;
    disp += (MPI_Aint)array_of_starts[i] * stride;
    stride *= array_of_sizes[i];
  }
  if (rc == MPI_SUCCESS)
    rc = PMPI_Type_create_hindexed_block(1, 1, &disp, cur, &next);
  if (cur != oldtype)
    nm_mpi_subarray_drop(&cur);
  if (rc != MPI_SUCCESS)
    return rc; /* already reported */
  const struct nm_mpi_dtype_s *placed = nm_mpi_dtype_user(next);
  struct nm_mpi_dtype_s *t = placed ? nm_mpi_dtype_clone(placed) : NULL;
  nm_mpi_subarray_drop(&next);
  if (!t)
    return NM_MPI_DT_ERR(MPI_ERR_NO_MEM);
  t->d.lb = 0;
  t->d.extent = stride; /* prod(sizes) x ext */
  t->lb_sticky = t->ub_sticky = 1;
  t->d.committed = 0;
  nm_mpi_dtype_set_contiguous(t);
  /* Type_get_contents: ndims, sizes, subsizes, starts, order (MPI-3.1 4.1.13) */
  int *ints = malloc(sizeof(int) * (size_t)(3 * ndims + 2));
  if (!ints) {
    nm_mpi_dtype_free_obj(t);
    return NM_MPI_DT_ERR(MPI_ERR_NO_MEM);
  }
  ints[0] = ndims;
  for (int i = 0; i < ndims; i++) {
    ints[1 + i] = array_of_sizes[i];
    ints[1 + ndims + i] = array_of_subsizes[i];
    ints[1 + 2 * ndims + i] = array_of_starts[i];
  }
  ints[1 + 3 * ndims] = order;
  int err = nm_mpi_dtype_finish(t, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1, &oldtype, newtype);
  free(ints);
  return err ? NM_MPI_DT_ERR(err) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Status_set_elements_x)
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_status_set_elements(status, datatype, count);
  return err ? NM_MPI_DT_ERR(err) : MPI_SUCCESS;
}
