#!/bin/sh
# The split-tree collectives checked end to end at 64 simulated ranks for every S (tests/sim/st_split.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_split
