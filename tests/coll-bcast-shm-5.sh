#!/bin/sh
# Hasanov 2015's eight broadcasts (tests/it_coll_bcast.c), 5 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 5 tests/it_coll_bcast
