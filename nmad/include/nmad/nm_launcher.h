/**
 * @file nm_launcher.h
 * @brief Launcher interface: start the core, learn rank/size, reach the gate of every rank.
 *
 * The bootstrap is chosen automatically, in this order:
 *  1. the local launcher `nmad-run -n N prog` (environment variable NMAD_RUN_FD set by nmad-run);
 *  2. PMIx, when started by Open MPI's mpirun, `srun --mpi=pmix` or prterun (PMIX_RANK set) and built with PMIx;
 *  3. singleton (size 1) otherwise.
 * The driver is chosen by NMAD_DRIVER (shm, tcp, sockets, udp, verbs, psm2, opx, self; "a+b" for two rails);
 * default: shm when every rank is on one host, tcp otherwise. Messages to one's own rank use the self driver.
 */
#ifndef NM_LAUNCHER_H
#define NM_LAUNCHER_H

#include <nmad/nm_types.h>
#include <nmad/nm_errno.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nm_launcher_s *nm_launcher_t; /**< one process's launcher: owns the core */

/**
 * @brief Bootstrap this process: find its peers, open the drivers, connect a gate to every rank.
 * Collective over all ranks of the job.
 * @param[out] out launcher handle (free with nm_launcher_exit()).
 * @param argc, argv program arguments (may be NULL; reserved for future options, not modified today).
 * @return 0, -NM_EINVAL on a bad environment variable (an explanatory message is printed on stderr),
 *         -NM_ENOTSUP if the requested provider is not usable here, -NM_EDRIVER, -NM_ENOMEM, -NM_ECLOSED if the
 *         launcher connection is lost.
 * Thread-safety: call once per process, from one thread.
 */
int nm_launcher_init(nm_launcher_t *out, int *argc, char ***argv);

/** @brief Flush pending sends, synchronize with the other ranks and release everything.
 *  @return 0 or a negative error (peer failures are reported but resources are still freed). */
int nm_launcher_exit(nm_launcher_t l);

/**
 * @brief End every process of the job now (the native MPI_Abort): the launcher terminates all ranks without
 * waiting for them, and the job's exit status is @p code modulo 256, as Open MPI's mpirun reports an MPI_Abort
 * (so 0 and multiples of 256 give status 0: use a code in [1, 255] to report a failure).
 *  - nmad-run: the caller sends an ABORT frame; nmad-run prints "rank R called abort with code C", sends
 *    SIGTERM to every rank at once, SIGKILL 0.3 s later to those still alive, skips its grace period and exits
 *    with the status above. The caller waits for its SIGTERM, so no other rank sees it die first.
 *  - PMIx (mpirun, srun, prterun): PMIx_Abort() on the whole job; the launcher decides the rest.
 *  - singleton and nmad-sim: the process exits, which ends the job.
 * Stdio streams are flushed; nothing else is released and no other rank is waited for (it may be blocked on us).
 * Not collective. Not for error handling inside the library (DESIGN.md rule 6): only an explicit request of
 * the application ends the process.
 * @param l the launcher, or NULL before nm_launcher_init() (then only this process exits).
 * @param code exit code of the job; the process itself exits with @p code modulo 256 if the launcher has not
 *        terminated it (launcher unreachable, or not within 3 s).
 * @return never returns.
 * Thread-safety: callable from any thread, even while another one is inside nmad (it takes no lock); not
 * async-signal-safe (stdio).
 */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void nm_launcher_abort(nm_launcher_t l, int code);

/** @brief Rank of this process, in [0, size). @return 0. */
int nm_launcher_get_rank(nm_launcher_t l, int *rank);
/** @brief Number of processes in the job (>= 1). @return 0. */
int nm_launcher_get_size(nm_launcher_t l, int *size);
/** @brief Gate to rank @p rank (the self gate for one's own rank). Gates are made on first use, so a rank's
 *  memory grows with the peers it talks to, not with the job (DESIGN.md rule 8); the same rank always gives the
 *  same gate. Thread-safety: as the interfaces (the caller serializes without a progress thread).
 *  @return 0, -NM_EINVAL when rank is out of [0, size), -NM_ENOMEM. */
int nm_launcher_get_gate(nm_launcher_t l, int rank, nm_gate_t *gate);
/** @brief nm_launcher_get_gate() in the shape of a group's gate function (nm_coll_gate_of_t, nm_coll.h), for the
 *  group of all ranks: @p launcher is the nm_launcher_t. @return the gate, or NULL (rank out of range, no memory). */
nm_gate_t nm_launcher_gate_of(void *launcher, int rank);
/** @brief Rank reached through @p gate. @return 0 or -NM_EINVAL for a gate of another core. */
int nm_launcher_get_rank_of_gate(nm_launcher_t l, nm_gate_t gate, int *rank);
/** @brief The core this launcher built (to open sessions, progress, wait). */
nm_core_t nm_launcher_get_core(nm_launcher_t l);
/** @brief Name of the bootstrap in use: "nmad-run", "pmix", "singleton" or "sim" (a rank of nmad-sim). */
const char *nm_launcher_get_bootstrap(nm_launcher_t l);
/** @brief Barrier over all ranks through the bootstrap channel (slow path; for setup and tests). Queued packets
 *  are flushed first. Under nmad-run and PMIx the core progresses while the rank waits (one pass per ms at
 *  most when idle, no processor otherwise), so forwarding done inside progress (dynamic broadcasts, anycasts,
 *  rendezvous answers) goes on for ranks that have not reached the barrier; under nmad-sim and for a singleton
 *  it does not (the simulated barrier blocks the actor). @return 0 or -NM_ECLOSED if a rank died.
 *  Thread-safety: one thread of the job's ranks at a time (a collective of the bootstrap). */
int nm_launcher_barrier(nm_launcher_t l);
/** @brief nm_launcher_barrier() during which the core never progresses, under every bootstrap: for tests that
 *  need a rank that does not answer its peers for a while (a rendezvous sender that stays silent). Queued packets
 *  are flushed first. @return 0 or -NM_ECLOSED if a rank died. Thread-safety: as nm_launcher_barrier(). */
int nm_launcher_barrier_noprogress(nm_launcher_t l);

#ifdef __cplusplus
}
#endif
#endif /* NM_LAUNCHER_H */
