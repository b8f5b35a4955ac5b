#!/bin/sh
# As model-16.sh at 13 ranks (ceil(log2 13) = 4 levels; the binomial 256 KiB model is for powers of two only).
exec "${srcdir:-.}/tests/sim/sim_run.sh" 13 st_model --alpha-ns 2000 --beta 1e9
