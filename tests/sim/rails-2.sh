#!/bin/sh
# Multi-rail rendezvous under simulation (issue 15, part 3): st_rails on doc/platforms/two-nic-16.xml (two equal
# NICs per host, 1e9 B/s per rail under CM02) with one rail (NMAD_DRIVER=sim) and two (sim+sim), in one run.
# Simulated time is deterministic: each run asserts its bandwidth against the platform's model (one rail >= 0.95
# beta, two rails >= 1.8 beta), and this script asserts the ratio two rails / one rail >= 1.8.
src=${srcdir:-.}
out1=$(NMAD_DRIVER=sim NMAD_SIM_PLATFORM="$src/doc/platforms/two-nic-16.xml" \
  "$src/tests/sim/sim_run.sh" 2 st_rails --size 67108864 --beta 1e9 --min-ratio 0.95) || exit 1
out2=$(NMAD_DRIVER=sim+sim NMAD_SIM_PLATFORM="$src/doc/platforms/two-nic-16.xml" \
  "$src/tests/sim/sim_run.sh" 2 st_rails --size 67108864 --beta 1e9 --min-ratio 1.8) || exit 1
echo "$out1"
echo "$out2"
bw1=$(echo "$out1" | sed -n 's/.*bw_Bps \([^ ]*\).*/\1/p')
bw2=$(echo "$out2" | sed -n 's/.*bw_Bps \([^ ]*\).*/\1/p')
[ -n "$bw1" ] && [ -n "$bw2" ] || { echo "rails-2: no bandwidth printed"; exit 1; }
awk -v a="$bw1" -v b="$bw2" 'BEGIN { r = b / a; printf "two rails / one rail = %.3f\n", r; exit !(r >= 1.8) }'
