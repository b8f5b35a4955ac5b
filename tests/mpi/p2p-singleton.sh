#!/bin/sh
# t_p2p alone (singleton bootstrap, no launcher)
exec "$top_srcdir/tests/mpi/run.sh" singleton 1 tests/mpi/t_p2p
