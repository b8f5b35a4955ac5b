#!/bin/sh
# static broadcasts, 7 ranks on 2 cores (the binomial tree of Denis 2020 fig. 1), oversubscribed
exec "$top_srcdir/tests/it_run.sh" shm 7 tests/it_coll --quick
