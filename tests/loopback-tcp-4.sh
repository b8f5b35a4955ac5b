#!/bin/sh
# 4 ranks over tcp on one host: they listen on 127.0.0.1 only
exec "$top_srcdir/tests/doors-run.sh" tcp 4 loopback
