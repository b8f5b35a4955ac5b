#!/bin/sh
# Run one MPI test program with 1, 2, 4 and 8 ranks over sm (nmad's own shared memory, the default on one host)
# and over tcp (loopback):
#   tests/mpi/matrix.sh PROGRAM [ARGS...]     (PROGRAM relative to $top_builddir)
# MATRIX_NPROCS overrides the rank counts (e.g. "4"); MATRIX_DRIVERS the drivers (e.g. "shm", libfabric's, which
# the it_* tests over shm and coll-algos.sh / bcast-algos.sh still cover).
# Every run is bounded by tests/mpi/run.sh's timeout; the exit status is 0 only if every run passed.
prog=$1
shift
fail=0
for drv in ${MATRIX_DRIVERS:-sm tcp}; do
  for n in ${MATRIX_NPROCS:-1 2 4 8}; do
    if "$top_srcdir/tests/mpi/run.sh" "$drv" "$n" "$prog" "$@" >matrix.$$.log 2>&1; then
      echo "ok   $prog $drv n=$n"
    else
      echo "FAIL $prog $drv n=$n"; tail -n 20 matrix.$$.log; fail=1
    fi
  done
done
rm -f matrix.$$.log
exit $fail
