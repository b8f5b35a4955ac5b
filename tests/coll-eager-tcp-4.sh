#!/bin/sh
# The blocking small gather and scatter without a schedule (tests/it_coll_eager.c), 4 ranks over libfabric tcp
# (no send leaves at post: every message is a request), mixed with members on schedules, data checked
exec "$top_srcdir/tests/it_run.sh" tcp 4 tests/it_coll_eager
