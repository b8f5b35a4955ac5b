#!/bin/sh
# MPI_Abort(MPI_COMM_WORLD, 7) on rank 1 of 4 over shm ends every rank, status 7
exec "$top_srcdir/tests/abort-run.sh" nmad-run shm 4 tests/mpi/t_abort 7
