#!/bin/sh
# NewMadeleine's native interface (tests/it_newmad.c) among 4 ranks over tcp
exec "$top_srcdir/tests/it_run.sh" tcp 4 tests/it_newmad
