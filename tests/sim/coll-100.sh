#!/bin/sh
# tests/sim/st_coll.c at 100 simulated ranks (not a power of two: the folds of recursive doubling, Rabenseifner
# and recursive halving), 2 per host of the flat platform (make check).
NMAD_SIM_OPTS="--ranks-per-host 2 $NMAD_SIM_OPTS" exec "${srcdir:-.}/tests/sim/sim_run.sh" 100 st_coll --untimed
