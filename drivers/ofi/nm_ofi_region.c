/* Region names, their owner's lock and the removal of dead owners' regions (see nm_ofi_region.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "drivers/ofi/nm_ofi_region.h"
#include "nmad/launcher/nmad_run_proto.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

int nm_ofi_region_job_prefix(char *out, size_t n, const char *job) { return snprintf(out, n, "nmad-j%s-", job); }

void nm_ofi_region_name(char name[NM_OFI_REGION_NAME_MAX])
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const char *job = getenv(NMAD_RUN_JOB_ENV);
  size_t jlen = job ? strlen(job) : 0;
  int off = 0;
  if (jlen > 0 && jlen < NMAD_RUN_JOB_CHARS && strspn(job, "0123456789abcdefx") == jlen)
    off = nm_ofi_region_job_prefix(name, NM_OFI_REGION_NAME_MAX, job);
  else
    off = snprintf(name, NM_OFI_REGION_NAME_MAX, "nmad-");
  snprintf(name + off, NM_OFI_REGION_NAME_MAX - (size_t)off, "%d-%lx%09lx-l", (int)getpid(), (long)ts.tv_sec,
           ts.tv_nsec);
}

int nm_ofi_region_hold(const char *dir, const char *name)
{
  char path[NM_OFI_REGION_NAME_MAX + 64];
  if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
    return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return -1;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The creation time (CLOCK_MONOTONIC, ns) in a name of ours ("nmad-[j<job>-]<pid>-<clock>-l"), or 0 if @p d is
 * not one. */
static uint64_t nm_ofi_region_born(const char *d)
{
  size_t len = strlen(d);
  if (len < 8 || len >= NM_OFI_REGION_NAME_MAX || strncmp(d, "nmad-", 5) != 0 || strcmp(d + len - 2, "-l") != 0)
    return 0;
  char body[NM_OFI_REGION_NAME_MAX];
  memcpy(body, d + 5, len - 7);
  body[len - 7] = '\0';
  char *clock = strrchr(body, '-');
  if (!clock)
    return 0;
  *clock++ = '\0';
  char *pid = strrchr(body, '-');
  pid = pid ? pid + 1 : body;
  size_t clen = strlen(clock);
  if (*pid == '\0' || strspn(pid, "0123456789") != strlen(pid) || clen < 10 || clen > 25 ||
      strspn(clock, "0123456789abcdef") != clen)
    return 0;
  uint64_t nsec = strtoull(clock + clen - 9, NULL, 16);
  clock[clen - 9] = '\0';
  uint64_t sec = strtoull(clock, NULL, 16);
  if (nsec >= 1000000000ULL || sec > UINT64_MAX / 1000000000ULL - 1)
    return 0;
  return sec * 1000000000ULL + nsec;
}

int nm_ofi_region_sweep(const char *dir, const char *prefix, uint64_t now_ns, uint64_t min_age_ns)
{
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  int removed = 0;
  size_t plen = prefix ? strlen(prefix) : 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (plen && strncmp(e->d_name, prefix, plen) != 0)
      continue;
    uint64_t born = nm_ofi_region_born(e->d_name);
    if (born == 0 || born > now_ns || now_ns - born < min_age_ns)
      continue;
    int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      continue; /* another user's, or gone meanwhile */
    /* Unlinked while locked: a newcomer cannot open the name any more, and its owner was dead when we locked. */
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && unlinkat(dirfd(d), e->d_name, 0) == 0)
      removed++;
    close(fd);
  }
  closedir(d);
  return removed;
}
