#!/bin/sh
# rootless broadcasts (Li 2018) among 4 ranks over shm: every origin, concurrent origins without a barrier, exactly
# n - 1 messages per anycast (tests/it_anycast.c); nmad-run stops every process after 40 s
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-40}
export NMAD_TEST_TIMEOUT
exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_anycast
