#!/bin/sh
# The native interface from 4 application threads per rank at once (tests/it_threads.c, issue 16 deliverable 3):
# 2 ranks over shm and 4 over tcp, without and with the progress thread. nmad-run stops a run after 120 s; its
# threads' stacks are printed first if it still runs after 90 s (tests/stacks-on-hang.sh).
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-120}
export NMAD_TEST_TIMEOUT
fail=0
run() { "$top_srcdir/tests/stacks-on-hang.sh" 90 it_ "$top_srcdir/tests/it_run.sh" "$@" || fail=1; }
for progress in poll thread; do
  NMAD_PROGRESS=$progress
  export NMAD_PROGRESS
  run shm 2 tests/it_threads
  run tcp 4 tests/it_threads
done
exit $fail
