#!/bin/sh
# The hierarchical broadcast (tests/it_coll_bcast_hier.c): every pair of algorithms, several G, 0 B .. 16 MiB,
# 5 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 5 tests/it_coll_bcast_hier
