#!/bin/sh
# a rank dies mid-transfer, over shm
exec "$top_srcdir/tests/kill-run.sh" shm
