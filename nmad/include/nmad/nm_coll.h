/**
 * @file nm_coll.h
 * @brief Static collectives over a group of gates (every member calls them), built on sendrecv.
 * Source: Hasanov & Lastovetsky 2015, "Hierarchical redesign of classic MPI broadcast algorithms", section 2
 * (the classic algorithms and their costs); the binomial tree here is the one of Denis 2020 fig. 1.
 *
 * A group is an array of @p n gates, the same array (same order) on every member; @p self is this process's
 * index in it and @p root the root's index. Messages use @p tag on @p session: do not post other receives that
 * could match it while a collective runs. Thread-safety: like the core.
 *
 * A group can also be given by a function (struct nm_coll_group_s): a member asks it only for the gates of the
 * members it exchanges with (O(log n) for the binomial tree), so that at scale a rank makes only those gates
 * (DESIGN.md rule 8: gates are made on first use) instead of one per member for an array.
 */
#ifndef NM_COLL_H
#define NM_COLL_H

#include <limits.h>
#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Gate of group member @p member (0 <= member < n), or NULL if it cannot be had (the collective then fails
 *  with -NM_EINVAL). nm_launcher_gate_of() is one, for the group of all ranks in rank order. */
typedef nm_gate_t (*nm_coll_gate_of_t)(void *ref, int member);

/** How a blocking collective waits until @p *flag becomes non-zero: spin at least @p spin_ns (0: the configured
 *  spin), then give the processor away or block, as the caller's progress rules want (the MPI shim polls its other
 *  requests between driver waits). @p ref is the caller's. */
typedef void (*nm_coll_wait_fn_t)(volatile int *flag, uint64_t spin_ns, void *ref);

/** What a blocking small collective without a schedule (nm_coll_bcast_eager() and the other *_eager() calls)
 *  returns when it leaves the call to a schedule, having posted nothing: a value no error of theirs takes (nmad's
 *  codes are negative, the MPI classes an operator returns small and positive; 1 was MPI_ERR_BUFFER's). */
#define NM_COLL_NOT_TAKEN INT_MAX

/** A network whose nominal one-way latency (nm_core_network_props(), ns) is at least this is priced as a network by
 *  the rules of an oversubscribed job (more ranks than cores): its copies are written by their sender into the
 *  kernel (tcp over loopback: 5.5-11 us) instead of pulled by their receivers from shared memory (sm: 0.3 us), so
 *  each message costs the shared cores and the root of a flat tree writes every copy (doc/collectives.md). */
#define NM_COLL_NET_LAT_NS 2000u

/** The collective families whose algorithm an environment variable can force (doc/collectives.md, "Overrides"). */
enum nm_coll_family_e {
  NM_COLL_FAMILY_BARRIER = 0,    /**< NMAD_BARRIER_ALGO */
  NM_COLL_FAMILY_ALLREDUCE,      /**< NMAD_ALLREDUCE_ALGO */
  NM_COLL_FAMILY_REDUCE,         /**< NMAD_REDUCE_ALGO */
  NM_COLL_FAMILY_REDUCE_SCATTER, /**< NMAD_REDUCE_SCATTER_ALGO */
  NM_COLL_FAMILY_ALLGATHER,      /**< NMAD_ALLGATHER_ALGO */
  NM_COLL_FAMILY_ALLTOALL,       /**< NMAD_ALLTOALL_ALGO */
  NM_COLL_FAMILY_GATHER,         /**< NMAD_GATHER_ALGO */
  NM_COLL_FAMILY_SCATTER,        /**< NMAD_SCATTER_ALGO */
  NM_COLL_FAMILY_BCAST,          /**< NMAD_BCAST_ALGO ([hier:]ALGO[:groups=G][:segment=SIZE], nm_coll_bcast.h) */
  NM_COLL_NFAMILIES
};

/** Longest override value kept (bytes, the terminating NUL included); a longer one is kept as invalid. */
/* NMAD_BCAST_ALGO takes up to 255 characters (its parser, collectives/nm_coll_model.c) */
#define NM_COLL_OVERRIDE_MAX 256

/** The NMAD_<COLLECTIVE>_ALGO overrides as read once (nm_coll_overrides_read()), for a group to carry: the builders
 *  of a group that carries them never read the environment, which costs a scan of it per call (~500 instructions
 *  with 40 variables, 3.5% of a 4-rank MPI_Barrier on 2 cores: doc/performance.md). */
struct nm_coll_overrides_s {
  char value[NM_COLL_NFAMILIES][NM_COLL_OVERRIDE_MAX]; /**< the variable's value, "" when unset */
};

/**
 * @brief Read every NMAD_<COLLECTIVE>_ALGO variable now into @p o (unset: ""). Values are checked when a collective
 * uses them, as when read at the call: an invalid one fails that collective with -NM_EINVAL after one line on
 * stderr. Thread-safety: reads the environment (getenv), so not concurrently with setenv.
 * Source: MPICH reads its control variables at MPI_Init, Open MPI its MCA parameters at component open; nmad's MPI
 * shim reads these at MPI_Init (doc/collectives.md).
 */
void nm_coll_overrides_read(struct nm_coll_overrides_s *o);

/** Name of the variable of family @p f ("NMAD_BARRIER_ALGO"...), or NULL for an out-of-range @p f. */
const char *nm_coll_override_var(enum nm_coll_family_e f);

/** A group of @p n members given by a function, the same on every member. */
struct nm_coll_bcast_memo_s; /* nmad/nm_coll_model.h */
struct nm_coll_group_s {
  int n;
  nm_coll_gate_of_t gate_of;
  void *ref; /* passed to gate_of */
  /** NULL, or where the broadcast model's choices for this group are remembered (nm_coll_bcast_auto_opts():
   *  nm_coll_bcast() without options then prices each length once); zero-initialised by the owner, who keeps it
   *  as long as the group. A group used by several threads at once should carry none. */
  struct nm_coll_bcast_memo_s *bcast_memo;
  /** NULL: the builders read the NMAD_<COLLECTIVE>_ALGO overrides from the environment at every call; else the
   *  overrides read once by the owner (nm_coll_overrides_read()), kept as long as the group. */
  const struct nm_coll_overrides_s *overrides;
};

/**
 * @brief Binomial-tree broadcast of @p len bytes from group member @p root (ceil(log2 n) steps: the root sends to
 * root + 2^j, farthest first, the tree of Denis 2020 fig. 1; collectives/nm_coll_tree.h). Blocking.
 * @return 0 or the first error of its sends/receives (e.g. -NM_ECLOSED, -NM_ETRUNCATED).
 */
int nm_coll_bcast_binomial(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                           nm_len_t len, nm_tag_t tag);

/** @brief Naive broadcast: the root sends to every other member in turn (O(n) at the root); others receive.
 *  Blocking. @return 0 or the first error. */
int nm_coll_bcast_naive(nm_session_t session, const nm_gate_t *group, int n, int self, int root, void *buf,
                        nm_len_t len, nm_tag_t tag);

/** @brief nm_coll_bcast_binomial() over a group given by a function (only the parent's and the children's gates
 *  are asked for). @param group n >= 1 members. @return as nm_coll_bcast_binomial(); -NM_EINVAL also when the
 *  group cannot give a gate. */
int nm_coll_bcast_binomial_group(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                                 void *buf, nm_len_t len, nm_tag_t tag);

/** @brief nm_coll_bcast_naive() over a group given by a function (a non-root member asks only for the root's
 *  gate). @return as nm_coll_bcast_naive(). */
int nm_coll_bcast_naive_group(nm_session_t session, const struct nm_coll_group_s *group, int self, int root,
                              void *buf, nm_len_t len, nm_tag_t tag);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_H */
