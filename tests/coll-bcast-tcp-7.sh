#!/bin/sh
# Hasanov 2015's eight broadcasts (tests/it_coll_bcast.c), 7 ranks over tcp
exec "$top_srcdir/tests/it_run.sh" tcp 7 tests/it_coll_bcast
