#!/bin/sh
# an error under MPI_ERRORS_ARE_FATAL aborts the job with a message
exec "$top_srcdir/tests/mpi/run.sh" --expect-rc 6 --expect-stderr 'MPI error in' shm 3 tests/mpi/t_env fatal
