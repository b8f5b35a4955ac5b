/**
 * @file mpix_topo_mcast.c
 * @brief MPIX_Mcast_topo: the topology-ID multicast of Song, Dongarra, Moore 2009 (sections 4-6, 9) for MPI
 * programs (issue 19, deliverables 1 and 4). doc/mpi.md and doc/mcast-topo.md.
 *
 * A dynamic broadcast (nm_mcast.h) with the NM_MCAST_TREE_TOPO_ID tree, cut in segments of 8 KiB (the paper's
 * choice, section 9.1) unless NMAD_MCAST_TOPO_SEG says otherwise: only the root calls it, with ranks of @p comm;
 * each destination receives with a plain MPI_Recv/MPI_Irecv from the root with the tag, in the root's
 * point-to-point order. The topology is that of the world ranks behind @p comm (NMAD_MCAST_TOPO, the same on
 * every rank): a multicast on a sub-communicator keeps following the machine.
 */
#include "nm_mpi_p2p.h"
#include <nmad/nm_mcast_topo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Song 2009, section 9.1: 8 KiB segments were best between 512 KiB and 1 MiB, 4 to 128 processes. */
#define NM_MPIX_TOPO_SEG_DEFAULT ((nm_len_t)8192)

/* Segment size from NMAD_MCAST_TOPO_SEG (bytes, 0 = whole message). @return 0, or -1 for a bad value. */
static int nm_mpix_topo_seg(nm_len_t *seg)
{
  const char *s = getenv("NMAD_MCAST_TOPO_SEG");
  *seg = NM_MPIX_TOPO_SEG_DEFAULT;
  if (!s || !*s)
    return 0;
  char *e;
  unsigned long long v = strtoull(s, &e, 10);
  if (e == s || *e || s[0] == '-') {
    fprintf(stderr, "nmad: NMAD_MCAST_TOPO_SEG='%s' is not a size in bytes (0 = no segmentation)\n", s);
    return -1;
  }
  *seg = (nm_len_t)v;
  return 0;
}

NM_MPIX_ALIAS(Mcast_topo)
int PMPIX_Mcast_topo(const void *buf, int count, MPI_Datatype datatype, const int dests[], int ndests, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (c->is_inter)
    return nm_mpi_error(comm, MPI_ERR_COMM, __func__);
  int err = nm_mpi_p2p_check(comm, count, datatype, 0, tag, 0);
  nm_len_t seg = 0;
  if (!err && (!request || ndests < 0 || (ndests > 0 && !dests) || nm_mpix_topo_seg(&seg)))
    err = MPI_ERR_ARG;
  if (err)
    return nm_mpi_error(comm, err, __func__);
  return nm_mpi_dbcast_post(comm, c, buf, count, datatype, dests, NULL, ndests, tag, NM_MCAST_TREE_TOPO_ID, seg,
                            MPI_ERR_ARG, __func__, request);
}
