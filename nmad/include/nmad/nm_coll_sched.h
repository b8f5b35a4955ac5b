/**
 * @file nm_coll_sched.h
 * @brief Schedules: the engine of nmad's non-blocking collectives (issue 17, deliverable 1). Every collective
 * algorithm of collectives/ is a *builder* that appends its operations to a schedule; the schedule runs in the
 * core's progress; a blocking collective is the non-blocking one plus nm_coll_sched_wait(). The MPI shim runs its
 * collectives on the same engine (nmad/mpi/mpi_coll_sched.c adds MPI's datatypes and reduction operators as
 * local operations).
 *
 * A schedule is a list of *rounds*. A round is an ordered list of operations: local ones (copy, a caller's
 * function) run at once, in order, when the round starts; communications (nm_sr_isend / nm_sr_issend /
 * nm_sr_irecv of contiguous bytes, all with the schedule's tag) are posted in order. The next round starts when
 * every communication of the current one has completed. Rounds advance from request monitors, so a schedule
 * progresses whenever the core progresses (another request's wait, the progress thread), not only in its own
 * wait. A schedule runs to its end even after an error (the first one is kept), so that no peer of the
 * collective waits for ever for a message this member would have sent.
 *
 * All messages of one collective use the one tag given at creation: members start the collectives of a group in
 * the same order and give each a distinct tag, so concurrent collectives never mix; within a collective the
 * per-(gate, tag) non-overtaking order pairs the k-th send from A to B with the k-th receive B posts from A (the
 * builders post both in the same order).
 *
 * Building is allocation-checked: the first failure is remembered and reported by start, so builders do not test
 * every call. Nothing is posted before nm_coll_sched_start().
 *
 * Thread-safety: a schedule is built and started by one thread; it then advances inside the core's progress,
 * under the core lock (nm_core.h), like any request monitor.
 */
#ifndef NM_COLL_SCHED_H
#define NM_COLL_SCHED_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_sendrecv.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_coll_sched_s nm_coll_sched_t;

/** Arguments of a local operation (nm_coll_sched_local()): what the caller stored, given back when it runs. */
struct nm_coll_local_s {
  const void *src;
  void *dst;
  size_t len;
  int64_t count;
  void *p;       /**< a pointer of the caller's (e.g. a datatype) */
  intptr_t i[2]; /**< two integers of the caller's (e.g. an operator and a datatype handle) */
};
/** A local operation: runs when its round starts. @return 0, or an error kept as the schedule's error (the
 *  caller's own convention: nmad's negative codes or a positive class of the caller's, see nm_coll_sched_error()). */
typedef int (*nm_coll_local_fn_t)(const struct nm_coll_local_s *args);
/** Called once when the schedule is freed (to release what the caller attached to it). */
typedef void (*nm_coll_free_fn_t)(void *ref);

/** Flags of nm_coll_sched_send(). */
#define NM_COLL_SEND_SYNC 0x1u /**< synchronous send (nm_sr_issend): completes when the receiver matched it */

/** @brief New empty schedule whose messages go on @p session with tag @p tag.
 *  @return the schedule, or NULL when out of memory. Thread-safety: any thread. */
nm_coll_sched_t *nm_coll_sched_new(nm_session_t session, nm_tag_t tag);

/** Scratch blocks (nm_coll_sched_alloc() beyond the schedule's own bytes) a cache keeps once their schedule is
 *  freed, and the largest it keeps (bytes). */
#define NM_COLL_SCHED_CACHE_BLOCKS 4
#define NM_COLL_SCHED_CACHE_BLOCK_MAX (8u * 1024u * 1024u)

/** A place where freed schedules wait to be reused (zero-initialised by its owner): malloc and free of a schedule
 *  were ~270 of the ~4,000 instructions a 4-rank MPI_Barrier costs a member (issue 18). It holds one, and up to
 *  NM_COLL_SCHED_CACHE_BLOCKS scratch blocks of at most NM_COLL_SCHED_CACHE_BLOCK_MAX bytes: a 64 KiB reduce's two
 *  blocks given back to malloc at every call let glibc trim the heap's top and fault the pages in again at the next
 *  (4 ranks on 2 cores: 26-39 us a call after a smaller size had run, 14 us without the trim; doc/performance.md,
 *  "Scratch blocks kept between collectives"). */
struct nm_coll_sched_cache_s {
  void *spare;                                    /**< a freed schedule's memory, or NULL */
  void *blocks[NM_COLL_SCHED_CACHE_BLOCKS];       /**< freed scratch blocks (NULL: an empty slot) */
  size_t block_len[NM_COLL_SCHED_CACHE_BLOCKS];   /**< their usable bytes */
};

/** @brief nm_coll_sched_new() that takes its memory from @p cache when it holds some, and gives it back there when
 *  the schedule is freed (if the cache is empty then; else to the heap). @p cache (NULL: as nm_coll_sched_new())
 *  must outlive the schedules made from it and be used under one lock: every call that may free one of them
 *  (start, release, the progress that completes an orphaned one) must hold it, as the core's lock does for a
 *  schedule's session. Thread-safety: that lock's. */
nm_coll_sched_t *nm_coll_sched_new_cached(nm_session_t session, nm_tag_t tag, struct nm_coll_sched_cache_s *cache);

/** @brief Free the memory @p cache holds, schedule and scratch blocks (its owner's finalisation; schedules made from
 *  it must be gone). */
void nm_coll_sched_cache_drain(struct nm_coll_sched_cache_s *cache);

/** @brief Free a schedule that was never started (after a failed build). NULL is ignored. */
void nm_coll_sched_destroy(nm_coll_sched_t *s);

/** @brief Record a build error (the first one wins): start then fails with it and frees the schedule. */
void nm_coll_sched_set_error(nm_coll_sched_t *s, int err);

/** @brief Call @p fn(@p ref) when the schedule is freed (one hook per schedule; a second call replaces it). */
void nm_coll_sched_on_free(nm_coll_sched_t *s, nm_coll_free_fn_t fn, void *ref);

/** @brief Scratch memory of @p len bytes, freed with the schedule (malloc). @return NULL for len 0 or on failure
 *  (then recorded as -NM_ENOMEM). */
void *nm_coll_sched_alloc(nm_coll_sched_t *s, size_t len);

/* Operations, appended to round @p round (>= 0; rounds are created on demand; empty rounds are skipped). Buffers
 * must stay valid until the schedule completes. A NULL gate records -NM_EINVAL. */
/** @brief Send @p len bytes of @p buf to @p gate; @p flags: 0 or NM_COLL_SEND_SYNC. */
void nm_coll_sched_send(nm_coll_sched_t *s, int round, nm_gate_t gate, const void *buf, nm_len_t len,
                        unsigned flags);
/** @brief Receive up to @p len bytes from @p gate into @p buf (a longer message is -NM_ETRUNCATED). */
void nm_coll_sched_recv(nm_coll_sched_t *s, int round, nm_gate_t gate, void *buf, nm_len_t len);
/** @brief memmove(@p dst, @p src, @p len) when the round starts (nothing for len 0 or dst == src). */
void nm_coll_sched_copy(nm_coll_sched_t *s, int round, void *dst, const void *src, size_t len);
/** @brief Run @p fn(args) when the round starts (after the operations appended to the round before it). */
void nm_coll_sched_local(nm_coll_sched_t *s, int round, nm_coll_local_fn_t fn, const struct nm_coll_local_s *args);

/** @brief Number of rounds appended so far (the next builder appends from this round on). */
int nm_coll_sched_rounds(const nm_coll_sched_t *s);

/** @brief Session of the schedule's messages. */
nm_session_t nm_coll_sched_session(const nm_coll_sched_t *s);

/** @brief A builder's hint to the schedule's blocking waiters: spin at least @p ns before yielding
 *  (nm_core_wait_flag_spin()); the largest hint of the schedule's builders is kept. Not thread-safe (building). */
void nm_coll_sched_set_spin(nm_coll_sched_t *s, uint64_t ns);
/** @brief The spin hint (ns; 0: none). */
uint64_t nm_coll_sched_spin(const nm_coll_sched_t *s);

/** @brief Post round 0 (and every round that completes at once).
 *  @return 0, or the build error; on error the schedule is freed. */
int nm_coll_sched_start(nm_coll_sched_t *s);

/** @brief Whether the started schedule is done: a flag nm_core_wait_flag() can wait on (set inside progress). */
volatile int *nm_coll_sched_done_flag(nm_coll_sched_t *s);

/** @brief First error of a done schedule: a send's or receive's nmad code (negative), a local operation's return
 *  value, or 0. */
int nm_coll_sched_error(const nm_coll_sched_t *s);

/** @brief Release a started schedule: freed now if done, else when its last round completes (the core still
 *  holds its requests until then). */
void nm_coll_sched_release(nm_coll_sched_t *s);

/** @brief Start (if not yet), progress until done (spin, then block in the drivers: nm_core_wait_flag()),
 *  release. @return 0 or the first error (as nm_coll_sched_error()). Thread-safety: as nm_core_wait_flag(). */
int nm_coll_sched_wait(nm_coll_sched_t *s);

#ifdef __cplusplus
}
#endif
#endif /* NM_COLL_SCHED_H */
