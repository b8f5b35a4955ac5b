#!/bin/sh
# The blocking small gather and scatter without a schedule (tests/it_coll_eager.c), 5 ranks over drivers/sm
# (its sends leave at post without a request), mixed with members on schedules, data checked
exec "$top_srcdir/tests/it_run.sh" sm 5 tests/it_coll_eager
