#!/bin/sh
# dynamic broadcasts among 4 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_mcast
