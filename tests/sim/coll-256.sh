#!/bin/sh
# tests/sim/st_coll.c at 256 simulated ranks, 4 per host of the flat platform (run by hand: CI time). The timed
# allreduce is left out (--untimed): its flat model holds for one rank per host. Several minutes of wall time.
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-1200} NMAD_SIM_OPTS="--ranks-per-host 4 $NMAD_SIM_OPTS" exec "${srcdir:-.}/tests/sim/sim_run.sh" 256 st_coll --untimed
