#!/bin/sh
# Active messages checked end to end at 32 simulated ranks (tests/sim/st_rpc.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 32 st_rpc
