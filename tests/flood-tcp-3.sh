#!/bin/sh
# flow control over tcp, with a 256 KiB window set through NMAD_EAGER_CREDIT
NMAD_EAGER_CREDIT=256K
export NMAD_EAGER_CREDIT
exec "$top_srcdir/tests/it_run.sh" tcp 3 tests/it_flood 2000 2
