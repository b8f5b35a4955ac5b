#!/bin/sh
# MPIX split-tree collectives (tests/mpi/t_split.c) with 1, 3 and 4 ranks over shm and tcp, the upper levels on
# the progress thread (NMAD_PROGRESS=thread); every run bounded by tests/mpi/run.sh's timeout.
NMAD_PROGRESS=thread
export NMAD_PROGRESS
MATRIX_NPROCS="1 3 4" exec "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_split
