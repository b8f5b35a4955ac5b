/**
 * @file nm_coll_alltoall.h
 * @brief All-to-all as native non-blocking collectives over a group of gates (issue 17 deliverable 1, issue 18
 * deliverable 1); the MPI shim's MPI_Alltoall(v, w) and their I- versions run these builders on packed bytes
 * (nmad/mpi/mpi_coll.c keeps the datatypes and MPI_IN_PLACE).
 *
 * Blocks are given as arrays of p pointers and p lengths in bytes (member order), read while building only: any
 * placement works. What member i sends to j must be what j expects from i (as MPI requires).
 * Thread-safety: like the core (nm_coll_sched.h).
 */
#ifndef NM_COLL_ALLTOALL_H
#define NM_COLL_ALLTOALL_H

#include <nmad/nm_coll.h>
#include <nmad/nm_coll_sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/** All-to-all algorithms (names for NMAD_ALLTOALL_ALGO in comments). */
enum nm_coll_alltoall_algo_e {
  NM_COLL_ALLTOALL_AUTO = 0, /**< "auto": NMAD_ALLTOALL_ALGO, else nm_coll_alltoall_choose() */
  NM_COLL_ALLTOALL_PAIRWISE, /**< "pairwise": round k sends to self + k and receives from self - k, p - 1 rounds;
                                  (p - 1)(alpha + b beta) for blocks of b bytes */
  NM_COLL_ALLTOALL_BRUCK,    /**< "bruck": Bruck et al. 1997, ceil(log2 p) rounds of p / 2 blocks each, equal
                                  blocks only (otherwise pairwise runs); ceil(log2 p)(alpha + (p / 2) b beta) plus
                                  local copies */
  NM_COLL_ALLTOALL_LINEAR,   /**< "linear": every send and receive posted at once, one round (Open MPI's
                                  basic_linear): no step waits for another, (p - 1) messages in flight per member */
  NM_COLL_ALLTOALL_NALGOS
};

/**
 * @brief Append this member's part of an all-to-all to @p s from round @p round on: slens[i] bytes at sbufs[i]
 * go to member i, which receives them at its rbufs[self] (rlens[self] bytes: a longer message is
 * -NM_ETRUNCATED). The own block is copied (min of the two lengths); send and receive places must not overlap.
 * @param block nonzero when every block of every member is @p block bytes (MPI_Alltoall): Bruck is allowed only
 * then (the members must agree on the algorithm without seeing each other's lengths); 0 for varying blocks.
 * @return 0 or -NM_EINVAL (bad argument, invalid NMAD_ALLTOALL_ALGO).
 */
int nm_coll_alltoallv_build(nm_coll_sched_t *s, int round, const struct nm_coll_group_s *group, int self,
                            const void *const sbufs[], const nm_len_t slens[], void *const rbufs[],
                            const nm_len_t rlens[], nm_len_t block, enum nm_coll_alltoall_algo_e algo,
                            int *next_round);

/** @brief Non-blocking all-to-all of @p len bytes per pair: block i of @p sendbuf goes to member i, block i of
 *  @p recvbuf comes from member i. Complete with nm_coll_sched_wait(*req). @return 0, -NM_EINVAL or -NM_ENOMEM. */
int nm_coll_ialltoall(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                      void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_alltoall_algo_e algo,
                      nm_coll_sched_t **req);

/** @brief Blocking nm_coll_ialltoall(). @return 0 or the first error. */
int nm_coll_alltoall(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                     void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_alltoall_algo_e algo);

/** @brief The all-to-all algorithm for p members and blocks of @p block bytes (0: varying): NMAD_ALLTOALL_ALGO
 *  when set; else Bruck for equal blocks of at most 256 bytes with p >= 4 (MPICH's short-message rule: log2 p
 *  rounds instead of p - 1), pairwise otherwise. @return 0 or -NM_EINVAL (invalid NMAD_ALLTOALL_ALGO). */
int nm_coll_alltoall_choose(int p, nm_len_t block, enum nm_coll_alltoall_algo_e *algo);

/** Oversubscribed jobs over shared memory (nominal latency below NM_COLL_NET_LAT_NS, or unknown): blocks below
 *  NM_COLL_ALLTOALL_OVERSUB_RDV_FROM go all at once (linear) while a member's p - 1 blocks sum to at most this many
 *  bytes (varying blocks, @p block 0, always), pairwise above (nm_coll_alltoall_choose_job()). */
#define NM_COLL_ALLTOALL_OVERSUB_BURST_MAX (192u * 1024u)
/** Blocks from this many bytes on (those that go by rendezvous there: nmad/core's NM_RDV_THRESHOLD_OVERSUB) go
 *  linear for groups of at most NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P members, pairwise for larger ones. */
#define NM_COLL_ALLTOALL_OVERSUB_RDV_FROM (128u * 1024u)
#define NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P 5

/** @brief nm_coll_alltoall_choose() for a job that may have more ranks than cores (@p job_oversubscribed, the same
 *  on every rank: nm_core_job_oversubscribed()): such a job posts everything at once (linear), since every round
 *  of pairwise or Bruck waits for its partner to get a core (4 ranks on 2 cores: linear 10-13 us at 8 B against
 *  11-18; doc/performance.md, issue 18), as long as a member's eager burst, its p - 1 blocks, stays within
 *  NM_COLL_ALLTOALL_OVERSUB_BURST_MAX: above, pairwise (8 ranks on 2 cores, 64 KiB: 167-194 us against 329-391;
 *  4 ranks, 96 KiB: 35-53 against 91-164). Blocks that go by rendezvous (from NM_COLL_ALLTOALL_OVERSUB_RDV_FROM)
 *  go linear up to NM_COLL_ALLTOALL_OVERSUB_LINEAR_MAX_P members (level or 10-15% ahead there), pairwise above
 *  (25-35% ahead at 7-8 members). doc/performance.md, "Alltoall of large blocks on an oversubscribed host";
 *  measured on 2 cores only. A forced algorithm stays forced. @return 0 or -NM_EINVAL. Thread-safety: any
 *  thread. */
int nm_coll_alltoall_choose_job(int p, nm_len_t block, int job_oversubscribed, enum nm_coll_alltoall_algo_e *algo);

/** Oversubscribed jobs over a network (nominal latency >= NM_COLL_NET_LAT_NS: tcp, not sm): Bruck for equal blocks
 *  up to this many bytes (nm_coll_alltoall_choose_net()). */
#define NM_COLL_ALLTOALL_OVERSUB_BRUCK_UPTO 4096u

/** @brief nm_coll_alltoall_choose_job() knowing the network's nominal one-way latency @p latency_ns
 *  (nm_core_network_props(), the same on every rank of a job; 0: unknown). An oversubscribed job over a network
 *  posts everything at once (linear) at every size (4 ranks on 2 cores over tcp: pairwise 1.2-1.3x slower from
 *  32 KiB to 1 MiB), except for equal blocks of at most NM_COLL_ALLTOALL_OVERSUB_BRUCK_UPTO bytes with p >= 4 over
 *  a network of at least NM_COLL_NET_LAT_NS: there each message costs the shared cores more
 *  than a round waits (tcp over loopback spends its latency in the kernel of both ranks), and Bruck sends
 *  ceil(log2 p) messages per member instead of p - 1 (4 ranks on 2 cores over tcp: 51-58 us against 57-85 from
 *  8 B to 4 KiB, linear faster from 16 KiB; over sm linear 3.7-5.0 us against Bruck's 7.3-10.6:
 *  doc/performance.md, issue 18). A forced algorithm stays forced. @return 0 or -NM_EINVAL (invalid
 *  NMAD_ALLTOALL_ALGO). Thread-safety: any thread. */
int nm_coll_alltoall_choose_net(int p, nm_len_t block, int job_oversubscribed, uint32_t latency_ns,
                                enum nm_coll_alltoall_algo_e *algo);

/** @brief Name of an all-to-all algorithm as NMAD_ALLTOALL_ALGO spells it, or NULL out of range. */
const char *nm_coll_alltoall_algo_name(enum nm_coll_alltoall_algo_e algo);

/**
 * @brief A blocking all-to-all of equal small blocks without a schedule: member i's block of @p sendbuf (p @p len
 * bytes, block j for member j) ends at block i of member j's @p recvbuf, with the messages of
 * nm_coll_alltoallv_build() for the linear or pairwise algorithm (the choice of @p algo, NM_COLL_ALLTOALL_AUTO
 * resolved as the builder does), posted as plain receives and sends, each send leaving at once without a request
 * where the driver allows (nm_sr_send_now()); members on a schedule pair with it. Taken for 2 to 17 members and
 * blocks of 1 B to 4 KiB, not in place (@p sendbuf and @p recvbuf distinct, not overlapping); Bruck, in place and
 * anything else are left to the caller.
 * @param wait how to wait (NULL: the core's wait); @param wait_ref passed to @p wait.
 * @return 0 done; NM_COLL_NOT_TAKEN (nothing posted: build a schedule); -NM_EINVAL (NULL buffer, a NULL gate: nothing
 * posted); or the first error of the messages (all of them posted and completed). Thread-safety: one thread per
 * group at a time; takes the core lock per call. Source: issue 18, deliverable 3.
 */
int nm_coll_alltoall_eager(nm_session_t session, const struct nm_coll_group_s *group, int self, const void *sendbuf,
                           void *recvbuf, nm_len_t len, nm_tag_t tag, enum nm_coll_alltoall_algo_e algo,
                           nm_coll_wait_fn_t wait, void *wait_ref);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_ALLTOALL_H */
