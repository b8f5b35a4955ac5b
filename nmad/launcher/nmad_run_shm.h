/**
 * @file nmad_run_shm.h
 * @brief nmad-run's job name on the host, and the removal of the shared-memory files its ranks left behind.
 *
 * A rank over libfabric's shm provider owns a 16 MiB region named in /dev/shm; the provider removes it when the
 * endpoint closes, or on SIGINT/SIGTERM, but a rank killed by SIGKILL (by itself, by nmad-run's --timeout or
 * after an abort, by the kernel's OOM killer) leaves it there, in memory, until the host reboots. nmad-run gives
 * every rank the job's name (NMAD_RUN_JOB); the ofi driver puts it in the region's name
 * (drivers/ofi/nm_ofi_region.h, which also covers the other launchers); when the last rank is gone nmad-run removes
 * what is left under that name at once (doc/nmad-run.md, "Files left by killed ranks").
 */
#ifndef NMAD_RUN_SHM_H
#define NMAD_RUN_SHM_H

#include <stddef.h>
#include <sys/types.h>

/** Environment variable that carries the job's name to the ranks. */
#define NMAD_RUN_JOB_ENV "NMAD_RUN_JOB"
/** Room for a job name and its NUL: "<pid>x<ns>", both in hexadecimal. */
#define NMAD_RUN_JOB_CHARS 40

/**
 * @brief The job's name on this host: nmad-run's pid and the monotonic clock at its start, in hexadecimal
 *        ("<pid>x<ns>"): no other job running on the host has the same, even in another pid namespace.
 * @param self nmad-run's pid.
 * @param[out] out at least NMAD_RUN_JOB_CHARS bytes.
 * Thread-safety: reentrant.
 */
void nmad_run_job_name(pid_t self, char out[NMAD_RUN_JOB_CHARS]);

/**
 * @brief Remove the files of /dev/shm named after job @p job ("nmad-j<job>-..."): call it once every rank is
 *        gone, when nothing can still use them.
 * @return the number of files removed (0 if /dev/shm cannot be read: nothing to clean on such a host).
 * Thread-safety: reentrant.
 */
int nmad_run_shm_sweep(const char *job);

#endif
