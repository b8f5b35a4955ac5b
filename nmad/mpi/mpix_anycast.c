/**
 * @file mpix_anycast.c
 * @brief MPIX_Anycast*: the rootless broadcast (nm_anycast.h; Li et al. 2018, "Anycast: Rootless Broadcasting with
 *        MPI") for MPI programs (issue 19, deliverables 2 and 4; doc/mpi.md, doc/anycast.md).
 *
 * As in the paper (section 4, first drawback), the skip ring is built once on a communicator and the resulting
 * handle is passed to the send and receive calls: MPIX_Anycast_create(comm, &h) (every member calls it; local,
 * no message), MPIX_Ianycast(buf, count, type, tag, h, &req) at any member at any time, and
 * MPIX_Anycast_irecv(buf, count, type, tag or MPI_ANY_TAG, h, &req) at the others, whose status gives the origin's
 * rank in comm (MPI_SOURCE), the tag and the size. The second drawback (the application must poll) is gone: nmad's
 * progress, or its progress thread, forwards. Contiguous datatypes only (MPI_ERR_TYPE otherwise).
 */
#include "nm_mpi_private.h"
#include <nmad/nm_anycast.h>
#include <stdlib.h>

struct nm_mpix_anycast_s {
  MPI_Comm comm;
  nm_anycast_t ac;
};

/* Ring member = rank in the communicator's group. */
static nm_gate_t nm_mpix_anycast_gate_of(void *ref, int member)
{
  struct nm_mpix_anycast_s *h = ref;
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(h->comm);
  return c ? nm_mpi_comm_gate(c, member) : NULL;
}

NM_MPIX_ALIAS(Anycast_create)
int PMPIX_Anycast_create(MPI_Comm comm, MPIX_Anycast *anycast)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  if (!anycast)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  struct nm_mpix_anycast_s *h = calloc(1, sizeof(*h));
  if (!h)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  h->comm = comm;
  struct nm_coll_group_s group = {c->size, nm_mpix_anycast_gate_of, h, NULL, NULL};
  /* The context is agreed by every member: the same ring id everywhere, one ring per communicator. */
  int err = nm_anycast_init(nm_mpi.session, &group, c->rank, (c->context >> 1) & 0xffffu, NULL, &h->ac);
  if (err) {
    free(h);
    return nm_mpi_error(comm, err == -NM_EINVAL ? MPI_ERR_ARG : nm_mpi_from_nm_err(err), __func__);
  }
  *anycast = h;
  return MPI_SUCCESS;
}

NM_MPIX_ALIAS(Anycast_free)
int PMPIX_Anycast_free(MPIX_Anycast *anycast)
{
  NM_MPI_LOCKED();
  if (!anycast || !*anycast)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  int err;
  while ((err = nm_anycast_finalize((*anycast)->ac)) == -NM_EBUSY) /* anycasts still being forwarded here */
    nm_core_progress(nm_mpi.core);
  if (err)
    return nm_mpi_error((*anycast)->comm, nm_mpi_from_nm_err(err), __func__);
  free(*anycast);
  *anycast = NULL;
  return MPI_SUCCESS;
}

/* The origin's side: the request completes when its sends did. */
struct nm_mpix_anycast_send_s {
  MPIX_Anycast h;
  nm_anycast_req_t req;
};

static int nm_mpix_anycast_send_progress(struct nm_mpi_request_s *r)
{
  struct nm_mpix_anycast_send_s *s = r->state;
  int err = nm_anycast_test(s->h->ac, &s->req);
  if (err == -NM_EAGAIN)
    return 0;
  return err ? -nm_mpi_from_nm_err(err) : 1;
}

static void nm_mpix_anycast_free_state(struct nm_mpi_request_s *r)
{
  free(r->state);
  r->state = NULL;
}

/* Contiguous bytes of (buf, count, datatype). @return MPI code. */
static int nm_mpix_anycast_bytes(MPI_Comm comm, const void *buf, int count, MPI_Datatype datatype, void **ptr,
                                 nm_len_t *len)
{
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  if (count < 0)
    return MPI_ERR_COUNT;
  if (!d || !d->committed || !d->contiguous)
    return MPI_ERR_TYPE;
  *len = (nm_len_t)nm_mpi_datatype_packed_size(d, count);
  *ptr = *len ? nm_mpi_datatype_contig_ptr(d, buf) : NULL;
  return (*len && !buf) ? MPI_ERR_BUFFER : MPI_SUCCESS;
}

NM_MPIX_ALIAS(Ianycast)
int PMPIX_Ianycast(const void *buf, int count, MPI_Datatype datatype, int tag, MPIX_Anycast anycast,
                   MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!anycast || !request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (tag < 0 || tag > NM_MPI_TAG_UB)
    return nm_mpi_error(anycast->comm, MPI_ERR_TAG, __func__);
  void *data;
  nm_len_t len;
  int err = nm_mpix_anycast_bytes(anycast->comm, buf, count, datatype, &data, &len);
  if (err)
    return nm_mpi_error(anycast->comm, err, __func__);
  struct nm_mpix_anycast_send_s *s = calloc(1, sizeof(*s));
  struct nm_mpi_request_s *r;
  MPI_Request h = s ? nm_mpi_request_new(NM_MPI_REQ_COLL, &r) : MPI_REQUEST_NULL;
  if (h == MPI_REQUEST_NULL) {
    free(s);
    return nm_mpi_error(anycast->comm, MPI_ERR_NO_MEM, __func__);
  }
  s->h = anycast;
  r->comm = anycast->comm;
  r->state = s;
  r->progress = nm_mpix_anycast_send_progress;
  r->release = nm_mpix_anycast_free_state;
  int nerr = nm_anycast_isend(anycast->ac, (nm_tag_t)tag, data, len, &s->req);
  if (nerr) {
    nm_mpi_request_release(&h);
    return nm_mpi_error(anycast->comm, nerr == -NM_EINVAL ? MPI_ERR_ARG : nm_mpi_from_nm_err(nerr), __func__);
  }
  *request = h;
  return MPI_SUCCESS;
}

/* A receiver's side: a plain receive on the ring's session; the status names the origin. */
struct nm_mpix_anycast_recv_s {
  MPIX_Anycast h;
  nm_sr_request_t req;
};

static int nm_mpix_anycast_recv_progress(struct nm_mpi_request_s *r)
{
  struct nm_mpix_anycast_recv_s *s = r->state;
  nm_session_t rx = nm_anycast_session(s->h->ac);
  if (!s->req.completed) {
    nm_core_progress(nm_mpi.core);
    if (!s->req.completed)
      return 0;
  }
  nm_gate_t g = NULL;
  nm_tag_t tag = 0;
  nm_len_t got = 0;
  nm_sr_recv_source(rx, &s->req, &g);
  nm_sr_recv_get_tag(rx, &s->req, &tag);
  nm_sr_get_size(rx, &s->req, &got);
  r->status.MPI_SOURCE = nm_anycast_member_of(s->h->ac, g);
  r->status.MPI_TAG = (int)tag;
  r->status.nm_count = (long long)got;
  return s->req.status ? -nm_mpi_from_nm_err(s->req.status) : 1;
}

NM_MPIX_ALIAS(Anycast_irecv)
int PMPIX_Anycast_irecv(void *buf, int count, MPI_Datatype datatype, int tag, MPIX_Anycast anycast,
                        MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!anycast || !request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (tag != MPI_ANY_TAG && (tag < 0 || tag > NM_MPI_TAG_UB))
    return nm_mpi_error(anycast->comm, MPI_ERR_TAG, __func__);
  void *data;
  nm_len_t len;
  int err = nm_mpix_anycast_bytes(anycast->comm, buf, count, datatype, &data, &len);
  if (err)
    return nm_mpi_error(anycast->comm, err, __func__);
  struct nm_mpix_anycast_recv_s *s = calloc(1, sizeof(*s));
  struct nm_mpi_request_s *r;
  MPI_Request h = s ? nm_mpi_request_new(NM_MPI_REQ_COLL, &r) : MPI_REQUEST_NULL;
  if (h == MPI_REQUEST_NULL) {
    free(s);
    return nm_mpi_error(anycast->comm, MPI_ERR_NO_MEM, __func__);
  }
  s->h = anycast;
  r->comm = anycast->comm;
  r->state = s;
  r->progress = nm_mpix_anycast_recv_progress;
  r->release = nm_mpix_anycast_free_state;
  nm_tag_t mask = tag == MPI_ANY_TAG ? NM_TAG_MASK_NONE : NM_TAG_MASK_FULL;
  int nerr = nm_sr_irecv_mask(nm_anycast_session(anycast->ac), NM_ANY_GATE, tag == MPI_ANY_TAG ? 0 : (nm_tag_t)tag,
                              mask, data, len, &s->req);
  if (nerr) {
    nm_mpi_request_release(&h);
    return nm_mpi_error(anycast->comm, nm_mpi_from_nm_err(nerr), __func__);
  }
  *request = h;
  return MPI_SUCCESS;
}
