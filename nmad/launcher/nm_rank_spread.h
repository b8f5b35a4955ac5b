/* Where an unbound rank starts on an oversubscribed host: see nm_rank_spread.c. */
#ifndef NM_RANK_SPREAD_H
#define NM_RANK_SPREAD_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>

/**
 * @brief The processor an unbound rank of an oversubscribed host starts its work on: the
 *        (local_index mod n)-th of the n processors of its affinity mask, so that the host's ranks are spread
 *        evenly over them (two per core for 4 ranks on 2 cores).
 * @param local_index this rank's position among the ranks of its host (0-based, in rank order).
 * @param own this rank's affinity mask (the processors it may run on).
 * @param used the union of the masks of the host's ranks.
 * @param local_ranks how many ranks share the host.
 * @param[out] cpu the processor chosen.
 * @return 1 when the rank should be moved there: the host is oversubscribed (local_ranks > processors of @p used),
 *         the rank is unbound (@p own is all of @p used, two processors or more); 0 otherwise (nothing to do:
 *         a bound rank stays where its binding put it, a rank with a core of its own needs no spreading).
 * Thread-safe (pure).
 */
int nm_rank_spread_cpu(int local_index, const cpu_set_t *own, const cpu_set_t *used, int local_ranks, int *cpu);

/**
 * @brief Move the calling thread to processor @p cpu, then give it back the mask @p own: a first placement, not a
 *        binding; the kernel may move the rank afterwards as it likes.
 * @return 0, or -1 if the kernel refused either change (the rank then runs where it was, with @p own).
 * Not thread-safe with respect to other changes of this thread's affinity.
 */
int nm_rank_spread_apply(int cpu, const cpu_set_t *own);

/** Returns that follow each other within this much time (after any hold-off) are contested: the kernel keeps
 *  moving the rank away from its processor. */
#define NM_RANK_SPREAD_CONTESTED_NS 100000000ULL
/** The first hold-off after a contested return, doubled at each further one up to NM_RANK_SPREAD_HOLDOFF_MAX_NS. */
#define NM_RANK_SPREAD_HOLDOFF_MIN_NS 10000000ULL
#define NM_RANK_SPREAD_HOLDOFF_MAX_NS 1000000000ULL

/** The pacing of one rank's returns (nm_rank_spread_pace()); all zero at start. */
struct nm_rank_spread_pace_s {
  uint64_t last_ns;    /**< CLOCK_MONOTONIC time of the last return, 0: none yet */
  uint64_t holdoff_ns; /**< no return before last_ns + holdoff_ns */
};

/**
 * @brief Whether a displaced rank may be sent back to its processor at time @p now_ns, and if so count the
 *        return in @p p.
 *
 * Why: without other load a rank is displaced now and then (a wake-up on its waker's processor) and one return
 * fixes it: a whole 8-rank sendflood run (MPICH test suite, 2 cores) made 2. Beside a process that does not yield
 * (another program, a test running beside in `make check`, a rank computing), the kernel's balancer moves the
 * ranks off that processor again and again, and sending them back kept half of them next to it: that run took
 * 32-60 s instead of 2-3 s unspread (doc/performance.md, "Spread ranks beside a busy process"). So a return that
 * comes less than NM_RANK_SPREAD_CONTESTED_NS after the previous one's hold-off ended doubles the hold-off (from
 * NM_RANK_SPREAD_HOLDOFF_MIN_NS to NM_RANK_SPREAD_HOLDOFF_MAX_NS), during which the rank stays where the kernel
 * puts it; a later one clears it.
 * @return 1 (go back), 0 (hold off). Thread-safety: pure, the state is @p p's (one per rank).
 */
int nm_rank_spread_pace(struct nm_rank_spread_pace_s *p, uint64_t now_ns);

/**
 * @brief For a rank that waits (the core's wait hook: after a sleep in the drivers, and at the start of one wait
 *        in 16): if the calling thread runs on another processor than @p cpu (the one it was spread to), move it
 *        back there and give it @p own again (nm_rank_spread_apply()).
 *
 * Why: a rank blocked in ppoll is woken by the kernel on its waker's processor when that one looks free enough,
 * and a processor whose ranks all block pulls a yielding rank from the other; yielding ranks then never leave a
 * processor idle, so the kernel's balancer keeps the stack, for tens to hundreds of milliseconds. 4 ranks on 2
 * cores over tcp: a 16 KiB MPI_Allgather took 99-195 us per call while all four shared a core, 59-79 us spread
 * (doc/performance.md, "Ranks stacked on one core by wake-ups"). A rank computing outside nmad is left where the
 * kernel puts it.
 * @param cpu the processor nm_rank_spread_cpu() chose for this rank.
 * @param own this rank's whole affinity mask.
 * @param pace the rank's pacing state (nm_rank_spread_pace()), or NULL to move it back whenever displaced.
 * @return 1 if the thread was moved, 0 if it was where it should be, NM_RANK_SPREAD_HELD if it was displaced but
 *         the pacing holds it where it is, -1 if the kernel refused a change,
 *         NM_RANK_SPREAD_FOREIGN (not moved) if its affinity mask is no longer @p own: someone else placed it (an
 *         application or runtime that binds its threads after start-up), and the caller should stop returning it.
 * Not thread-safe with respect to other changes of this thread's affinity; costs one sched_getcpu() (a few ns)
 * when nothing is to be done, and a sched_getaffinity() when the thread is elsewhere.
 */
int nm_rank_spread_return(int cpu, const cpu_set_t *own, struct nm_rank_spread_pace_s *pace);

/** nm_rank_spread_return(): the thread's mask was changed by someone else; it is left where it is. */
#define NM_RANK_SPREAD_FOREIGN (-2)
/** nm_rank_spread_return(): displaced, but left where it is for now (nm_rank_spread_pace()). */
#define NM_RANK_SPREAD_HELD (-3)

#endif
