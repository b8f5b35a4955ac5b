/* CHECK() shared by the MPI test programs (plain MPI: they also build with another MPI's mpicc). The including
 * file defines `static int rank` (its rank in MPI_COMM_WORLD) and `static int local_fail` (failures counted since
 * the last section) before including this. */
#ifndef T_CHECK_H
#define T_CHECK_H
#include <stdio.h>

#define CHECK(cond, ...)                                                                                       \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      local_fail++;                                                                                          \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank, __FILE__, __LINE__, #cond);               \
      fprintf(stderr, __VA_ARGS__);                                                                          \
      fputc('\n', stderr);                                                                                   \
    }                                                                                                        \
  } while (0)

#endif /* T_CHECK_H */
