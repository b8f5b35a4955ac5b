/* nmad-run's job name and the removal of the /dev/shm files of its killed ranks (see nmad_run_shm.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "nmad_run_shm.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Where shm_open() puts its names on Linux (glibc, musl). */
#define NMAD_RUN_SHM_DIR "/dev/shm"

void nmad_run_job_name(pid_t self, char out[NMAD_RUN_JOB_CHARS])
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long long ns = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
  snprintf(out, NMAD_RUN_JOB_CHARS, "%lxx%llx", (unsigned long)self, ns);
}

int nmad_run_shm_sweep(const char *job)
{
  char prefix[NMAD_RUN_JOB_CHARS + 8];
  int plen = snprintf(prefix, sizeof(prefix), "nmad-j%s-", job);
  DIR *d = opendir(NMAD_RUN_SHM_DIR);
  if (!d)
    return 0;
  int removed = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, prefix, (size_t)plen) == 0 && unlinkat(dirfd(d), e->d_name, 0) == 0)
      removed++;
  closedir(d);
  return removed;
}
