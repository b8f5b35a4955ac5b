#!/bin/sh
# The blocking small collectives without a schedule (tests/it_coll_eager.c), 4 ranks over drivers/sm (a power of
# two: the eager recursive-doubling allgather), mixed with members on schedules, data checked
exec "$top_srcdir/tests/it_run.sh" sm 4 tests/it_coll_eager
