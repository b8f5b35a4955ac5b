#!/bin/sh
# MPI_Abort(MPI_COMM_WORLD, 7) on the last of 3 ranks: the job exits with 7
exec "$top_srcdir/tests/mpi/run.sh" --expect-rc 7 --expect-stderr MPI_Abort shm 3 tests/mpi/t_env abort
