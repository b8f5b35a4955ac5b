#!/bin/sh
# rpc (active messages) between 2 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 2 tests/it_rpc
