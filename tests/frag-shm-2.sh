#!/bin/sh
# 2 ranks over shm (inject size 4096 B): eager messages around 1-3 inject sizes, cut and reassembled
exec "$top_srcdir/tests/it_run.sh" shm 2 tests/it_frag
