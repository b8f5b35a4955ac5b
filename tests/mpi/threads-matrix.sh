#!/bin/sh
# MPI_THREAD_MULTIPLE (issue 16 deliverable 3, doc/mpi.md "Threads"): tests/mpi/t_threads (4 threads per rank in
# point-to-point rings with wildcards and probes, one more in non-blocking collectives) with 2 and 4 ranks over
# shm and tcp, without and with the progress thread. Each run is stopped after 120 s (tests/mpi/run.sh: mpirun's
# --timeout ends every rank).
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-120}
export NMAD_TEST_TIMEOUT
fail=0
for progress in poll thread; do
  echo "NMAD_PROGRESS=$progress"
  NMAD_PROGRESS=$progress MATRIX_NPROCS="2 4" "$top_srcdir/tests/mpi/matrix.sh" tests/mpi/t_threads || fail=1
done
exit $fail
