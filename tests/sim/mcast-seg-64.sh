#!/bin/sh
# Pipelined dynamic broadcasts checked end to end at 64 simulated ranks, and the pipelined chain against its
# model (tests/sim/st_mcast_seg.c). Stopped after 120 s of wall-clock time.
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-120} exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_mcast_seg
