#!/bin/sh
# Rootless broadcasts at 1,024 simulated ranks (16 per host of tests/sim/flat-64.xml): four concurrent origins, each
# anycast exactly once everywhere, n - 1 messages each (tests/sim/st_anycast.c); sim_run.sh stops a hung simulation
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-40}
NMAD_SIM_OPTS="--ranks-per-host 16 $NMAD_SIM_OPTS"
export NMAD_SIM_TIMEOUT NMAD_SIM_OPTS
exec "${srcdir:-.}/tests/sim/sim_run.sh" 1024 st_anycast
