#!/bin/sh
# Split-tree collectives (tests/it_coll_split.c; Denis 2019, section 6): 8 ranks over shm, upper levels on the progress thread (8 ranks and 8 threads on this host's cores).
# Every S from 0 to H, results checked; nmad-run stops every process after ${NMAD_TEST_TIMEOUT:-45} s.
NMAD_PROGRESS=thread; export NMAD_PROGRESS
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-45}
export NMAD_TEST_TIMEOUT
exec "$top_srcdir/tests/it_run.sh" shm 8 tests/it_coll_split
