/**
 * @file mpi_p2p.c
 * @brief MPI point-to-point on nmad's sendrecv interface: blocking and non-blocking sends in the four modes,
 *        receives, Sendrecv(_replace), probes and matched probes (MPI_Mprobe/Mrecv), buffered-send buffers,
 *        persistent request creation.
 *
 * Mapping (nm_mpi_private.h): nmad tag = (context << 32) | MPI tag; MPI_ANY_TAG matches the context only
 * (NM_MPI_TAG_MASK_ANY); MPI_ANY_SOURCE is NM_ANY_GATE and the source is mapped back with
 * nm_mpi_comm_rank_of_gate(). Ready sends are standard sends (always correct: a ready send is only an
 * assertion by the application). Synchronous sends use nmad's synchronous send (ACK on match).
 * Non-contiguous data is packed into a temporary before sending, and received into a temporary that
 * nm_mpi_request_complete() unpacks.
 */
#include "nm_mpi_p2p.h"
#include <stdlib.h>

/* ---------------------------------------------------------------- arguments */

int nm_mpi_p2p_check(MPI_Comm comm, int count, MPI_Datatype datatype, int peer, int tag, int is_recv)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d;
  return nm_mpi_p2p_check_get(comm, count, datatype, peer, tag, is_recv, &c, &d);
}

/* Probes take no datatype. */
static int nm_mpi_probe_check(MPI_Comm comm, int source, int tag)
{
  return nm_mpi_p2p_check(comm, 0, MPI_BYTE, source, tag, 1);
}

/* A request on the stack for the blocking calls: no handle, no allocation; field by field rather than a memset of
 * the whole object (nreq, tmp and the state belong to the post, nm_mpi_transfer_post()). */
static void nm_mpi_stack_request(struct nm_mpi_request_s *r, int kind, const void *buf, int count,
                                 MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, int mode)
{
  nm_mpi_p2p_fill(r, kind, buf, count, datatype, peer, tag, comm, mode, 0);
  r->handle = 0;
  r->progress = NULL;
  r->release = NULL;
  r->state = NULL; /* r->status is written at completion */
}

/* ---------------------------------------------------------------- blocking sends and receives */

/* Post a blocking send or receive on a stack request and wait for it; its status goes to @p status
 * (MPI_STATUS_IGNORE for sends). @return the MPI code of the operation. */
static inline __attribute__((always_inline)) int nm_mpi_blocking(int kind, const void *buf, int count,
                                                                 MPI_Datatype datatype, int peer, int tag,
                                                                 MPI_Comm comm, int mode,
                                                                 const struct nm_mpi_comm_s *c,
                                                                 const struct nm_mpi_datatype_s *d,
                                                                 MPI_Status *status)
{
  struct nm_mpi_request_s r;
  int err = nm_mpi_transfer_post(&r, c, d, kind, buf, count, peer, tag, mode, 0, 1);
  if (err)
    return err;
  nm_mpi_stack_request(&r, kind, buf, count, datatype, peer, tag, comm, mode); /* once the transfer is under way */
  return nm_mpi_request_wait_status(&r, status);
}

static int nm_mpi_send_mode(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                            int mode, const char *fn)
{
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d;
  int err = nm_mpi_p2p_check_get(comm, count, datatype, dest, tag, 0, &c, &d);
  if (err)
    return nm_mpi_error(comm, err, fn);
  if (dest == MPI_PROC_NULL)
    return MPI_SUCCESS;
  err = nm_mpi_blocking(NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, mode, c, d, MPI_STATUS_IGNORE);
  return err ? nm_mpi_error(comm, err, fn) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_send_mode(buf, count, datatype, dest, tag, comm, NM_MPI_MODE_STANDARD, __func__);
}

NM_MPI_ALIAS(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_send_mode(buf, count, datatype, dest, tag, comm, NM_MPI_MODE_SYNC, __func__);
}

NM_MPI_ALIAS(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  return nm_mpi_send_mode(buf, count, datatype, dest, tag, comm, NM_MPI_MODE_READY, __func__);
}

NM_MPI_ALIAS(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c;
  struct nm_mpi_datatype_s *d;
  int err = nm_mpi_p2p_check_get(comm, count, datatype, source, tag, 1, &c, &d);
  if (err)
    return nm_mpi_error(comm, err, __func__);
  if (source == MPI_PROC_NULL) {
    MPI_Status st;
    nm_mpi_status_proc_null(&st);
    nm_mpi_status_out(status, &st, 0); /* MPI_ERROR left alone (3.2.5) */
    return MPI_SUCCESS;
  }
  err = nm_mpi_blocking(NM_MPI_REQ_RECV, buf, count, datatype, source, tag, comm, 0, c, d, status);
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- non-blocking */

static inline __attribute__((always_inline)) int nm_mpi_isend_mode(const void *buf, int count,
                                                                   MPI_Datatype datatype, int dest, int tag,
                                                                   MPI_Comm comm,
                             int mode, MPI_Request *request, const char *fn)
{
  int err = request ? nm_mpi_p2p_post(NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, mode, 0, request)
                    : MPI_ERR_ARG;
  return err ? nm_mpi_error(comm, err, fn) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_isend_mode(buf, count, datatype, dest, tag, comm, NM_MPI_MODE_STANDARD, request, __func__);
}

NM_MPI_ALIAS(Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_isend_mode(buf, count, datatype, dest, tag, comm, NM_MPI_MODE_SYNC, request, __func__);
}

NM_MPI_ALIAS(Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_isend_mode(buf, count, datatype, dest, tag, comm, NM_MPI_MODE_READY, request, __func__);
}

NM_MPI_ALIAS(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
  NM_MPI_LOCKED();
  int err = request ? nm_mpi_p2p_post(NM_MPI_REQ_RECV, buf, count, datatype, source, tag, comm, 0, 0, request)
                    : MPI_ERR_ARG;
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- buffered sends */

/* Bytes of the attached buffer in use: every buffered send still in flight, with its overhead. */
static MPI_Count nm_mpi_bsend_used(void)
{
  MPI_Count used = 0;
  for (int h = 1; h < nm_mpi.requests.n; h++) {
    struct nm_mpi_request_s *r = nm_mpi_request_get(h);
    if (r && r->kind == NM_MPI_REQ_SEND && r->mode == NM_MPI_MODE_BUFFERED && r->user_freed && !r->completed) {
      struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(r->datatype);
      used += (d ? nm_mpi_datatype_packed_size(d, r->count) : 0) + MPI_BSEND_OVERHEAD;
    }
  }
  return used;
}

int nm_mpi_bsend_post(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      struct nm_mpi_request_s *link)
{
  if (dest == MPI_PROC_NULL)
    return MPI_SUCCESS;
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  if (!d)
    return MPI_ERR_TYPE;
  MPI_Count need = nm_mpi_datatype_packed_size(d, count) + MPI_BSEND_OVERHEAD;
  if (!nm_mpi.bsend_buf || nm_mpi_bsend_used() + need > (MPI_Count)nm_mpi.bsend_size)
    return MPI_ERR_BUFFER;
  struct nm_mpi_request_s *r;
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_SEND, &r);
  if (h == MPI_REQUEST_NULL)
    return MPI_ERR_NO_MEM;
  nm_mpi_p2p_setup(r, NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, NM_MPI_MODE_BUFFERED);
  nm_mpi_datatype_ref(datatype);
  int err = nm_mpi_request_start(r); /* copies the data (mode BUFFERED) */
  if (err) {
    nm_mpi_request_release(&h);
    return err;
  }
  if (link)
    nm_mpi_bsend_link(link, r);
  nm_mpi_request_detach(r); /* its monitor destroys it when the transfer completes */
  return MPI_SUCCESS;
}

void nm_mpi_bsend_drain(void)
{
  struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
  while (nm_mpi_bsend_used() > 0)
    nm_mpi_wait_event(&w);
}

NM_MPI_ALIAS(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_p2p_check(comm, count, datatype, dest, tag, 0);
  if (!err)
    err = nm_mpi_bsend_post(buf, count, datatype, dest, tag, comm, NULL);
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_p2p_check(comm, count, datatype, dest, tag, 0);
  if (!err && !request)
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, __func__);
  /* Once the data is buffered the application's request is complete; it stays linked to the transfer for
   * MPI_Cancel. */
  struct nm_mpi_request_s *r;
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_DONE, &r);
  if (h == MPI_REQUEST_NULL)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  r->comm = comm;
  err = nm_mpi_bsend_post(buf, count, datatype, dest, tag, comm, r);
  if (err) {
    nm_mpi_request_release(&h);
    return nm_mpi_error(comm, err, __func__);
  }
  *request = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
  NM_MPI_LOCKED();
  if (size < 0 || (size > 0 && !buffer))
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  if (nm_mpi.bsend_buf)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, __func__); /* one buffer at a time */
  /* Only the size is used: copies live in their own allocations, accounted against it. */
  nm_mpi.bsend_buf = buffer ? buffer : (void *)&nm_mpi.bsend_size;
  nm_mpi.bsend_size = size;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
  NM_MPI_LOCKED();
  if (!buffer_addr || !size)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  nm_mpi_bsend_drain(); /* blocks until every buffered message is sent (MPI-3.1 3.6.1) */
  void *buf = nm_mpi.bsend_buf == (void *)&nm_mpi.bsend_size ? NULL : nm_mpi.bsend_buf;
  *(void **)buffer_addr = buf;
  *size = nm_mpi.bsend_buf ? nm_mpi.bsend_size : 0;
  nm_mpi.bsend_buf = NULL;
  nm_mpi.bsend_size = 0;
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- Sendrecv */

NM_MPI_ALIAS(Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_p2p_check(comm, sendcount, sendtype, dest, sendtag, 0);
  if (!err)
    err = nm_mpi_p2p_check(comm, recvcount, recvtype, source, recvtag, 1);
  if (err)
    return nm_mpi_error(comm, err, __func__);
  struct nm_mpi_request_s rr, sr;
  nm_mpi_stack_request(&rr, NM_MPI_REQ_RECV, recvbuf, recvcount, recvtype, source, recvtag, comm, 0);
  nm_mpi_stack_request(&sr, NM_MPI_REQ_SEND, sendbuf, sendcount, sendtype, dest, sendtag, comm, 0);
  err = nm_mpi_request_start(&rr);
  if (err)
    return nm_mpi_error(comm, err, __func__);
  int serr = nm_mpi_request_start(&sr);
  if (serr) {
    /* The receive is posted on our stack: it must not outlive this call. */
    if (nm_sr_rcancel(nm_mpi.session, &rr.nreq) != 0)
      nm_mpi_request_wait(&rr);
    return nm_mpi_error(comm, serr, __func__);
  }
  nm_mpi_request_wait(&rr);
  nm_mpi_request_wait(&sr);
  nm_mpi_status_out(status, &rr.status, 0);
  err = rr.status.MPI_ERROR ? rr.status.MPI_ERROR : sr.status.MPI_ERROR;
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status *status)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_p2p_check(comm, count, datatype, dest, sendtag, 0);
  if (!err)
    err = nm_mpi_p2p_check(comm, count, datatype, source, recvtag, 1);
  if (err)
    return nm_mpi_error(comm, err, __func__);
  /* Receive the packed bytes aside while the original data is being sent, then unpack over it. */
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  MPI_Count len = nm_mpi_datatype_packed_size(d, count);
  if (len > 0x7fffffff)
    return nm_mpi_error(comm, MPI_ERR_COUNT, __func__);
  void *tmp = malloc(len ? (size_t)len : 1);
  if (!tmp)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, __func__);
  struct nm_mpi_request_s rr, sr;
  nm_mpi_stack_request(&rr, NM_MPI_REQ_RECV, tmp, (int)len, MPI_BYTE, source, recvtag, comm, 0);
  nm_mpi_stack_request(&sr, NM_MPI_REQ_SEND, buf, count, datatype, dest, sendtag, comm, 0);
  err = nm_mpi_request_start(&rr);
  if (!err) {
    err = nm_mpi_request_start(&sr);
    if (err)
      nm_sr_rcancel(nm_mpi.session, &rr.nreq); /* withdrawn unless already matched */
    nm_mpi_request_wait(&rr); /* the receive is on our stack: it must not outlive this call */
    if (!err)
      nm_mpi_request_wait(&sr);
  }
  if (!err) {
    if (rr.status.nm_count > 0 && source != MPI_PROC_NULL)
      nm_mpi_datatype_unpack(d, tmp, rr.status.nm_count, buf, count);
    nm_mpi_status_out(status, &rr.status, 0);
    err = rr.status.MPI_ERROR ? rr.status.MPI_ERROR : sr.status.MPI_ERROR;
  }
  free(tmp);
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

/* ---------------------------------------------------------------- probes */

/* nmad gate, tag and mask of a receive-side (source, tag) pair. */
static void nm_mpi_match_of(const struct nm_mpi_comm_s *c, int source, int tag, nm_gate_t *gate, nm_tag_t *ntag,
                            nm_tag_t *mask)
{
  *gate = source == MPI_ANY_SOURCE ? NM_ANY_GATE : nm_mpi_comm_gate(c, source);
  *ntag = nm_mpi_p2p_tag(c, tag == MPI_ANY_TAG ? 0 : tag);
  *mask = tag == MPI_ANY_TAG ? NM_MPI_TAG_MASK_ANY : NM_TAG_MASK_FULL;
}

/* One non-blocking probe. @return 1 found (status, gate, tag, length filled), 0 not yet. */
static int nm_mpi_iprobe(MPI_Comm comm, int source, int tag, MPI_Status *st, nm_gate_t *out_gate,
                         nm_tag_t *out_tag, nm_len_t *out_len)
{
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  nm_gate_t gate;
  nm_tag_t ntag, mask;
  nm_mpi_match_of(c, source, tag, &gate, &ntag, &mask);
  if (nm_sr_iprobe(nm_mpi.session, gate, ntag, mask, out_gate, out_tag, out_len) != 0)
    return 0;
  nm_mpi_status_empty(st);
  st->MPI_SOURCE = source == MPI_ANY_SOURCE ? nm_mpi_source_rank(comm, *out_gate) : source;
  st->MPI_TAG = (int)(uint32_t)*out_tag;
  st->nm_count = (long long)*out_len;
  return 1;
}

NM_MPI_ALIAS(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_probe_check(comm, source, tag);
  if (!err && !flag)
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, __func__);
  MPI_Status st;
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    nm_mpi_status_proc_null(&st);
  } else {
    nm_gate_t g;
    nm_tag_t t;
    nm_len_t len;
    nm_mpi_poll(); /* nm_sr_iprobe progresses the core; collectives too */
    *flag = nm_mpi_iprobe(comm, source, tag, &st, &g, &t, &len);
  }
  if (*flag)
    nm_mpi_status_out(status, &st, 0);
  else
    nm_core_idle(nm_mpi.core); /* polled in a loop: let the sender run when ranks share cores */
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Probe)
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_probe_check(comm, source, tag);
  if (err)
    return nm_mpi_error(comm, err, __func__);
  MPI_Status st;
  if (source == MPI_PROC_NULL) {
    nm_mpi_status_proc_null(&st);
  } else {
    nm_gate_t g;
    nm_tag_t t;
    nm_len_t len;
    /* Every arrival is an nmad event, so waiting for events and probing again misses nothing. */
    struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
    while (!nm_mpi_iprobe(comm, source, tag, &st, &g, &t, &len))
      nm_mpi_wait_event(&w);
  }
  nm_mpi_status_out(status, &st, 0);
  return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- matched probes */

/* A message taken out of matching by MPI_Mprobe: its receive is posted at once, with the exact source gate and
 * tag, into a temporary, so that no other receive can take it (MPI-3.1 3.8.2). The exact (gate, tag) receive
 * matches the first unexpected message of that gate and tag, which is the one the probe saw: messages of one
 * gate and tag are kept in arrival order, which is their send order. */
struct nm_mpi_message_s {
  nm_sr_request_t nreq;
  void *tmp;
  nm_len_t len;
  MPI_Comm comm;
  MPI_Status status; /* source, tag, count as seen by the probe */
};

void nm_mpi_message_free(void *message)
{
  struct nm_mpi_message_s *m = message;
  if (!m->nreq.completed)
    return; /* the core still writes into it (a rendezvous in flight): leave it to process exit */
  free(m->tmp);
  free(m);
}

static int nm_mpi_improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
  MPI_Status st;
  nm_gate_t gate;
  nm_tag_t ntag;
  nm_len_t len;
  *flag = nm_mpi_iprobe(comm, source, tag, &st, &gate, &ntag, &len);
  if (!*flag)
    return MPI_SUCCESS;
  /* len is the sender's word: never allocate beyond NMAD_PEER_ALLOC_MAX on it */
  struct nm_mpi_message_s *m = len <= nm_core_peer_alloc_max(nm_mpi.core) ? calloc(1, sizeof(*m)) : NULL;
  void *tmp = m ? malloc(len ? len : 1) : NULL;
  int h = tmp ? nm_mpi_table_add(&nm_mpi.messages, m) : -1;
  if (h < 0) {
    free(tmp);
    free(m);
    *flag = 0;
    return MPI_ERR_NO_MEM;
  }
  m->tmp = tmp;
  m->len = len;
  m->comm = comm;
  m->status = st;
  int err = nm_sr_irecv(nm_mpi.session, gate, ntag, tmp, len, &m->nreq);
  if (err) {
    nm_mpi_table_remove(&nm_mpi.messages, h);
    free(tmp);
    free(m);
    *flag = 0;
    return nm_mpi_from_nm_err(err);
  }
  *message = h;
  nm_mpi_status_out(status, &st, 0);
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Improbe)
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_probe_check(comm, source, tag);
  if (!err && (!flag || !message))
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, __func__);
  if (source == MPI_PROC_NULL) {
    MPI_Status st;
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    nm_mpi_status_proc_null(&st);
    nm_mpi_status_out(status, &st, 0); /* MPI_ERROR left alone (3.2.5) */
    return MPI_SUCCESS;
  }
  nm_mpi_poll();
  err = nm_mpi_improbe(source, tag, comm, flag, message, status);
  if (!err && !*flag)
    nm_core_idle(nm_mpi.core);
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

NM_MPI_ALIAS(Mprobe)
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_probe_check(comm, source, tag);
  if (!err && !message)
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, __func__);
  if (source == MPI_PROC_NULL) {
    MPI_Status st;
    *message = MPI_MESSAGE_NO_PROC;
    nm_mpi_status_proc_null(&st);
    nm_mpi_status_out(status, &st, 0); /* MPI_ERROR left alone (3.2.5) */
    return MPI_SUCCESS;
  }
  int flag = 0;
  struct nm_mpi_waiter_s w = NM_MPI_WAITER_INIT;
  while (!(err = nm_mpi_improbe(source, tag, comm, &flag, message, status)) && !flag)
    nm_mpi_wait_event(&w);
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

/* Progress function of an MPI_Imrecv request (an NM_MPI_REQ_COLL request driven by the waits): once the
 * message is in the temporary, unpack what fits into the application's buffer. */
static int nm_mpi_mrecv_progress(struct nm_mpi_request_s *r)
{
  struct nm_mpi_message_s *m = r->state;
  if (!m->nreq.completed)
    return 0;
  int err = m->nreq.status;
  nm_len_t got = 0;
  nm_sr_get_size(nm_mpi.session, &m->nreq, &got);
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(r->datatype);
  MPI_Count cap = d ? nm_mpi_datatype_packed_size(d, r->count) : 0;
  MPI_Count n = (MPI_Count)got < cap ? (MPI_Count)got : cap;
  if (n > 0)
    nm_mpi_datatype_unpack(d, m->tmp, n, r->buf, r->count);
  r->status = m->status;
  r->status.nm_count = n;
  if (err)
    return -nm_mpi_from_nm_err(err);
  if ((MPI_Count)got > cap)
    return -MPI_ERR_TRUNCATE;
  return 1;
}

static void nm_mpi_mrecv_release(struct nm_mpi_request_s *r)
{
  struct nm_mpi_message_s *m = r->state;
  if (m)
    nm_mpi_message_free(m);
  nm_mpi_datatype_unref(r->datatype);
  r->state = NULL;
}

NM_MPI_ALIAS(Imrecv)
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
  NM_MPI_LOCKED();
  if (!message || !request)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  if (count < 0)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, __func__);
  if (!d || !d->committed) /* predefined types are committed */
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, __func__);
  struct nm_mpi_request_s *r;
  if (*message == MPI_MESSAGE_NO_PROC) {
    MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_DONE, &r);
    if (h == MPI_REQUEST_NULL)
      return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__);
    nm_mpi_status_proc_null(&r->status);
    *message = MPI_MESSAGE_NULL;
    *request = h;
    return MPI_SUCCESS;
  }
  struct nm_mpi_message_s *m = nm_mpi_table_get(&nm_mpi.messages, *message);
  if (!m)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, __func__);
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_COLL, &r);
  if (h == MPI_REQUEST_NULL)
    return nm_mpi_error(m->comm, MPI_ERR_NO_MEM, __func__);
  nm_mpi_table_remove(&nm_mpi.messages, *message);
  nm_mpi_datatype_ref(datatype);
  r->buf = buf;
  r->count = count;
  r->datatype = datatype;
  r->comm = m->comm;
  r->peer = m->status.MPI_SOURCE;
  r->tag = m->status.MPI_TAG;
  r->state = m;
  r->progress = nm_mpi_mrecv_progress;
  r->release = nm_mpi_mrecv_release;
  *message = MPI_MESSAGE_NULL;
  *request = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Mrecv)
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
  NM_MPI_LOCKED();
  MPI_Request req = MPI_REQUEST_NULL;
  int err = PMPI_Imrecv(buf, count, datatype, message, &req);
  if (err)
    return err;
  return PMPI_Wait(&req, status);
}

/* ---------------------------------------------------------------- persistent requests */

static int nm_mpi_persistent(int kind, const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                             MPI_Comm comm, int mode, MPI_Request *request, const char *fn)
{
  int err = nm_mpi_p2p_check(comm, count, datatype, peer, tag, kind == NM_MPI_REQ_RECV);
  if (!err && !request)
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, fn);
  struct nm_mpi_request_s *r;
  MPI_Request h = nm_mpi_request_new(kind, &r);
  if (h == MPI_REQUEST_NULL)
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, fn);
  nm_mpi_p2p_setup(r, kind, buf, count, datatype, peer, tag, comm, mode);
  nm_mpi_datatype_ref(datatype);
  r->persistent = 1;
  r->active = 0; /* inactive until MPI_Start */
  *request = h;
  return MPI_SUCCESS;
}

NM_MPI_ALIAS(Send_init)
int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_persistent(NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, NM_MPI_MODE_STANDARD, request,
                           __func__);
}

NM_MPI_ALIAS(Ssend_init)
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_persistent(NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, NM_MPI_MODE_SYNC, request,
                           __func__);
}

NM_MPI_ALIAS(Bsend_init)
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
  NM_MPI_LOCKED();
  /* Each start copies the data to a detached transfer linked with this request, which therefore behaves as
   * MPI_Ibsend's (kind DONE: complete once the data is buffered, MPI_Cancel withdraws the linked transfer). */
  return nm_mpi_persistent(NM_MPI_REQ_DONE, buf, count, datatype, dest, tag, comm, NM_MPI_MODE_BUFFERED, request,
                           __func__);
}

NM_MPI_ALIAS(Rsend_init)
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_persistent(NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, NM_MPI_MODE_READY, request,
                           __func__);
}

NM_MPI_ALIAS(Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
  NM_MPI_LOCKED();
  return nm_mpi_persistent(NM_MPI_REQ_RECV, buf, count, datatype, source, tag, comm, 0, request, __func__);
}
