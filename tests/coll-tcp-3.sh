#!/bin/sh
# static broadcasts, 3 ranks (not a power of two) over tcp (loopback)
exec "$top_srcdir/tests/it_run.sh" tcp 3 tests/it_coll
