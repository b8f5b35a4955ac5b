#!/bin/sh
# nm_launcher_abort(l, 5) on rank 1 of 4 over shm ends the job with status 5
exec "$top_srcdir/tests/abort-run.sh" nmad-run shm 4 tests/it_abort 5
