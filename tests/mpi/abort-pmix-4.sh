#!/bin/sh
# MPI_Abort(MPI_COMM_WORLD, 7) on rank 1 of 4 under Open MPI's mpirun (PMIx_Abort): status 7
exec "$top_srcdir/tests/abort-run.sh" pmix shm 4 tests/mpi/t_abort 7
