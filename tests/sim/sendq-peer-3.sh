#!/bin/sh
# The simulation driver's send queues per peer (`nmad-sim --send-queue peer`) against their model at 3 ranks
# (tests/sim/st_sendq.c): packets to one peer leave at the previous one's injection end, packets to different
# peers share the link. Stopped after 120 s.
NMAD_SIM_OPTS="--send-queue peer" NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-120} \
  exec "${srcdir:-.}/tests/sim/sim_run.sh" 3 st_sendq peer
