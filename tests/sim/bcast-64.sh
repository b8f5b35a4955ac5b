#!/bin/sh
# Static and dynamic broadcasts checked end to end at 64 simulated ranks (tests/sim/st_bcast.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_bcast
