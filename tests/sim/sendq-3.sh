#!/bin/sh
# The simulation driver's send queue per peer against its model at 3 ranks (tests/sim/st_sendq.c): packets to one
# peer leave at the previous one's injection end, packets to different peers share the link. Stopped after 120 s.
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-120} exec "${srcdir:-.}/tests/sim/sim_run.sh" 3 st_sendq
