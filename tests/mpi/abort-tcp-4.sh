#!/bin/sh
# MPI_Abort(MPI_COMM_WORLD, 300) on rank 1 of 4 over tcp ends every rank, status 44 (300 mod 256, as Open MPI)
exec "$top_srcdir/tests/abort-run.sh" nmad-run tcp 4 tests/mpi/t_abort 300
