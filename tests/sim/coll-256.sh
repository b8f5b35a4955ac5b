#!/bin/sh
# tests/sim/st_coll.c at 256 simulated ranks, 4 per host of the flat platform (make check). The timed allreduce is
# left out (--untimed): its flat model holds for one rank per host; so is the pairwise reduce-scatter (above
# ST_PAIRWISE_RS_MAX_P, st_coll.c). About 100 s of wall time on the VM of 2026-11-30 (610 s with it), 3 GiB.
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-1200} NMAD_SIM_OPTS="--ranks-per-host 4 $NMAD_SIM_OPTS" exec "${srcdir:-.}/tests/sim/sim_run.sh" 256 st_coll --untimed
