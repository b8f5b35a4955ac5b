#!/bin/sh
# Every forced algorithm of the collectives of collectives/ (doc/collectives.md, issue 18 deliverable 1), through
# t_coll's sections of the reductions (reduce-scatter's recursive halving and pairwise included, unequal and empty
# pieces), gathers, scatters, allgathers and all-to-alls (counts 0, 1, 1000, 262144
# ints; every root; MPI_IN_PLACE or not; SUM on ints and on a strided type with a user op, MAX on doubles, a
# non-commutative user op (2x2 matrix product) contiguous and strided; results compared with a serial reference;
# on world and on a split communicator). Each run forces one algorithm per collective (NMAD_<COLL>_ALGO; the
# sections use only their own collective plus MPI_Allreduce for the verdict), so that three runs at 5 ranks over
# shm (world 5, split 3 and 2: the non-power-of-two folds) cover every value, one at 4 ranks the power-of-two-only
# paths, and one MPI_I* run over tcp the non-blocking versions. Plus: an invalid value is refused with a message
# naming the variable.
fail=0
sections=reduce,gather,scatter,alltoall,allgather
run() { # DRIVER N PROGRAM VAR=VALUE...
  drv=$1 n=$2 prog=$3
  shift 3
  if env "$@" T_ONLY=$sections "$top_srcdir/tests/mpi/run.sh" "$drv" "$n" "$prog" >coll-algos.$$.log 2>&1; then
    echo "ok   $drv n=$n $prog $*"
  else
    echo "FAIL $drv n=$n $prog $*"; grep FAIL coll-algos.$$.log | head -n 10; tail -n 20 coll-algos.$$.log; fail=1
  fi
}
run shm 5 tests/mpi/t_coll NMAD_ALLREDUCE_ALGO=recursive_doubling NMAD_REDUCE_ALGO=binomial \
  NMAD_REDUCE_SCATTER_ALGO=recursive_halving NMAD_ALLGATHER_ALGO=ring NMAD_ALLTOALL_ALGO=pairwise NMAD_GATHER_ALGO=binomial NMAD_SCATTER_ALGO=flat
run shm 5 tests/mpi/t_coll NMAD_ALLREDUCE_ALGO=rabenseifner NMAD_REDUCE_ALGO=reduce_scatter_gather \
  NMAD_REDUCE_SCATTER_ALGO=pairwise NMAD_ALLGATHER_ALGO=recursive_doubling NMAD_ALLTOALL_ALGO=bruck NMAD_GATHER_ALGO=flat NMAD_SCATTER_ALGO=binomial
run shm 5 tests/mpi/t_coll NMAD_ALLREDUCE_ALGO=ring NMAD_ALLGATHER_ALGO=bruck NMAD_REDUCE_SCATTER_ALGO=reduce_then_scatter \
  NMAD_ALLTOALL_ALGO=linear
run shm 4 tests/mpi/t_coll NMAD_ALLREDUCE_ALGO=rabenseifner NMAD_REDUCE_ALGO=reduce_scatter_gather \
  NMAD_REDUCE_SCATTER_ALGO=recursive_halving NMAD_ALLGATHER_ALGO=recursive_doubling NMAD_ALLTOALL_ALGO=bruck
run shm 5 tests/mpi/t_coll NMAD_ALLGATHER_ALGO=linear NMAD_BARRIER_ALGO=linear
run tcp 3 tests/mpi/t_icoll NMAD_ALLREDUCE_ALGO=ring NMAD_REDUCE_ALGO=reduce_scatter_gather NMAD_REDUCE_SCATTER_ALGO=pairwise \
  NMAD_ALLGATHER_ALGO=bruck NMAD_ALLTOALL_ALGO=bruck NMAD_GATHER_ALGO=binomial NMAD_SCATTER_ALGO=binomial
# an invalid override is an error of the call, not a silent default
for var in NMAD_ALLREDUCE_ALGO NMAD_REDUCE_ALGO NMAD_ALLGATHER_ALGO NMAD_ALLTOALL_ALGO NMAD_GATHER_ALGO \
           NMAD_SCATTER_ALGO NMAD_REDUCE_SCATTER_ALGO NMAD_BARRIER_ALGO; do
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
