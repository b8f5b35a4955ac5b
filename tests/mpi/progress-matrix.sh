#!/bin/sh
# NMAD_PROGRESS=thread: t_progress (non-blocking operations complete while every rank computes without calling
# MPI) with 1, 2, 4 and 8 ranks over shm and tcp; then the point-to-point and collective tests with the progress
# thread running beside the application (the lock layer, doc/mpi.md), with 4 ranks over shm and tcp.
NMAD_PROGRESS=thread
export NMAD_PROGRESS
echo "NMAD_PROGRESS=thread"
fail=0
"$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_progress || fail=1
for prog in tests/mpi/t_p2p tests/mpi/t_icoll tests/mpi/t_coll tests/mpi/t_comm; do
  MATRIX_NPROCS=4 "$top_srcdir/tests/mpi/matrix.sh" "$prog" || fail=1
done
exit $fail
