/**
 * @file mpi_ext_p2p.c
 * @brief nmad extensions to MPI point-to-point: send priorities (MPIX_Isend_prio) and dynamic broadcasts
 *        (MPIX_Dynamic_bcast).
 *
 * MPIX_Dynamic_bcast follows Denis 2020, "Dynamic broadcasts in StarPU/NewMadeleine" (sections 3.2 and 4.3),
 * through nm_mcast.h: only the root calls it, with the destination ranks; each destination receives with an
 * ordinary MPI_Recv/MPI_Irecv from the root with the tag, in the root's point-to-point order, and forwards to
 * its subtree from its own buffer. Priorities travel in the headers and are honoured by NMAD_STRATEGY=prio.
 */
#include "nm_mpi_p2p.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

NM_MPIX_ALIAS(Isend_prio)
int PMPIX_Isend_prio(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, int prio, MPI_Comm comm,
                      MPI_Request *request)
{
  NM_MPI_LOCKED();
  int err = nm_mpi_p2p_check(comm, count, datatype, dest, tag, 0);
  if (!err && !request)
    err = MPI_ERR_ARG;
  if (!err)
    err = nm_mpi_p2p_post(NM_MPI_REQ_SEND, buf, count, datatype, dest, tag, comm, NM_MPI_MODE_STANDARD, prio,
                          request);
  return err ? nm_mpi_error(comm, err, __func__) : MPI_SUCCESS;
}

/* The root's side of one broadcast, owned by its request (state). */
struct nm_mpi_dbcast_s {
  nm_mcast_req_t req;
  void *packed; /* non-contiguous data packed once, or NULL */
};

static int nm_mpi_dbcast_progress(struct nm_mpi_request_s *r)
{
  struct nm_mpi_dbcast_s *b = r->state;
  int err = nm_mcast_test(nm_mpi.mcast, &b->req);
  if (err == -NM_EAGAIN)
    return 0;
  return err ? -nm_mpi_from_nm_err(err) : 1;
}

static void nm_mpi_dbcast_release(struct nm_mpi_request_s *r)
{
  struct nm_mpi_dbcast_s *b = r->state;
  if (b) {
    free(b->packed);
    free(b);
  }
  r->state = NULL;
}

/* Tree kind from NMAD_MPI_DBCAST_TREE (binomial, flat, chain, binary, topo), binomial by default (paper, fig. 1);
 * topo is the topology-ID tree (Song 2009, sections 4-6), its hierarchy from NMAD_MCAST_TOPO or hwloc.
 * @return 0, or -1 for a bad value (a message names the variable and the accepted values). */
static int nm_mpi_dbcast_tree(enum nm_mcast_tree_e *tree)
{
  static const struct {
    const char *name;
    enum nm_mcast_tree_e tree;
  } trees[] = {{"binomial", NM_MCAST_TREE_BINOMIAL}, {"flat", NM_MCAST_TREE_FLAT}, {"chain", NM_MCAST_TREE_CHAIN},
               {"binary", NM_MCAST_TREE_BINARY}, {"topo", NM_MCAST_TREE_TOPO_ID}};
  const char *s = getenv("NMAD_MPI_DBCAST_TREE");
  *tree = NM_MCAST_TREE_BINOMIAL;
  if (!s || !*s)
    return 0;
  for (unsigned i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
    if (strcmp(s, trees[i].name) == 0) {
      *tree = trees[i].tree;
      return 0;
    }
  fprintf(stderr, "nmad: NMAD_MPI_DBCAST_TREE='%s' is not one of binomial, flat, chain, binary, topo\n", s);
  return -1;
}

int nm_mpi_dbcast_post(MPI_Comm comm, struct nm_mpi_comm_s *c, const void *buf, int count, MPI_Datatype datatype,
                       const int dests[], const int prios[], int ndests, int tag, enum nm_mcast_tree_e tree,
                       nm_len_t seg, int einval, const char *func, MPI_Request *request)
{
  /* Destinations are ranks of comm; the broadcast engine speaks world ranks. */
  int *world = malloc(sizeof(int) * (size_t)(ndests ? ndests : 1));
  struct nm_mpi_dbcast_s *b = calloc(1, sizeof(*b));
  if (!world || !b) {
    free(world);
    free(b);
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, func);
  }
  for (int i = 0; i < ndests; i++) {
    if (dests[i] < 0 || dests[i] >= c->size || dests[i] == c->rank) {
      free(world);
      free(b);
      return nm_mpi_error(comm, MPI_ERR_RANK, func);
    }
    world[i] = c->world[dests[i]];
  }
  struct nm_mpi_datatype_s *d = nm_mpi_datatype_get(datatype);
  nm_len_t len = (nm_len_t)nm_mpi_datatype_packed_size(d, count);
  const void *data = len ? nm_mpi_datatype_contig_ptr(d, buf) : NULL;
  if (len && !d->contiguous) {
    /* Receivers unpack with their own datatype, exactly as for a point-to-point message. */
    if (!(b->packed = malloc(len))) {
      free(world);
      free(b);
      return nm_mpi_error(comm, MPI_ERR_NO_MEM, func);
    }
    nm_mpi_datatype_pack(d, buf, count, b->packed);
    data = b->packed;
  }
  struct nm_mpi_request_s *r;
  MPI_Request h = nm_mpi_request_new(NM_MPI_REQ_COLL, &r);
  if (h == MPI_REQUEST_NULL) {
    free(world);
    free(b->packed);
    free(b);
    return nm_mpi_error(comm, MPI_ERR_NO_MEM, func);
  }
  r->comm = comm;
  r->state = b;
  r->progress = nm_mpi_dbcast_progress;
  r->release = nm_mpi_dbcast_release;
  int nerr = seg ? nm_mcast_isend_seg(nm_mpi.mcast, world, prios, ndests, nm_mpi_p2p_tag(c, tag), data, len, tree,
                                      seg, &b->req)
                 : nm_mcast_isend(nm_mpi.mcast, world, prios, ndests, nm_mpi_p2p_tag(c, tag), data, len, tree, &b->req);
  free(world);
  if (nerr) {
    nm_mpi_request_release(&h);
    return nm_mpi_error(comm, nerr == -NM_EINVAL ? einval : nm_mpi_from_nm_err(nerr), func);
  }
  *request = h;
  return MPI_SUCCESS;
}

NM_MPIX_ALIAS(Dynamic_bcast)
int PMPIX_Dynamic_bcast(const void *buf, int count, MPI_Datatype datatype, const int dests[], const int prios[],
                         int ndests, int tag, MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  int err = nm_mpi_p2p_check(comm, count, datatype, 0, tag, 0);
  enum nm_mcast_tree_e tree = NM_MCAST_TREE_BINOMIAL;
  if (!err && (!request || ndests < 0 || (ndests > 0 && !dests) || nm_mpi_dbcast_tree(&tree)))
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, __func__);
  return nm_mpi_dbcast_post(comm, c, buf, count, datatype, dests, prios, ndests, tag, tree, 0, MPI_ERR_RANK,
                            __func__, request);
}
