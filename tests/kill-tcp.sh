#!/bin/sh
# a rank dies mid-transfer, over tcp
exec "$top_srcdir/tests/kill-run.sh" tcp
