#!/usr/bin/env bash
# nm_bench_bcast_auto_sim.sh - issue 17's judged line "the model's automatic choice is within 1.15x of the best
# forced algorithm on every (N, size) of the simulated sweep", under nmad-sim: per platform, N and size, the
# broadcast the library chooses by itself (nm_coll_bcast() without options: nm_coll_bcast_auto(), alpha and beta
# from the platform through nm_core_network_props()) against each of the eight algorithms of Hasanov 2015 forced,
# flat and hierarchical with G = round(sqrt(N)) (default segment size), all with bench/nm_bench_bcast_sim.c.
#
# Usage: bench/nm_bench_bcast_auto_sim.sh [--platforms "graphene inti"] [--np "16 64 max"] [--sizes "8,64K,1M,16M"]
#                                         [--out DIR]
#   graphene  doc/platforms/graphene-gige-128.xml (GigE, 128 nodes), inti  doc/platforms/inti-ib-qdr-100.xml (IB
#   QDR, 100 nodes); "max" is the platform's node count. Every run: --cfg=network/model:CM02, --fake-payload 64K
#   (the data is checked by tests/sim, not here); simulated time is deterministic, one broadcast per point.
# Output: DIR/auto.csv (platform,p,size,contender,time_us) and a table on stdout: the automatic choice and its
# time, the best forced contender and its time, and their ratio (judged <= 1.15). Exit status: 0 when every run
# ended well and produced its lines, 1 otherwise, 2 on bad usage.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$SCRIPT_DIR")
NMAD_SIM=${NMAD_SIM:-$TOP/nmad-sim}
BENCH=${BENCH:-$TOP/nm_bench_bcast_sim}
PLATFORMS="graphene inti"
NPS="16 64 max"
SIZES="8,64K,1M,16M"
OUT=./bench-bcast-auto-sim
ALGOS="flat chain pipelined_chain binary split_binary binomial scatter_ring scatter_rd"
while [ $# -gt 0 ]; do
  case "$1" in
    --platforms) PLATFORMS=$2; shift 2 ;;
    --np) NPS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "nm_bench_bcast_auto_sim.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT" || exit 2
csv=$OUT/auto.csv
echo "platform,p,size,contender,time_us" >"$csv"
: >"$csv.log"
status=0

# run PLATFORM P ARGS...: one nmad-sim run of the benchmark, its lines appended to the CSV as
# platform,p,size,contender,time_us (contender: "auto:<choice>" or "<algo>" or "hier:<algo>:G").
run() {
  local plat=$1 p=$2 xml
  shift 2
  case $plat in
    graphene) xml=$TOP/doc/platforms/graphene-gige-128.xml ;;
    inti) xml=$TOP/doc/platforms/inti-ib-qdr-100.xml ;;
    *) echo "nm_bench_bcast_auto_sim.sh: unknown platform '$plat'" >&2; exit 2 ;;
  esac
  echo "# nmad-sim -n $p --platform $xml nm_bench_bcast_sim $*" >>"$csv.log"
  if ! timeout -k 10 "${NMAD_BCAST_SIM_TIMEOUT:-1800}" "$NMAD_SIM" -n "$p" --platform "$xml" \
       --cfg=network/model:CM02 --fake-payload 64K "$BENCH" "$@" >"$OUT/run.tmp" 2>>"$csv.log"; then
    echo "run failed: $plat p=$p $* (see $csv.log)" >&2
    status=1
  fi
  # algo,inner,p,size,groups_asked,groups_formed,time_us,model_us
  awk -F, -v plat="$plat" 'NR > 1 && NF == 8 {
      c = ($1 ~ /^auto:/) ? $1 : ($5 > 1 ? "hier:" $1 ":" $6 : $1)
      print plat "," $3 "," $4 "," c "," $7 }' "$OUT/run.tmp" >>"$csv"
  rm -f "$OUT/run.tmp"
}

for plat in $PLATFORMS; do
  case $plat in graphene) max=128 ;; inti) max=100 ;; *) max=0 ;; esac
  for p in $NPS; do
    [ "$p" = max ] && p=$max
    g=$(awk -v p="$p" 'BEGIN {printf "%d", sqrt(p) + 0.5}')
    run "$plat" "$p" --algo auto --sizes "$SIZES"
    for a in $ALGOS; do
      run "$plat" "$p" --algo "$a" --groups "1,$g" --sizes "$SIZES"
    done
  done
done

# expected lines: per (platform, p, size) one auto and 16 forced
awk -F, 'NR > 1 {
    key = $1 " " $2 " " $3
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    if ($4 ~ /^auto:/) { auto[key] = $5; choice[key] = substr($4, 6) }
    else if (!(key in best) || $5 < best[key]) { best[key] = $5; who[key] = $4 }
  }
  END {
    printf "%-9s %5s %9s  %-24s %12s  %-24s %12s %7s\n", "platform", "p", "bytes", "auto choice", "auto_us",
           "best forced", "best_us", "ratio"
    worst = 0
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      if (!(k in auto) || !(k in best)) { printf "%-9s %5s %9s  missing data\n", f[1], f[2], f[3]; bad = 1; continue }
      r = best[k] > 0 ? auto[k] / best[k] : 1
      if (r > worst) worst = r
      printf "%-9s %5s %9s  %-24s %12.1f  %-24s %12.1f %7.3f%s\n", f[1], f[2], f[3], choice[k], auto[k], who[k],
             best[k], r, (r > 1.15 ? "  MISS" : "")
    }
    printf "worst ratio auto / best forced: %.3f (judged <= 1.15)\n", worst
    exit bad
  }' "$csv" || status=1
exit $status
