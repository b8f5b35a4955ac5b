#!/bin/sh
# Static and dynamic broadcasts at 13 simulated ranks: a size that is no power of two (tests/sim/st_bcast.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 13 st_bcast
