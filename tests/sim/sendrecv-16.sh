#!/bin/sh
# Point-to-point data checked end to end at 16 simulated ranks (tests/sim/st_sendrecv.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 16 st_sendrecv
