#!/bin/sh
# The hierarchical broadcast (tests/it_coll_bcast_hier.c): every pair of algorithms, several G, 0 B .. 16 MiB,
# 3 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 3 tests/it_coll_bcast_hier
