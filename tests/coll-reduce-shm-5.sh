#!/bin/sh
# The native reductions and barrier (tests/it_coll_reduce.c): every allreduce and reduce algorithm, a commutative
# and a non-commutative operator, 0 .. 65537 elements, results checked against a serial reference; 5 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 5 tests/it_coll_reduce
