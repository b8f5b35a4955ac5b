/**
 * @file nm_bench_anycast.c
 * @brief Latency of the rootless broadcast (nm_anycast.h) the way Li et al. 2018 measure it (section 3.1, fig. 4):
 * rank 0 starts --count anycasts in a tight loop, every other rank records when it has received all of them,
 * and the anycast finishing time is the longest of those times over the ranks; divided by --count it is the
 * latency per anycast the paper plots. Also printed: the latency of one lone anycast (start to the last rank's
 * reception). Made for nmad-sim (issue 19, benchmark 6b: bench/nm_bench_anycast_sim.sh); runs under nmad-run too
 * (then times are per host clock: one host only).
 *
 *   nmad-sim -n P --platform FILE [--ranks-per-host K] --cfg=network/model:CM02 ./nm_bench_anycast
 *            [--sizes 10,100,1000,10000] [--count 10000] [--check]
 *
 * One CSV line per size on rank 0: ranks,size,count,single_us,loop_us,per_anycast_us. Receivers take anycasts in a
 * handler (no receive to post; with --check it verifies every byte). A job barrier (free under nmad-sim) starts
 * each measurement; times are on nm_core_time_ns() (simulated time under nmad-sim). No global state.
 * Exit status: 0, or 1 on a bad option, an error, a missing anycast or bad data.
 */
#include <nmad/nm_anycast.h>
#include <nmad/nm_core.h>
#include <nmad/nm_errno.h>
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BA_TAG ((nm_tag_t)0xA7C0)
#define BA_TAG_TIME ((nm_tag_t)0xA7C1)
#define BA_MAX_SIZES 16
#define BA_DEADLINE_NS (600ULL * 1000000000ULL)

struct ba_state {
  nm_core_t core;
  int check, bad;
  long got;           /* anycasts received in this measurement */
  uint64_t last_ns;   /* time of the last one */
  size_t len;
};

static void ba_on_anycast(nm_anycast_t ac, int origin, nm_tag_t tag, const void *data, nm_len_t len, void *ref)
{
  struct ba_state *st = ref;
  st->got++;
  st->last_ns = nm_core_time_ns(st->core);
  if (origin != 0 || len != st->len)
    st->bad++;
  if (st->check)
    for (nm_len_t i = 0; i < len; i++)
      if (((const uint8_t *)data)[i] != (uint8_t)(i * 7 + tag))
        st->bad++;
}

/* The largest of every rank's @p mine, at rank 0 (others: 0). */
static uint64_t ba_max_at_0(nm_launcher_t l, nm_session_t s, int rank, int size, uint64_t mine)
{
  if (rank) {
    nm_sr_request_t r;
    if (nm_sr_isend(s, nm_launcher_gate_of(l, 0), BA_TAG_TIME, &mine, sizeof(mine), &r) == 0)
      nm_sr_swait(s, &r);
    return 0;
  }
  uint64_t m = mine;
  for (int p = 1; p < size; p++) {
    uint64_t v = 0;
    nm_sr_request_t r;
    if (nm_sr_irecv(s, nm_launcher_gate_of(l, p), BA_TAG_TIME, &v, sizeof(v), &r) == 0)
      nm_sr_rwait(s, &r);
    m = v > m ? v : m;
  }
  return m;
}

/* One measurement: rank 0 starts @p count anycasts of @p len bytes back to back; @return at rank 0 the longest
 * time (ns) from the start to a rank's last reception, or UINT64_MAX on a failure anywhere. */
static uint64_t ba_run(nm_launcher_t l, nm_session_t s, nm_anycast_t ac, struct ba_state *st, int rank, int size,
                       const uint8_t *data, size_t len, long count)
{
  nm_core_t core = st->core;
  st->got = 0;
  st->len = len;
  st->last_ns = 0;
  nm_launcher_barrier(l);
  uint64_t t0 = nm_core_time_ns(core), mine = 0;
  int fail = 0;
  if (rank == 0) {
    nm_anycast_req_t *reqs = calloc((size_t)count, sizeof(*reqs));
    fail = !reqs;
    for (long i = 0; i < count && !fail; i++)
      fail = nm_anycast_isend(ac, BA_TAG, data, len, &reqs[i]) != 0;
    for (long i = 0; i < count && !fail; i++)
      fail = nm_anycast_wait(ac, &reqs[i]) != 0;
    free(reqs);
  } else {
    uint64_t dl = t0 + BA_DEADLINE_NS;
    while (st->got < count && nm_core_time_ns(core) < dl)
      nm_core_wait(core, dl);
    fail = st->got != count || st->bad;
    mine = st->last_ns - t0;
  }
  fail |= nm_anycast_flush(ac, nm_core_time_ns(core) + BA_DEADLINE_NS) != 0; /* forward before the barrier */
  uint64_t worst = ba_max_at_0(l, s, rank, size, fail ? UINT64_MAX : mine);
  nm_launcher_barrier(l); /* no anycast of this run is still in flight when the next one starts */
  return worst;
}

static int ba_sizes(const char *s, size_t *out)
{
  int n = 0;
  while (*s && n < BA_MAX_SIZES) {
    char *end;
    out[n++] = strtoull(s, &end, 10);
    if (end == s)
      return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return n;
}

int main(int argc, char **argv)
{
  size_t sizes[BA_MAX_SIZES] = {10, 100, 1000, 10000};
  int nsizes = 4, check = 0;
  long count = 10000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      if ((nsizes = ba_sizes(argv[++i], sizes)) <= 0) {
        fprintf(stderr, "nm_bench_anycast: bad --sizes\n");
        return 1;
      }
    } else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
      count = strtol(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--check")) {
      check = 1;
    } else {
      fprintf(stderr, "usage: nm_bench_anycast [--sizes 10,100,1000,10000] [--count 10000] [--check]\n");
      return 1;
    }
  }
  if (count < 1) {
    fprintf(stderr, "nm_bench_anycast: --count must be >= 1\n");
    return 1;
  }
  nm_launcher_t l;
  if (nm_launcher_init(&l, &argc, &argv))
    return 1;
  int rank, size;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  nm_core_t core = nm_launcher_get_core(l);
  nm_session_t s;
  int rc = nm_session_open(core, "nm_bench_anycast", &s);
  struct ba_state st = {.core = core, .check = check};
  struct nm_coll_group_s all = {size, nm_launcher_gate_of, l, NULL, NULL};
  struct nm_anycast_params_s p = {.field_mask = NM_ANYCAST_PARAM_HANDLER, .handler = ba_on_anycast,
                                  .handler_ref = &st};
  nm_anycast_t ac = NULL;
  if (!rc)
    rc = nm_anycast_init(s, &all, rank, 0, &p, &ac);
  if (rc) {
    fprintf(stderr, "rank %d: set-up: %s\n", rank, nm_strerror(rc));
    return 1;
  }
  int status = 0;
  if (rank == 0)
    printf("ranks,size,count,single_us,loop_us,per_anycast_us\n");
  for (int k = 0; k < nsizes; k++) {
    uint8_t *data = malloc(sizes[k] + 1);
    for (size_t i = 0; i < sizes[k]; i++)
      data[i] = (uint8_t)(i * 7 + BA_TAG);
    uint64_t one = ba_run(l, s, ac, &st, rank, size, data, sizes[k], 1);
    uint64_t loop = ba_run(l, s, ac, &st, rank, size, data, sizes[k], count);
    free(data);
    if (rank == 0) {
      if (one == UINT64_MAX || loop == UINT64_MAX) {
        fprintf(stderr, "nm_bench_anycast: size %zu failed (missing anycast, error or bad data)\n", sizes[k]);
        status = 1;
        continue;
      }
      printf("%d,%zu,%ld,%.3f,%.3f,%.4f\n", size, sizes[k], count, one / 1e3, loop / 1e3, loop / 1e3 / count);
      fflush(stdout);
    }
  }
  while (nm_anycast_finalize(ac) == -NM_EBUSY)
    nm_core_progress(core);
  nm_session_close(s);
  nm_launcher_exit(l);
  return status;
}
