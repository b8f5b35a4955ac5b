/* MPIX_Anycast* (issue 19; doc/mpi.md, doc/anycast.md): every rank of MPI_COMM_WORLD, then of each half of a split
 * communicator, originates two anycasts (8 ints with tag 1, 1,000 ints with tag 2) without any other rank knowing;
 * every other member receives them with MPIX_Anycast_irecv(MPI_ANY_TAG): the status names the origin's rank in
 * the communicator, the tag and the size; per origin and tag in order; data checked; each exactly once. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static int rank, local_fail;
#include "t_check.h"

static int value(int origin, int tag, int i) { return origin * 100000 + tag * 10000 + i; }

static void run(MPI_Comm comm, const char *what)
{
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  MPIX_Anycast ac;
  CHECK(MPIX_Anycast_create(comm, &ac) == MPI_SUCCESS, "%s: create", what);
  int out1[8], *out2 = malloc(sizeof(int) * 1000), *in = malloc(sizeof(int) * 1000);
  for (int i = 0; i < 8; i++)
    out1[i] = value(me, 1, i);
  for (int i = 0; i < 1000; i++)
    out2[i] = value(me, 2, i);
  MPI_Request s[2];
  CHECK(MPIX_Ianycast(out1, 8, MPI_INT, 1, ac, &s[0]) == MPI_SUCCESS, "%s: anycast", what);
  CHECK(MPIX_Ianycast(out2, 1000, MPI_INT, 2, ac, &s[1]) == MPI_SUCCESS, "%s: anycast", what);
  int *seen = calloc((size_t)n * 3, sizeof(int));
  for (int k = 0; k < 2 * (n - 1); k++) {
    MPI_Request r;
    MPI_Status st;
    memset(in, 0, sizeof(int) * 1000);
    CHECK(MPIX_Anycast_irecv(in, 1000, MPI_INT, MPI_ANY_TAG, ac, &r) == MPI_SUCCESS, "%s: irecv", what);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS, "%s: wait", what);
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    int o = st.MPI_SOURCE, t = st.MPI_TAG;
    CHECK(o >= 0 && o < n && o != me && (t == 1 || t == 2), "%s: origin %d tag %d", what, o, t);
    if (!(o >= 0 && o < n && o != me && (t == 1 || t == 2)))
      continue;
    CHECK(cnt == (t == 1 ? 8 : 1000), "%s: %d ints from %d", what, cnt, o);
    for (int i = 0; i < cnt && i < 1000; i++)
      if (in[i] != value(o, t, i)) {
        CHECK(0, "%s: anycast %d of %d: int %d is %d", what, t, o, i, in[i]);
        break;
      }
    seen[o * 3 + t]++;
  }
  for (int o = 0; o < n; o++)
    CHECK(seen[o * 3 + 1] == (o != me) && seen[o * 3 + 2] == (o != me), "%s: origin %d seen %d, %d times", what,
          o, seen[o * 3 + 1], seen[o * 3 + 2]);
  CHECK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "%s: origin's sends", what);
  MPI_Barrier(comm); /* nobody frees while the others may still forward through it */
  CHECK(MPIX_Anycast_free(&ac) == MPI_SUCCESS && ac == NULL, "%s: free", what);
  free(seen);
  free(out2);
  free(in);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  run(MPI_COMM_WORLD, "world");
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half); /* reversed order: comm ranks differ from world ranks */
  run(half, "half");
  MPI_Comm_free(&half);
  int fail = 0;
  MPI_Allreduce(&local_fail, &fail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("t_anycast: %s\n", fail ? "FAIL" : "ok");
  MPI_Finalize();
  return fail ? 1 : 0;
}
