#!/bin/sh
# The native interfaces with a progress thread beside the application (NMAD_PROGRESS=thread, the core lock
# layer): sendrecv with 2 ranks over shm and 4 over tcp, dynamic broadcasts (rpc channel) with 4 ranks over shm.
# A hang of the tcp run was seen once in CI and never reproduced since: each run prints its threads' stacks if it
# still runs after 150 s (tests/stacks-on-hang.sh), before nmad-run's time limit stops it.
NMAD_PROGRESS=thread
export NMAD_PROGRESS
fail=0
run() { "$top_srcdir/tests/stacks-on-hang.sh" 150 it_ "$top_srcdir/tests/it_run.sh" "$@" || fail=1; }
run shm 2 tests/it_sendrecv --quick
run tcp 4 tests/it_sendrecv --quick
run shm 4 tests/it_mcast
exit $fail
