#!/bin/sh
# The hierarchical broadcast (tests/it_coll_bcast_hier.c): every pair of algorithms, several G, 0 B .. 16 MiB,
# 7 ranks over tcp
exec "$top_srcdir/tests/it_run.sh" tcp 7 tests/it_coll_bcast_hier
