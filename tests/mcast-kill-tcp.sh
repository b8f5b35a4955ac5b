#!/bin/sh
# a dynamic broadcast forwarder dies mid-transfer, over tcp
exec "$top_srcdir/tests/mcast-kill-run.sh" tcp
