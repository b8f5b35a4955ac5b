#!/bin/sh
# MPI_Bcast and MPI_Ibcast (t_coll / t_icoll, bcast section: counts 0, 1, 1000, 262144 ints, contiguous and
# strided types, every root, data and holes checked) with each broadcast algorithm forced by NMAD_BCAST_ALGO
# (doc/collectives.md): MPI_Bcast at 5 ranks over shm, MPI_Ibcast at 3 over tcp for some; plus a pipelined chain
# whose segment (1000 bytes) divides none of the lengths. Issue 17, deliverables 4 and 6.
fail=0
for algo in flat chain pipelined_chain pipelined_chain:segment=1000 binary split_binary binomial scatter_ring \
            scatter_rd hier:chain:groups=2 hier:scatter_ring:groups=2 hier:pipelined_chain:segment=1000; do
  runs="shm 5 tests/mpi/t_coll"
  # MPI_Ibcast runs the same builders as MPI_Bcast: over tcp for the algorithms with the most rounds only
  case $algo in pipelined_chain:* | split_binary | scatter_ring | hier:*) runs="$runs|tcp 3 tests/mpi/t_icoll" ;; esac
  IFS='|'; set -f; set -- $runs; unset IFS; set +f
  for run in "$@"; do
    # shellcheck disable=SC2086
    if NMAD_BCAST_ALGO=$algo T_ONLY=bcast "$top_srcdir/tests/mpi/run.sh" $run >bcast-algos.$$.log 2>&1; then
      echo "ok   $algo $run"
    else
      echo "FAIL $algo $run"; tail -n 20 bcast-algos.$$.log; fail=1
    fi
  done
done
# an invalid override is an error of the call, not a silent default
if NMAD_BCAST_ALGO=no_such_algo T_ONLY=bcast "$top_srcdir/tests/mpi/run.sh" shm 2 tests/mpi/t_coll \
     >bcast-algos.$$.log 2>&1; then
  echo "FAIL an invalid NMAD_BCAST_ALGO was accepted"; fail=1
elif grep -q "no_such_algo" bcast-algos.$$.log; then
  echo "ok   invalid NMAD_BCAST_ALGO refused and named"
else
  echo "FAIL invalid NMAD_BCAST_ALGO: no message naming it"; tail -n 20 bcast-algos.$$.log; fail=1
fi
rm -f bcast-algos.$$.log
exit $fail
