#!/bin/sh
# 2 ranks over tcp (loopback)
exec "$top_srcdir/tests/it_run.sh" tcp 2 tests/it_sendrecv
