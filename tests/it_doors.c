/* The doors of a running job (doc/reliability.md, "Authenticated sources and closed doors"), driven by
 * tests/doors-run.sh: it_doors DIR [FOREIGN UNKNOWN]
 *
 * Every rank writes its pid to DIR/pid.RANK; rank 0 also writes what a stranger needs to aim at it: its endpoint
 * address (DIR/addr, hex) and the id of the session the test uses (DIR/session). Then the ranks keep progressing
 * until DIR/go exists (the script meanwhile looks at their sockets with ss, and may let an intruder send packets
 * to rank 0). Rank 0 has a receive posted from rank 1 on tag DOORS_TAG the whole time: an intruder's packet that
 * got in as rank 1 would land there instead of rank 1's message. After go, rank 0 waits until its refusal counters
 * reach FOREIGN and UNKNOWN (default 0 0), checks them exactly, and every rank passes a message around the ring.
 * The private core header is used only to read rank 0's address and session id. */
#include "nmad/core/nm_core_private.h"
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOORS_TAG 7
#define GUARD_NS (60ULL * 1000000000ULL) /* only against a hang: nothing is timed */

static int rank;
#include "it_common.h"

static void put_text(const char *dir, const char *name, const char *text)
{
  char path[512], tmp[520];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0 && rename(tmp, path) == 0, "cannot write %s", path);
}

/* Rank 0's endpoint address on its first network rail, as hex. */
static void put_address(nm_core_t core, const char *dir)
{
  uint8_t addr[NM_DRV_ADDR_MAX];
  size_t len = sizeof(addr);
  struct nm_drv_s *drv = &core->drvs[0]; /* the launcher adds the network rails first */
  CHECK_RC(drv->ops->get_address(drv, addr, &len), "get_address");
  char hex[2 * NM_DRV_ADDR_MAX + 2];
  for (size_t i = 0; i < len; i++)
    snprintf(hex + 2 * i, 3, "%02x", addr[i]);
  strcat(hex, "\n");
  put_text(dir, "addr", hex);
}

static int file_exists(const char *dir, const char *name)
{
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

/* Progress until the script says go (the intruder, if any, is done). */
static void hold(nm_core_t core, const char *dir)
{
  uint64_t end = nm_core_time_ns(core) + GUARD_NS;
  while (!file_exists(dir, "go")) {
    CHECK(nm_core_time_ns(core) < end, "no %s/go after 60 s", dir);
    nm_core_progress(core);
    usleep(1000);
  }
}

/* Rank 0: the intruder's packets are in its socket buffers or already refused; wait for the counts. */
static void check_refused(nm_core_t core, uint64_t foreign, uint64_t unknown)
{
  struct nm_core_refused_s r;
  uint64_t end = nm_core_time_ns(core) + GUARD_NS;
  for (;;) {
    CHECK_RC(nm_core_get_refused(core, &r), "nm_core_get_refused");
    if ((r.foreign >= foreign && r.unknown_source >= unknown) || nm_core_time_ns(core) > end)
      break;
    nm_core_progress(core);
    usleep(1000);
  }
  printf("rank 0: refused %llu foreign packets and %llu from unknown sources\n", (unsigned long long)r.foreign,
         (unsigned long long)r.unknown_source);
  CHECK(r.foreign == foreign && r.unknown_source == unknown, "expected %llu foreign and %llu unknown-source",
        (unsigned long long)foreign, (unsigned long long)unknown);
}

int main(int argc, char **argv)
{
  nm_launcher_t l;
  int size;
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: it_doors DIR [FOREIGN UNKNOWN]\n");
    return 2;
  }
  const char *dir = argv[1];
  CHECK_RC(nm_launcher_init(&l, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  CHECK(size >= 2, "run with 2 ranks or more");
  nm_core_t core = nm_launcher_get_core(l);
  nm_session_t s;
  CHECK_RC(nm_session_open(core, "it_doors", &s), "nm_session_open");
  nm_gate_t next, prev;
  CHECK_RC(nm_launcher_get_gate(l, (rank + 1) % size, &next), "gate");
  CHECK_RC(nm_launcher_get_gate(l, (rank + size - 1) % size, &prev), "gate");
  char in[32] = "", out[32];
  nm_sr_request_t rr, sr;
  CHECK_RC(nm_sr_irecv(s, prev, DOORS_TAG, in, sizeof(in), &rr), "irecv");
  char text[64], name[32];
  snprintf(text, sizeof(text), "%d\n", (int)getpid());
  snprintf(name, sizeof(name), "pid.%d", rank);
  put_text(dir, name, text);
  if (rank == 0) {
    put_address(core, dir);
    snprintf(text, sizeof(text), "%u\n", (unsigned)s->id);
    put_text(dir, "session", text);
  }
  CHECK_RC(nm_launcher_barrier(l), "barrier");
  if (rank == 0)
    put_text(dir, "ready", "1\n");
  hold(core, dir);
  if (rank == 0 && argc == 4)
    check_refused(core, strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
  else if (rank == 0)
    check_refused(core, 0, 0);
  snprintf(out, sizeof(out), "ring from %d", rank);
  CHECK_RC(nm_sr_isend(s, next, DOORS_TAG, out, strlen(out) + 1, &sr), "isend");
  CHECK_RC(nm_sr_swait(s, &sr), "swait");
  CHECK_RC(nm_sr_rwait(s, &rr), "rwait");
  char want[32];
  snprintf(want, sizeof(want), "ring from %d", (rank + size - 1) % size);
  CHECK(strcmp(in, want) == 0, "got '%s' instead of '%s'", in, want);
  NM_CORE_FOR_GATES(core, g)
    CHECK(g->status == 0, "gate %d failed: %s", g->rank, nm_strerror(g->status));
  printf("PASS rank %d\n", rank);
  return nm_launcher_exit(l) ? 1 : 0;
}
