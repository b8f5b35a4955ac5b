#!/bin/sh
# The split-tree collectives at 100 simulated ranks (not a power of two: incomplete levels) on the InfiniBand
# platform, every S, data checked, from the root in the middle (tests/sim/st_split.c --quick).
NMAD_SIM_PLATFORM="${srcdir:-.}/doc/platforms/inti-ib-qdr-100.xml" \
  exec "${srcdir:-.}/tests/sim/sim_run.sh" 100 st_split --quick
