/**
 * @file nm_coll_allgather.h
 * @brief Allgather as native non-blocking collectives over a group of gates (issue 17 deliverable
 * 1, issue 18 deliverable 1); the MPI shim's MPI_Allgather(v) and MPI_Iallgather(v) run these
 * builders on packed bytes (nmad/mpi/mpi_coll.c keeps the datatypes).
 *
 * Blocks are given as arrays of p pointers and p lengths in bytes (member order), read while building only: any
 * placement works (MPI's displacements, a scratch buffer per block). Every member gives the same lengths where MPI
 * requires them to match (lens[] is the same everywhere).
 * Thread-safety: like the core (nm_coll_sched.h).
 */
#ifndef NM_COLL_ALLGATHER_H
#define NM_COLL_ALLGATHER_H

#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Allgather algorithms (names for NMAD_ALLGATHER_ALGO in comments). */
enum nm_coll_allgather_algo_e {
  NM_COLL_ALLGATHER_AUTO = 0, /**< "auto": NMAD_ALLGATHER_ALGO, else nm_coll_allgather_choose() */
  NM_COLL_ALLGATHER_RING,     /**< "ring": p - 1 rounds, each member forwards the block it received last;
                                   (p - 1)(alpha + (m / p) beta), blocks received in place */
  NM_COLL_ALLGATHER_RD,       /**< "recursive_doubling": log2 p rounds exchanging aligned groups of blocks;
                                   p a power of two only (otherwise Bruck runs); log2(p) alpha + ((p - 1) / p) m beta */
  NM_COLL_ALLGATHER_BRUCK,    /**< "bruck": Bruck et al. 1997, ceil(log2 p) rounds for any p, in a rotated work
                                   buffer copied out at the end; ceil(log2 p) alpha + ((p - 1) / p) m beta */
  NM_COLL_ALLGATHER_LINEAR,   /**< "linear": every member sends its block to every other at once, one round
                                   (Open MPI's basic_linear in spirit): no round waits for another; forced only
                                   (measured level with recursive doubling on an oversubscribed host) */
  NM_COLL_ALLGATHER_NALGOS
};

/**
 * @brief Append this member's part of an allgather to @p s from round @p round on: member i's block, lens[i]
 * bytes, ends at rbufs[i] on every member.
 * @param sendbuf this member's block (lens[self] bytes), or NULL when it is already at rbufs[self] (in place);
 * @param rbufs p receive places (one may be NULL when its length is 0); @param lens p lengths in bytes, the same
 * on every member; @param algo an algorithm or NM_COLL_ALLGATHER_AUTO; @param next_round out (may be NULL).
 * @return 0 or -NM_EINVAL (bad argument, invalid NMAD_ALLGATHER_ALGO). Memory: recursive doubling and Bruck use
 * a work buffer of m bytes (none for recursive doubling when the blocks lie one after the other), ring none.
 */
int nm_coll_allgatherv_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                             const void *sendbuf, void *const rbufs[], const nm_len_t lens[],
                             enum nm_coll_allgather_algo_e algo, int *next_round);

/** @brief Non-blocking allgather of @p len bytes per member into @p recvbuf (p blocks in member order; @p sendbuf
 *  NULL: in place). Complete with nm_coll_sched_wait(*req). @return 0, -NM_EINVAL or -NM_ENOMEM. */
int nm_coll_iallgather(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                       void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_allgather_algo_e algo,
                       nm_coll_sched_t **req);

/** @brief Blocking nm_coll_iallgather(). @return 0 or the first error. */
int nm_coll_allgather(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                      void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_allgather_algo_e algo);

/** @brief The allgather algorithm for p members and @p total bytes in all (MPICH's rule): NMAD_ALLGATHER_ALGO when
 *  set; else recursive doubling when p is a power of two and total < 512 KiB, Bruck when total < 80 KiB, ring
 *  otherwise. @return 0 or -NM_EINVAL (invalid NMAD_ALLGATHER_ALGO, message on stderr). */
int nm_coll_allgather_choose(int p, nm_len_t total, enum nm_coll_allgather_algo_e *algo);

/** @brief nm_coll_allgather_choose() for a job that may have more ranks than cores (@p job_oversubscribed, the
 *  same on every rank: nm_core_job_oversubscribed()) on a network of nominal one-way latency @p latency_ns
 *  (nm_core_network_props(); 0: unknown). An oversubscribed job over a network (latency >= NM_COLL_NET_LAT_NS: tcp)
 *  takes recursive doubling at every size when p is a power of two: log2 p messages per member instead of the
 *  ring's p - 1, each costing the shared cores (4 and 8 ranks on 2 cores over tcp, 1 MiB per member: 1,792-1,881
 *  and 8,553-9,254 us against the ring's 2,042-2,102 and 8,752-9,636; 4 MiB at 8 ranks 35.7-37.5 ms against
 *  52.9-54.6; doc/performance.md, "Bcast and Allgather over tcp on an oversubscribed host"). Otherwise as
 *  nm_coll_allgather_choose(). @return 0 or -NM_EINVAL (invalid NMAD_ALLGATHER_ALGO). Thread-safety: any thread. */
int nm_coll_allgather_choose_net(int p, nm_len_t total, int job_oversubscribed, uint32_t latency_ns,
                                 enum nm_coll_allgather_algo_e *algo);

/** @brief Name of an allgather algorithm as NMAD_ALLGATHER_ALGO spells it, or NULL out of range. */
const char *nm_coll_allgather_algo_name(enum nm_coll_allgather_algo_e algo);

/**
 * @brief A blocking allgather of equal small blocks without a schedule: member i's @p len bytes end at block i of
 * every member's @p recvbuf (p @p len bytes), with the messages of nm_coll_allgatherv_build() for recursive
 * doubling, ring or linear (the choice of @p algo, NM_COLL_ALLGATHER_AUTO resolved as the builder does), posted as
 * plain receives and sends, each send leaving at once without a request where the driver allows; members on a
 * schedule pair with it. Taken for 2 to 33 members and blocks of 1 B to 4 KiB; Bruck (and recursive doubling over
 * a member count that is not a power of two, which becomes Bruck) is left to the caller.
 * @param sendbuf this member's block, or NULL (in place: already at block @p self of @p recvbuf);
 * @param wait how to wait (NULL: the core's wait); @param wait_ref passed to @p wait.
 * @return 0 done; NM_COLL_NOT_TAKEN (nothing posted: build a schedule); -NM_EINVAL (NULL @p recvbuf, a NULL gate:
 * nothing posted); or the first error of the messages (all of them posted and completed). Thread-safety: one thread
 * per group at a time; takes the core lock per call. Source: issue 18, deliverable 3.
 */
int nm_coll_allgather_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                            void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_allgather_algo_e algo,
                            nm_coll_wait_fn_t wait, void *wait_ref);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_ALLGATHER_H */
