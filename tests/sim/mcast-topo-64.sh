#!/bin/sh
# Topology-ID multicast (Song 2009) at 64 simulated ranks, 2 per host (NMAD_MCAST_TOPO=2): tree kind with four
# concurrent roots and the standalone multicast, data checked (tests/sim/st_mcast_topo.c). Stopped after 40 s.
NMAD_MCAST_TOPO=2 NMAD_SIM_OPTS="--ranks-per-host 2" NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-40} \
  exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_mcast_topo
