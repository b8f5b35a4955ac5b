/**
 * @file mpi_ext.c
 * @brief nmad extensions of the MPI shim (MPIX_): access to the native objects behind a communicator, to mix
 * MPI and the nmad interfaces (sendrecv, rpc, mcast) in one program. Messages sent natively should use tags
 * whose upper 32 bits are not a context of a live communicator (nm_mpi_private.h: tag = context << 32 | tag).
 */
#include "nm_mpi_private.h"

NM_MPIX_ALIAS(Comm_get_nmad)
int PMPIX_Comm_get_nmad(MPI_Comm comm, int rank, void **session, void **gate)
{
  NM_MPI_LOCKED();
  struct nm_mpi_comm_s *c = nm_mpi_comm_get(comm);
  if (!c)
    return nm_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, __func__);
  if (!session || !gate)
    return nm_mpi_error(comm, MPI_ERR_ARG, __func__);
  nm_gate_t g = nm_mpi_comm_gate(c, rank); /* remote group for intercommunicators */
  if (!g)
    return nm_mpi_error(comm, MPI_ERR_RANK, __func__);
  *session = nm_mpi.session;
  *gate = g;
  return MPI_SUCCESS;
}

