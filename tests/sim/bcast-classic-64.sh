#!/bin/sh
# Hasanov 2015's eight broadcasts checked end to end at 64 simulated ranks (tests/sim/st_bcast_classic.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_bcast_classic
