#!/bin/sh
# The simulation driver's NIC send queue (the default) against its model at 3 ranks (tests/sim/st_sendq.c):
# packets above one MTU leave one after the other whatever their peers, smaller ones pass them.
# Stopped after 120 s.
NMAD_SIM_TIMEOUT=${NMAD_SIM_TIMEOUT:-120} exec "${srcdir:-.}/tests/sim/sim_run.sh" 3 st_sendq nic
