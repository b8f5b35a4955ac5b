#!/bin/sh
# a dynamic broadcast forwarder dies mid-transfer, over shm
exec "$top_srcdir/tests/mcast-kill-run.sh" shm
