#!/bin/sh
# 2 ranks over tcp: a process outside the job writes to rank 0 and is refused
exec "$top_srcdir/tests/doors-run.sh" tcp 2 intruder
