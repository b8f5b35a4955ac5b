#!/bin/sh
# Simulated durations against the platform's model at 16 ranks (tests/sim/st_model.c): tests/sim/flat-64.xml has
# two 1 us, 1 GB/s host links on every path, so alpha = 2000 ns and beta = 1e9 B/s under CM02.
exec "${srcdir:-.}/tests/sim/sim_run.sh" 16 st_model --alpha-ns 2000 --beta 1e9
