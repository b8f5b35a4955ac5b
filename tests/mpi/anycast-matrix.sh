#!/bin/sh
# t_anycast (MPIX_Anycast*) with 1, 2, 4, 8 ranks over shm and tcp; tests/mpi/run.sh bounds every run
exec "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_anycast
