#!/usr/bin/env bash
# starpu_cholesky_coop.sh - issue 16, deliverable 5: the dynamic broadcast paper's experiment with the real runtime
# (Denis 2020, section 5.2): StarPU 1.4.12's MPI Cholesky example (mpi/examples/matrix_decomposition/mpi_cholesky,
# tiles of 320 x 320 floats, 2-D block-cyclic) over StarPU's NewMadeleine back end on nmad, with StarPU's
# cooperative sends (dynamic broadcasts, nm_mcast_isend) on and off (STARPU_MPI_COOP_SENDS=1 / 0), alternated.
#
# Usage: bench/starpu_cholesky_coop.sh [--np "4 8"] [--sizes "3840 7680"] [--repeat 5] [--out DIR] [--rebuild]
#
# The StarPU build (libstarpu, libstarpumpi and mpi_cholesky only, about 2 minutes here when nothing else runs) is
# tests/newmad/starpu-nmad-build.sh with STARPU_TARGET=cholesky, in $STARPU_WORK (default
# ${TMPDIR:-/tmp}/nmad-starpu-cholesky); it is reused when present unless --rebuild. Every run: nmad's mpiexec,
# STARPU_NCPU=1 (one CPU worker per rank: 4 and 8 ranks share this host's cores), OPENBLAS_NUM_THREADS=1,
# STARPU_MPI_STATS=1 (each rank prints NB_COOP, the broadcasts it detected, and how many recipients each had),
# nblocks = size / 320, a 300 s limit. Printed per (N, size, coop): the median and best of StarPU's "Computation
# time" (ms, rank 0: the factorization between two barriers), GFlop/s at the median, the broadcasts of the last run
# summed over its ranks, their mean recipient count; then per (N, size) the ratio off / on of the medians (> 1:
# broadcasts faster). Before the timed runs, one run per N with the example's -check at the first size, broadcasts
# on (rank 0 gathers L and compares L L^T with the input: the example asserts). Raw outputs in DIR. Exit status: 0
# if every check passed and every run produced a time, 1 otherwise, 77 if StarPU cannot be built here (no tarball,
# no autotools).
set -u -o pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NMAD_BUILD_DIR=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}
NPS="4 8"
SIZES="3840 7680"
REPEAT=5
OUT=./bench-results/starpu-cholesky
REBUILD=0
TILE=320
export STARPU_WORK=${STARPU_WORK:-${TMPDIR:-/tmp}/nmad-starpu-cholesky}

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
  case $1 in
    --np) NPS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --rebuild) REBUILD=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

exe=$STARPU_WORK/starpu-1.4.12/mpi/examples/matrix_decomposition/mpi_cholesky
if [[ $REBUILD == 1 || ! -x $exe ]]; then
  STARPU_TARGET=cholesky top_builddir=$NMAD_BUILD_DIR "$NMAD_BUILD_DIR/tests/newmad/starpu-nmad-build.sh"
  rc=$?
  [[ $rc == 0 ]] || exit "$rc"
fi
mkdir -p "$OUT" || exit 1
mpiexec=$NMAD_BUILD_DIR/nmad/mpi/mpiexec

# mpi_cholesky on NP ranks, matrix SIZE, cooperative sends COOP, into file F; more arguments follow.
run_cholesky() {
  local np=$1 size=$2 coop=$3 f=$4
  shift 4
  (cd "$(dirname "$exe")" &&
    STARPU_MPI_COOP_SENDS=$coop STARPU_NCPU=1 STARPU_SILENT=1 STARPU_MPI_STATS=1 OPENBLAS_NUM_THREADS=1 \
      timeout -k 10 300 "$mpiexec" -np "$np" --timeout 290 ./mpi_cholesky -size "$size" -nblocks $((size / TILE)) \
      "$@") >"$f" 2>&1
}

# One run: its output in $OUT/chol-N-SIZE-COOP-R.txt; prints "ms broadcasts recipients" (recipients summed).
run_one() {
  local np=$1 size=$2 coop=$3 r=$4 f
  f=$OUT/chol-$np-$size-$coop-$r.txt
  run_cholesky "$np" "$size" "$coop" "$f"
  awk '/Computation time \(in ms\)/ { ms = $NF }
       /NB_COOP:/ { nb += $NF }
       / in coop: / { for (i = 1; i <= NF; i++) if ($i == "in") { k = $(i - 1); c = $(i + 2); rcp += k * c } }
       END { if (ms == "") exit 1; printf "%s %d %d\n", ms, nb, rcp }' "$f"
}

fail=0
summary=$OUT/summary.txt
{
  echo "# starpu_cholesky_coop: $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
    "nmad $(git -C "$NMAD_BUILD_DIR" rev-parse --short HEAD 2>/dev/null), repeat $REPEAT, tile $TILE," \
    "STARPU_NCPU=1, load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-3s %-6s %-4s %10s %10s %8s %10s %10s\n' N size coop median_ms best_ms GFlops broadcasts recipients
} | tee "$summary"
first=${SIZES%% *}
for np in $NPS; do
  f=$OUT/check-$np-$first.txt
  if run_cholesky "$np" "$first" 1 "$f" -check && grep -q "comparing results" "$f"; then
    echo "# N=$np size=$first, broadcasts on: -check passed (L L^T = A)" | tee -a "$summary"
  else
    echo "# N=$np size=$first, broadcasts on: -check FAILED (see $f)" | tee -a "$summary"
    fail=1
  fi
done
for np in $NPS; do
  for size in $SIZES; do
    declare -A times=() nbs=() rcps=()
    for ((r = 1; r <= REPEAT; r++)); do
      for coop in 1 0; do
        if line=$(run_one "$np" "$size" "$coop" "$r"); then
          read -r ms nb rcp <<<"$line"
          times[$coop]+="$ms "
          nbs[$coop]=$nb rcps[$coop]=$rcp
        else
          echo "run N=$np size=$size coop=$coop #$r produced no time (see $OUT/chol-$np-$size-$coop-$r.txt)" >&2
          fail=1
        fi
      done
    done
    declare -A med=()
    for coop in 1 0; do
      [[ -n ${times[$coop]:-} ]] || continue
      read -r m b < <(tr ' ' '\n' <<<"${times[$coop]}" | sed '/^$/d' | sort -g |
        awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1] }')
      med[$coop]=$m
      gf=$(awk -v n="$size" -v ms="$m" 'BEGIN { printf "%.2f", n * n * n / 3 / (ms / 1000) / 1e9 }')
      mean=$(awk -v b="${nbs[$coop]}" -v r="${rcps[$coop]}" 'BEGIN { printf "%.2f", b ? r / b : 0 }')
      printf '%-3s %-6s %-4s %10.1f %10.1f %8s %10s %10s\n' "$np" "$size" "$coop" "$m" "$b" "$gf" \
        "${nbs[$coop]}" "$mean" | tee -a "$summary"
    done
    if [[ -n ${med[1]:-} && -n ${med[0]:-} ]]; then
      awk -v on="${med[1]}" -v off="${med[0]}" -v n="$np" -v s="$size" \
        'BEGIN { printf "# N=%s size=%s: off / on = %.3f\n", n, s, off / on }' | tee -a "$summary"
    fi
    unset times nbs rcps med
  done
done
exit $fail
