#!/bin/sh
# static broadcasts from every root, 5 ranks over drivers/tcp (loopback)
exec "$top_srcdir/tests/it_run.sh" ntcp 5 tests/it_coll
