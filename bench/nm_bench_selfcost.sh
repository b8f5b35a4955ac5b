#!/bin/sh
# Compare the CPU cost of the sendrecv path of two build trees (bench/nm_bench_selfcost.c), alternating them
# ROUNDS times (ABBA), and print per round the ratio B/A of the median ns per iteration, then the median ratio.
# usage: bench/nm_bench_selfcost.sh BUILD_A BUILD_B [ROUNDS] [SIZE]
a=$1 b=$2 rounds=${3:-5} size=${4:-8}
[ -d "$a/.libs" ] && [ -d "$b/.libs" ] || { echo "usage: $0 BUILD_A BUILD_B [ROUNDS] [SIZE]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
for v in a b; do
  d=$(eval echo \$$v)
  ${CC:-cc} -O2 -I"$src/nmad/include" -o "$tmp/$v" "$src/bench/nm_bench_selfcost.c" -L"$d/.libs" -lnmad || exit 1
done
one() { LD_LIBRARY_PATH=$(eval echo \$$1)/.libs timeout 300 "$tmp/$1" 30 20000 "$size" | tail -1 | cut -d, -f5; }
echo "round,a_ns,b_ns,ratio_b_over_a"
ratios=""
for r in $(seq 1 "$rounds"); do
  a1=$(one a); b1=$(one b); b2=$(one b); a2=$(one a)
  ra=$(echo "($a1 + $a2) / 2" | bc -l); rb=$(echo "($b1 + $b2) / 2" | bc -l)
  ratio=$(echo "$rb / $ra" | bc -l)
  printf '%d,%.1f,%.1f,%.3f\n' "$r" "$ra" "$rb" "$ratio"
  ratios="$ratios $ratio"
done
printf 'median ratio b/a: %s\n' "$(printf '%s\n' $ratios | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')"
