#!/bin/sh
# Split-tree collectives (tests/it_coll_split.c; Denis 2019, section 6): 3 ranks over tcp, no progress thread: the upper levels advance in the waits.
# Every S from 0 to H, results checked; nmad-run stops every process after ${NMAD_TEST_TIMEOUT:-45} s.
NMAD_PROGRESS=poll; export NMAD_PROGRESS
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-45}
export NMAD_TEST_TIMEOUT
exec "$top_srcdir/tests/it_run.sh" tcp 3 tests/it_coll_split
