#!/bin/sh
# Rootless broadcasts at 64 simulated ranks: four concurrent origins, each anycast exactly once everywhere, n - 1
# messages each (tests/sim/st_anycast.c); sim_run.sh stops a hung simulation
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-40}
export NMAD_SIM_TIMEOUT
exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_anycast
