#!/bin/sh
# The native interfaces with a progress thread beside the application (NMAD_PROGRESS=thread, the core lock
# layer): sendrecv with 2 ranks over shm and 4 over tcp, dynamic broadcasts (rpc channel) with 4 ranks over shm.
NMAD_PROGRESS=thread
export NMAD_PROGRESS
fail=0
"$top_srcdir/tests/it_run.sh" shm 2 tests/it_sendrecv --quick || fail=1
"$top_srcdir/tests/it_run.sh" tcp 4 tests/it_sendrecv --quick || fail=1
"$top_srcdir/tests/it_run.sh" shm 4 tests/it_mcast || fail=1
exit $fail
