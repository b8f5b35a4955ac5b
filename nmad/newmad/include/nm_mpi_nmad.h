/**
 * @file nm_mpi_nmad.h
 * @brief From nmad's MPI shim to NewMadeleine's native interface (issue 16, deliverable 2; doc/newmad.md): the
 *        session and gate of (communicator, rank), an MPI datatype as a data descriptor, and the communicator as
 *        an nm_comm_t for broadcasts. What StarPU's NewMadeleine back end uses to send its data natively while
 *        it keeps MPI for start-up and barriers. Compat layer (in libnmad_mpi: it reads the shim's tables).
 *
 * Each MPI communicator gets a session of its own, "nm_mpi_nmad:<context id>" (made on first use, the same name
 * on every member since context ids are agreed), hooked for nm_sendrecv_interface.h (nm_sr_init()): raw 64-bit
 * tags there never mix with the shim's own traffic (session "mpi") nor with another communicator's. The first
 * call also starts nmad's progress thread (if NMAD_PROGRESS=thread did not) and makes the shim take the core
 * lock from then on: NewMadeleine's requests complete through monitors while the application computes, as
 * with PIOMan. Make that first call while no other thread is inside MPI (StarPU does, at start-up).
 *
 * Thread-safety: every function may be called from several threads at once after MPI_Init (MPI_THREAD_MULTIPLE
 * use, the calls take a mutex or the core lock).
 */
#ifndef NM_MPI_NMAD_H
#define NM_MPI_NMAD_H

#include <mpi.h>
#include <nm_public.h>
#include <nm_data.h>
#include <nm_coll_interface.h>
#include <nm_session_interface.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Session and gate to reach @p rank of @p comm with nm_sendrecv_interface.h.
 * @param[out] p_session the communicator's session (NULL if @p comm is not a valid communicator, or the session
 *             could not be opened: a message on stderr says why).
 * @param[out] p_gate the gate of @p rank (NULL if out of range); may be NULL when only the session is wanted.
 * @param comm an intracommunicator; @param rank a rank in it.
 */
void nm_mpi_nmad_dest(nm_session_t *p_session, nm_gate_t *p_gate, MPI_Comm comm, int rank);
/**
 * @brief Describe @p count elements of @p datatype at @p ptr as a data descriptor (no copy: the descriptor walks
 *        the datatype's blocks). Takes a reference on the datatype (nm_mpi_nmad_data_release() drops it), so
 *        it may be freed by the application while a transfer uses it.
 * @param[out] p_data the descriptor (the null descriptor for an invalid or uncommitted datatype).
 */
void nm_mpi_nmad_data_get(struct nm_data_s *p_data, void *ptr, MPI_Datatype datatype, int count);
/** @brief Drop the reference nm_mpi_nmad_data_get() took on @p datatype. */
void nm_mpi_nmad_data_release(MPI_Datatype datatype);
/** @brief @p comm as a NewMadeleine communicator (its session and ranks; for nm_mcast_init() and
 *  nm_mcast_isend()). @return NULL for an invalid communicator or an intercommunicator. */
nm_comm_t nm_mpi_comm(MPI_Comm comm);

#ifdef __cplusplus
}
#endif
#endif /* NM_MPI_NMAD_H */
