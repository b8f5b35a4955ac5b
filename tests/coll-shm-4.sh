#!/bin/sh
# static broadcasts (binomial, naive) from every root, 4 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_coll
