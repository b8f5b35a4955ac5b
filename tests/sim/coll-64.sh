#!/bin/sh
# Every forced algorithm of the native collectives at 64 simulated ranks, results checked, and the simulated time
# of a recursive-doubling allreduce against its cost model (tests/sim/st_coll.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_coll
