/* Driver selection by NMAD_DRIVER word, and the helpers the drivers share. */
#define _GNU_SOURCE
#include "nm_driver.h"
#include <nmad/nm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

const struct nm_drv_ops_s *nm_driver_lookup(const char *word)
{
  if (strcmp(word, "self") == 0)
    return &nm_drv_self_ops;
  if (strcmp(word, "sm") == 0)
    return &nm_drv_sm_ops;
  if (strcmp(word, "ntcp") == 0)
    return &nm_drv_tcp_ops;
  return &nm_drv_ofi_ops; /* the ofi driver checks the word against its provider table */
}

uint64_t nm_drv_nonce(void)
{
  uint64_t n = 0;
  if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n)) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    n = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
  }
  return n | 1;
}

int nm_drv_copy_address(const void *self, size_t size, void *addr, size_t *len)
{
  if (*len < size)
    return -NM_EINVAL;
  memcpy(addr, self, size);
  *len = size;
  return NM_ESUCCESS;
}

int nm_drv_peer_slot(void **peers, size_t *cap, size_t n, size_t elem, uint64_t index)
{
  if (index != n)
    return -NM_EINVAL;
  if (n == *cap) {
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*peers, c * elem);
    if (!p)
      return -NM_ENOMEM;
    *peers = p;
    *cap = c;
  }
  memset((char *)*peers + n * elem, 0, elem);
  return NM_ESUCCESS;
}

uint64_t nm_drv_coarse_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void nm_drv_set_nominal(struct nm_drv_props_s *props, uint32_t latency_ns, uint32_t overhead_ns,
                        uint32_t bandwidth_MBps, const char *provider)
{
  props->latency_ns = latency_ns;
  props->overhead_ns = overhead_ns;
  props->gap_ns = 0;
  props->gap_free = 0;
  props->bandwidth_MBps = bandwidth_MBps;
  snprintf(props->provider, sizeof(props->provider), "%s", provider);
}
