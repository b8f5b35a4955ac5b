/* libfabric is loaded only by the drivers that use it (drivers/ofi/nm_ofi_lib.h), driven by
 * tests/libfabric-lazy.sh.
 *   it_libfabric_lazy   every rank exchanges one message with its neighbours over the job's drivers, then prints
 *                       "rank R libfabric mapped" or "rank R libfabric absent" from /proc/self/maps; exit status
 *                       0, or 1 if a call failed or the maps could not be read (CHECK). */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <string.h>

static int rank; /* printed by CHECK */
#include "it_common.h"

/* Whether an object whose path contains "/libfabric.so" is mapped into this process. */
static int libfabric_mapped(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  CHECK(f, "cannot read /proc/self/maps");
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof(line), f))
    found = strstr(line, "/libfabric.so") != NULL;
  fclose(f);
  return found;
}

int main(int argc, char **argv)
{
  nm_launcher_t l;
  int size;
  nm_session_t s;
  CHECK_RC(nm_launcher_init(&l, &argc, &argv), "nm_launcher_init");
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  CHECK_RC(nm_session_open(nm_launcher_get_core(l), "it_libfabric_lazy", &s), "nm_session_open");
  if (size > 1) { /* a ring exchange: the drivers really carried a message */
    const int from = (rank + size - 1) % size;
    nm_gate_t next, prev;
    nm_launcher_get_gate(l, (rank + 1) % size, &next);
    nm_launcher_get_gate(l, from, &prev);
    int out = rank, in = -1;
    nm_sr_request_t sr, rr;
    CHECK_RC(nm_sr_irecv(s, prev, 1, &in, sizeof(in), &rr), "nm_sr_irecv");
    CHECK_RC(nm_sr_isend(s, next, 1, &out, sizeof(out), &sr), "nm_sr_isend");
    CHECK_RC(nm_sr_swait(s, &sr), "nm_sr_swait");
    CHECK_RC(nm_sr_rwait(s, &rr), "nm_sr_rwait");
    CHECK(in == from, "got %d from rank %d", in, from);
  }
  printf("rank %d libfabric %s\n", rank, libfabric_mapped() ? "mapped" : "absent");
  fflush(stdout);
  nm_session_close(s);
  nm_launcher_exit(l);
  return 0;
}
