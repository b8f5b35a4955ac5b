/* Flow control between real processes (issue 14, part 3): every rank but 0 floods rank 0 with eager-size
 * messages while rank 0 progresses for a while without posting a receive. Rank 0's unexpected eager data must
 * stay within NMAD_EAGER_CREDIT per sender (nm_core_get_stats()), the senders must have switched to rendezvous,
 * and once rank 0 posts its receives every message arrives intact and in order.
 *
 * Usage: it_flood [messages per sender (default 2000)] [idle seconds of rank 0 (default 2)] */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
#include "it_common.h"

#define MAX_LEN (32u << 10) /* the default rendezvous threshold: every message is eager-sized */
#define TAG 21
#define HANG_GUARD_NS (120ULL * 1000000000ULL)

static size_t msg_len(int src, int i) { return (size_t)(mix((uint64_t)src << 32 | (unsigned)i) % (MAX_LEN + 1)); }
static uint64_t msg_seed(int src, int i) { return (uint64_t)src << 40 | (unsigned)i; }

/* Resident set size in KiB (VmHWM: the peak), for the log only. */
static long peak_rss_kib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof(line), f))
    if (sscanf(line, "VmHWM: %ld", &v) == 1)
      break;
  if (f)
    fclose(f);
  return v;
}

static void flood(nm_session_t s, nm_gate_t to, int n)
{
  uint8_t **bufs = calloc((size_t)n, sizeof(*bufs));
  nm_sr_request_t *reqs = calloc((size_t)n, sizeof(*reqs));
  CHECK(bufs && reqs, "out of memory");
  for (int i = 0; i < n; i++) {
    size_t len = msg_len(rank, i);
    bufs[i] = malloc(len ? len : 1);
    CHECK(bufs[i], "out of memory");
    fill(bufs[i], len, msg_seed(rank, i));
    CHECK_RC(nm_sr_isend(s, to, TAG, bufs[i], len, &reqs[i]), "isend");
  }
  uint64_t guard = nm_core_time_ns(nm_session_get_core(s)) + HANG_GUARD_NS;
  for (int i = 0; i < n; i++) {
    CHECK_RC(nm_sr_wait_deadline(s, &reqs[i], guard), "send wait");
    free(bufs[i]);
  }
  free(bufs);
  free(reqs);
}

/* Rank 0: progress without receiving, then check the bound, then receive everything. */
static void drain(nm_launcher_t l, nm_session_t s, int size, int n, double idle_s)
{
  nm_core_t core = nm_launcher_get_core(l);
  uint64_t until = nm_core_time_ns(core) + (uint64_t)(idle_s * 1e9);
  while (nm_core_time_ns(core) < until)
    nm_core_wait(core, until);
  struct nm_core_stats_s st;
  nm_core_get_stats(core, &st);
  const char *env = getenv("NMAD_EAGER_CREDIT");
  uint64_t window = 1u << 20;
  if (env && *env) {
    char *end;
    window = strtoull(env, &end, 10) << (*end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0);
  }
  uint64_t cap = window * (uint64_t)(size - 1);
  printf("rank 0: after %.1f s without receives: unexpected eager data %llu bytes, peak %llu, cap %llu "
         "(%d senders x %llu); peak RSS %ld KiB\n", idle_s, (unsigned long long)st.unexpected_bytes,
         (unsigned long long)st.unexpected_bytes_peak, (unsigned long long)cap, size - 1,
         (unsigned long long)window, peak_rss_kib());
  CHECK(st.unexpected_bytes_peak <= cap, "unexpected eager data %llu above the cap %llu",
        (unsigned long long)st.unexpected_bytes_peak, (unsigned long long)cap);
  uint8_t *buf = malloc(MAX_LEN);
  CHECK(buf, "out of memory");
  uint64_t guard = nm_core_time_ns(core) + HANG_GUARD_NS;
  for (int i = 0; i < n; i++)
    for (int src = 1; src < size; src++) {
      nm_gate_t g;
      nm_launcher_get_gate(l, src, &g);
      nm_sr_request_t r;
      CHECK_RC(nm_sr_irecv(s, g, TAG, buf, MAX_LEN, &r), "irecv");
      CHECK_RC(nm_sr_wait_deadline(s, &r, guard), "recv wait");
      size_t len = msg_len(src, i);
      nm_len_t got = 0;
      nm_sr_get_size(s, &r, &got);
      CHECK(got == len, "message %d of rank %d: %zu bytes, expected %zu (lost or out of order)", i, src, got, len);
      long bad = verify(buf, len, msg_seed(src, i));
      CHECK(bad < 0, "message %d of rank %d: byte %ld differs", i, src, bad);
    }
  free(buf);
  nm_core_get_stats(core, &st);
  CHECK(st.unexpected_bytes == 0, "%llu bytes still held", (unsigned long long)st.unexpected_bytes);
  printf("rank 0: %d messages from each of %d senders received intact and in order; %llu CREDIT chunks sent\n", n,
         size - 1, (unsigned long long)st.credit_chunks_sent);
}

int main(int argc, char **argv)
{
  nm_launcher_t l;
  int size;
  if (nm_launcher_init(&l, &argc, &argv) != 0)
    return 1;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  double idle_s = argc > 2 ? atof(argv[2]) : 2.0;
  CHECK(size >= 2 && n > 0, "run with 2 ranks or more");
  nm_session_t s;
  CHECK_RC(nm_session_open(nm_launcher_get_core(l), "it_flood", &s), "session");
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  if (rank == 0) {
    drain(l, s, size, n, idle_s);
  } else {
    nm_gate_t g0;
    nm_launcher_get_gate(l, 0, &g0);
    flood(s, g0, n);
    struct nm_core_stats_s st;
    nm_core_get_stats(nm_launcher_get_core(l), &st);
    printf("rank %d: %d messages sent, %llu by rendezvous for lack of credit\n", rank, n,
           (unsigned long long)st.rdv_for_credit);
    CHECK(st.rdv_for_credit > 0, "the flood never ran out of credit: the test shows nothing");
  }
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  CHECK_RC(nm_launcher_exit(l), "nm_launcher_exit");
  printf("PASS rank %d\n", rank);
  return 0;
}
