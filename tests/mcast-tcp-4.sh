#!/bin/sh
# dynamic broadcasts among 4 ranks over tcp (loopback)
exec "$top_srcdir/tests/it_run.sh" tcp 4 tests/it_mcast
