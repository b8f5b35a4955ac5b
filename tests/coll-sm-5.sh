#!/bin/sh
# static broadcasts from every root, 5 ranks over drivers/sm
exec "$top_srcdir/tests/it_run.sh" sm 5 tests/it_coll
