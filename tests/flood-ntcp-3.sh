#!/bin/sh
# flow control: 2 ranks flood rank 0 over drivers/tcp while it posts nothing for 2 s (credits run out: sends go by rendezvous)
exec "$top_srcdir/tests/it_run.sh" ntcp 3 tests/it_flood 2000 2
