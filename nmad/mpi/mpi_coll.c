/**
 * @file mpi_coll.c
 * @brief Blocking and non-blocking collectives of the MPI shim, on intracommunicators.
 *
 * Every collective is built as a schedule (mpi_coll_sched.h): the non-blocking version returns it as an MPI
 * request, the blocking one runs it to completion. Data travels as contiguous packed bytes; non-contiguous
 * datatypes are packed into / unpacked from scratch buffers by local steps of the schedule.
 *
 * The schedules themselves are native collectives of collectives/ (one file per algorithm family, each with its
 * choice of algorithm by size and process count and its NMAD_<COLLECTIVE>_ALGO override; doc/collectives.md):
 * Barrier (barrier.c), Bcast (bcast_classic.c, bcast_hier.c), Allgather(v) (allgather.c), Alltoall(v, w)
 * (alltoall.c), Reduce, Reduce_scatter(_block) (reduce.c), Allreduce (allreduce.c), Gather, Scatter
 * (gather_scatter.c). This file keeps MPI's part:
 * argument checks, packing / unpacking of datatypes around the native builders (which move packed bytes), and
 * MPI operators turned into native combine functions on packed elements (nm_coll_mpi_op()).
 * Still built here (not moved yet), costs with p members, m bytes, latency alpha, inverse bandwidth beta:
 *  - Gatherv, Scatterv: linear (only the root knows the counts).
 *  - Scan, Exscan: linear chain.
 * MPI_IN_PLACE is accepted wherever MPI-3.1 allows it. Intercommunicators give MPI_ERR_COMM.
 */
#include "mpi_coll_sched.h"
#include <nmad/nm_coll_model.h>
#include <nmad/nm_coll_reduce.h>
#include <nmad/nm_coll_barrier.h>
#include <nmad/nm_coll_allgather.h>
#include <nmad/nm_coll_alltoall.h>
#include <nmad/nm_coll_gather.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- init */

int nm_mpi_coll_init(void)
{
  return MPI_SUCCESS;
}

void nm_mpi_coll_finalize(void)
{
}

/* ---------------------------------------------------------------- common helpers */

/** Group member -> gate of the communicator (nm_coll.h's group by function, for collectives/ builders). */
static nm_gate_t nm_coll_comm_gate(void *ref, int member) { return nm_mpi_comm_gate(ref, member); }

/** The communicator as a native group (used while building only: the builders ask for gates then). */
static struct nm_coll_group_s nm_coll_comm_group(struct nm_mpi_comm_s *c)
{
  struct nm_coll_group_s g = {c->size, nm_coll_comm_gate, c, NULL, &nm_mpi.coll_overrides};
  return g;
}

/** A native builder's error as an MPI class recorded in @p s: -NM_EINVAL is a bad NMAD_*_ALGO (reported on
 *  stderr) once the MPI arguments were checked. */
static void nm_coll_build_error(nm_mpi_coll_sched_t *s, int rc)
{
  if (rc)
    nm_mpi_coll_sched_set_error(s, rc == -NM_EINVAL ? MPI_ERR_ARG : MPI_ERR_INTERN);
}

/** Common start: request pointer, communicator. */
static int nm_coll_begin(MPI_Comm comm, int nb, MPI_Request *req, struct nm_mpi_comm_s **c)
{
  *c = nm_mpi_comm_get(comm);
  if (nb) {
    if (!req)
      return MPI_ERR_ARG;
    *req = MPI_REQUEST_NULL;
  }
  if (!*c || (*c)->is_inter)
    return MPI_ERR_COMM;
  return MPI_SUCCESS;
}

static int nm_coll_error(const struct nm_mpi_comm_s *c, MPI_Comm comm, int err, const char *fn)
{
  return nm_mpi_error(c ? comm : MPI_COMM_WORLD, err, fn);
}

/** Common end: run (blocking) or hand back as a request (non-blocking). */
static int nm_coll_end(nm_mpi_coll_sched_t *s, MPI_Comm comm, int nb, MPI_Request *req, const char *fn)
{
  int err = nb ? nm_mpi_coll_sched_request(s, req) : nm_mpi_coll_sched_run(s);
  return err ? nm_mpi_error(comm, err, fn) : MPI_SUCCESS;
}

/** nm_coll_wait_fn_t of the shim's blocking collectives. */
static void nm_coll_mpi_wait(volatile int *flag, uint64_t spin_ns, void *ref)
{
  (void)ref;
  nm_mpi_coll_wait_flag(flag, spin_ns);
}

/** The nmad tag of @p c's blocking collectives (mpi_coll_sched.h: one tag for all of them). */
static nm_tag_t nm_coll_blocking_tag(const struct nm_mpi_comm_s *c)
{
  return nm_mpi_coll_tag(c, NM_MPI_COLL_TAG_BLOCKING);
}

/** What a blocking collective returns once it ran without a schedule (collectives/ *_eager(): @p rc 0 or an nmad
 *  error or an operator's MPI class, never NM_COLL_NOT_TAKEN). */
static int nm_coll_eager_end(const struct nm_mpi_comm_s *c, MPI_Comm comm, int rc, const char *fn)
{
  return rc ? nm_coll_error(c, comm, nm_mpi_coll_err_of(rc), fn) : MPI_SUCCESS;
}

static nm_mpi_coll_sched_t *nm_coll_new(struct nm_mpi_comm_s *c, MPI_Comm comm, int nb, int *err)
{
  nm_mpi_coll_sched_t *s = nm_mpi_coll_sched_new(c, comm, !nb);
  *err = s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
  return s;
}

/** A usable (committed) datatype and a count >= 0. */
static int nm_coll_check_type(MPI_Datatype dt, int count, struct nm_mpi_datatype_s **d)
{
  if (count < 0)
    return MPI_ERR_COUNT;
  *d = nm_mpi_datatype_get(dt);
  if (!*d || !(*d)->committed) /* predefined types are committed */
    return MPI_ERR_TYPE;
  return MPI_SUCCESS;
}

static int nm_coll_check_counts(const int *counts, int n)
{
  if (!counts)
    return MPI_ERR_COUNT;
  for (int i = 0; i < n; i++)
    if (counts[i] < 0)
      return MPI_ERR_COUNT;
  return MPI_SUCCESS;
}

/** A valid operation, defined on @p dt (predefined operations are asked with an empty vector). */
static int nm_coll_check_op(MPI_Op op, MPI_Datatype dt, struct nm_mpi_op_s **o)
{
  char dummy[64];
  *o = nm_mpi_op_get(op);
  if (!*o)
    return MPI_ERR_OP;
  if ((*o)->predefined && nm_mpi_op_apply(op, dummy, dummy, 0, dt) != MPI_SUCCESS)
    return MPI_ERR_OP;
  return MPI_SUCCESS;
}

static size_t nm_coll_bytes(const struct nm_mpi_datatype_s *d, MPI_Count count)
{
  return count > 0 ? (size_t)nm_mpi_datatype_packed_size(d, count) : 0;
}

/** Address of element @p idx (may be a block index times a count) of a buffer of type @p d. */
static void *nm_coll_at(const void *buf, MPI_Aint idx, const struct nm_mpi_datatype_s *d)
{
  return (char *)buf + idx * d->extent;
}

/** Packed bytes of count x d at buf, usable from @p round on: the data itself when contiguous, else a scratch
 *  copy packed at the start of @p round. */
static const void *nm_coll_packed_src(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d,
                                      const void *buf, MPI_Count count, size_t bytes)
{
  if (bytes == 0)
    return NULL;
  if (d->contiguous)
    return (const char *)buf + d->true_lb;
  void *tmp = nm_mpi_coll_sched_alloc(s, bytes);
  if (tmp)
    nm_mpi_coll_sched_pack(s, round, d, buf, count, tmp);
  return tmp;
}

/** Where to receive the packed bytes of count x d destined to buf: buf itself when contiguous, else a scratch
 *  buffer unpacked at the start of @p unpack_round. */
static void *nm_coll_packed_dst(nm_mpi_coll_sched_t *s, int unpack_round, struct nm_mpi_datatype_s *d, void *buf,
                                MPI_Count count, size_t bytes)
{
  if (bytes == 0)
    return NULL;
  if (d->contiguous)
    return (char *)buf + d->true_lb;
  void *tmp = nm_mpi_coll_sched_alloc(s, bytes);
  if (tmp)
    nm_mpi_coll_sched_unpack(s, unpack_round, d, tmp, (MPI_Count)bytes, buf, count);
  return tmp;
}

/** Local typed copy (sbuf, scount, sd) -> (rbuf, rcount, rd) in @p round; a longer source is MPI_ERR_TRUNCATE. */
static void nm_coll_local_copy(nm_mpi_coll_sched_t *s, int round, const void *sbuf, MPI_Count scount,
                               struct nm_mpi_datatype_s *sd, void *rbuf, MPI_Count rcount,
                               struct nm_mpi_datatype_s *rd)
{
  size_t sbytes = nm_coll_bytes(sd, scount), rbytes = nm_coll_bytes(rd, rcount);
  if (sbytes > rbytes) {
    nm_mpi_coll_sched_set_error(s, MPI_ERR_TRUNCATE);
    return;
  }
  if (sbytes == 0)
    return;
  if (sd->contiguous && rd->contiguous) {
    nm_mpi_coll_sched_copy(s, round, (char *)rbuf + rd->true_lb, (const char *)sbuf + sd->true_lb, sbytes);
    return;
  }
  const void *src = nm_coll_packed_src(s, round, sd, sbuf, scount, sbytes);
  nm_mpi_coll_sched_unpack(s, round, rd, src, (MPI_Count)sbytes, rbuf, rcount);
}

/* ---------------------------------------------------------------- reductions: work buffers */

/** How a reduction holds its data:
 *  - CONTIG: the datatype is contiguous; work buffers are its bytes, the op gets (count, dt);
 *  - PACKED: predefined op on a homogeneous type of a contiguous basic type: work buffers are packed bytes,
 *    the op gets (count x basic_count, basic);
 *  - LAYOUT: anything else (user op on a non-contiguous type...): work buffers have the datatype's layout
 *    (true extent), are packed to be sent and unpacked when received, and the op gets (count, dt). */
enum nm_coll_red_mode_e { NM_COLL_RED_CONTIG, NM_COLL_RED_PACKED, NM_COLL_RED_LAYOUT };

struct nm_coll_red_s {
  nm_mpi_coll_sched_t *s;
  int rank, size;      /* in the communicator */
  int mode;
  struct nm_mpi_datatype_s *d;
  int count;           /* user elements */
  MPI_Op op;
  MPI_Datatype adt;    /* what the op is applied on */
  int acount;
  size_t pbytes;       /* packed bytes of count elements (what travels) */
  size_t wbytes;       /* bytes of a work buffer */
  MPI_Aint shift;      /* work pointer - shift = the datatype's buffer pointer */
  int commute;         /* the op is commutative: operands may be combined in either order */
};

static void nm_coll_red_init(struct nm_coll_red_s *R, nm_mpi_coll_sched_t *s, const struct nm_mpi_comm_s *c,
                             struct nm_mpi_datatype_s *d, MPI_Datatype dt, int count, MPI_Op op,
                             const struct nm_mpi_op_s *o)
{
  memset(R, 0, sizeof(*R));
  R->s = s;
  R->rank = c->rank;
  R->size = c->size;
  R->d = d;
  R->count = count;
  R->op = op;
  R->adt = dt;
  R->acount = count;
  R->commute = o->commute;
  struct nm_mpi_datatype_s *b = d->basic != MPI_DATATYPE_NULL ? nm_mpi_datatype_get(d->basic) : NULL;
  R->pbytes = nm_coll_bytes(d, count);
  R->wbytes = R->pbytes;
  if (d->contiguous) {
    R->mode = NM_COLL_RED_CONTIG;
    R->shift = d->true_lb;
  } else if (o->predefined && b && b->contiguous && b->true_lb == 0 &&
             (MPI_Count)R->pbytes == (MPI_Count)count * d->basic_count * b->size) {
    R->mode = NM_COLL_RED_PACKED;
    R->adt = d->basic;
    R->acount = (int)(count * d->basic_count);
  } else {
    R->mode = NM_COLL_RED_LAYOUT;
    R->shift = d->true_lb;
    R->wbytes = count > 0 ? (size_t)((MPI_Aint)(count - 1) * d->extent + d->true_extent) : 0;
  }
}

static void *nm_coll_red_work(struct nm_coll_red_s *R)
{
  return nm_mpi_coll_sched_alloc(R->s, R->wbytes);
}

static void *nm_coll_red_base(struct nm_coll_red_s *R, const void *w)
{
  return (char *)w - R->shift;
}

/** Read-only work view of the user's data @p ubuf (no copy unless PACKED). */
static const void *nm_coll_red_view(struct nm_coll_red_s *R, int round, const void *ubuf)
{
  if (R->mode == NM_COLL_RED_PACKED) {
    void *w = nm_coll_red_work(R);
    if (w)
      nm_mpi_coll_sched_pack(R->s, round, R->d, ubuf, R->count, w);
    return w;
  }
  return (const char *)ubuf + R->shift;
}

/** User data -> work buffer @p w (a writable copy). */
static void nm_coll_red_load(struct nm_coll_red_s *R, int round, void *w, const void *ubuf)
{
  switch (R->mode) {
  case NM_COLL_RED_PACKED:
    nm_mpi_coll_sched_pack(R->s, round, R->d, ubuf, R->count, w);
    break;
  case NM_COLL_RED_LAYOUT: {
    void *tmp = nm_mpi_coll_sched_alloc(R->s, R->pbytes);
    nm_mpi_coll_sched_pack(R->s, round, R->d, ubuf, R->count, tmp);
    nm_mpi_coll_sched_unpack(R->s, round, R->d, tmp, (MPI_Count)R->pbytes, nm_coll_red_base(R, w), R->count);
    break;
  }
  default:
    nm_mpi_coll_sched_copy(R->s, round, w, (const char *)ubuf + R->shift, R->pbytes);
  }
}

/** Packed bytes of work buffer @p w, usable from @p round on. */
static const void *nm_coll_red_packed(struct nm_coll_red_s *R, int round, const void *w)
{
  if (R->mode != NM_COLL_RED_LAYOUT)
    return w;
  void *tmp = nm_mpi_coll_sched_alloc(R->s, R->pbytes);
  if (tmp)
    nm_mpi_coll_sched_pack(R->s, round, R->d, nm_coll_red_base(R, w), R->count, tmp);
  return tmp;
}

/** Work buffer @p w -> user buffer @p ubuf. */
static void nm_coll_red_store(struct nm_coll_red_s *R, int round, const void *w, void *ubuf)
{
  if (R->mode == NM_COLL_RED_CONTIG) {
    nm_mpi_coll_sched_copy(R->s, round, (char *)ubuf + R->shift, w, R->pbytes);
    return;
  }
  const void *packed = nm_coll_red_packed(R, round, w);
  nm_mpi_coll_sched_unpack(R->s, round, R->d, packed, (MPI_Count)R->pbytes, ubuf, R->count);
}

static void nm_coll_red_send(struct nm_coll_red_s *R, int round, int peer, const void *w)
{
  nm_mpi_coll_sched_send(R->s, round, peer, nm_coll_red_packed(R, round, w), R->pbytes);
}

/** Receive into work buffer @p w in @p round; usable from round + 1 on. */
static void nm_coll_red_recv(struct nm_coll_red_s *R, int round, int peer, void *w)
{
  if (R->mode != NM_COLL_RED_LAYOUT) {
    nm_mpi_coll_sched_recv(R->s, round, peer, w, R->pbytes);
    return;
  }
  void *tmp = nm_mpi_coll_sched_alloc(R->s, R->pbytes);
  nm_mpi_coll_sched_recv(R->s, round, peer, tmp, R->pbytes);
  nm_mpi_coll_sched_unpack(R->s, round + 1, R->d, tmp, (MPI_Count)R->pbytes, nm_coll_red_base(R, w), R->count);
}

/** inout = in op inout, on work buffers. */
static void nm_coll_red_apply(struct nm_coll_red_s *R, int round, const void *in, void *inout)
{
  nm_mpi_coll_sched_reduce(R->s, round, R->op, nm_coll_red_base(R, in), nm_coll_red_base(R, inout), R->acount,
                           R->adt);
}

/* ---------------------------------------------------------------- reductions: MPI operators as native ones */

/** An MPI operator on a datatype as a native combine function (nm_coll_reduce.h): collectives/ reduce arrays of
 *  packed elements (R->pbytes / count bytes each); this turns them back into what the operator takes, by mode. */
struct nm_coll_mpi_op_s {
  int mode;                    /* enum nm_coll_red_mode_e */
  MPI_Op op;
  MPI_Datatype adt;            /* what the op is applied on */
  int mult;                    /* PACKED: basic elements per element */
  MPI_Aint shift;              /* CONTIG, LAYOUT: typed pointer = data pointer - shift */
  struct nm_mpi_datatype_s *d; /* LAYOUT */
  char *la, *lb;               /* LAYOUT: two buffers with the datatype's layout, for the whole vector */
  size_t esize;                /* packed bytes per element */
};

static int nm_coll_mpi_combine(void *ref, const void *in, void *inout, nm_len_t count)
{
  struct nm_coll_mpi_op_s *m = ref;
  switch (m->mode) {
  case NM_COLL_RED_CONTIG:
    return nm_mpi_op_apply(m->op, (const char *)in - m->shift, (char *)inout - m->shift, (int)count, m->adt);
  case NM_COLL_RED_PACKED:
    return nm_mpi_op_apply(m->op, in, inout, (int)count * m->mult, m->adt);
  default: { /* LAYOUT */
    /* a user op on a non-contiguous type wants the type's layout: unpack both operands, apply, pack back */
    char *a = m->la - m->shift, *b = m->lb - m->shift;
    nm_mpi_datatype_unpack(m->d, in, (MPI_Count)(count * m->esize), a, (MPI_Count)count);
    nm_mpi_datatype_unpack(m->d, inout, (MPI_Count)(count * m->esize), b, (MPI_Count)count);
    int err = nm_mpi_op_apply(m->op, a, b, (int)count, m->adt);
    nm_mpi_datatype_pack(m->d, b, (MPI_Count)count, inout);
    return err;
  }
  }
}

/** The native operator of reduction @p R (count > 0); its state lives in the schedule, the MPI op is held. */
static void nm_coll_mpi_op(struct nm_coll_red_s *R, struct nm_coll_op_s *nop)
{
  struct nm_coll_mpi_op_s *m = nm_coll_sched_alloc(nm_mpi_coll_sched_native(R->s), sizeof(*m));
  nop->combine = nm_coll_mpi_combine;
  nop->ref = m;
  nop->esize = R->pbytes / (size_t)R->count;
  nop->commute = R->commute;
  if (!m)
    return; /* recorded: the schedule fails to start */
  *m = (struct nm_coll_mpi_op_s){R->mode, R->op, R->adt, 1, R->shift, R->d, NULL, NULL, nop->esize};
  if (R->mode == NM_COLL_RED_PACKED)
    m->mult = R->acount / R->count;
  if (R->mode == NM_COLL_RED_LAYOUT) {
    m->la = nm_coll_red_work(R);
    m->lb = nm_coll_red_work(R);
  }
  nm_mpi_coll_sched_hold_op(R->s, R->op); /* a user op may be freed before the collective completes */
}

/** The native operator of a blocking reduction on a contiguous datatype without a schedule (its state on the
 *  caller's stack @p m, for the call's duration: the user cannot free the op meanwhile). */
static void nm_coll_mpi_op_contig(struct nm_coll_mpi_op_s *m, struct nm_coll_op_s *nop,
                                  const struct nm_mpi_datatype_s *d, MPI_Datatype dt, int count, MPI_Op op,
                                  const struct nm_mpi_op_s *o)
{
  size_t esize = nm_coll_bytes(d, count) / (size_t)count;
  *m = (struct nm_coll_mpi_op_s){NM_COLL_RED_CONTIG, op, dt, 1, d->true_lb, NULL, NULL, NULL, esize};
  *nop = (struct nm_coll_op_s){nm_coll_mpi_combine, m, esize, o->commute};
}

/** Where a native reduction whose result goes to @p out works for @p R: @p out's bytes when contiguous (CONTIG),
 *  else a scratch vector of packed elements, @p in (if not NULL) packed into it in round 0. */
static char *nm_coll_mpi_vec(struct nm_coll_red_s *R, const void *in, void *out)
{
  if (R->mode == NM_COLL_RED_CONTIG)
    return (char *)out + R->shift;
  char *v = nm_mpi_coll_sched_alloc(R->s, R->pbytes);
  if (v && in)
    nm_mpi_coll_sched_pack(R->s, 0, R->d, in, R->count, v);
  return v;
}

/** The native result vector @p v back into the user's @p ubuf in @p round (nothing when it is ubuf itself). */
static void nm_coll_mpi_unvec(struct nm_coll_red_s *R, int round, const char *v, void *ubuf)
{
  if (v && R->mode != NM_COLL_RED_CONTIG)
    nm_mpi_coll_sched_unpack(R->s, round, R->d, v, (MPI_Count)R->pbytes, ubuf, R->count);
}

/* ---------------------------------------------------------------- Barrier */

static int nm_mpi_coll_barrier(MPI_Comm comm, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  nm_mpi_coll_sched_t *s;
  int err = nm_coll_begin(comm, nb, req, &c);
  if (!err && !nb && c->size > 1) { /* without a schedule (collectives/barrier.c) */
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    int rc = nm_coll_barrier_eager(nm_mpi.session, &group, c->rank, nm_coll_blocking_tag(c), nm_coll_mpi_wait, NULL);
    if (rc != NM_COLL_NOT_TAKEN)
      return nm_coll_eager_end(c, comm, rc, fn);
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  /* collectives/barrier.c: dissemination or linear */
  struct nm_coll_group_s group = nm_coll_comm_group(c);
  nm_coll_build_error(s, nm_coll_barrier_build(nm_mpi_coll_sched_native(s), 0, &group, c->rank, NULL));
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_barrier(comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_barrier(comm, request, 1, __func__);
}

/* ---------------------------------------------------------------- Bcast */

/** The broadcast algorithm of MPI_Bcast / MPI_Ibcast for @p bytes on @p c: the model's choice or
 *  NMAD_BCAST_ALGO (nm_coll_bcast_auto()), the same on every member. The model's choices are remembered per
 *  communicator and length (c->bcast_memo): they depend only on the communicator's size, the length, the job's
 *  network figures and oversubscription, all fixed for a communicator, and cost 0.3-7.5 us to make (8 to 6,144
 *  members, doc/performance.md). The override is the one MPI_Init read (nm_mpi.coll_overrides), never remembered.
 *  @return MPI_SUCCESS or MPI_ERR_ARG (an invalid NMAD_BCAST_ALGO, reported on stderr). */
static int nm_coll_bcast_opts(struct nm_mpi_comm_s *c, size_t bytes, struct nm_coll_bcast_opts_s *opts)
{
  return nm_coll_bcast_auto_opts_env(nm_mpi.session, &c->bcast_memo, c->size, (nm_len_t)bytes,
                                     nm_mpi.coll_overrides.value[NM_COLL_FAMILY_BCAST], opts)
             ? MPI_ERR_ARG
             : MPI_SUCCESS;
}


/** A blocking MPI_Bcast of a small contiguous message without a schedule (collectives/bcast_eager.c), with the
 *  algorithm the schedule would run. @return as nm_coll_bcast_eager(): NM_COLL_NOT_TAKEN, 0 or an nmad error. */
static int nm_mpi_coll_bcast_eager(struct nm_mpi_comm_s *c, void *data, size_t bytes, int root)
{
  struct nm_coll_bcast_opts_s opts;
  if (nm_coll_bcast_opts(c, bytes, &opts))
    return NM_COLL_NOT_TAKEN; /* the schedule reports the invalid override */
  struct nm_coll_group_s group = nm_coll_comm_group(c);
  return nm_coll_bcast_eager(nm_mpi.session, &group, c->rank, root, data, (nm_len_t)bytes, nm_coll_blocking_tag(c),
                             &opts, nm_coll_mpi_wait, NULL);
}

static int nm_mpi_coll_bcast(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *req,
                             int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  if (!err)
    err = nm_coll_check_type(datatype, count, &d);
  if (!err && (root < 0 || root >= c->size))
    err = MPI_ERR_ROOT;
  if (!err && !nb && d->contiguous && c->size > 1) {
    size_t bytes = nm_coll_bytes(d, count);
    int rc = bytes > 0 ? nm_mpi_coll_bcast_eager(c, (char *)buf + d->true_lb, bytes, root) : NM_COLL_NOT_TAKEN;
    if (rc != NM_COLL_NOT_TAKEN)
      return nm_coll_eager_end(c, comm, rc, fn);
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  nm_mpi_coll_sched_hold_type(s, datatype);

  int p = c->size, r = c->rank;
  size_t bytes = nm_coll_bytes(d, count);
  if (bytes > 0 && p > 1) {
    /* collectives/bcast_classic.c builds the broadcast over packed bytes: the root packs them in round 0 (before
     * its first send), a non-root receives them into buf (contiguous) or scratch unpacked after its last round */
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    struct nm_coll_bcast_opts_s opts;
    void *data;
    int next = 0;
    int rc = nm_coll_bcast_opts(c, bytes, &opts);
    if (rc)
      nm_mpi_coll_sched_set_error(s, rc);
    if (r == root)
      data = (void *)nm_coll_packed_src(s, 0, d, buf, count, bytes);
    else
      data = d->contiguous ? (char *)buf + d->true_lb : nm_mpi_coll_sched_alloc(s, bytes);
    if (data) {
      if (!rc)
        rc = nm_coll_bcast_build(nm_mpi_coll_sched_native(s), 0, &group, r, root, data, bytes, &opts, &next);
      if (rc < 0)
        nm_mpi_coll_sched_set_error(s, MPI_ERR_INTERN);
      if (r != root && !d->contiguous)
        nm_mpi_coll_sched_unpack(s, next, d, data, (MPI_Count)bytes, buf, count);
    }
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_bcast(buffer, count, datatype, root, comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_bcast(buffer, count, datatype, root, comm, request, 1, __func__);
}

/* ---------------------------------------------------------------- Gather, Gatherv */

static int nm_mpi_coll_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *sd = NULL, *rd = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (sendbuf == MPI_IN_PLACE);
  if (!err && (root < 0 || root >= c->size))
    err = MPI_ERR_ROOT;
  if (!err && in_place && c->rank != root)
    err = MPI_ERR_BUFFER;
  if (!err && !in_place)
    err = nm_coll_check_type(sendtype, sendcount, &sd);
  if (!err && c->rank == root)
    err = nm_coll_check_type(recvtype, recvcount, &rd);
  if (!err && !nb && (in_place || sd->contiguous) && (c->rank != root || rd->contiguous)) {
    /* small blocks, flat: without a schedule (collectives/gather_scatter.c) */
    size_t B = c->rank == root ? nm_coll_bytes(rd, recvcount) : nm_coll_bytes(sd, sendcount);
    if (B > 0 && (in_place || c->rank != root || nm_coll_bytes(sd, sendcount) == B)) {
      struct nm_coll_group_s group = nm_coll_comm_group(c);
      int rc = nm_coll_gather_eager(nm_mpi.session, &group, c->rank, root,
                                    in_place ? NULL : (const char *)sendbuf + sd->true_lb,
                                    rd ? (char *)recvbuf + rd->true_lb : NULL, B,
                                    nm_coll_blocking_tag(c), NM_COLL_GATHER_AUTO,
                                    nm_coll_mpi_wait, NULL);
      if (rc != NM_COLL_NOT_TAKEN)
        return nm_coll_eager_end(c, comm, rc, fn);
    }
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  if (sd)
    nm_mpi_coll_sched_hold_type(s, sendtype);
  if (rd)
    nm_mpi_coll_sched_hold_type(s, recvtype);

  int p = c->size, r = c->rank;
  size_t B = r == root ? nm_coll_bytes(rd, recvcount) : nm_coll_bytes(sd, sendcount);
  if (B > 0) {
    /* collectives/gather_scatter.c over packed blocks: in the user's buffer at the root when contiguous */
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    const void *src = NULL;
    char *dst = NULL;
    int next = 0;
    if (!in_place) {
      if (r == root && nm_coll_bytes(sd, sendcount) != B)
        nm_mpi_coll_sched_set_error(s, MPI_ERR_TRUNCATE);
      src = nm_coll_packed_src(s, 0, sd, sendbuf, sendcount, B);
    }
    if (r == root) {
      dst = rd->contiguous ? (char *)recvbuf + rd->true_lb : nm_mpi_coll_sched_alloc(s, (size_t)p * B);
      if (dst && in_place && !rd->contiguous)
        nm_mpi_coll_sched_pack(s, 0, rd, nm_coll_at(recvbuf, (MPI_Aint)r * recvcount, rd), recvcount,
                               dst + (size_t)r * B);
    }
    if ((src || in_place) && (dst || r != root))
      nm_coll_build_error(s, nm_coll_gather_build(nm_mpi_coll_sched_native(s), 0, &group, r, root, src, dst, B,
                                                  NM_COLL_GATHER_AUTO, &next));
    if (r == root && dst && !rd->contiguous)
      for (int i = 0; i < p; i++)
        if (i != r || !in_place)
          nm_mpi_coll_sched_unpack(s, next, rd, dst + (size_t)i * B, (MPI_Count)B,
                                   nm_coll_at(recvbuf, (MPI_Aint)i * recvcount, rd), recvcount);
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request, 1,
                            __func__);
}

static int nm_mpi_coll_gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *sd = NULL, *rd = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (sendbuf == MPI_IN_PLACE);
  if (!err && (root < 0 || root >= c->size))
    err = MPI_ERR_ROOT;
  if (!err && in_place && c->rank != root)
    err = MPI_ERR_BUFFER;
  if (!err && !in_place)
    err = nm_coll_check_type(sendtype, sendcount, &sd);
  if (!err && c->rank == root) {
    err = nm_coll_check_type(recvtype, 0, &rd);
    if (!err)
      err = nm_coll_check_counts(recvcounts, c->size);
    if (!err && !displs)
      err = MPI_ERR_ARG;
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  if (sd)
    nm_mpi_coll_sched_hold_type(s, sendtype);
  if (rd)
    nm_mpi_coll_sched_hold_type(s, recvtype);

  int p = c->size, r = c->rank;
  if (r != root) {
    size_t B = nm_coll_bytes(sd, sendcount);
    if (B)
      nm_mpi_coll_sched_send(s, 0, root, nm_coll_packed_src(s, 0, sd, sendbuf, sendcount, B), B);
  } else {
    for (int i = 0; i < p; i++) {
      void *dst = nm_coll_at(recvbuf, displs[i], rd);
      if (i == r) {
        if (!in_place)
          nm_coll_local_copy(s, 0, sendbuf, sendcount, sd, dst, recvcounts[i], rd);
        continue;
      }
      size_t B = nm_coll_bytes(rd, recvcounts[i]);
      if (B)
        nm_mpi_coll_sched_recv(s, 0, i, nm_coll_packed_dst(s, 1, rd, dst, recvcounts[i], B), B);
    }
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, NULL, 0,
                             __func__);
}

NM_MPI_ALIAS(Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request,
                             1, __func__);
}

/* ---------------------------------------------------------------- Scatter, Scatterv */

static int nm_mpi_coll_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req, int nb,
                               const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *sd = NULL, *rd = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (recvbuf == MPI_IN_PLACE);
  if (!err && (root < 0 || root >= c->size))
    err = MPI_ERR_ROOT;
  if (!err && in_place && c->rank != root)
    err = MPI_ERR_BUFFER;
  if (!err && c->rank == root)
    err = nm_coll_check_type(sendtype, sendcount, &sd);
  if (!err && !in_place)
    err = nm_coll_check_type(recvtype, recvcount, &rd);
  if (!err && !nb && (in_place || rd->contiguous) && (c->rank != root || sd->contiguous)) {
    /* small blocks, flat: without a schedule (collectives/gather_scatter.c) */
    size_t B = c->rank == root ? nm_coll_bytes(sd, sendcount) : nm_coll_bytes(rd, recvcount);
    if (B > 0 && (in_place || c->rank != root || nm_coll_bytes(rd, recvcount) >= B)) {
      struct nm_coll_group_s group = nm_coll_comm_group(c);
      int rc = nm_coll_scatter_eager(nm_mpi.session, &group, c->rank, root,
                                     sd ? (const char *)sendbuf + sd->true_lb : NULL,
                                     in_place ? NULL : (char *)recvbuf + rd->true_lb, B,
                                     nm_coll_blocking_tag(c), NM_COLL_GATHER_AUTO,
                                     nm_coll_mpi_wait, NULL);
      if (rc != NM_COLL_NOT_TAKEN)
        return nm_coll_eager_end(c, comm, rc, fn);
    }
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  if (sd)
    nm_mpi_coll_sched_hold_type(s, sendtype);
  if (rd)
    nm_mpi_coll_sched_hold_type(s, recvtype);

  int p = c->size, r = c->rank;
  size_t B = r == root ? nm_coll_bytes(sd, sendcount) : nm_coll_bytes(rd, recvcount);
  if (B > 0) {
    /* collectives/gather_scatter.c over packed blocks: from the user's buffer at the root when contiguous */
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    const char *src = NULL;
    void *dst = NULL, *tmp = NULL;
    int next = 0;
    if (r == root) {
      if (sd->contiguous) {
        src = (const char *)sendbuf + sd->true_lb;
      } else {
        char *packed = nm_mpi_coll_sched_alloc(s, (size_t)p * B);
        for (int i = 0; packed && i < p; i++)
          if (i != r || !in_place)
            nm_mpi_coll_sched_pack(s, 0, sd, nm_coll_at(sendbuf, (MPI_Aint)i * sendcount, sd), sendcount,
                                   packed + (size_t)i * B);
        src = packed;
      }
      if (!in_place && nm_coll_bytes(rd, recvcount) < B)
        nm_mpi_coll_sched_set_error(s, MPI_ERR_TRUNCATE);
    }
    if (!in_place)
      dst = rd->contiguous ? (char *)recvbuf + rd->true_lb : (tmp = nm_mpi_coll_sched_alloc(s, B));
    if ((src || r != root) && (dst || in_place))
      nm_coll_build_error(s, nm_coll_scatter_build(nm_mpi_coll_sched_native(s), 0, &group, r, root, src, dst, B,
                                                   NM_COLL_GATHER_AUTO, &next));
    if (tmp)
      nm_mpi_coll_sched_unpack(s, next, rd, tmp, (MPI_Count)B, recvbuf, recvcount);
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL, 0,
                             __func__);
}

NM_MPI_ALIAS(Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request, 1,
                             __func__);
}

static int nm_mpi_coll_scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *sd = NULL, *rd = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (recvbuf == MPI_IN_PLACE);
  if (!err && (root < 0 || root >= c->size))
    err = MPI_ERR_ROOT;
  if (!err && in_place && c->rank != root)
    err = MPI_ERR_BUFFER;
  if (!err && c->rank == root) {
    err = nm_coll_check_type(sendtype, 0, &sd);
    if (!err)
      err = nm_coll_check_counts(sendcounts, c->size);
    if (!err && !displs)
      err = MPI_ERR_ARG;
  }
  if (!err && !in_place)
    err = nm_coll_check_type(recvtype, recvcount, &rd);
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  if (sd)
    nm_mpi_coll_sched_hold_type(s, sendtype);
  if (rd)
    nm_mpi_coll_sched_hold_type(s, recvtype);

  int p = c->size, r = c->rank;
  if (r != root) {
    size_t B = nm_coll_bytes(rd, recvcount);
    if (B)
      nm_mpi_coll_sched_recv(s, 0, root, nm_coll_packed_dst(s, 1, rd, recvbuf, recvcount, B), B);
  } else {
    for (int i = 0; i < p; i++) {
      const void *src = nm_coll_at(sendbuf, displs[i], sd);
      if (i == r) {
        if (!in_place)
          nm_coll_local_copy(s, 0, src, sendcounts[i], sd, recvbuf, recvcount, rd);
        continue;
      }
      size_t B = nm_coll_bytes(sd, sendcounts[i]);
      if (B)
        nm_mpi_coll_sched_send(s, 0, i, nm_coll_packed_src(s, 0, sd, src, sendcounts[i], B), B);
    }
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, NULL, 0,
                              __func__);
}

NM_MPI_ALIAS(Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                              1, __func__);
}

/* ---------------------------------------------------------------- Allgather, Allgatherv */

/** Allgather (collectives/allgather.c: ring, recursive doubling or Bruck) of blocks of counts[i] x rd placed
 *  at recvbuf + displs[i] x extent. The own block comes from
 *  (sendbuf, sendcount, sd), or is already in place when sendbuf is MPI_IN_PLACE. */
static void nm_coll_allgather_blocks(nm_mpi_coll_sched_t *s, const struct nm_mpi_comm_s *c, const void *sendbuf,
                                     int sendcount, struct nm_mpi_datatype_s *sd, void *recvbuf, const int *counts,
                                     const int *displs, struct nm_mpi_datatype_s *rd)
{
  int p = c->size, r = c->rank;
  int in_place = (sendbuf == MPI_IN_PLACE);
  size_t *bytes = nm_mpi_coll_sched_alloc(s, sizeof(size_t) * (size_t)p);
  char **blk = nm_mpi_coll_sched_alloc(s, sizeof(char *) * (size_t)p);
  size_t total = 0;
  char *tmp = NULL;

  if (!bytes || !blk)
    return;
  for (int i = 0; i < p; i++) {
    bytes[i] = nm_coll_bytes(rd, counts[i]);
    total += bytes[i];
  }
  if (total == 0)
    return;
  /* blocks travel packed: in place when the type is contiguous, else in a scratch buffer unpacked at the end */
  if (!rd->contiguous)
    tmp = nm_mpi_coll_sched_alloc(s, total);
  for (size_t i = 0, off = 0; i < (size_t)p; off += bytes[i], i++)
    blk[i] = tmp ? tmp + off : (char *)nm_coll_at(recvbuf, displs[i], rd) + rd->true_lb;
  if (!in_place) {
    if (nm_coll_bytes(sd, sendcount) != bytes[r])
      nm_mpi_coll_sched_set_error(s, MPI_ERR_TRUNCATE);
    else if (sd->contiguous)
      nm_mpi_coll_sched_copy(s, 0, blk[r], (const char *)sendbuf + sd->true_lb, bytes[r]);
    else
      nm_mpi_coll_sched_pack(s, 0, sd, sendbuf, sendcount, blk[r]);
  } else if (tmp) {
    nm_mpi_coll_sched_pack(s, 0, rd, nm_coll_at(recvbuf, displs[r], rd), counts[r], blk[r]);
  }
  /* collectives/allgather.c over the packed blocks, the own one already in place */
  nm_len_t *lens = nm_mpi_coll_sched_alloc(s, sizeof(nm_len_t) * (size_t)p);
  struct nm_coll_group_s group = nm_coll_comm_group((struct nm_mpi_comm_s *)c);
  int next = 0;
  if (!lens)
    return;
  for (int i = 0; i < p; i++)
    lens[i] = bytes[i];
  nm_coll_build_error(s, nm_coll_allgatherv_build(nm_mpi_coll_sched_native(s), 0, &group, r, NULL,
                                                  (void *const *)blk, lens, NM_COLL_ALLGATHER_AUTO, &next));
  if (tmp)
    for (int i = 0; i < p; i++)
      if (i != r || !in_place)
        nm_mpi_coll_sched_unpack(s, next, rd, blk[i], (MPI_Count)bytes[i], nm_coll_at(recvbuf, displs[i], rd),
                                 counts[i]);
}

static int nm_mpi_coll_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[], int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *sd = NULL, *rd = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (sendbuf == MPI_IN_PLACE);
  if (!err && !in_place)
    err = nm_coll_check_type(sendtype, sendcount, &sd);
  if (!err)
    err = nm_coll_check_type(recvtype, recvcounts ? 0 : recvcount, &rd);
  if (!err && recvcounts)
    err = nm_coll_check_counts(recvcounts, c->size);
  if (!err && recvcounts && !displs)
    err = MPI_ERR_ARG;
  if (!err && !nb && !recvcounts && rd->contiguous && (in_place || sd->contiguous) && c->size > 1) {
    /* small equal blocks, recursive doubling, ring or linear: without a schedule (collectives/allgather.c) */
    size_t B = nm_coll_bytes(rd, recvcount);
    if (B > 0 && (in_place || nm_coll_bytes(sd, sendcount) == B)) {
      struct nm_coll_group_s group = nm_coll_comm_group(c);
      int rc = nm_coll_allgather_eager(nm_mpi.session, &group, c->rank,
                                       in_place ? NULL : (const char *)sendbuf + sd->true_lb,
                                       (char *)recvbuf + rd->true_lb, B, nm_coll_blocking_tag(c),
                                       NM_COLL_ALLGATHER_AUTO, nm_coll_mpi_wait, NULL);
      if (rc != NM_COLL_NOT_TAKEN)
        return nm_coll_eager_end(c, comm, rc, fn);
    }
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  if (sd)
    nm_mpi_coll_sched_hold_type(s, sendtype);
  nm_mpi_coll_sched_hold_type(s, recvtype);
  if (!recvcounts) {
    /* Allgather: equal blocks one after the other */
    int *cnt = nm_mpi_coll_sched_alloc(s, sizeof(int) * (size_t)c->size);
    int *dis = nm_mpi_coll_sched_alloc(s, sizeof(int) * (size_t)c->size);
    if (cnt && dis)
      for (int i = 0; i < c->size; i++) {
        cnt[i] = recvcount;
        dis[i] = i * recvcount;
      }
    recvcounts = cnt;
    displs = dis;
  }
  if (recvcounts && displs)
    nm_coll_allgather_blocks(s, c, sendbuf, sendcount, sd, recvbuf, recvcounts, displs, rd);
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype, comm, NULL, 0,
                                __func__);
}

NM_MPI_ALIAS(Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype, comm, request,
                                1, __func__);
}

NM_MPI_ALIAS(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  if (!recvcounts)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  return nm_mpi_coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm, NULL, 0,
                                __func__);
}

NM_MPI_ALIAS(Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!recvcounts)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  return nm_mpi_coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype, comm, request,
                                1, __func__);
}

/* ---------------------------------------------------------------- Alltoall, Alltoallv */

/** An all-to-all's exchange over packed blocks (collectives/alltoall.c): out[i] (sb[i] bytes) to member i, and
 *  sb-matching rb[i] bytes from member i received at in[i] (the own block is the caller's: sb[r] = rb[r] = 0).
 *  @p block: every block's size when MPI makes them all equal (MPI_Alltoall), else 0. @return the round after. */
static int nm_coll_alltoall_native(nm_mpi_coll_sched_t *s, struct nm_mpi_comm_s *c, const void **out,
                                   nm_len_t *sb, void **in, nm_len_t *rb, nm_len_t block)
{
  struct nm_coll_group_s group = nm_coll_comm_group(c);
  int next = 0;
  nm_coll_build_error(s, nm_coll_alltoallv_build(nm_mpi_coll_sched_native(s), 0, &group, c->rank,
                                                 (const void *const *)out, sb, (void *const *)in, rb, block,
                                                 NM_COLL_ALLTOALL_AUTO, &next));
  return next;
}

/** Where block @p src of an all-to-all is received: the user's bytes when contiguous, else scratch (then
 *  *tmp is set, to be unpacked once the exchange is done). */
static void *nm_coll_alltoall_dst(nm_mpi_coll_sched_t *s, struct nm_mpi_datatype_s *d, void *buf, size_t bytes,
                                  void **tmp)
{
  *tmp = NULL;
  if (bytes == 0)
    return NULL;
  if (d->contiguous)
    return (char *)buf + d->true_lb;
  return *tmp = nm_mpi_coll_sched_alloc(s, bytes);
}

/** All-to-all of typed blocks (collectives/alltoall.c: pairwise or Bruck). With MPI_IN_PLACE, every outgoing
 *  block is first copied (packed) out of recvbuf, since incoming blocks overwrite it. @p block as
 *  nm_coll_alltoall_native(). */
static void nm_coll_alltoall_blocks(nm_mpi_coll_sched_t *s, const struct nm_mpi_comm_s *c, const void *sendbuf,
                                    const int *scounts, const int *sdispls, struct nm_mpi_datatype_s *sd,
                                    void *recvbuf, const int *rcounts, const int *rdispls,
                                    struct nm_mpi_datatype_s *rd, nm_len_t block)
{
  int p = c->size, r = c->rank;
  int in_place = (sendbuf == MPI_IN_PLACE);
  const void **out = nm_mpi_coll_sched_alloc(s, sizeof(void *) * (size_t)p);
  if (!out)
    return;
  if (in_place) {
    sendbuf = recvbuf;
    scounts = rcounts;
    sdispls = rdispls;
    sd = rd;
  }
  for (int i = 0; i < p; i++) {
    size_t b = nm_coll_bytes(sd, scounts[i]);
    out[i] = NULL;
    if (i == r || b == 0)
      continue;
    const void *src = nm_coll_at(sendbuf, sdispls[i], sd);
    if (in_place) {
      void *tmp = nm_mpi_coll_sched_alloc(s, b);
      if (tmp)
        nm_mpi_coll_sched_pack(s, 0, sd, src, scounts[i], tmp);
      out[i] = tmp;
    } else {
      out[i] = nm_coll_packed_src(s, 0, sd, src, scounts[i], b);
    }
  }
  if (!in_place)
    nm_coll_local_copy(s, 0, nm_coll_at(sendbuf, sdispls[r], sd), scounts[r], sd,
                       nm_coll_at(recvbuf, rdispls[r], rd), rcounts[r], rd);
  nm_len_t *sb = nm_mpi_coll_sched_alloc(s, sizeof(nm_len_t) * 2 * (size_t)p), *rb = sb ? sb + p : NULL;
  void **in = nm_mpi_coll_sched_alloc(s, sizeof(void *) * 2 * (size_t)p), **tmp = in ? in + p : NULL;
  if (!sb || !in)
    return;
  for (int i = 0; i < p; i++) {
    sb[i] = i == r ? 0 : nm_coll_bytes(sd, scounts[i]);
    rb[i] = i == r ? 0 : nm_coll_bytes(rd, rcounts[i]);
    in[i] = nm_coll_alltoall_dst(s, rd, nm_coll_at(recvbuf, rdispls[i], rd), rb[i], &tmp[i]);
  }
  int next = nm_coll_alltoall_native(s, (struct nm_mpi_comm_s *)c, out, sb, in, rb, block);
  for (int i = 0; i < p; i++)
    if (tmp[i])
      nm_mpi_coll_sched_unpack(s, next, rd, tmp[i], (MPI_Count)rb[i], nm_coll_at(recvbuf, rdispls[i], rd),
                               rcounts[i]);
}

static int nm_mpi_coll_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], int sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req, int nb,
                                 const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *sd = NULL, *rd = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int vector = (recvcounts != NULL);
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (sendbuf == MPI_IN_PLACE);
  if (!err && !in_place) {
    err = nm_coll_check_type(sendtype, vector ? 0 : sendcount, &sd);
    if (!err && vector)
      err = nm_coll_check_counts(sendcounts, c->size);
    if (!err && vector && !sdispls)
      err = MPI_ERR_ARG;
  }
  if (!err) {
    err = nm_coll_check_type(recvtype, vector ? 0 : recvcount, &rd);
    if (!err && vector)
      err = nm_coll_check_counts(recvcounts, c->size);
    if (!err && vector && !rdispls)
      err = MPI_ERR_ARG;
  }
  if (!err && !nb && !vector && !in_place && sd->contiguous && rd->contiguous && c->size > 1) {
    /* small equal blocks, linear or pairwise: without a schedule (collectives/alltoall.c) */
    size_t B = nm_coll_bytes(sd, sendcount);
    if (B > 0 && B == nm_coll_bytes(rd, recvcount)) {
      struct nm_coll_group_s group = nm_coll_comm_group(c);
      int rc = nm_coll_alltoall_eager(nm_mpi.session, &group, c->rank, (const char *)sendbuf + sd->true_lb,
                                      (char *)recvbuf + rd->true_lb, B, nm_coll_blocking_tag(c),
                                      NM_COLL_ALLTOALL_AUTO, nm_coll_mpi_wait, NULL);
      if (rc != NM_COLL_NOT_TAKEN)
        return nm_coll_eager_end(c, comm, rc, fn);
    }
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  if (sd)
    nm_mpi_coll_sched_hold_type(s, sendtype);
  nm_mpi_coll_sched_hold_type(s, recvtype);
  if (!vector) {
    int p = c->size;
    int *a = nm_mpi_coll_sched_alloc(s, sizeof(int) * 4 * (size_t)p);
    if (a) {
      for (int i = 0; i < p; i++) {
        a[i] = sendcount;
        a[p + i] = i * sendcount;
        a[2 * p + i] = recvcount;
        a[3 * p + i] = i * recvcount;
      }
      sendcounts = a;
      sdispls = a + p;
      recvcounts = a + 2 * p;
      rdispls = a + 3 * p;
    }
  }
  if (recvcounts)
    nm_coll_alltoall_blocks(s, c, sendbuf, sendcounts, sdispls, sd, recvbuf, recvcounts, rdispls, rd,
                            vector ? 0 : nm_coll_bytes(rd, recvcount));
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_alltoallv(sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype, comm,
                               NULL, 0, __func__);
}

NM_MPI_ALIAS(Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_alltoallv(sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL, recvcount, recvtype, comm,
                               request, 1, __func__);
}

NM_MPI_ALIAS(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  if (!recvcounts)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  return nm_mpi_coll_alltoallv(sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts, rdispls, 0, recvtype,
                               comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!recvcounts)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  return nm_mpi_coll_alltoallv(sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts, rdispls, 0, recvtype,
                               comm, request, 1, __func__);
}

/* ---------------------------------------------------------------- Alltoallw (MPI-3.1 5.8) */

/** Alltoallw: per-peer datatypes and byte displacements, exchanged as in nm_coll_alltoall_blocks().
 *  With MPI_IN_PLACE the data to send is taken from recvbuf (recvcounts, rdispls, recvtypes) and packed out
 *  before anything arrives. */
static int nm_mpi_coll_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req,
                                 int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_begin(comm, nb, req, &c);
  int in_place = (sendbuf == MPI_IN_PLACE);
  if (in_place) {
    sendbuf = recvbuf;
    sendcounts = recvcounts;
    sdispls = rdispls;
    sendtypes = recvtypes;
  }
  int p = err ? 0 : c->size, r = err ? 0 : c->rank;
  if (!err && (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes))
    err = MPI_ERR_ARG;
  struct nm_mpi_datatype_s **sd = NULL, **rd = NULL;
  if (!err) {
    sd = calloc((size_t)(2 * p), sizeof(*sd));
    rd = sd ? sd + p : NULL;
    if (!sd)
      err = MPI_ERR_NO_MEM;
  }
  for (int i = 0; !err && i < p; i++) {
    err = nm_coll_check_type(sendtypes[i], sendcounts[i], &sd[i]);
    if (!err)
      err = nm_coll_check_type(recvtypes[i], recvcounts[i], &rd[i]);
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err) {
    free(sd);
    return nm_coll_error(c, comm, err, fn);
  }
  for (int i = 0; i < p; i++) {
    nm_mpi_coll_sched_hold_type(s, sendtypes[i]);
    nm_mpi_coll_sched_hold_type(s, recvtypes[i]);
  }
  const void **out = nm_mpi_coll_sched_alloc(s, sizeof(void *) * (size_t)p);
  for (int i = 0; out && i < p; i++) {
    size_t b = nm_coll_bytes(sd[i], sendcounts[i]);
    const void *src = (const char *)sendbuf + sdispls[i];
    out[i] = NULL;
    if (i == r || b == 0)
      continue;
    if (in_place) {
      void *tmp = nm_mpi_coll_sched_alloc(s, b);
      if (tmp)
        nm_mpi_coll_sched_pack(s, 0, sd[i], src, sendcounts[i], tmp);
      out[i] = tmp;
    } else {
      out[i] = nm_coll_packed_src(s, 0, sd[i], src, sendcounts[i], b);
    }
  }
  if (out && !in_place)
    nm_coll_local_copy(s, 0, (const char *)sendbuf + sdispls[r], sendcounts[r], sd[r],
                       (char *)recvbuf + rdispls[r], recvcounts[r], rd[r]);
  nm_len_t *sb = nm_mpi_coll_sched_alloc(s, sizeof(nm_len_t) * 2 * (size_t)p), *rb = sb ? sb + p : NULL;
  void **in = nm_mpi_coll_sched_alloc(s, sizeof(void *) * 2 * (size_t)p), **tmp = in ? in + p : NULL;
  if (out && sb && in) {
    for (int i = 0; i < p; i++) {
      sb[i] = i == r ? 0 : nm_coll_bytes(sd[i], sendcounts[i]);
      rb[i] = i == r ? 0 : nm_coll_bytes(rd[i], recvcounts[i]);
      in[i] = nm_coll_alltoall_dst(s, rd[i], (char *)recvbuf + rdispls[i], rb[i], &tmp[i]);
    }
    int next = nm_coll_alltoall_native(s, c, out, sb, in, rb, 0);
    for (int i = 0; i < p; i++)
      if (tmp[i])
        nm_mpi_coll_sched_unpack(s, next, rd[i], tmp[i], (MPI_Count)rb[i], (char *)recvbuf + rdispls[i],
                                 recvcounts[i]);
  }
  free(sd);
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Alltoallw)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                               NULL, 0, __func__);
}

NM_MPI_ALIAS(Ialltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                               request, 1, __func__);
}

/* ---------------------------------------------------------------- reductions */

/** Checks shared by every reduction; @p count < 0 is MPI_ERR_COUNT. */
static int nm_coll_red_begin(MPI_Comm comm, int nb, MPI_Request *req, int count, MPI_Datatype datatype, MPI_Op op,
                             struct nm_mpi_comm_s **c, struct nm_mpi_datatype_s **d, struct nm_mpi_op_s **o)
{
  int err = nm_coll_begin(comm, nb, req, c);
  if (!err)
    err = nm_coll_check_type(datatype, count, d);
  if (!err)
    err = nm_coll_check_op(op, datatype, o);
  return err;
}

static int nm_mpi_coll_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d = NULL;
  struct nm_mpi_op_s *o = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_red_begin(comm, nb, req, count, datatype, op, &c, &d, &o);
  if (!err && (root < 0 || root >= c->size))
    err = MPI_ERR_ROOT;
  if (!err && sendbuf == MPI_IN_PLACE && c->rank != root)
    err = MPI_ERR_BUFFER;
  if (!err && !nb && d->contiguous && count > 0 && c->size > 1) { /* small, linear: collectives/reduce.c */
    struct nm_coll_mpi_op_s m;
    struct nm_coll_op_s nop;
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    nm_coll_mpi_op_contig(&m, &nop, d, datatype, count, op, o);
    int rc = nm_coll_reduce_eager(nm_mpi.session, &group, c->rank, root,
                                  sendbuf == MPI_IN_PLACE ? NULL : (const char *)sendbuf + d->true_lb,
                                  c->rank == root ? (char *)recvbuf + d->true_lb : NULL, (nm_len_t)count, &nop,
                                  nm_coll_blocking_tag(c), NM_COLL_REDUCE_AUTO, nm_coll_mpi_wait,
                                  NULL);
    if (rc != NM_COLL_NOT_TAKEN)
      return nm_coll_eager_end(c, comm, rc, fn);
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  nm_mpi_coll_sched_hold_type(s, datatype);
  if (count > 0 && nm_coll_bytes(d, count) > 0) {
    /* collectives/reduce.c on packed elements: in the user's buffers when contiguous */
    struct nm_coll_red_s R;
    struct nm_coll_op_s nop;
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    int in_place = sendbuf == MPI_IN_PLACE, is_root = c->rank == root, next = 0;
    nm_coll_red_init(&R, s, c, d, datatype, count, op, o);
    nm_coll_mpi_op(&R, &nop);
    const void *in = in_place ? recvbuf : sendbuf;
    char *svec = nm_coll_mpi_vec(&R, in, (void *)in), *rvec = NULL;
    if (is_root)
      rvec = in_place ? svec : nm_coll_mpi_vec(&R, NULL, recvbuf);
    if (svec && (rvec || !is_root))
      nm_coll_build_error(s, nm_coll_reduce_build(nm_mpi_coll_sched_native(s), 0, &group, c->rank, root, svec,
                                                  rvec, (nm_len_t)count, &nop, NM_COLL_REDUCE_AUTO, &next));
    if (is_root)
      nm_coll_mpi_unvec(&R, next, rvec, recvbuf);
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, 1, __func__);
}

static int nm_mpi_coll_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d = NULL;
  struct nm_mpi_op_s *o = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_red_begin(comm, nb, req, count, datatype, op, &c, &d, &o);
  if (!err && !nb && d->contiguous && count > 0 && c->size > 1) { /* small, linear: collectives/allreduce.c */
    struct nm_coll_mpi_op_s m;
    struct nm_coll_op_s nop;
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    nm_coll_mpi_op_contig(&m, &nop, d, datatype, count, op, o);
    int rc = nm_coll_allreduce_eager(nm_mpi.session, &group, c->rank,
                                     sendbuf == MPI_IN_PLACE ? NULL : (const char *)sendbuf + d->true_lb,
                                     (char *)recvbuf + d->true_lb, (nm_len_t)count, &nop,
                                     nm_coll_blocking_tag(c), NM_COLL_ALLREDUCE_AUTO,
                                     nm_coll_mpi_wait, NULL);
    if (rc != NM_COLL_NOT_TAKEN)
      return nm_coll_eager_end(c, comm, rc, fn);
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  nm_mpi_coll_sched_hold_type(s, datatype);
  if (count > 0 && nm_coll_bytes(d, count) > 0) {
    /* collectives/allreduce.c on packed elements: in the user's buffers when contiguous */
    struct nm_coll_red_s R;
    struct nm_coll_op_s nop;
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    int in_place = sendbuf == MPI_IN_PLACE, next = 0;
    nm_coll_red_init(&R, s, c, d, datatype, count, op, o);
    nm_coll_mpi_op(&R, &nop);
    char *vec = nm_coll_mpi_vec(&R, in_place ? recvbuf : sendbuf, recvbuf);
    char *src = in_place || R.mode != NM_COLL_RED_CONTIG ? NULL : (char *)sendbuf + R.shift;
    if (vec)
      nm_coll_build_error(s, nm_coll_allreduce_build(nm_mpi_coll_sched_native(s), 0, &group, c->rank, src, vec,
                                                     (nm_len_t)count, &nop, NM_COLL_ALLREDUCE_AUTO, &next));
    nm_coll_mpi_unvec(&R, next, vec, recvbuf);
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, 1, __func__);
}

/** Reduce_scatter(_block): collectives/reduce_scatter.c on packed elements (its algorithm by size and operator). */
static int nm_mpi_coll_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], int recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *req, int nb,
                                      const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d = NULL;
  struct nm_mpi_op_s *o = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  long long total = 0;
  int err = nm_coll_red_begin(comm, nb, req, recvcounts ? 0 : recvcount, datatype, op, &c, &d, &o);
  if (!err && recvcounts)
    err = nm_coll_check_counts(recvcounts, c->size);
  if (!err) {
    for (int i = 0; i < c->size; i++)
      total += recvcounts ? recvcounts[i] : recvcount;
    if (total > 0x7fffffff)
      err = MPI_ERR_COUNT;
  }
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  nm_mpi_coll_sched_hold_type(s, datatype);

  int p = c->size, r = c->rank;
  size_t esize = nm_coll_bytes(d, 1);
  if (total > 0 && esize > 0) {
    /* collectives/reduce_scatter.c (recursive halving, pairwise; reduce then scatter for a non-commutative op) */
    struct nm_coll_red_s R;
    struct nm_coll_op_s nop;
    struct nm_coll_group_s group = nm_coll_comm_group(c);
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    int mycount = recvcounts ? recvcounts[r] : recvcount, next = 0;
    size_t mybytes = (size_t)mycount * esize;
    nm_len_t *cnt = nm_mpi_coll_sched_alloc(s, sizeof(nm_len_t) * (size_t)p);
    nm_coll_red_init(&R, s, c, d, datatype, (int)total, op, o);
    nm_coll_mpi_op(&R, &nop);
    char *svec = nm_coll_mpi_vec(&R, in, (void *)in), *rvec = NULL;
    if (mybytes)
      rvec = d->contiguous ? (char *)recvbuf + d->true_lb : nm_mpi_coll_sched_alloc(s, mybytes);
    if (cnt && svec && (rvec || !mybytes)) {
      for (int i = 0; i < p; i++)
        cnt[i] = (nm_len_t)(recvcounts ? recvcounts[i] : recvcount);
      nm_coll_build_error(s, nm_coll_reduce_scatter_build(nm_mpi_coll_sched_native(s), 0, &group, r, svec, rvec,
                                                          cnt, &nop, NM_COLL_REDUCE_SCATTER_AUTO, &next));
      if (mybytes && !d->contiguous)
        nm_mpi_coll_sched_unpack(s, next, d, rvec, (MPI_Count)mybytes, recvbuf, mycount);
    }
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  if (!recvcounts)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  return nm_mpi_coll_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!recvcounts)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  return nm_mpi_coll_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, request, 1, __func__);
}

NM_MPI_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, NULL, 0, __func__);
}

NM_MPI_ALIAS(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, request, 1, __func__);
}

/** Scan (inclusive) and Exscan: linear chain, rank r receives x0 op ... op x(r-1) from r - 1, combines it with its
 *  own data and passes the result to r + 1. */
static int nm_mpi_coll_scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, int exclusive, MPI_Request *req, int nb, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d = NULL;
  struct nm_mpi_op_s *o = NULL;
  nm_mpi_coll_sched_t *s = NULL;
  int err = nm_coll_red_begin(comm, nb, req, count, datatype, op, &c, &d, &o);
  if (!err)
    s = nm_coll_new(c, comm, nb, &err);
  if (err)
    return nm_coll_error(c, comm, err, fn);
  nm_mpi_coll_sched_hold_type(s, datatype);

  int p = c->size, r = c->rank;
  if (count > 0 && nm_coll_bytes(d, count) > 0) {
    struct nm_coll_red_s R;
    const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    nm_coll_red_init(&R, s, c, d, datatype, count, op, o);
    if (r == 0) {
      const void *own = nm_coll_red_view(&R, 0, in);
      if (!exclusive && in != recvbuf)
        nm_coll_red_store(&R, 0, own, recvbuf);
      if (p > 1)
        nm_coll_red_send(&R, 0, 1, own);
    } else {
      void *prev = nm_coll_red_work(&R);
      void *acc = NULL;
      if (!exclusive || r < p - 1) {
        acc = nm_coll_red_work(&R);
        nm_coll_red_load(&R, 0, acc, in); /* before recvbuf is overwritten (MPI_IN_PLACE) */
      }
      nm_coll_red_recv(&R, 0, r - 1, prev);
      if (acc)
        nm_coll_red_apply(&R, 1, prev, acc); /* acc = (x0 op ... op x(r-1)) op x(r) */
      if (acc && r < p - 1)
        nm_coll_red_send(&R, 1, r + 1, acc);
      nm_coll_red_store(&R, 1, exclusive ? prev : acc, recvbuf);
    }
  }
  return nm_coll_end(s, comm, nb, req, fn);
}

NM_MPI_ALIAS(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, NULL, 0, __func__);
}

NM_MPI_ALIAS(Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, request, 1, __func__);
}

NM_MPI_ALIAS(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, NULL, 0, __func__);
}

NM_MPI_ALIAS(Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, request, 1, __func__);
}
