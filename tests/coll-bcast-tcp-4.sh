#!/bin/sh
# Hasanov 2015's eight broadcasts (tests/it_coll_bcast.c), 4 ranks over tcp
exec "$top_srcdir/tests/it_run.sh" tcp 4 tests/it_coll_bcast
