#!/bin/sh
# Every forced algorithm of the collectives of collectives/ (doc/collectives.md, issue 18 deliverable 1), each
# through t_coll's section of its collective (counts 0, 1, 1000, 262144 ints; MPI_IN_PLACE or not; SUM on ints
# and on a strided type with a user op, MAX on doubles, a non-commutative user op (2x2 matrix product) contiguous
# and strided; results compared with a serial reference on world and on a split communicator). At 5 ranks
# (world 5, split 3 and 2: the non-power-of-two folds) over shm; the power-of-two-only algorithms also at 4;
# one MPI_I* run over tcp per family. Plus: an invalid value is refused with a message naming the variable.
fail=0
run() { # VAR=VALUE SECTION DRIVER N PROGRAM
  if env "$1" T_ONLY="$2" "$top_srcdir/tests/mpi/run.sh" "$3" "$4" "$5" >coll-algos.$$.log 2>&1; then
    echo "ok   $1 $2 $3 n=$4 $5"
  else
    echo "FAIL $1 $2 $3 n=$4 $5"; tail -n 20 coll-algos.$$.log; fail=1
  fi
}
for a in recursive_doubling rabenseifner ring; do
  run NMAD_ALLREDUCE_ALGO=$a allreduce shm 5 tests/mpi/t_coll
done
run NMAD_ALLREDUCE_ALGO=rabenseifner allreduce shm 4 tests/mpi/t_coll
run NMAD_ALLREDUCE_ALGO=ring allreduce tcp 3 tests/mpi/t_icoll
for a in binomial reduce_scatter_gather; do
  run NMAD_REDUCE_ALGO=$a reduce shm 5 tests/mpi/t_coll
done
run NMAD_REDUCE_ALGO=reduce_scatter_gather reduce tcp 3 tests/mpi/t_icoll
for a in binomial flat; do
  run NMAD_GATHER_ALGO=$a gather shm 5 tests/mpi/t_coll
  run NMAD_SCATTER_ALGO=$a scatter shm 5 tests/mpi/t_coll
done
run NMAD_GATHER_ALGO=binomial gather tcp 3 tests/mpi/t_icoll
run NMAD_SCATTER_ALGO=binomial scatter tcp 3 tests/mpi/t_icoll
for a in ring recursive_doubling bruck; do
  run NMAD_ALLGATHER_ALGO=$a allgather shm 5 tests/mpi/t_coll
done
run NMAD_ALLGATHER_ALGO=recursive_doubling allgather shm 4 tests/mpi/t_coll
run NMAD_ALLGATHER_ALGO=bruck allgather tcp 3 tests/mpi/t_icoll
for a in pairwise bruck; do
  run NMAD_ALLTOALL_ALGO=$a alltoall shm 5 tests/mpi/t_coll
done
run NMAD_ALLTOALL_ALGO=bruck alltoall tcp 3 tests/mpi/t_icoll
# an invalid override is an error of the call, not a silent default
for var in NMAD_ALLREDUCE_ALGO NMAD_REDUCE_ALGO NMAD_ALLGATHER_ALGO NMAD_ALLTOALL_ALGO NMAD_GATHER_ALGO \
           NMAD_SCATTER_ALGO; do
  sec=$(echo "$var" | sed 's/NMAD_\(.*\)_ALGO/\1/' | tr 'A-Z' 'a-z')
  if env "$var=no_such_algo" T_ONLY="$sec" "$top_srcdir/tests/mpi/run.sh" shm 2 tests/mpi/t_coll \
       >coll-algos.$$.log 2>&1; then
    echo "FAIL an invalid $var was accepted"; fail=1
  elif grep -q "$var='no_such_algo'" coll-algos.$$.log; then
    echo "ok   invalid $var refused and named"
  else
    echo "FAIL invalid $var: no message naming it"; tail -n 20 coll-algos.$$.log; fail=1
  fi
done
rm -f coll-algos.$$.log
exit $fail
