#!/usr/bin/env bash
# nm_bench_mcast_scale.sh - the scale run of nmad-sim: binomial and dynamic broadcasts (bench/nm_bench_mcast.c)
# of 8 B and 8 MiB at 1,024 and 6,144 ranks on the BlueGene/P-like 3-D torus (doc/platforms/bgp-torus-6144.xml),
# large payloads faked (only their size moves). For each run: the broadcast's simulated duration, and the wall
# time and peak memory of the whole simulation (nmad-sim's summary line), as a table and a CSV.
#
# Usage: bench/nm_bench_mcast_scale.sh [--platform FILE] [--nodes "1024 6144"] [--sizes "8 8M"]
#                                      [--modes "binomial dynamic"] [--fake-payload 64K] [--cfg=NAME:VALUE] [--out DIR]
# Exit status: 0 when every run finished, 1 otherwise.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$SCRIPT_DIR")
PLATFORM=$TOP/doc/platforms/bgp-torus-6144.xml
NODES="1024 6144"
SIZES="8 8M"
MODES="binomial dynamic"
FAKE=64K
CFG=()
OUT=./bench-mcast-scale
while [ $# -gt 0 ]; do
  case "$1" in
    --platform) PLATFORM=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --fake-payload) FAKE=$2; shift 2 ;;
    --cfg=*) CFG+=("$1"); shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "nm_bench_mcast_scale.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
NMAD_SIM=${NMAD_SIM:-$TOP/nmad-sim}
BENCH=${BENCH:-$TOP/nm_bench_mcast}
mkdir -p "$OUT"
CSV=$OUT/mcast_scale.csv
echo "nodes,mode,size,duration_us,sim_total_s,wall_s,peak_MiB" >"$CSV"
printf '# %s, platform %s, --fake-payload %s %s\n' "$(date -u +%F)" "$(basename "$PLATFORM")" "$FAKE" "${CFG[*]:-}"
printf '%6s %-9s %8s %14s %12s %8s %9s\n' nodes mode size duration_us sim_total_s wall_s peak_MiB
status=0
for n in $NODES; do
  for size in $SIZES; do
    for mode in $MODES; do
      log=$OUT/run-$n-$mode-$size.log
      if ! timeout -k 10 1800 "$NMAD_SIM" -n "$n" --platform "$PLATFORM" --fake-payload "$FAKE" "${CFG[@]}" \
           "$BENCH" --mode "$mode" --min "$size" --max "$size" --iters 1 --warmup 0 --csv >"$log" 2>&1; then
        echo "N=$n $mode $size failed; see $log" >&2
        status=1
        continue
      fi
      dur=$(awk -F, -v m="$mode" '$1 == m {print $5}' "$log")
      # nmad-sim: N ranks on H hosts: simulated time S s (wall W s, peak memory M MiB)
      read -r sim wall mem < <(sed -n 's/.*simulated time \([0-9.]*\) s (wall \([0-9.]*\) s, peak memory \([0-9]*\) MiB).*/\1 \2 \3/p' "$log")
      echo "$n,$mode,$size,$dur,$sim,$wall,$mem" >>"$CSV"
      printf '%6d %-9s %8s %14.1f %12.6f %8.1f %9d\n' "$n" "$mode" "$size" "$dur" "$sim" "$wall" "$mem"
    done
  done
done
echo "# csv: $CSV"
exit $status
