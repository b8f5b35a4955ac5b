#!/bin/sh
# Li et al. 2018, fig. 4 (issue 19): a tight loop of anycasts from rank 0 costs, per anycast, at most log2 n times
# a constant. Simulated time is deterministic, so the growth from 16 to 64 ranks is asserted against
# log2(64) / log2(16) = 1.5 (2% slack), at 10 B (the loop aggregates many anycasts per packet) and 10,000 B.
# Before each channel had a priority by its distance (collectives/anycast_skip_ring.c), a forwarder's batch to
# its largest subtree left after those to the smaller ones and the growth was 1.87 at 10 B.
set -u
src=${srcdir:-.}
count=200
per() { # ranks -> the csv lines of nm_bench_anycast (ranks,size,count,single_us,loop_us,per_anycast_us)
  timeout -k 10 120 ./nmad-sim -n "$1" --platform "$src/doc/platforms/cori-aries-512.xml" --cfg=network/model:CM02 \
    ./nm_bench_anycast --sizes 10,10000 --count "$count" 2>&1 | grep -E '^[0-9]+,'
}
a=$(per 16) || { echo "16 ranks: the simulation failed"; exit 1; }
b=$(per 64) || { echo "64 ranks: the simulation failed"; exit 1; }
printf '%s\n%s\n' "$a" "$b"
printf '%s\n%s\n' "$a" "$b" | awk -F, '
  $1 == 16 { t16[$2] = $6 } $1 == 64 { t64[$2] = $6 }
  END {
    bad = 0; n = 0
    for (s in t16) {
      n++
      if (!(s in t64) || t16[s] <= 0) { print "size " s ": no 64-rank figure"; bad = 1; continue }
      r = t64[s] / t16[s]
      printf "%s B: %.4f -> %.4f us per anycast, growth %.3f (bound 1.53)\n", s, t16[s], t64[s], r
      if (r > 1.5 * 1.02) bad = 1
    }
    exit bad || n != 2
  }'
