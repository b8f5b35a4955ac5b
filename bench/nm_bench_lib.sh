# nm_bench_lib.sh - helpers shared by the comparison scripts (sourced, not run).

# Merge the CSVs of repeated runs of one benchmark (size,lat_min_us,lat_median_us,...): per size, the row of the
# lowest median. Every contender of a comparison runs the same number of times and gets the same treatment, so
# one burst of load on this shared machine does not decide a ratio. Missing or empty inputs are skipped.
# The median of the numbers on standard input, one per line, with 3 decimals (nothing for no input). The comparison
# scripts take it over rounds of a ratio whose two sides ran minutes apart at most: this host changes state from one
# minute to the next, so the median of such ratios says more than the ratio of two bests.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

best_rows() { # out-csv in-csv... ; per size (column 1) the row whose column BEST_COL (default 3) is lowest
  local out=$1 f ins=() col=${BEST_COL:-3}
  shift
  for f in "$@"; do [[ -s "$f" ]] && ins+=("$f"); done
  [[ ${#ins[@]} -gt 0 ]] || return 0
  awk -F, -v c="$col" 'FNR == 1 { hdr = $0; next }
           !($1 in best) || $c + 0 < best[$1] + 0 { best[$1] = $c; row[$1] = $0 }
           END { print hdr; for (s in row) print row[s] | "sort -t, -k1,1n" }' "${ins[@]}" >"$out"
}

# Process binding (--bind core|none; default core). Unbound, the scheduler sometimes runs both processes of a
# ping-pong on one core, handing it over (0.35 us at 8 B on shm here), and sometimes on two (0.9-1.3 us): two
# contenders run a minute apart then compare two placements, not two libraries. Bound, every contender gets the
# placement of a real job, one process per core: nmad-run/mpirun --bind-to core, Open MPI --bind-to core, and
# fi_pingpong's server and client under taskset. Runs with more processes than cores are never bound.
BIND=${BIND:-core}
NCORES=$(hwloc-calc --number-of core machine:0 2>/dev/null || nproc)
bind_policy() { # processes -> the --bind-to value of nmad-run and Open MPI for that many processes
  if [[ $BIND == core && $1 -le $NCORES ]]; then echo core; else echo none; fi
}
bind_prefix() { # core -> command prefix that runs a hand-started process (fi_pingpong) on that core
  [[ $BIND == core ]] || return 0
  local pus
  pus=$(hwloc-calc --po --intersect PU "core:$1" 2>/dev/null) && [[ -n $pus ]] && echo "taskset -c $pus"
}

# Open MPI's transport for a provider, the one every comparison uses (pml ob1 besides): sets the array OMPI_BTL.
# shellcheck disable=SC2034 # OMPI_BTL is read by the sourcing script
ompi_btl() { # shm|sm|tcp|ntcp (sm, ntcp: nmad's own drivers, against which Open MPI's are vader and btl tcp too)
  case $1 in
    shm|sm) OMPI_BTL=(--mca btl 'self,vader') ;;
    tcp|ntcp) OMPI_BTL=(--mca btl 'self,tcp' --mca btl_tcp_if_include lo) ;;
    *) OMPI_BTL=() ;;
  esac
}

# Run a command and keep its CSV output (header + data rows) in $1; $2 = description. Its stderr goes to
# $LOG/<csv name>.log. The caller defines LOG, RUN_TIMEOUT, note and fail.
run_csv() { # csv description command...
  local csv=$1 what=$2 lg
  lg=$LOG/$(basename "${1%.csv}").log
  shift 2
  note "$what"
  if ! timeout -k 5 "$((RUN_TIMEOUT + 10))" "$@" >"$csv.tmp" 2>"$lg"; then
    fail "$what (exit status $?); see $lg"
  fi
  grep -E '^(size,|[0-9])' "$csv.tmp" >"$csv" || true
  rm -f "$csv.tmp"
  [[ $(grep -c '^[0-9]' "$csv") -gt 0 ]] || fail "$what produced no data"
}
