#!/bin/sh
# a rank killed with SIGKILL in the middle of traffic over drivers/tcp: the survivors see it and go on
exec "$top_srcdir/tests/kill-run.sh" ntcp
