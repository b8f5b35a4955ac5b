#!/bin/sh
# t_anycast (MPIX_Anycast*) with 1, 3 and 8 ranks over shm and tcp (MATRIX_NPROCS overrides); tests/mpi/run.sh
# bounds every run
MATRIX_NPROCS=${MATRIX_NPROCS:-1 3 8}
export MATRIX_NPROCS
exec "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_anycast
