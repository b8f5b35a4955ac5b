/**
 * @file nm_ofi_region.h
 * @brief The name of an endpoint whose provider keeps a host-wide file after it (libfabric's shm: its 16 MiB
 *        region in /dev/shm), the lock that says its owner lives, and the removal of those whose owner died.
 *
 * The provider removes its region when the endpoint closes and on SIGINT or SIGTERM; a rank killed by SIGKILL (by
 * itself, the OOM killer, a launcher after an abort or a timeout) leaves it in memory until the host reboots.
 * nmad-run removes its own job's when its last rank is reaped (nm_ofi_region_sweep() with the job's prefix, no
 * minimum age); the same function covers every other
 * launcher (Open MPI's mpirun through PMIx, srun): each rank holds a shared flock(2) on its region's file for its
 * life, which the kernel drops with the process whatever kills it, and a rank opening its endpoint removes the
 * regions named like ours that nobody holds (doc/nmad-run.md, FAULTS, "Files left by killed ranks").
 */
#ifndef NM_OFI_REGION_H
#define NM_OFI_REGION_H

#include <stddef.h>
#include <stdint.h>

/** Room for a region name and its NUL. */
#define NM_OFI_REGION_NAME_MAX 96
/** Where shm_open() puts its names on Linux. */
#define NM_OFI_REGION_DIR "/dev/shm"
/** A region younger than this is never removed: its owner may not have taken its lock yet (it does so right after
 *  the provider creates the file, within milliseconds). */
#define NM_OFI_REGION_MIN_AGE_NS (60ULL * 1000000000ULL)

/**
 * @brief The endpoint's name: "nmad-<pid>-<clock>-l", or under nmad-run "nmad-j<job>-<pid>-<clock>-l" (<job>:
 *        NMAD_RUN_JOB, taken only as nmad-run writes it, hexadecimal digits and 'x'), <clock> CLOCK_MONOTONIC in
 *        hexadecimal (seconds, then nanoseconds in 9 digits). The trailing "-l" says its owner holds the lock:
 *        names without it (older builds) are never removed here.
 * @param[out] name NM_OFI_REGION_NAME_MAX bytes. Thread-safety: reentrant.
 */
void nm_ofi_region_name(char name[NM_OFI_REGION_NAME_MAX]);

/**
 * @brief Take the shared lock on region @p name of directory @p dir, for the caller's life.
 * @return the descriptor that holds it (close it when the endpoint closes), or -1 (no such file, no lock:
 *         nothing is held, and a sweep may later remove the region once it is old enough).
 */
int nm_ofi_region_hold(const char *dir, const char *name);

/**
 * @brief The start of every region name of job @p job (NMAD_RUN_JOB): "nmad-j<job>-".
 * @param[out] out @p n bytes. @return the length written (snprintf()'s).
 */
int nm_ofi_region_job_prefix(char *out, size_t n, const char *job);

/**
 * @brief Remove from @p dir the regions named like ours (trailing "-l"), starting with @p prefix when it is not
 *        NULL, that are at least @p min_age_ns old by their name's clock (@p now_ns: CLOCK_MONOTONIC) and that
 *        nobody holds (an exclusive flock(2) succeeds). Files of other users cannot be opened, hence are never
 *        removed.
 * @return the number of files removed (0 if @p dir cannot be read). Thread-safety: reentrant.
 */
int nm_ofi_region_sweep(const char *dir, const char *prefix, uint64_t now_ns, uint64_t min_age_ns);

#endif
