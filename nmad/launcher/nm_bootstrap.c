/**
 * @file nm_bootstrap.c
 * @brief Choice of the bootstrap from the environment (order documented in nm_bootstrap.h and
 *        doc/nmad-run.md): a rank of nmad-sim -> sim; NMAD_RUN_FD -> nmad-run; PMIX_RANK (with PMIx support) -> pmix; else singleton.
 */
#define _GNU_SOURCE /* ppoll */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "nm_bootstrap.h"

#include <nmad/nm_errno.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct nm_bootstrap_ops_s *choose(void)
{
  if (nm_bootstrap_sim_self())
    return &nm_bootstrap_sim_ops;
  const char *fd = getenv("NMAD_RUN_FD");
  if (fd != NULL && *fd != '\0')
    return &nm_bootstrap_nmadrun_ops;
  const char *pmix_rank = getenv("PMIX_RANK");
  if (pmix_rank != NULL && *pmix_rank != '\0') {
#ifdef HAVE_PMIX
    return &nm_bootstrap_pmix_ops;
#else
    fprintf(stderr, "nmad: PMIX_RANK is set but nmad was built without PMIx support; "
                    "running as a singleton (rebuild with libpmix-dev, or start with nmad-run)\n");
#endif
  }
  return &nm_bootstrap_singleton_ops;
}

int nm_bootstrap_select(struct nm_bootstrap_s *bs)
{
  if (bs == NULL)
    return -NM_EINVAL;
  memset(bs, 0, sizeof(*bs));
  const struct nm_bootstrap_ops_s *ops = choose();
  int rc = ops->init(bs);
  if (rc) {
    fprintf(stderr, "nmad: %s bootstrap failed to start: %s\n", ops->name, nm_strerror(rc));
    memset(bs, 0, sizeof(*bs));
    return rc;
  }
  bs->ops = ops;
  return 0;
}

int nm_bootstrap_idle(int fd, int (*progress)(void *arg), void *arg, unsigned *backoff_us)
{
  enum { NM_BOOTSTRAP_IDLE_MAX_US = 1000, NM_BOOTSTRAP_IDLE_MIN_US = 16 };
  if (progress(arg) > 0)
    *backoff_us = 0;
  else if (*backoff_us < NM_BOOTSTRAP_IDLE_MAX_US)
    *backoff_us = *backoff_us ? 2 * *backoff_us : NM_BOOTSTRAP_IDLE_MIN_US;
  if (*backoff_us > NM_BOOTSTRAP_IDLE_MAX_US)
    *backoff_us = NM_BOOTSTRAP_IDLE_MAX_US;
  struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)*backoff_us * 1000 };
  if (fd < 0) {
    nanosleep(&ts, NULL);
    return 0;
  }
  struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
  int n = ppoll(&pfd, 1, &ts, NULL);
  return n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
}
