#!/bin/sh
# tests/sim/st_coll.c at 256 simulated ranks, 4 per host of the flat platform (make check). The timed allreduce is
# left out (--untimed): its flat model holds for one rank per host. About 150 s of wall time, 3.2 GiB.
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-1200} NMAD_SIM_OPTS="--ranks-per-host 4 $NMAD_SIM_OPTS" exec "${srcdir:-.}/tests/sim/sim_run.sh" 256 st_coll --untimed
