#!/bin/sh
# Rootless broadcasts at 1,024 simulated ranks (16 per host of tests/sim/flat-64.xml): four concurrent origins, each
# anycast exactly once everywhere, n - 1 messages each (tests/sim/st_anycast.c); ~5 s alone, 32 s on a loaded machine:
# sim_run.sh stops a hung simulation after 90 s
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-90}
NMAD_SIM_OPTS="--ranks-per-host 16 $NMAD_SIM_OPTS"
export NMAD_SIM_TIMEOUT NMAD_SIM_OPTS
exec "${srcdir:-.}/tests/sim/sim_run.sh" 1024 st_anycast
