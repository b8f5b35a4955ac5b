#!/bin/sh
# Hasanov 2015's eight broadcasts (tests/it_coll_bcast.c), 2 ranks over tcp
exec "$top_srcdir/tests/it_run.sh" tcp 2 tests/it_coll_bcast
