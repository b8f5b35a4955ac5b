#!/bin/sh
# MPIX split-tree collectives (tests/mpi/t_split.c) with 1 and 3 ranks (MATRIX_NPROCS overrides) over shm and tcp, the upper levels on
# the progress thread (NMAD_PROGRESS=thread); each run stopped after NMAD_TEST_TIMEOUT (60) s by tests/mpi/run.sh.
NMAD_PROGRESS=thread
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-60}
export NMAD_PROGRESS NMAD_TEST_TIMEOUT
MATRIX_NPROCS="${MATRIX_NPROCS:-1 3}" exec "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_split
