#!/bin/sh
# t_coll with 1, 3 and 8 ranks over shm and tcp (one rank, a non-power of two, a power of two; 4 and 5 ranks run in
# coll-algos.sh; MATRIX_NPROCS overrides)
MATRIX_NPROCS=${MATRIX_NPROCS:-1 3 8}
export MATRIX_NPROCS
exec "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_coll
