/* libfabric is loaded only by the drivers that use it (drivers/ofi/nm_ofi_lib.h), driven by
 * tests/libfabric-lazy.sh.
 *   it_libfabric_lazy   every rank exchanges one message with its neighbours over the job's drivers, then prints
 *                       "rank R libfabric mapped" or "rank R libfabric absent" from /proc/self/maps; exit status
 *                       0, or 1 if a call failed or the maps could not be read. */
#include <nmad/nm_launcher.h>
#include <nmad/nm_sendrecv.h>
#include <stdio.h>
#include <string.h>

/* 1 if an object whose path contains "/libfabric.so" is mapped into this process, 0 if not, -1 on error. */
static int libfabric_mapped(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return -1;
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
  int rank, size;
  if (nm_launcher_init(&l, &argc, &argv) != 0)
    return 1;
  nm_launcher_get_rank(l, &rank);
  nm_launcher_get_size(l, &size);
  nm_session_t s;
  if (nm_session_open(nm_launcher_get_core(l), "it_libfabric_lazy", &s) != 0)
    return 1;
  int rc = 0;
  if (size > 1) { /* a ring exchange: the drivers really carried a message */
    nm_gate_t next, prev;
    nm_launcher_get_gate(l, (rank + 1) % size, &next);
    nm_launcher_get_gate(l, (rank + size - 1) % size, &prev);
    int out = rank, in = -1;
    nm_sr_request_t sr, rr;
    rc = nm_sr_irecv(s, prev, 1, &in, sizeof(in), &rr);
    if (!rc)
      rc = nm_sr_isend(s, next, 1, &out, sizeof(out), &sr);
    if (!rc)
      rc = nm_sr_swait(s, &sr);
    if (!rc)
      rc = nm_sr_rwait(s, &rr);
    if (!rc && in != (rank + size - 1) % size) {
      printf("FAIL rank %d: got %d from rank %d\n", rank, in, (rank + size - 1) % size);
      rc = 1;
    }
  }
  int mapped = libfabric_mapped();
  if (mapped < 0)
    rc = 1;
  else
    printf("rank %d libfabric %s\n", rank, mapped ? "mapped" : "absent");
  fflush(stdout);
  nm_session_close(s);
  nm_launcher_exit(l);
  return rc != 0;
}
