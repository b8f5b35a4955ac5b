#!/bin/sh
# rpc (active messages) among 4 ranks over drivers/sm
exec "$top_srcdir/tests/it_run.sh" sm 4 tests/it_rpc
