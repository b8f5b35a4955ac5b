/**
 * @file mpix_split.c
 * @brief MPIX_ calls of the split-tree non-blocking collectives (Denis et al. 2019, section 6; issue 19,
 * deliverable 3): MPIX_Ibcast_split, MPIX_Ireduce_split, MPIX_Igather_split, MPIX_Iscatter_split and
 * MPIX_Split_wait, thin wrappers of nm_coll_split.h over a communicator (doc/mpi.md).
 *
 * Restrictions, so that the native collectives move the user's bytes as they are: contiguous datatypes (an
 * MPI_ERR_TYPE otherwise), no MPI_IN_PLACE (MPI_ERR_BUFFER), intracommunicators (MPI_ERR_COMM), and commutative
 * operations for the reduce (MPI_ERR_OP): the tree combines in root-relative rank order. A collective takes the
 * communicator's next collective tag, as MPI_Ibcast does, so members call them in the same order as any other
 * collective of the communicator.
 */
#include "nm_mpi_private.h"
#include <stdlib.h>
#include <nmad/nm_coll_split.h>

struct nm_mpix_split_s {
  nm_coll_split_t *req;
  MPI_Comm comm;
  MPI_Op op; /* reduce: held until the wait (MPI-3.1 5.9.5) */
  MPI_Datatype dt;
  int elem; /* bytes of one element */
};

static nm_gate_t nm_mpix_split_gate(void *ref, int member) { return nm_mpi_comm_gate(ref, member); }

/** Checks shared by the four calls; fills @p bytes (@p count elements) and the group. @return MPI_SUCCESS or a
 *  class. */
static int nm_mpix_split_args(MPI_Comm comm, int count, MPI_Datatype dt, int root, MPIX_Split_request *request,
                              struct nm_mpi_comm_s **c, const struct nm_mpi_datatype_s **d, nm_len_t *bytes)
{
  *c = nm_mpi_comm_get(comm);
  if (!*c || (*c)->is_inter)
    return MPI_ERR_COMM;
  if (!request)
    return MPI_ERR_REQUEST;
  *request = NULL;
  *d = nm_mpi_datatype_get(dt);
  if (!*d)
    return MPI_ERR_TYPE;
  if (count < 0)
    return MPI_ERR_COUNT;
  if (!(*d)->contiguous && count > 0)
    return MPI_ERR_TYPE;
  if (root < 0 || root >= (*c)->size)
    return MPI_ERR_ROOT;
  *bytes = (nm_len_t)nm_mpi_datatype_packed_size(*d, count);
  return MPI_SUCCESS;
}

static struct nm_coll_split_opts_s nm_mpix_split_opts(int S)
{
  struct nm_coll_split_opts_s o = {S >= 0 ? S : NM_COLL_SPLIT_AUTO, NULL};
  return o;
}

static nm_tag_t nm_mpix_split_tag(struct nm_mpi_comm_s *c)
{
  return nm_mpi_coll_tag(c, nm_mpi_coll_seq_tag(c)); /* a non-blocking collective's: its own sequence tag */
}

/** Wrap a started collective into *request, or report its error. */
static int nm_mpix_split_done(MPI_Comm comm, int rc, nm_coll_split_t *req, struct nm_mpix_split_s *x,
                              MPIX_Split_request *request, const char *fn)
{
  if (rc != 0) {
    free(x);
    return nm_mpi_error(comm, rc > 0 ? rc : nm_mpi_from_nm_err(rc), fn);
  }
  x->req = req;
  *request = x;
  return MPI_SUCCESS;
}

static struct nm_mpix_split_s *nm_mpix_split_new(MPI_Comm comm, MPI_Op op, MPI_Datatype dt, int elem)
{
  struct nm_mpix_split_s *x = calloc(1, sizeof(*x));
  if (x)
    *x = (struct nm_mpix_split_s){NULL, comm, op, dt, elem};
  return x;
}

NM_MPIX_ALIAS(Ibcast_split)
int PMPIX_Ibcast_split(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, int S,
                       MPIX_Split_request *request)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c;
  const struct nm_mpi_datatype_s *d;
  nm_len_t bytes;
  int rc = nm_mpix_split_args(comm, count, datatype, root, request, &c, &d, &bytes);
  if (rc)
    return nm_mpi_error(c ? comm : MPI_COMM_WORLD, rc, __func__);
  struct nm_mpix_split_s *x = nm_mpix_split_new(comm, MPI_OP_NULL, datatype, 0);
  if (!x)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  struct nm_coll_group_s g = {c->size, nm_mpix_split_gate, c, NULL, NULL};
  struct nm_coll_split_opts_s o = nm_mpix_split_opts(S);
  nm_coll_split_t *req = NULL;
  void *data = bytes ? nm_mpi_datatype_contig_ptr(d, buf) : NULL;
  rc = nm_coll_split_ibcast(nm_mpi.session, &g, c->rank, root, data, bytes, nm_mpix_split_tag(c), &o, &req);
  return nm_mpix_split_done(comm, rc, req, x, request, __func__);
}

/** acc = acc op in: the predefined and the commutative user operations give in op acc the same. */
static int nm_mpix_split_combine(void *acc, const void *in, nm_len_t len, void *ref)
{
  const struct nm_mpix_split_s *x = ref;
  return nm_mpi_op_apply(x->op, in, acc, (int)(len / (nm_len_t)x->elem), x->dt);
}

NM_MPIX_ALIAS(Ireduce_split)
int PMPIX_Ireduce_split(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                        MPI_Comm comm, int S, MPIX_Split_request *request)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c;
  const struct nm_mpi_datatype_s *d;
  nm_len_t bytes;
  int rc = nm_mpix_split_args(comm, count, datatype, root, request, &c, &d, &bytes);
  if (rc)
    return nm_mpi_error(c ? comm : MPI_COMM_WORLD, rc, __func__);
  const struct nm_mpi_op_s *o = nm_mpi_op_get(op);
  if (!o || !o->commute)
    return nm_mpi_error(comm, MPI_ERR_OP, __func__);
  if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE)
    return nm_mpi_error(comm, MPI_ERR_BUFFER, __func__);
  struct nm_mpix_split_s *x = nm_mpix_split_new(comm, op, datatype, (int)d->size);
  if (!x)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  struct nm_coll_group_s g = {c->size, nm_mpix_split_gate, c, NULL, NULL};
  struct nm_coll_split_opts_s so = nm_mpix_split_opts(S);
  nm_coll_split_t *req = NULL;
  const void *src = bytes ? nm_mpi_datatype_contig_ptr(d, sendbuf) : NULL;
  void *dst = bytes && c->rank == root ? nm_mpi_datatype_contig_ptr(d, recvbuf) : NULL;
  nm_mpi_op_hold(op);
  rc = nm_coll_split_ireduce(nm_mpi.session, &g, c->rank, root, src, dst, bytes, nm_mpix_split_combine, x,
                             nm_mpix_split_tag(c), &so, &req);
  if (rc)
    nm_mpi_op_release(op);
  return nm_mpix_split_done(comm, rc, req, x, request, __func__);
}

/** Gather (@p gather) or scatter: @p count elements per member. */
static int nm_mpix_split_blocks(int gather, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                                int root, MPI_Comm comm, int S, MPIX_Split_request *request, const char *fn)
{
  struct nm_mpi_comm_s *c;
  const struct nm_mpi_datatype_s *d;
  nm_len_t bytes;
  int rc = nm_mpix_split_args(comm, count, datatype, root, request, &c, &d, &bytes);
  if (rc)
    return nm_mpi_error(c ? comm : MPI_COMM_WORLD, rc, fn);
  if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE)
    return nm_mpi_error(comm, MPI_ERR_BUFFER, fn);
  struct nm_mpix_split_s *x = nm_mpix_split_new(comm, MPI_OP_NULL, datatype, 0);
  if (!x)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, fn);
  struct nm_coll_group_s g = {c->size, nm_mpix_split_gate, c, NULL, NULL};
  struct nm_coll_split_opts_s o = nm_mpix_split_opts(S);
  nm_coll_split_t *req = NULL;
  /* the one buffer of n blocks is the root's; with contiguous types true_lb shifts both alike */
  int root_side = c->rank == root;
  const void *src = bytes && (gather || root_side) ? nm_mpi_datatype_contig_ptr(d, sendbuf) : NULL;
  void *dst = bytes && (!gather || root_side) ? nm_mpi_datatype_contig_ptr(d, recvbuf) : NULL;
  nm_tag_t tag = nm_mpix_split_tag(c);
  if (gather)
    rc = nm_coll_split_igather(nm_mpi.session, &g, c->rank, root, src, dst, bytes, tag, &o, &req);
  else
    rc = nm_coll_split_iscatter(nm_mpi.session, &g, c->rank, root, src, dst, bytes, tag, &o, &req);
  return nm_mpix_split_done(comm, rc, req, x, request, fn);
}

NM_MPIX_ALIAS(Igather_split)
int PMPIX_Igather_split(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, int root,
                        MPI_Comm comm, int S, MPIX_Split_request *request)
{
  NM_MPI_LOCKED();
  return nm_mpix_split_blocks(1, sendbuf, recvbuf, count, datatype, root, comm, S, request, __func__);
}

NM_MPIX_ALIAS(Iscatter_split)
int PMPIX_Iscatter_split(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, int root,
                         MPI_Comm comm, int S, MPIX_Split_request *request)
{
  NM_MPI_LOCKED();
  return nm_mpix_split_blocks(0, sendbuf, recvbuf, count, datatype, root, comm, S, request, __func__);
}

NM_MPIX_ALIAS(Split_wait)
int PMPIX_Split_wait(MPIX_Split_request *request, int *S_used)
{
  NM_MPI_LOCKED();
  if (!request || !*request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  struct nm_mpix_split_s *x = *request;
  if (S_used)
    *S_used = nm_coll_split_get_S(x->req);
  int rc = nm_coll_split_wait(x->req); /* releases the core lock while it blocks */
  if (x->op != MPI_OP_NULL)
    nm_mpi_op_release(x->op);
  MPI_Comm comm = x->comm;
  free(x);
  *request = NULL;
  if (rc == 0)
    return MPI_SUCCESS;
  return nm_mpi_error(comm, rc > 0 ? rc : nm_mpi_from_nm_err(rc), __func__);
}
