#!/bin/sh
# t_compat with 1, 2, 4, 8 ranks over shm and tcp
exec "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_compat
