#!/bin/sh
# point-to-point among 4 ranks over drivers/sm (2 cores: oversubscribed, so waits block on the sm pipe)
exec "$top_srcdir/tests/it_run.sh" sm 4 tests/it_sendrecv
