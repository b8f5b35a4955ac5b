#!/bin/sh
# tests/sim/st_coll.c at 256 simulated ranks, 4 per host of the flat platform (run by hand: CI time). The timed
# allreduce's model then holds only for the messages between hosts: its check is meant for one rank per host.
NMAD_SIM_OPTS="--ranks-per-host 4 $NMAD_SIM_OPTS" exec "${srcdir:-.}/tests/sim/sim_run.sh" 256 st_coll --untimed
