#!/bin/sh
# t_env alone (singleton bootstrap)
exec "$top_srcdir/tests/mpi/run.sh" singleton 1 tests/mpi/t_env
