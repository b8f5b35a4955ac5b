#!/bin/sh
# flow control: 2 ranks flood rank 0 over drivers/sm while it posts nothing for 2 s (the rings fill: sends wait for room)
exec "$top_srcdir/tests/it_run.sh" sm 3 tests/it_flood 2000 2
