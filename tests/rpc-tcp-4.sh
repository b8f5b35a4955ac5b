#!/bin/sh
# rpc (active messages) among 4 ranks over tcp (loopback)
exec "$top_srcdir/tests/it_run.sh" tcp 4 tests/it_rpc
