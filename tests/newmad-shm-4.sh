#!/bin/sh
# NewMadeleine's native interface (tests/it_newmad.c) among 4 ranks over shm
exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_newmad
