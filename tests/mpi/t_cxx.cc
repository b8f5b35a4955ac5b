// A C++ MPI program built by nmad's mpicxx (tests/mpi/wrappers.sh): mpi.h must be usable from C++ as it is, the
// way C++ benchmark drivers (IMB 2019+) include it. Checks an Allreduce and a ring exchange; exit status 0 = pass.
#include <mpi.h>
#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long sum = 0, mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int bad = sum != (long)size * (size + 1) / 2;
  std::vector<int> out(1000, rank), in(1000, -1);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Sendrecv(out.data(), (int)out.size(), MPI_INT, next, 7, in.data(), (int)in.size(), MPI_INT, prev, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int v : in)
    bad |= v != prev;
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("t_cxx: %s (%d ranks)\n", any_bad ? "FAIL" : "pass", size);
  MPI_Finalize();
  return any_bad ? 1 : 0;
}
