#!/bin/sh
# point-to-point between 3 ranks over nmad's own TCP sockets (drivers/tcp, loopback)
exec "$top_srcdir/tests/it_run.sh" ntcp 3 tests/it_sendrecv
