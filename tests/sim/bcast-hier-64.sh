#!/bin/sh
# The hierarchical broadcast (Hasanov 2015, section 3) checked end to end at 64 simulated ranks, and its simulated
# flat / hierarchical ratio against the model's eq. (1) (tests/sim/st_bcast_hier.c; flat-64.xml: 2 us, 1e9 B/s).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 64 st_bcast_hier --alpha-ns 2000 --beta 1e9
