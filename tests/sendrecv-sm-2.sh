#!/bin/sh
# point-to-point between 2 ranks over nmad's own shared memory (drivers/sm)
exec "$top_srcdir/tests/it_run.sh" sm 2 tests/it_sendrecv
