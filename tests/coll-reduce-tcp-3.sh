#!/bin/sh
# The native reductions and barrier (tests/it_coll_reduce.c): every allreduce and reduce algorithm, a commutative
# and a non-commutative operator, 0 .. 65537 elements, results checked against a serial reference; 3 ranks over tcp
exec "$top_srcdir/tests/it_run.sh" tcp 3 tests/it_coll_reduce
