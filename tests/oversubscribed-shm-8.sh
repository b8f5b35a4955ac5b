#!/bin/sh
# 8 ranks on 2 cores: waiting must yield/block for everyone to progress
exec "$top_srcdir/tests/it_run.sh" shm 8 tests/it_sendrecv --quick
