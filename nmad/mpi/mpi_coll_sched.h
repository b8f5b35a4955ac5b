/**
 * @file mpi_coll_sched.h
 * @brief Private to mpi_coll.c / mpi_coll_sched.c: the schedule engine that runs every collective of the MPI shim.
 *
 * A collective is built as a list of *rounds*. A round is an ordered list of operations: local ones (copy, pack,
 * unpack, reduction) run at once, in order, when the round starts; communications (nm_sr_isend / nm_sr_irecv of
 * contiguous bytes on the communicator's collective context) are posted in order. The next round starts when
 * every communication of the current one has completed. Rounds advance from nmad request monitors, so a
 * collective progresses whenever nmad progresses (any MPI call that progresses, another request's wait), not only
 * in MPI_Wait/MPI_Test of its own request.
 *
 * All messages of one collective use one nmad tag: within a collective nmad's per-(gate, tag) non-overtaking order
 * pairs the k-th send from A to B with the k-th receive B posts from A (the algorithms post both in the same order).
 * A non-blocking collective takes the communicator's next sequence tag (nm_mpi_coll_seq_tag()): every member starts
 * the collectives of a communicator in the same order, so concurrent collectives never mix. **Every blocking
 * collective of a communicator uses one tag, NM_MPI_COLL_TAG_BLOCKING**, as Open MPI's blocking collectives use one
 * tag per kind: blocking collectives of one communicator never overlap on a member (a second thread calling one
 * concurrently is erroneous, MPI-3.1 5.13), each completes every send and receive it posted before it returns
 * (errors included: a schedule runs all its rounds), and A sends the messages of collective k to B before those
 * of k + 1 while B posts its receives of k before those of k + 1, so per-(gate, tag) order still pairs them. A
 * sequence tag per call made every message create and drop a matching bucket of its own (issue 18: 510 of the
 * 3,000 instructions a 4-rank MPI_Barrier costs its root outside waiting, doc/performance.md).
 *
 * Building is allocation-checked: the first failure is remembered and reported by start (MPI_ERR_NO_MEM), so
 * algorithm code does not test every call. Nothing is posted before nm_mpi_coll_sched_start().
 */
#ifndef NM_MPI_COLL_SCHED_H
#define NM_MPI_COLL_SCHED_H

#include "nm_mpi_private.h"
#include <nmad/nm_coll_sched.h>

#pragma GCC visibility push(hidden) /* internal to libnmad_mpi (see nm_mpi_private.h) */

typedef struct nm_mpi_coll_sched_s nm_mpi_coll_sched_t;

/** New empty schedule on @p c (intracommunicator): with @p blocking (run by nm_mpi_coll_sched_run() before the
 *  call returns) its tag is NM_MPI_COLL_TAG_BLOCKING, else it takes the next collective sequence number.
 *  @return NULL when out of memory (the sequence number is then not consumed). */
nm_mpi_coll_sched_t *nm_mpi_coll_sched_new(struct nm_mpi_comm_s *c, MPI_Comm comm, int blocking);
/** Free a schedule that was never started. */
void nm_mpi_coll_sched_destroy(nm_mpi_coll_sched_t *s);

/** The native schedule under @p s, for collectives' builders (nm_coll_bcast_build()); its tag is the
 *  collective's. Operations appended there run in the same rounds as the ones appended here. */
nm_coll_sched_t *nm_mpi_coll_sched_native(nm_mpi_coll_sched_t *s);

/** Scratch memory of @p len bytes, freed with the schedule (NULL only for len 0 or on failure, then recorded). */
void *nm_mpi_coll_sched_alloc(nm_mpi_coll_sched_t *s, size_t len);
/** Record a build error (MPI class; the first one wins): start then fails with it. */
void nm_mpi_coll_sched_set_error(nm_mpi_coll_sched_t *s, int err);
/** Keep a reference on a datatype until the schedule is released (the user may free it meanwhile). */
void nm_mpi_coll_sched_hold_type(nm_mpi_coll_sched_t *s, MPI_Datatype dt);

/** Keep a reference on a reduction operator until the schedule is released (MPI-3.1 5.9.5: the user may free
 *  it meanwhile); for operators handed to collectives/ builders as native combine functions. */
void nm_mpi_coll_sched_hold_op(nm_mpi_coll_sched_t *s, MPI_Op op);

/* Operations, appended to round @p round (>= 0; rounds are created on demand; empty rounds are skipped).
 * Buffers must stay valid until the schedule completes. */
void nm_mpi_coll_sched_send(nm_mpi_coll_sched_t *s, int round, int peer, const void *buf, size_t len);
void nm_mpi_coll_sched_recv(nm_mpi_coll_sched_t *s, int round, int peer, void *buf, size_t len);
void nm_mpi_coll_sched_copy(nm_mpi_coll_sched_t *s, int round, void *dst, const void *src, size_t len);
void nm_mpi_coll_sched_pack(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d, const void *buf,
                            MPI_Count count, void *out);
void nm_mpi_coll_sched_unpack(nm_mpi_coll_sched_t *s, int round, struct nm_mpi_datatype_s *d, const void *in,
                              MPI_Count bytes, void *buf, MPI_Count count);
/** inout = in op inout (nm_mpi_op_apply). */
void nm_mpi_coll_sched_reduce(nm_mpi_coll_sched_t *s, int round, MPI_Op op, const void *in, void *inout, int count,
                              MPI_Datatype dt);

/** Post round 0 (and every round that completes at once). @return MPI_SUCCESS or the build error; on error the
 *  schedule is destroyed. */
int nm_mpi_coll_sched_start(nm_mpi_coll_sched_t *s);
/** Start (if not yet), progress until done, destroy. @return MPI_SUCCESS or an MPI error class. */
int nm_mpi_coll_sched_run(nm_mpi_coll_sched_t *s);

/** A blocking collective's wait until @p *done: spin at least @p spin_ns (a builder's hint, 0: the configured
 *  spin), then yield, for up to 10 ms, then block in the drivers by 1 ms slices, polling the requests of other
 *  families between them (MPI-3.1 section 3.7.4's progress rule). */
void nm_mpi_coll_wait_flag(volatile int *done, uint64_t spin_ns);

/** An MPI class from a collective's error: nmad's codes are negative (-NM_ETRUNCATED is MPI_ERR_TRUNCATE), the
 *  local operations' MPI classes positive, 0 stays MPI_SUCCESS. */
int nm_mpi_coll_err_of(int err);
/** Start and wrap into an MPI request of kind NM_MPI_REQ_COLL (progress/release set). On error the schedule is
 *  destroyed and *req set to MPI_REQUEST_NULL. @return MPI_SUCCESS or an MPI error class. */
int nm_mpi_coll_sched_request(nm_mpi_coll_sched_t *s, MPI_Request *req);

#pragma GCC visibility pop

#endif /* NM_MPI_COLL_SCHED_H */
