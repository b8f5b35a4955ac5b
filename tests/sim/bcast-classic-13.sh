#!/bin/sh
# Hasanov 2015's eight broadcasts at 13 simulated ranks, no power of two (tests/sim/st_bcast_classic.c).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 13 st_bcast_classic
