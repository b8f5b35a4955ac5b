#!/bin/sh
# Topology-ID multicast (Song 2009) at 1,024 simulated ranks, 16 per host, hosts in groups of 4, base-4 digits
# (NMAD_MCAST_TOPO=4x16:b=2), data checked (tests/sim/st_mcast_topo.c). Stopped after 60 s.
NMAD_MCAST_TOPO='4x16:b=2' NMAD_SIM_OPTS="--ranks-per-host 16" NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-60} \
  exec "${srcdir:-.}/tests/sim/sim_run.sh" 1024 st_mcast_topo
