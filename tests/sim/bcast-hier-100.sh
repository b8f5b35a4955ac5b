#!/bin/sh
# The hierarchical broadcast at 100 simulated ranks on the InfiniBand platform (1.4 us, 3.3e9 B/s), data checked,
# and its simulated flat / hierarchical ratio against the model's eq. (1) (tests/sim/st_bcast_hier.c).
NMAD_SIM_PLATFORM="${srcdir:-.}/doc/platforms/inti-ib-qdr-100.xml" \
  exec "${srcdir:-.}/tests/sim/sim_run.sh" 100 st_bcast_hier --alpha-ns 1400 --beta 3.3e9
