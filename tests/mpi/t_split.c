/* MPIX split-tree collectives (nmad only; doc/mpi.md, doc/split-tree.md): MPIX_Ibcast_split, MPIX_Ireduce_split
 * (MPI_SUM on ints), MPIX_Igather_split and MPIX_Iscatter_split from every root, for S = auto and every S from 0
 * to ceil(log2 size), interleaved with ordinary MPI collectives on the same communicator, results checked; then
 * the refused arguments (non-contiguous type, non-commutative operation, MPI_IN_PLACE).
 * Output: "PASS <what>" on rank 0; exit status 1 on the first failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 5000 /* ints per member */

static int rank, size;

#define CHECK(cond, ...)                                                                                           \
  do {                                                                                                             \
    if (!(cond)) {                                                                                                 \
      fprintf(stderr, "FAIL rank %d line %d: ", rank, __LINE__);                                                   \
      fprintf(stderr, __VA_ARGS__);                                                                                \
      fprintf(stderr, "\n");                                                                                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                                \
    }                                                                                                              \
  } while (0)

static int val(int member, int j, int S) { return member * 100003 + j * 7 + S * 11; }

static void noncommutative(void *in, void *inout, int *len, MPI_Datatype *dt) { (void)in, (void)inout, (void)len, (void)dt; }

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int h = 0;
  while ((1 << h) < size)
    h++;
  int *a = malloc(sizeof(int) * N * size), *b = malloc(sizeof(int) * N * size);
  CHECK(a && b, "out of memory");
  for (int root = 0; root < size; root++) {
    for (int S = -1; S <= h; S++) {
      MPIX_Split_request req;
      int used;
      /* broadcast */
      for (int j = 0; j < N; j++)
        a[j] = rank == root ? val(root, j, S) : -1;
      CHECK(MPIX_Ibcast_split(a, N, MPI_INT, root, MPI_COMM_WORLD, S, &req) == MPI_SUCCESS, "Ibcast_split");
      MPI_Barrier(MPI_COMM_WORLD); /* an ordinary collective while the split one is in flight */
      CHECK(MPIX_Split_wait(&req, &used) == MPI_SUCCESS && req == NULL, "Split_wait (bcast)");
      CHECK(S < 0 || used == S, "bcast: S %d asked, %d used", S, used);
      for (int j = 0; j < N; j++)
        CHECK(a[j] == val(root, j, S), "bcast root %d S %d: int %d", root, S, j);
      /* reduce */
      for (int j = 0; j < N; j++)
        a[j] = val(rank, j, S);
      CHECK(MPIX_Ireduce_split(a, b, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, S, &req) == MPI_SUCCESS,
            "Ireduce_split");
      CHECK(MPIX_Split_wait(&req, NULL) == MPI_SUCCESS, "Split_wait (reduce)");
      if (rank == root)
        for (int j = 0; j < N; j++) {
          int want = 0;
          for (int m = 0; m < size; m++)
            want += val(m, j, S);
          CHECK(b[j] == want, "reduce root %d S %d: int %d is %d, not %d", root, S, j, b[j], want);
        }
      /* gather */
      for (int j = 0; j < N; j++)
        a[j] = val(rank, j, S + 50);
      CHECK(MPIX_Igather_split(a, b, N, MPI_INT, root, MPI_COMM_WORLD, S, &req) == MPI_SUCCESS, "Igather_split");
      CHECK(MPIX_Split_wait(&req, NULL) == MPI_SUCCESS, "Split_wait (gather)");
      if (rank == root)
        for (int m = 0; m < size; m++)
          for (int j = 0; j < N; j++)
            CHECK(b[m * N + j] == val(m, j, S + 50), "gather root %d S %d: member %d int %d", root, S, m, j);
      /* scatter */
      if (rank == root)
        for (int m = 0; m < size; m++)
          for (int j = 0; j < N; j++)
            a[m * N + j] = val(m, j, S + 90);
      CHECK(MPIX_Iscatter_split(a, b, N, MPI_INT, root, MPI_COMM_WORLD, S, &req) == MPI_SUCCESS, "Iscatter_split");
      CHECK(MPIX_Split_wait(&req, NULL) == MPI_SUCCESS, "Split_wait (scatter)");
      for (int j = 0; j < N; j++)
        CHECK(b[j] == val(rank, j, S + 90), "scatter root %d S %d: int %d", root, S, j);
    }
  }
  if (rank == 0)
    printf("PASS MPIX split collectives, every root, S = auto and 0..%d\n", h);
  MPIX_Split_request req;
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  CHECK(MPIX_Ibcast_split(a, 1, vec, 0, MPI_COMM_WORLD, 0, &req) == MPI_ERR_TYPE, "non-contiguous type accepted");
  MPI_Type_free(&vec);
  MPI_Op op;
  MPI_Op_create(noncommutative, 0, &op);
  CHECK(MPIX_Ireduce_split(a, b, 1, MPI_INT, op, 0, MPI_COMM_WORLD, 0, &req) == MPI_ERR_OP,
        "non-commutative operation accepted");
  MPI_Op_free(&op);
  CHECK(MPIX_Igather_split(MPI_IN_PLACE, b, 1, MPI_INT, 0, MPI_COMM_WORLD, 0, &req) == MPI_ERR_BUFFER,
        "MPI_IN_PLACE accepted");
  if (rank == 0)
    printf("PASS MPIX split arguments\n");
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
