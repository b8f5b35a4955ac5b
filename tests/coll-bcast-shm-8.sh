#!/bin/sh
# Hasanov 2015's eight broadcasts (tests/it_coll_bcast.c), 8 ranks over shm, oversubscribed, no 16 MiB
exec "$top_srcdir/tests/it_run.sh" shm 8 tests/it_coll_bcast --quick
