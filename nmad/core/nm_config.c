/* Configuration from environment variables; bad values name the variable and the accepted values. */
#include "nm_core_private.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

int nm_config_parse_size(const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || s[0] == '-')
    return -NM_EINVAL;
  uint64_t mult = 1;
  switch (*end) {
  case 'k': case 'K': mult = 1ULL << 10; end++; break;
  case 'm': case 'M': mult = 1ULL << 20; end++; break;
  case 'g': case 'G': mult = 1ULL << 30; end++; break;
  default: break;
  }
  if (*end != '\0' || v > UINT64_MAX / mult)
    return -NM_EINVAL;
  *out = v * mult;
  return NM_ESUCCESS;
}

uint64_t nm_config_peer_alloc_default(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (1ULL << 30);
}

/* NMAD_PROGRESS and NMAD_BIND (the progress thread and its placement, nm_progress_thread.c). The default
 * placement is odd-even: it is the paper's best for overlap (section 5.3), and it falls back to the rank's own
 * cores when no core is idle, as the other two do. */
static int nm_config_load_progress(struct nm_config_s *cfg)
{
  const char *s = getenv("NMAD_PROGRESS");
  if (!s || !*s || strcmp(s, "poll") == 0)
    cfg->progress_thread = 0;
  else if (strcmp(s, "thread") == 0)
    cfg->progress_thread = 1;
  else {
    fprintf(stderr, "nmad: NMAD_PROGRESS='%s' is invalid; accepted values: poll, thread\n", s);
    return -NM_EINVAL;
  }
  static const char *const names[] = {[NM_BIND_BIND] = "bind", [NM_BIND_NUMA] = "numa", [NM_BIND_ODD_EVEN] = "odd-even"};
  s = getenv("NMAD_BIND");
  cfg->bind = NM_BIND_ODD_EVEN;
  if (s && *s) {
    int found = 0;
    for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
      if (strcmp(s, names[i]) == 0) {
        cfg->bind = (enum nm_bind_e)i;
        found = 1;
      }
    if (!found) {
      fprintf(stderr, "nmad: NMAD_BIND='%s' is invalid; accepted values: bind, numa, odd-even\n", s);
      return -NM_EINVAL;
    }
  }
  return NM_ESUCCESS;
}

int nm_config_load(struct nm_config_s *cfg, size_t max_eager, int oversubscribed, int job_oversubscribed)
{
  const char *s = getenv("NMAD_STRATEGY");
  cfg->strategy = nm_strategy_lookup(s && *s ? s : NM_STRATEGY_DEFAULT);
  if (!cfg->strategy) {
    fprintf(stderr, "nmad: NMAD_STRATEGY='%s' is not a strategy; accepted values: %s\n", s, NM_STRATEGY_NAMES);
    return -NM_EINVAL;
  }
  /* More ranks than cores on this host: a rendezvous costs more hops than an eager message (RTR back, the driver's
   * announcement, its completion; one fewer with a get rendezvous), each a wait for the peer to be scheduled
   * (~5 us here, the NMAD_OVERSUB_HOP_US figure), which buys back the eager path's two extra copies up to
   * ~128 KiB (sm's largest packet): a flat MPI_Bcast of 64 KiB to 7 ranks on 2 cores took 37-43 us eager against
   * 61-136 us by rendezvous (doc/performance.md, "Eager up to 128 KiB on an oversubscribed host"). Clamped below
   * to the packet payload. */
  uint64_t v = oversubscribed ? NM_RDV_THRESHOLD_OVERSUB : 32 * 1024;
  s = getenv("NMAD_RDV_THRESHOLD");
  if (s && *s && (nm_config_parse_size(s, &v) || v > max_eager)) {
    fprintf(stderr, "nmad: NMAD_RDV_THRESHOLD='%s' is invalid; accepted: a byte count (suffix K, M) from 0 to %zu\n",
            s, max_eager);
    return -NM_EINVAL;
  }
  cfg->rdv_threshold = v > max_eager ? max_eager : v;
  cfg->rdv_threshold_set = s && *s;
  v = NM_EAGER_CREDIT_DEFAULT;
  s = getenv("NMAD_EAGER_CREDIT");
  if (s && *s && (nm_config_parse_size(s, &v) || v < NM_EAGER_CREDIT_MIN || v > NM_EAGER_CREDIT_MAX)) {
    fprintf(stderr, "nmad: NMAD_EAGER_CREDIT='%s' is invalid; accepted: a byte count (suffix K, M, G) from %u to %llu\n",
            s, NM_EAGER_CREDIT_MIN, (unsigned long long)NM_EAGER_CREDIT_MAX);
    return -NM_EINVAL;
  }
  cfg->eager_credit = v;
  v = NM_RDV_CHUNK_DEFAULT;
  s = getenv("NMAD_RDV_CHUNK");
  if (s && *s && (nm_config_parse_size(s, &v) || v < NM_RDV_CHUNK_MIN || v > NM_RDV_CHUNK_MAX)) {
    fprintf(stderr, "nmad: NMAD_RDV_CHUNK='%s' is invalid; accepted: a byte count (suffix K, M, G) from %u to %llu\n",
            s, NM_RDV_CHUNK_MIN, (unsigned long long)NM_RDV_CHUNK_MAX);
    return -NM_EINVAL;
  }
  cfg->rdv_chunk = v;
  s = getenv("NMAD_SPLIT_LOCAL");
  if (s && *s && strcmp(s, "0") != 0 && strcmp(s, "1") != 0) {
    fprintf(stderr, "nmad: NMAD_SPLIT_LOCAL='%s' is invalid; accepted: 0 (one rail per message on one host), 1\n", s);
    return -NM_EINVAL;
  }
  cfg->split_local = s && strcmp(s, "1") == 0;
  v = nm_config_peer_alloc_default();
  s = getenv("NMAD_PEER_ALLOC_MAX");
  if (s && *s && (nm_config_parse_size(s, &v) || v == 0)) {
    fprintf(stderr, "nmad: NMAD_PEER_ALLOC_MAX='%s' is invalid; accepted: a byte count (suffix K, M, G) above 0\n", s);
    return -NM_EINVAL;
  }
  cfg->peer_alloc_max = v;
  v = NM_FRAG_MAX_DEFAULT;
  s = getenv("NMAD_EAGER_FRAG_MAX");
  if (s && *s && nm_config_parse_size(s, &v)) {
    fprintf(stderr, "nmad: NMAD_EAGER_FRAG_MAX='%s' is invalid; accepted: a byte count (suffix K, M), 0 = never cut\n", s);
    return -NM_EINVAL;
  }
  cfg->frag_max = v;
  v = oversubscribed ? 0 : 10; /* more ranks than cores: spinning only steals the peers' time slices */
  s = getenv("NMAD_SPIN_US");
  if (s && *s && (nm_config_parse_size(s, &v) || v > 10000000)) {
    fprintf(stderr, "nmad: NMAD_SPIN_US='%s' is invalid; accepted: microseconds from 0 to 10000000\n", s);
    return -NM_EINVAL;
  }
  cfg->spin_ns = v * 1000;
  /* More ranks than cores: yield for 1 ms, not 10. A rank that yields in a loop while the ranks sharing its core
   * are busy is picked last by the kernel's scheduler (each sched_yield() pushes its deadline back): a flag set by
   * a busy process reaches it after 3.1-3.7 ms at the 90th percentile on the project's host, a blocked one is
   * woken in 3.5 us (bench/sched_wait_latency.c; doc/performance.md, "Waiting on an oversubscribed host: block
   * after 1 ms"). */
  v = oversubscribed ? 1000 : 10000;
  s = getenv("NMAD_YIELD_US");
  if (s && *s && (nm_config_parse_size(s, &v) || v > 100000000)) {
    fprintf(stderr, "nmad: NMAD_YIELD_US='%s' is invalid; accepted: microseconds from 0 to 100000000\n", s);
    return -NM_EINVAL;
  }
  cfg->yield_ns = v * 1000;
  /* More ranks than cores: a hop of a collective waits for its receiver to be scheduled, ~5-7 us on the project's
   * 2-core machine (the step of a 4-rank barrier over sm, doc/performance.md); the model must price that, not
   * the driver's 0.3 us, or it pipelines through ranks that are not running (doc/collectives.md). */
  v = 5;
  s = getenv("NMAD_OVERSUB_HOP_US");
  if (s && *s && (nm_config_parse_size(s, &v) || v > 1000000)) {
    fprintf(stderr, "nmad: NMAD_OVERSUB_HOP_US='%s' is invalid; accepted: microseconds from 0 to 1000000\n", s);
    return -NM_EINVAL;
  }
  cfg->oversub_hop_ns = job_oversubscribed ? (uint32_t)(v * 1000) : 0;
  return nm_config_load_progress(cfg);
}
