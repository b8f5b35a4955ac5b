#!/bin/sh
# flow control: 2 ranks flood rank 0 over shm while it posts nothing for 2 s
exec "$top_srcdir/tests/it_run.sh" shm 3 tests/it_flood 2000 2
