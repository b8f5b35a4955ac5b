#!/bin/sh
# rootless broadcasts forwarded by the progress thread while the application makes no nmad call (Li 2018,
# section 4's second drawback; tests/it_anycast.c --nopoll), 4 ranks over shm, then the full test under the thread;
# nmad-run stops every process after 40 s
NMAD_PROGRESS=thread
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-40}
export NMAD_PROGRESS NMAD_TEST_TIMEOUT
"$top_srcdir/tests/it_run.sh" shm 4 tests/it_anycast --nopoll || exit 1
exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_anycast
