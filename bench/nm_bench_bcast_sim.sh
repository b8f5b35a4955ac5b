#!/usr/bin/env bash
# nm_bench_bcast_sim.sh - Hasanov et al. 2015, section 4, reproduced under nmad-sim (issue 17, benchmark 7b): the
# hierarchical broadcast (collectives/bcast_hier.c) against the flat one, time vs the number of groups G, with the
# model's time beside each point (bench/nm_bench_bcast_sim.c).
#
# Usage: bench/nm_bench_bcast_sim.sh [--parts "torus2048 torus6142 speedup graphene nogain"] [--out DIR]
#                                    [--plot-only]
#   torus2048  hierarchical scatter-ring-allgather on bgp-torus-6144.xml, p = 2,048, 512 KiB and 2 MiB, G = 1 (flat)
#              and the powers of two 2..1024 (the paper's figs. 3 and 4)            env: T2048_GROUPS, T2048_SIZES
#   torus6142  the same at p = 6,142, G = 1 and divisors of 6,142 (fig. 5)           env: T6142_GROUPS, T6142_SIZES
#   speedup    flat / hierarchical scatter-ring-allgather vs message size, G = the model's best (fig. 10)
#                                                                                  env: SPEEDUP_P, SPEEDUP_SIZES
#   graphene   hierarchical chain and pipelined chain on graphene-gige-128.xml, p = 128, 16 KiB and 16 MiB, G = 1
#              and the powers of two 2..64 (figs. 13-16), and the speedup vs size at p = 128 (fig. 18)
#   nogain     binomial and scatter-recursive-doubling, flat vs hierarchical (the paper: no gain, sections 3.3, 3.5)
# Torus runs: NMAD_RDV_THRESHOLD=$TORUS_RDV when set (empty by default), see below. Every run: --cfg=network/model:CM02 (a message costs exactly latency + size / bandwidth). The torus runs add
# --send-overhead 3000: BG/P MPI's ~3 us of software per message, which the torus file cannot hold
# (doc/platforms/README.md); the model is priced with alpha = 3 us, beta = 1/425e6 s/B. Graphene: alpha = 48 us,
# beta = 1/117.7e6 s/B. Large transfers move only their size (--fake-payload 64K): the data is checked by the tests
# (tests/sim/st_bcast_hier.c), not here. Simulated time is deterministic: one broadcast per point.
# Output: DIR/*.csv (algo,inner,p,size,groups_asked,groups_formed,time_us,model_us), tables on stdout, PNGs with
# gnuplot. Exit status: 0 when every run ended well.
set -u -o pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$SCRIPT_DIR")
NMAD_SIM=${NMAD_SIM:-$TOP/nmad-sim}
BENCH=${BENCH:-$TOP/nm_bench_bcast_sim}
PARTS="torus2048 torus6142 speedup graphene nogain"
OUT=./bench-bcast-sim
PLOT_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --parts) PARTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --plot-only) PLOT_ONLY=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "nm_bench_bcast_sim.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
T2048_GROUPS=${T2048_GROUPS:-1,2,4,8,16,32,64,128,256,512,1024}
T2048_SIZES=${T2048_SIZES:-512K 2M}
T6142_GROUPS=${T6142_GROUPS:-1,37,74,83,166}
T6142_SIZES=${T6142_SIZES:-512K 2M}
SPEEDUP_P=${SPEEDUP_P:-2048}
SPEEDUP_SIZES=${SPEEDUP_SIZES:-16K,64K,256K,512K,1M,2M,4M}
TORUS=(--platform "$TOP/doc/platforms/bgp-torus-6144.xml" --cfg=network/model:CM02 --send-overhead 3000
       --fake-payload 64K)
TORUS_MODEL=(--alpha-ns 3000 --beta 425e6)
# Eager blocks of a few KiB in a ring step ran 2-3x slower than their model under nmad-sim until its send queue
# per peer (doc/performance.md, issue 17 benchmark 7b, "An eager artefact", and "the simulator's send queue per
# peer"); the torus runs then set NMAD_RDV_THRESHOLD=1536. Now empty (the library's default threshold); set
# TORUS_RDV=1536 to reproduce those runs.
TORUS_RDV=${TORUS_RDV:-}
GRAPHENE=(--platform "$TOP/doc/platforms/graphene-gige-128.xml" --cfg=network/model:CM02 --fake-payload 64K)
GRAPHENE_MODEL=(--alpha-ns 48000 --beta 117.7e6)
mkdir -p "$OUT"
status=0

# run CSV P [nmad-sim options] -- [program options]: appends the program's CSV lines to CSV, the log to CSV.log
run() {
  local csv=$1 p=$2
  shift 2
  local sim=() prog=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do sim+=("$1"); shift; done
  shift
  prog=("$@")
  [ -s "$csv" ] || echo "algo,inner,p,size,groups_asked,groups_formed,time_us,model_us" >"$csv"
  echo "# ${RUN_ENV:-} nmad-sim -n $p ${sim[*]} nm_bench_bcast_sim ${prog[*]}" >>"$csv.log"
  local t0=$SECONDS
  # shellcheck disable=SC2086
  if ! env ${RUN_ENV:-} timeout -k 10 "${NMAD_BCAST_SIM_TIMEOUT:-3600}" "$NMAD_SIM" -n "$p" "${sim[@]}" "$BENCH" "${prog[@]}" \
       >"$csv.tmp" 2>>"$csv.log"; then
    echo "run failed: nmad-sim -n $p ${sim[*]} ... ${prog[*]} (see $csv.log)" >&2
    status=1
  fi
  grep -v '^algo,' "$csv.tmp" | grep ',' >>"$csv"
  rm -f "$csv.tmp"
  echo "#   wall $((SECONDS - t0)) s" >>"$csv.log"
}

# table CSV: time vs G per (algo, size), with flat / hierarchical and the model's
table() {
  awk -F, 'NR > 1 {
      key = $1 "/" $2 " p=" $3 " m=" $4
      if ($5 == 1) flat[key] = $7; mflat[key] = ($5 == 1 ? $8 : mflat[key])
      rows[++n] = $0
    }
    END {
      printf "%-36s %6s %6s %12s %12s %8s %8s\n", "algo/inner p m", "G", "G'"'"'", "sim_us", "model_us", "speedup", "model_sp"
      for (i = 1; i <= n; i++) {
        split(rows[i], f, ",")
        key = f[1] "/" f[2] " p=" f[3] " m=" f[4]
        sp = (key in flat && f[7] > 0) ? flat[key] / f[7] : 0
        msp = (key in mflat && f[8] > 0) ? mflat[key] / f[8] : 0
        printf "%-36s %6d %6d %12.1f %12.1f %8.2f %8.2f\n", key, f[5], f[6], f[7], f[8], sp, msp
      }
    }' "$1"
}

# plot CSV PNG TITLE XCOL XLABEL PAPER: speedup flat / hierarchical (simulated, solid; model, dashed) against
# column XCOL (5: G; 4: message size), one curve per (algo, inner, other column); PAPER: "value:label;..." drawn
# as horizontal lines, the paper's figures as its text states them.
plot() {
  command -v gnuplot >/dev/null 2>&1 || return 0
  local csv=$1 png=$2 title=$3 xcol=$4 xlabel=$5 paper=$6 plots="" i=0 other=4
  [ "$xcol" = 4 ] && other=3
  while IFS= read -r key; do
    local f="$OUT/.curve-$(basename "$png" .png)-$i.dat"
    awk -F, -v k="$key" -v x="$xcol" -v o="$other" '
      NR > 1 && ($1 "," $2 "," $o) == k {
        if ($5 == 1) { ft[$4] = $7; fm[$4] = $8 } else { t[$x] = $7; m[$x] = $8; sz[$x] = $4 } }
      END { for (v in t) { s = sz[v]; if ((s in ft) && t[v] > 0 && m[v] > 0) print v, ft[s] / t[v], fm[s] / m[v] } }' \
      "$csv" | sort -n >"$f"
    [ -s "$f" ] || continue
    local label
    label=$(echo "$key" | awk -F, -v x="$xcol" '{printf "%s/%s %s", $1, $2, (x == 4 ? "p = " $3 : $3 " B")}')
    plots+="\"$f\" using 1:2 with linespoints lw 2 title \"$label (nmad-sim)\", "
    plots+="\"$f\" using 1:3 with lines dt 2 title \"$label (model)\", "
    i=$((i + 1))
  done < <(awk -F, -v o="$other" 'NR > 1 {print $1 "," $2 "," $o}' "$csv" | sort -u)
  [ -n "$plots" ] || return 0
  local item
  while IFS= read -r -d ';' item; do
    [ -n "$item" ] && plots+="${item%%:*} with lines lw 1 dt 3 lc rgb \"gray40\" title \"paper: ${item#*:}\", "
  done <<<"$paper;"
  gnuplot <<EOF || status=1
set terminal pngcairo size 1000,700 noenhanced
set output "$png"
set logscale x 2
set grid
set key outside bottom center
set title "$title"
set xlabel "$xlabel"
set ylabel "speedup: flat time / hierarchical time (simulated)"
$( [ "$xcol" = 4 ] && echo 'set format x "%.0b %BB"')
plot ${plots%, }
EOF
  echo "# plot: $png"
}

if [ "$PLOT_ONLY" = 0 ]; then
  for part in $PARTS; do
    case "$part" in
      torus2048)
        for m in $T2048_SIZES; do
          RUN_ENV="${TORUS_RDV:+NMAD_RDV_THRESHOLD=$TORUS_RDV}" run "$OUT/torus2048.csv" 2048 "${TORUS[@]}" -- --algo scatter_ring --groups "$T2048_GROUPS" --sizes "$m" \
            "${TORUS_MODEL[@]}"
        done ;;
      torus6142)
        for m in $T6142_SIZES; do
          RUN_ENV="${TORUS_RDV:+NMAD_RDV_THRESHOLD=$TORUS_RDV}" run "$OUT/torus6142.csv" 6142 "${TORUS[@]}" -- --algo scatter_ring --groups "$T6142_GROUPS" --sizes "$m" \
            "${TORUS_MODEL[@]}"
        done ;;
      speedup)
        g=$(awk -v p="$SPEEDUP_P" 'BEGIN {printf "%d", sqrt(p) + 0.5}')
        RUN_ENV="${TORUS_RDV:+NMAD_RDV_THRESHOLD=$TORUS_RDV}" run "$OUT/speedup.csv" "$SPEEDUP_P" "${TORUS[@]}" -- --algo scatter_ring --groups "1,$g" \
          --sizes "$SPEEDUP_SIZES" "${TORUS_MODEL[@]}" ;;
      graphene)
        for m in 16K 16M; do
          run "$OUT/graphene.csv" 128 "${GRAPHENE[@]}" -- --algo chain --groups 1,2,4,8,11,16,32,64 --sizes "$m" \
            "${GRAPHENE_MODEL[@]}"
        done
        # the pipeline with 16 segments (X = 16) at both sizes, and with 2 segments at 16 MiB (see doc/performance.md)
        run "$OUT/graphene.csv" 128 "${GRAPHENE[@]}" -- --algo pipelined_chain --segment 1K --groups 1,2,4,8,11,16,32,64 \
          --sizes 16K "${GRAPHENE_MODEL[@]}"
        run "$OUT/graphene.csv" 128 "${GRAPHENE[@]}" -- --algo pipelined_chain --segment 1M --groups 1,2,4,8,11,16,32,64 \
          --sizes 16M "${GRAPHENE_MODEL[@]}"
        run "$OUT/graphene-pipe-x2.csv" 128 "${GRAPHENE[@]}" -- --algo pipelined_chain --segment 8M \
          --groups 1,2,4,8,11,16,32,64 --sizes 16M "${GRAPHENE_MODEL[@]}"
        # fig. 18: speedup vs message size at p = 128, G = 11 (about sqrt(128)), pipeline with X = 16
        for m in 16K 64K 256K 1M 4M 16M; do
          seg=$(( $(echo "$m" | sed 's/K/*1024/; s/M/*1048576/') / 16 ))
          run "$OUT/graphene-speedup.csv" 128 "${GRAPHENE[@]}" -- --algo pipelined_chain --segment "$seg" \
            --groups 1,11 --sizes "$m" "${GRAPHENE_MODEL[@]}"
        done ;;
      nogain)
        for a in binomial scatter_rd; do
          RUN_ENV="${TORUS_RDV:+NMAD_RDV_THRESHOLD=$TORUS_RDV}" run "$OUT/nogain.csv" 2048 "${TORUS[@]}" -- --algo "$a" --groups 1,8,45,256 --sizes 512K,2M \
            "${TORUS_MODEL[@]}"
          run "$OUT/nogain.csv" 128 "${GRAPHENE[@]}" -- --algo "$a" --groups 1,4,11,32 --sizes 16K,16M \
            "${GRAPHENE_MODEL[@]}"
        done ;;
      *) echo "nm_bench_bcast_sim.sh: unknown part '$part'" >&2; exit 2 ;;
    esac
  done
fi

for csv in "$OUT"/*.csv; do
  [ -s "$csv" ] || continue
  echo "## $(basename "$csv")"
  table "$csv"
done
G="number of groups G"
[ -s "$OUT/torus2048.csv" ] && plot "$OUT/torus2048.csv" "$OUT/torus2048.png" \
  "Hierarchical scatter-ring-allgather, bgp-torus-6144.xml + 3 us/message, p = 2048 (Hasanov 2015, figs. 3-4)" 5 "$G" \
  "1.87:fig. 3, 512 KiB, BG/P (best G);1:fig. 4, 2 MiB: a drop (below 1)"
[ -s "$OUT/torus6142.csv" ] && plot "$OUT/torus6142.csv" "$OUT/torus6142.png" \
  "Hierarchical scatter-ring-allgather, bgp-torus-6144.xml + 3 us/message, p = 6142 (Hasanov 2015, fig. 5)" 5 "$G" \
  "3.09:fig. 5, 512 KiB, BG/P (best G)"
[ -s "$OUT/speedup.csv" ] && plot "$OUT/speedup.csv" "$OUT/speedup.png" \
  "Hierarchical scatter-ring-allgather, speedup vs message size, G = sqrt(p) (Hasanov 2015, fig. 10)" 4 \
  "message size (bytes)" "3.09:fig. 10, p = 6142, 512 KiB"
[ -s "$OUT/graphene.csv" ] && plot "$OUT/graphene.csv" "$OUT/graphene.png" \
  "Hierarchical chain and pipelined chain, graphene-gige-128.xml, p = 128 (Hasanov 2015, figs. 13-16)" 5 "$G" \
  "3:fig. 13, chain 16 KiB;8:fig. 14, chain 16 MiB (more than);30:fig. 15, pipeline 16 KiB (more than);5:fig. 16, pipeline 16 MiB (more than)"
[ -s "$OUT/graphene-pipe-x2.csv" ] && plot "$OUT/graphene-pipe-x2.csv" "$OUT/graphene-pipe-x2.png" \
  "Hierarchical pipelined chain, 2 segments of 8 MiB, graphene-gige-128.xml, p = 128 (Hasanov 2015, fig. 16)" 5 "$G" \
  "5:fig. 16, pipeline 16 MiB (more than)"
[ -s "$OUT/graphene-speedup.csv" ] && plot "$OUT/graphene-speedup.csv" "$OUT/graphene-speedup.png" \
  "Hierarchical pipelined chain (16 segments), G = 11, speedup vs message size, p = 128 (Hasanov 2015, fig. 18)" 4 \
  "message size (bytes)" "30:fig. 15, 16 KiB (more than);5:fig. 16, 16 MiB (more than)"
[ -s "$OUT/nogain.csv" ] && plot "$OUT/nogain.csv" "$OUT/nogain.png" \
  "Binomial and scatter-recursive-doubling, flat vs hierarchical (Hasanov 2015, sections 3.3, 3.5: no gain)" 5 "$G" \
  "1:no gain"
exit $status
