#!/bin/sh
# MPI_Abort(MPI_COMM_WORLD, 7) alone (singleton) exits with 7
exec "$top_srcdir/tests/abort-run.sh" singleton none 1 tests/mpi/t_abort 7
